"""Facts with one owner: each is decided in one engine function that every caller uses."""

from __future__ import annotations

from hudilite import config as cfg
from hudilite.config import TableConfig


def test_composite_key_without_partitions_is_non_partition() -> None:
    # Hudi's KeyGenUtils.inferKeyGeneratorType: no partition fields -> NON_PARTITION even for
    # a composite record key (COMPLEX only when partitioned by one or more fields).
    assert cfg.infer_keygen_type(["id", "name"], []) == "NON_PARTITION"
    tc = TableConfig.new("t", record_key_fields=("id", "name"))
    assert tc.keygen_type == "NON_PARTITION"
    assert cfg.infer_keygen_type(["id", "name"], ["city"]) == "COMPLEX"


def test_latest_schema_json_takes_newest_recorded_else_create_schema() -> None:
    from hudilite.schema import latest_schema_json

    read: list[str | None] = []

    def recorded(values: list[str | None]):  # newest first, records what was read
        for v in values:
            read.append(v)
            yield v

    assert latest_schema_json(recorded([None, "", "s2", "s1"]), "c") == "s2"
    assert read == [None, "", "s2"]  # metadata past the first recorded schema is never read
    assert latest_schema_json(recorded([None]), "c") == "c"
    assert latest_schema_json(recorded([]), None) is None


OVERWRITE_NON_DEFAULTS = "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"


def test_overwrite_non_defaults_payload_is_commit_time_with_partial_update() -> None:
    from hudilite.merge import MergeSpec, payload_semantics

    # Hudi 1.1 (EightToNineUpgradeHandler): COMMIT_TIME_ORDERING + partial update
    # IGNORE_DEFAULTS; table config inference and the merge spec read one mapping.
    assert payload_semantics(OVERWRITE_NON_DEFAULTS) == ("COMMIT_TIME_ORDERING", True)
    assert cfg.merge_mode_for_payload(OVERWRITE_NON_DEFAULTS) == "COMMIT_TIME_ORDERING"
    props = {
        "hoodie.table.name": "t",
        "hoodie.table.version": "6",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.compaction.payload.class": OVERWRITE_NON_DEFAULTS,
    }
    tc = TableConfig.from_properties(props)
    assert tc.merge_mode == "COMMIT_TIME_ORDERING"
    spec = MergeSpec.from_config(tc)
    assert (spec.mode, spec.partial_update) == ("COMMIT_TIME_ORDERING", True)
    for name, (mode, _) in cfg.PAYLOADS.items():
        assert cfg.merge_mode_for_payload(name) == mode
    assert cfg.merge_mode_for_payload("com.example.MyPayload") == "CUSTOM"


def test_compaction_and_clustering_plug_into_one_table_service_runner() -> None:
    import pytest

    from hudilite.errors import CorruptFileError
    from hudilite.services import clustering, clustering_plan, compaction, table_service
    from hudilite.services._common import encode_unit

    assert compaction.COMPACTION_SERVICE.kind == "compaction"
    assert clustering.CLUSTERING_SERVICE.kind == "clustering"
    # One plan-unit codec: a unit of the other service is refused, naming what was expected.
    group = clustering_plan.ClusteringGroup(slices=(), num_output_file_groups=1)
    with pytest.raises(CorruptFileError, match="not a compaction operation: ClusteringGroup"):
        compaction.decode_operation(encode_unit(group))
    assert clustering.decode_group(clustering.encode_group(group)) == group
    # One set of Hudi's plan metric names, and one place computing them.
    assert table_service.io_metrics(2, 3 * 1024 * 1024, 4, 120) == {
        "TOTAL_LOG_FILES": 2.0,
        "TOTAL_IO_MB": 124.0,
        "TOTAL_IO_READ_MB": 4.0,
        "TOTAL_LOG_FILES_SIZE": float(3 * 1024 * 1024),
        "TOTAL_IO_WRITE_MB": 120.0,
    }
