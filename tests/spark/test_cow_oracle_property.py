"""Random upsert/insert/delete sequences on Spark agree with a plain-dict model and with hudi-rs."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hudilite
from tests.helpers import DictOracle, hudi_rs_read, rows, spark_rows

SCHEMA = pa.schema([("k", pa.string()), ("ts", pa.int64()), ("v", pa.int64()), ("p", pa.string())])
COLS = ["k", "ts", "v", "p"]
KEYS = [f"k{i}" for i in range(8)]

record = st.fixed_dictionaries(
    {
        "k": st.sampled_from(KEYS),
        "ts": st.one_of(st.none(), st.integers(0, 5)),
        "v": st.integers(0, 1000),
    }
)
step = st.one_of(
    st.tuples(st.just("upsert"), st.lists(record, min_size=1, max_size=6)),
    st.tuples(st.just("delete"), st.lists(st.sampled_from(KEYS), min_size=1, max_size=3)),
)


LOCAL = "hoodie.hudilite.write.local.max.rows"


def partition_of(key: str) -> str:
    # The partition is a function of the key, as a non-global index requires.
    return "even" if int(key[1:]) % 2 == 0 else "odd"


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(step, min_size=1, max_size=4),
    version=st.sampled_from([6, 8]),
    # Every write in the driver (the default for small inputs) or as Spark jobs.
    local_rows=st.sampled_from(["10000", "0"]),
)
def test_random_sequences_match_the_oracle(spark, tmp_path_factory, steps, version, local_rows):
    path = tmp_path_factory.mktemp("prop") / "t"
    t = hudilite.Table.create(
        spark,
        str(path),
        SCHEMA,
        record_key="k",
        ordering_field="ts",
        partition_by=["p"],
        table_version=version,
    )
    oracle = DictOracle(["k"], "ts")
    for kind, payload in steps:
        if kind == "upsert":
            recs = [{**r, "p": partition_of(r["k"])} for r in payload]
            t.write(
                pa.Table.from_pylist(recs, SCHEMA), operation="upsert", options={LOCAL: local_rows}
            )
            oracle.upsert(recs)
        else:
            recs = [{"k": k, "ts": None, "v": None, "p": partition_of(k)} for k in payload]
            t.write(
                pa.Table.from_pylist(recs, SCHEMA), operation="delete", options={LOCAL: local_rows}
            )
            oracle.delete([(k,) for k in payload])
        expected = oracle.rows(COLS)
        assert spark_rows(t.read(), COLS) == expected
        assert rows(hudi_rs_read(t.path), COLS) == expected
