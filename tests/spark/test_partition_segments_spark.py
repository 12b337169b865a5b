"""An overlong partition value fails a write by name, not with a raw ``[Errno 36]`` (issue 26).

Both key generators refuse it before any instant: the driver-side write (Arrow key
generator, the row named) and a Spark write keyed by Spark expressions.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import hudilite
from hudilite.errors import KeyGenerationError
from tests.helpers import hudi_rs_read, rows
from tests.tables import ID_TS_P

SCHEMA = ID_TS_P.schema
COLS = ID_TS_P.columns
MESSAGE = (
    "partition field 'p': the folder name 'p=" + "v" * 38 + "...' (302 bytes){} is longer "
    "than the 255 bytes a file system allows; shorten the value or partition by another field"
)


@pytest.mark.parametrize(
    ("options", "row"),
    [({}, " in row 1"), ({"hoodie.hudilite.write.local.max.rows": "0"}, "")],
    ids=["driver", "spark-native"],
)
def test_overlong_partition_value_is_refused_by_name(spark, tmp_path, options, row):
    t = ID_TS_P.create(spark, str(tmp_path / "t"), ordering_field=None)
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}, schema=SCHEMA))
    before = [(i.requested_time, i.action, i.state) for i in t.timeline()]
    data = pa.table({"id": ["b", "c"], "ts": [1, 1], "p": ["y", "v" * 300]}, schema=SCHEMA)
    with pytest.raises(KeyGenerationError) as err:
        t.write(spark.createDataFrame(data.to_pandas()), options=options)
    assert str(err.value) == MESSAGE.format(row)
    assert [(i.requested_time, i.action, i.state) for i in t.timeline()] == before
    assert rows(hudi_rs_read(t.path), COLS) == [("a", 1, "x")]


@pytest.mark.parametrize(
    ("options", "row"),
    [({}, " in row 0"), ({"hoodie.hudilite.write.local.max.rows": "0"}, "")],
    ids=["driver", "spark-native"],
)
def test_a_slash_in_one_of_several_plain_partition_values_is_refused(spark, tmp_path, options, row):
    schema = pa.schema([("id", pa.string()), ("a", pa.string()), ("b", pa.string())])
    t = hudilite.Table.create(
        spark, str(tmp_path / "t"), schema, record_key="id", partition_by=["a", "b"],
        options={"hoodie.datasource.write.hive_style_partitioning": "false"},
    )  # fmt: skip
    t.write(pa.table({"id": ["1"], "a": ["x"], "b": ["z"]}, schema=schema))
    data = pa.table({"id": ["2"], "a": ["x"], "b": ["y/z"]}, schema=schema)
    with pytest.raises(KeyGenerationError) as err:
        t.write(spark.createDataFrame(data.to_pandas()), options=options)
    assert str(err.value) == (
        f"partition field 'b' has value 'y/z'{row} holding '/', which would make its "
        "partition path (fields ['a', 'b'], not hive style) the same as other values': "
        "change the value, or use hive-style partitioning or partitionpath.urlencode"
    )
    assert rows(hudi_rs_read(t.path), ["id", "a", "b"]) == [("1", "x", "z")]


def test_the_default_partition_name_as_a_value_is_refused_by_spark_keys(spark, tmp_path):
    t = ID_TS_P.create(spark, str(tmp_path / "t"), ordering_field=None)
    t.write(pa.table({"id": ["a"], "ts": [1], "p": [""]}, schema=SCHEMA))
    data = pa.table({"id": ["b"], "ts": [1], "p": ["__HIVE_DEFAULT_PARTITION__"]}, schema=SCHEMA)
    with pytest.raises(KeyGenerationError, match=r"has value '__HIVE_DEFAULT_PARTITION__', the"):
        t.write(
            spark.createDataFrame(data.to_pandas()),
            options={"hoodie.hudilite.write.local.max.rows": "0"},
        )
    assert rows(hudi_rs_read(t.path), COLS) == [("a", 1, "")]
