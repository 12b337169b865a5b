"""Which write ``INSERT INTO`` runs: Hudi's rule for Spark SQL, from 0.14 to 1.x.

Hudi decides in ``ProvidesHoodieConfig.buildHoodieInsertConfig``
(hudi-spark-datasource/hudi-spark-common, ``org.apache.spark.sql.hudi``), and so does
:func:`insert_into_rule`, in the same order:

1. ``hoodie.datasource.write.operation`` (or Flink's ``write.operation``), set on the table
   or in the session, wins: Hudi reads it first (``combinedOpts.getOrElse(OPERATION.key,
   ...)``).
2. The deprecated ``hoodie.sql.insert.mode``, when it is set and
   ``hoodie.spark.sql.insert.into.operation`` is not (Hudi's ``useLegacyInsertModeFlow``),
   deduces the operation as Hudi's ``deduceOperation`` does: ``upsert`` or ``strict`` on a
   table with a record key and an ordering field, unless
   ``hoodie.datasource.write.insert.drop.duplicates`` is on, runs an upsert; a table
   without a record key (auto-generated keys) a bulk insert; anything else an insert.
   ``strict`` also keeps the documented primary-key constraint on copy-on-write tables:
   a key the table holds fails the statement (Hudi from 0.12.2 sets
   ``ValidateDuplicateKeyPayload`` for strict upserts and inserts into copy-on-write
   tables; merge-on-read runs the upsert mode; Hudi 1.1's ``buildHoodieInsertConfig`` no
   longer sets a payload, hudilite keeps the constraint). Where the deduced operation is
   the upsert, hudilite runs it as an insert that first combines the batch by key (what
   the upsert's precombine does) and refuses stored keys: the same rows, and the same
   failure. A dup policy set by name is left as it is, as Hudi leaves it in this flow.
3. Otherwise Hudi's ``deduceSparkSqlInsertIntoWriteOperation``: when
   ``hoodie.spark.sql.insert.into.operation`` is not set, the table has a record key (not
   auto-generated: ``AutoRecordKeyGenerationUtils.shouldAutoGenerateRecordKeys``) and an
   ordering field, the statement is an **upsert**; else the configured operation (default
   ``insert``). The ordering field counts however it was named: ``preCombineField``,
   ``hoodie.table.precombine.field``, v8+ ``hoodie.table.ordering.fields``,
   ``hoodie.datasource.write.precombine.field``, Flink's ``precombine.field`` /
   ``write.precombine.field`` (Hudi reads the table's ``PRECOMBINE_FIELDS``, then the
   writer's ``PRECOMBINE_FIELD``). The dup policy is
   ``hoodie.datasource.insert.dup.policy`` as set, else ``none`` (Hudi's
   ``getDropDupsConfig`` overrides the deprecated drop-duplicates key with it), and it
   applies to an insert only (``HoodieSparkSqlWriterInternal.isDeduplicationNeeded``): a
   dup policy set while the statement upserts does nothing, which :class:`InsertRule`
   reports as ``ignored_policy`` so the statement can warn.

INSERT OVERWRITE is not decided here (it is always Hudi's overwrite operation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from hudilite import config as cfg
from hudilite.config.parsers import parse_bool

from .statement_types import SqlError

if TYPE_CHECKING:
    from hudilite.table.api import Operation

__all__ = ["INSERT_OPERATIONS", "InsertRule", "insert_into_rule"]

#: The operations an INSERT INTO may run.
INSERT_OPERATIONS = ("insert", "upsert", "bulk_insert")


@dataclass(frozen=True)
class InsertRule:
    """The write an INSERT INTO runs.

    ``options`` are write options the rule fixes (the dup policy, and batch combining for
    ``strict`` mode); ``ignored_policy`` is a ``drop``/``fail`` dup policy that was set
    but does not apply because the statement upserts; ``reason`` says why the operation
    was chosen (for that warning).
    """

    operation: Operation
    options: dict[str, str] = field(default_factory=dict)
    ignored_policy: str | None = None
    reason: str = ""


def _named(opts: cfg.Options, key: cfg.ConfigKey) -> str | None:
    """``key``'s value when one of its own names is set (not a deprecated key feeding it)."""
    if any(name in opts for name in key.all_names()):
        return opts.get_raw(key)
    return None


def _operation(value: str, key: cfg.ConfigKey) -> Operation:
    op = value.strip().lower()
    if op not in INSERT_OPERATIONS:
        raise SqlError(
            f"{key.name}={op!r} is not supported for INSERT INTO; use one of "
            + ", ".join(INSERT_OPERATIONS)
        )
    return cast("Operation", op)


def _policy(opts: cfg.Options) -> str | None:
    """The dup policy set by name (checked by its parser), or None."""
    raw = _named(opts, cfg.INSERT_DUP_POLICY)
    return None if raw is None else str(opts.get(cfg.INSERT_DUP_POLICY))


def insert_into_rule(opts: cfg.Options, config: cfg.TableConfig) -> InsertRule:
    """The operation and dup policy of an INSERT INTO with these options on this table.

    ``opts`` are the table's properties overlaid with the session's write options (what
    Hudi's ``combineOptions`` merges). Raises :class:`SqlError` for an operation INSERT
    INTO cannot run.
    """
    keys = config.record_key_fields or opts.get(cfg.RECORDKEY_FIELDS) or ()
    ordering = config.ordering_fields or opts.get(cfg.ORDERING_FIELDS) or ()
    keyed_and_ordered = bool(keys) and bool(ordering)
    explicit = _named(opts, cfg.OPERATION)
    configured = _named(opts, cfg.INSERT_INTO_OPERATION)
    mode = _named(opts, cfg.SQL_INSERT_MODE)
    policy = _policy(opts)

    if mode is not None and configured is None:
        legacy_mode = str(opts.get(cfg.SQL_INSERT_MODE))
        return _legacy_rule(opts, config, legacy_mode, bool(keys), bool(ordering), explicit, policy)

    if explicit is not None:
        op, reason = _operation(explicit, cfg.OPERATION), f"{cfg.OPERATION.name} is set"
    elif configured is not None:
        op, reason = _operation(configured, cfg.INSERT_INTO_OPERATION), "it is set"
    elif keyed_and_ordered:
        op = "upsert"
        reason = "the table has a record key and an ordering field and " + (
            f"{cfg.INSERT_INTO_OPERATION.name} is not set"
        )
    else:
        op = _operation(str(cfg.INSERT_INTO_OPERATION.default), cfg.INSERT_INTO_OPERATION)
        reason = "the table has no " + ("ordering field" if keys else "record key")
    ignored = policy if op == "upsert" and policy in ("drop", "fail") else None
    return InsertRule(op, {cfg.INSERT_DUP_POLICY.name: policy or "none"}, ignored, reason)


def _legacy_rule(
    opts: cfg.Options,
    config: cfg.TableConfig,
    mode: str,
    keys: bool,
    ordering: bool,
    explicit: str | None,
    policy: str | None,
) -> InsertRule:
    """Hudi's ``deduceOperation`` for ``hoodie.sql.insert.mode`` (see the module doc)."""
    drop_raw = _named(opts, cfg.INSERT_DROP_DUPLICATES)
    drop_dups = drop_raw is not None and parse_bool(drop_raw)
    reason = f"{cfg.SQL_INSERT_MODE.name}={mode}"
    op: Operation
    if explicit is not None:
        op = _operation(explicit, cfg.OPERATION)
    elif mode != "non-strict" and keys and ordering and not drop_dups:
        op = "upsert"
    elif not keys:
        op = "bulk_insert"
    else:
        op = "insert"
    if policy is None:
        policy = "drop" if drop_dups else "none"
    options = {cfg.INSERT_DUP_POLICY.name: policy}
    # strict: the primary-key constraint of copy-on-write tables (see the module doc).
    if mode == "strict" and not config.is_mor and op in ("insert", "upsert") and keys:
        if policy == "none":
            options[cfg.INSERT_DUP_POLICY.name] = "fail"
        if op == "upsert":
            op = "insert"
            options[cfg.COMBINE_BEFORE_INSERT.name] = "true"
    ignored = policy if op == "upsert" and policy in ("drop", "fail") else None
    return InsertRule(op, options, ignored, reason)
