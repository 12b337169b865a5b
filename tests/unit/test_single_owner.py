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


# ---------------------------------------------------------------------------------------
# Facts found by their text: a second copy shows up as a second file matching a pattern.

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
_SOURCES = ("hudilite", "sqlext", "catalog", "procedures")


def _files_matching(pattern: str) -> set[str]:
    """Source files (repo-relative, ``/``-separated) whose text matches ``pattern``."""
    import re

    rx = re.compile(pattern, re.MULTILINE)
    return {
        path.relative_to(_ROOT).as_posix()
        for top in _SOURCES
        for path in (_ROOT / top).rglob("*.py")
        if rx.search(path.read_text(encoding="utf-8"))
    }


def test_timeline_time_zone_is_read_and_applied_in_one_place() -> None:
    # The key is declared in the registry and read by TableConfig.timeline_utc only.
    assert _files_matching(r"hoodie\.table\.timeline\.timezone\"") == {
        "hudilite/config/keys_table.py",
        "hudilite/config/table_config.py",
    }
    # One state transition time for the procedures and SHOW statements.
    assert _files_matching(r"^def transition_time\(") == {"procedures/commits.py"}
    # Local wall-clock digits are made (and read back) only by the instant time module.
    assert _files_matching(r"fromtimestamp\([^)]*\)\.replace\(tzinfo=None\)") == set()


def test_instant_digits_in_a_local_time_zone_round_trip() -> None:
    import os
    import time

    from hudilite.config import TableConfig
    from hudilite.timeline.instant_time import epoch_ms_to_instant, instant_to_epoch_ms

    ms = 1704067200123  # 2024-01-01 00:00:00.123 UTC
    old = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    try:
        assert epoch_ms_to_instant(ms) == "20240101000000123"
        assert epoch_ms_to_instant(ms, utc=False) == "20240101053000123"
        assert instant_to_epoch_ms("20240101053000123", utc=False) == ms
        assert instant_to_epoch_ms("20240101000000123") == ms
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
    base = {"hoodie.table.name": "t", "hoodie.table.version": "6"}
    key = "hoodie.table.timeline.timezone"
    assert not TableConfig.from_properties(base).timeline_utc  # Java's default: LOCAL
    assert TableConfig.from_properties({**base, key: "utc"}).timeline_utc
    assert not TableConfig.from_properties({**base, key: "LOCAL"}).timeline_utc
