"""``hoodie.index.type=RECORD_INDEX``'s settings (hudilite/index/bloom_index.py), no JVM.

Always global, moving a key whose partition changed only with
``hoodie.record.index.update.partition.path`` (false by default, as Hudi's); refused by name
unless the metadata table and its record_index partition are turned on. The Spark lookup is
tested in tests/spark/test_record_index_spark.py, the index itself in
tests/unit/metadata/test_record_index.py.
"""

from __future__ import annotations

import pytest

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.index.bloom_index import index_settings

ON = {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true"}


def test_record_index_is_global_and_moves_keys_only_when_asked() -> None:
    s = index_settings(cfg.Options({"hoodie.index.type": "record_index", **ON}))
    assert (s.kind, s.is_global, s.update_partition_path) == ("RECORD_INDEX", True, False)
    s = index_settings(
        cfg.Options(
            {
                "hoodie.index.type": "RECORD_INDEX",
                "hoodie.record.index.update.partition.path": "true",
                **ON,
            }
        )
    )
    assert (s.kind, s.is_global, s.update_partition_path) == ("RECORD_INDEX", True, True)


@pytest.mark.parametrize(
    ("options", "missing"),
    [
        ({}, "hoodie.metadata.enable"),
        ({"hoodie.metadata.enable": "true"}, "hoodie.metadata.record.index.enable"),
        ({"hoodie.metadata.record.index.enable": "true"}, "hoodie.metadata.enable"),
    ],
)
def test_record_index_without_its_partition_is_refused_by_name(
    options: dict[str, str], missing: str
) -> None:
    with pytest.raises(ConfigError) as err:
        index_settings(cfg.Options({"hoodie.index.type": "RECORD_INDEX", **options}))
    assert f"set {missing}=true" in str(err.value)
    assert "hoodie.index.type=RECORD_INDEX" in str(err.value)
