"""Hudi's INSERT INTO rule, case by case (``hudilite.sqlext.insert_rule``, no JVM).

Hudi 0.14 to 1.x (``ProvidesHoodieConfig.buildHoodieInsertConfig``): an explicit
``hoodie.datasource.write.operation`` wins; the deprecated ``hoodie.sql.insert.mode`` is
used while ``hoodie.spark.sql.insert.into.operation`` is unset (``deduceOperation``); else
``deduceSparkSqlInsertIntoWriteOperation``: upsert when the operation key is unset and the
table has a record key and an ordering field, the configured operation otherwise, with
``hoodie.datasource.insert.dup.policy`` as set (default ``none``).
"""

from __future__ import annotations

import pytest

from hudilite import config as cfg
from hudilite.sqlext.insert_rule import InsertRule, insert_into_rule
from hudilite.sqlext.statements import SqlError

DUP = "hoodie.datasource.insert.dup.policy"
COMBINE = "hoodie.combine.before.insert"
INSERT_OP = "hoodie.spark.sql.insert.into.operation"
MODE = "hoodie.sql.insert.mode"


def table(
    *,
    key: str = "id",
    version: int = 6,
    mor: bool = False,
    ordering: dict[str, str] | None = None,
) -> cfg.TableConfig:
    """A table's config as ``hoodie.properties`` holds it."""
    props = {
        "hoodie.table.name": "t",
        "hoodie.table.version": str(version),
        "hoodie.table.type": "MERGE_ON_READ" if mor else "COPY_ON_WRITE",
        "hoodie.table.partition.fields": "city",
    }
    if key:
        props["hoodie.table.recordkey.fields"] = key
    props.update(ordering or {})
    return cfg.TableConfig.from_properties(props)


V6_ORDERED = {"hoodie.table.precombine.field": "ts"}


def rule(config: cfg.TableConfig, options: dict[str, str] | None = None) -> InsertRule:
    """The rule with ``options`` (the session's SET values) over the table's properties."""
    return insert_into_rule(cfg.Options({**config.props, **(options or {})}), config)


def run(r: InsertRule) -> tuple[str, str | None, str | None]:
    """(operation, dup policy the write gets, policy the upsert ignores)."""
    return (r.operation, r.options.get(DUP), r.ignored_policy)


# ------------------------------------------------------------- the ordering field, however named


@pytest.mark.parametrize(
    ("version", "ordering"),
    [
        (6, {"hoodie.table.precombine.field": "ts"}),  # v6 tables, Hudi 0.x
        (8, {"hoodie.table.precombine.field": "ts"}),  # v8 tables, Hudi 1.0
        (9, {"hoodie.table.ordering.fields": "ts"}),  # v9 tables, Hudi 1.1
    ],
)
def test_a_keyed_table_with_an_ordering_field_upserts(version: int, ordering: dict[str, str]):
    config = table(version=version, ordering=ordering)
    assert config.ordering_fields == ("ts",)
    r = rule(config)
    assert run(r) == ("upsert", "none", None)
    assert r.reason == (
        "the table has a record key and an ordering field and "
        "hoodie.spark.sql.insert.into.operation is not set"
    )


@pytest.mark.parametrize(
    "name",
    [
        "preCombineField",
        "hoodie.datasource.write.precombine.field",
        "hoodie.table.precombine.field",
        "hoodie.table.ordering.fields",
        "precombine.field",  # Flink
        "write.precombine.field",  # Flink
    ],
)
def test_an_ordering_field_given_as_an_option_counts(name: str):
    """Hudi reads the table's ordering field, then the writer's precombine field."""
    config = table()
    assert run(rule(config)) == ("insert", "none", None)
    assert run(rule(config, {name: "ts"})) == ("upsert", "none", None)


def test_a_table_without_an_ordering_field_inserts():
    r = rule(table())
    assert run(r) == ("insert", "none", None)
    assert r.reason == "the table has no ordering field"


def test_auto_generated_keys_insert_even_with_an_ordering_field():
    """Hudi's shouldAutoGenerateRecordKeys: no key in the table or the writer config."""
    r = rule(table(key="", ordering=V6_ORDERED))
    assert run(r) == ("insert", "none", None)
    assert r.reason == "the table has no record key"


def test_an_empty_ordering_option_is_no_ordering_field():
    config = table()
    merged = {**config.props, "hoodie.datasource.write.precombine.field": ""}
    assert insert_into_rule(cfg.Options(merged), config).operation == "insert"


# ----------------------------------------------------------------------- explicit operations


@pytest.mark.parametrize("op", ["insert", "upsert", "bulk_insert"])
@pytest.mark.parametrize("ordered", [True, False])
def test_an_explicit_operation_is_kept(op: str, ordered: bool):
    config = table(ordering=V6_ORDERED if ordered else None)
    r = rule(config, {INSERT_OP: op})
    assert run(r) == (op, "none", None)
    assert r.reason == "it is set"


@pytest.mark.parametrize("name", ["hoodie.datasource.write.operation", "write.operation"])
def test_the_write_operation_wins_over_the_insert_into_operation(name: str):
    config = table(ordering=V6_ORDERED)
    merged = {**config.props, name: "insert", INSERT_OP: "upsert"}
    r = insert_into_rule(cfg.Options(merged), config)
    assert (r.operation, r.reason) == ("insert", "hoodie.datasource.write.operation is set")
    # ... and over the deprecated insert mode.
    merged = {**config.props, name: "bulk_insert", MODE: "upsert"}
    assert insert_into_rule(cfg.Options(merged), config).operation == "bulk_insert"


def test_an_operation_insert_into_cannot_run_is_an_error():
    config = table(ordering=V6_ORDERED)
    merged = {**config.props, "hoodie.datasource.write.operation": "delete"}
    with pytest.raises(
        SqlError,
        match=r"^hoodie\.datasource\.write\.operation='delete' is not supported for INSERT "
        r"INTO; use one of insert, upsert, bulk_insert$",
    ):
        insert_into_rule(cfg.Options(merged), config)


# ----------------------------------------------------------------------------- dup policies


@pytest.mark.parametrize("policy", ["none", "drop", "fail"])
def test_a_dup_policy_with_the_operation_unset_does_not_stop_the_upsert(policy: str):
    """The policy does not enter the deduction, and Hudi applies it to inserts only
    (HoodieSparkSqlWriterInternal.isDeduplicationNeeded): an upsert ignores it."""
    r = rule(table(ordering=V6_ORDERED), {DUP: policy})
    assert run(r) == ("upsert", policy, None if policy == "none" else policy)


@pytest.mark.parametrize("policy", ["none", "drop", "fail"])
def test_a_dup_policy_applies_to_an_insert(policy: str):
    ordered = rule(table(ordering=V6_ORDERED), {INSERT_OP: "insert"})
    assert run(ordered) == ("insert", "none", None)
    config = table(ordering=V6_ORDERED)
    merged = {**config.props, INSERT_OP: "insert", DUP: policy}
    assert run(insert_into_rule(cfg.Options(merged), config)) == ("insert", policy, None)
    unordered = table()
    merged = {**unordered.props, DUP: policy}
    assert run(insert_into_rule(cfg.Options(merged), unordered)) == ("insert", policy, None)


def test_a_bad_dup_policy_names_the_value():
    config = table()
    with pytest.raises(cfg.ConfigError, match=r"'maybe' for option 'hoodie\.datasource\.insert"):
        insert_into_rule(cfg.Options({**config.props, DUP: "maybe"}), config)


def test_the_deprecated_drop_duplicates_key_is_overridden_by_the_dup_policy():
    """Hudi's getDropDupsConfig sets INSERT_DROP_DUPS from the dup policy (default none)
    outside the legacy insert-mode flow."""
    config = table()
    merged = {**config.props, "hoodie.datasource.write.insert.drop.duplicates": "true"}
    assert run(insert_into_rule(cfg.Options(merged), config)) == ("insert", "none", None)


# ------------------------------------------------------------------ the deprecated insert mode


@pytest.mark.parametrize(
    ("mode", "mor", "ordered", "expected"),
    [
        # upsert: an upsert when the table has a key and an ordering field, else an insert.
        ("upsert", False, True, ("upsert", "none", None)),
        ("upsert", True, True, ("upsert", "none", None)),
        ("upsert", False, False, ("insert", "none", None)),
        # strict on copy-on-write: the primary-key constraint (stored keys fail); the
        # upsert's batch combining is kept.
        ("strict", False, True, ("insert", "fail", None)),
        ("strict", False, False, ("insert", "fail", None)),
        # strict on merge-on-read is the upsert mode.
        ("strict", True, True, ("upsert", "none", None)),
        ("strict", True, False, ("insert", "none", None)),
        # non-strict: an insert.
        ("non-strict", False, True, ("insert", "none", None)),
        ("non-strict", True, True, ("insert", "none", None)),
    ],
)
def test_the_deprecated_insert_mode(
    mode: str, mor: bool, ordered: bool, expected: tuple[str, str, str | None]
):
    config = table(mor=mor, ordering=V6_ORDERED if ordered else None)
    r = insert_into_rule(cfg.Options({**config.props, MODE: mode}), config)
    assert run(r) == expected
    combined = mode == "strict" and not mor and ordered
    assert r.options.get(COMBINE) == ("true" if combined else None)


def test_the_insert_mode_on_a_table_without_record_key_bulk_inserts():
    config = table(key="", ordering=V6_ORDERED)
    for mode in ("upsert", "strict", "non-strict"):
        r = insert_into_rule(cfg.Options({**config.props, MODE: mode}), config)
        assert run(r) == ("bulk_insert", "none", None)


def test_the_insert_mode_with_drop_duplicates_inserts_and_drops():
    config = table(ordering=V6_ORDERED)
    merged = {**config.props, MODE: "upsert", "insert.drop.duplicates": "true"}
    assert run(insert_into_rule(cfg.Options(merged), config)) == ("insert", "drop", None)


def test_the_insert_mode_keeps_a_dup_policy_set_by_name():
    config = table()
    merged = {**config.props, MODE: "strict", DUP: "drop"}
    assert run(insert_into_rule(cfg.Options(merged), config)) == ("insert", "drop", None)


@pytest.mark.parametrize("op", ["insert", "upsert", "bulk_insert"])
def test_the_insert_into_operation_beats_the_insert_mode(op: str):
    """Hudi honours the insert mode only while the operation key is unset; the mode's
    strict check does not apply then either."""
    config = table(ordering=V6_ORDERED)
    merged = {**config.props, MODE: "strict", INSERT_OP: op}
    assert run(insert_into_rule(cfg.Options(merged), config)) == (op, "none", None)
