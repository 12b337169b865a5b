"""One write's settings, resolved once at the door from its option strings (issue 28).

A write's options arrive as strings (the caller's, over the table's properties and stored
write defaults). :func:`resolve_write_config` parses them once, where the write enters
the engine (``Table.write``; ``hudilite.save`` and SQL writes go through it; the data
source writer resolves its own), into a frozen :class:`WriteConfig`. The layers below
(:mod:`hudilite.spark.write_job`, :mod:`hudilite.write.small_write`,
:mod:`hudilite.spark.insert_dedup`, :mod:`hudilite.spark.index_job`) read its fields and
never call :func:`~hudilite.index.bloom_index.index_settings` or
:func:`~hudilite.write.assign.avg_record_size` themselves
(``tests/unit/architecture/test_single_owner.py`` checks it).

The key generator and the merge spec are built from the table's config and the options
on first use and then kept (a write that never merges never builds one, and a payload the
merge refuses fails where the merge runs). The table lock's settings (:class:`LockConfig`)
are resolved here too: the write's transaction hands them to every lock it takes (the
fail-fast wait, the rollback of failed writes, the commit). So are the switches the write
job and its helpers test: the empty payload's upsert, the delete field and marker, the
insert's combining and duplicate policy, the null-ordering policy, the log block format,
the key conflict check and the Arrow key generator switch.

``options`` still travels inside the config for what builds from the strings itself: the
key generator and merge spec (above), the columns a write may omit
(:func:`~hudilite.services.schema_evolution.required_columns`), the table config check
and virtual keys, and two test-only internals handed from the facade as raw strings (the
fail points, ``hoodie.hudilite.write.fail.point``, and the JSON list of partitions an
INSERT OVERWRITE names), which no user sets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, cast

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.index.bloom_index import IndexSettings, bloom_config, index_settings
from hudilite.keygen import KeyGenSpec
from hudilite.merge import MergeSpec, is_empty_payload
from hudilite.storage.bloom_filter import BloomConfig
from hudilite.tablestate.state import TableState
from hudilite.write.assign import RecordSizeSettings, avg_record_size
from hudilite.write.lock import LockConfig

__all__ = ["WriteConfig", "resolve_write_config"]


@dataclass(frozen=True)
class WriteConfig:
    """The settings of one write, parsed once (see the module doc)."""

    #: The write's options: the caller's over the table's (for what is not resolved here).
    options: cfg.Options
    #: ``hoodie.index.type`` and its companions (:class:`IndexSettings`).
    index: IndexSettings
    #: The bloom filter written into base files.
    bloom: BloomConfig
    #: ``hoodie.parquet.max.file.size`` and ``hoodie.parquet.small.file.limit`` (bytes).
    max_file_size: int
    small_file_limit: int
    #: Hudi's record size estimator options (the estimate itself: :attr:`avg_record_size`).
    record_size: RecordSizeSettings
    #: ``hoodie.bucket.index.num.buckets`` and ``hoodie.bucket.index.hash.field``.
    bucket_num: int
    bucket_hash_field: Any
    #: The driver-side write's limits (``hoodie.hudilite.write.local.max.*``).
    local_max_rows: int
    local_max_file_groups: int
    #: The write's heartbeat (``hoodie.client.heartbeat.*``).
    heartbeat_interval_ms: int
    heartbeat_tolerable_misses: int
    #: ``hoodie.index.type`` as given (upper case), for messages (:attr:`index` is parsed).
    index_type: str
    #: The payload class is Hudi's ``EmptyHoodieRecordPayload``: an upsert deletes its keys.
    empty_payload: bool
    #: ``hoodie.payload.delete.field`` and ``.marker`` (None: the merge spec's or Hudi's).
    delete_field: str | None
    delete_marker: str | None
    #: ``hoodie.combine.before.insert``: inserts reduced to one record per key first.
    combine_before_insert: bool
    #: ``hoodie.datasource.insert.dup.policy`` (``none`` | ``drop`` | ``fail``; the
    #: operation decides whether it applies: :func:`hudilite.spark.insert_dedup.dup_policy`).
    insert_dup_policy: Literal["none", "drop", "fail"]
    #: ``hoodie.hudilite.write.null.ordering.value``: upserts with a null ordering value.
    null_ordering: Literal["warn", "fail", "allow"]
    #: ``hoodie.logfile.data.block.format`` of the log blocks a MOR write appends.
    log_block_format: Literal["avro", "parquet"]
    #: ``hoodie.hudilite.write.conflict.check.keys``: concurrent inserts of one key refused.
    key_conflict_check: bool
    #: ``hudilite.keygen.native``: keys by Spark expressions where possible (False: Arrow).
    native_keys: bool
    #: ``hoodie.write.set.null.for.missing.columns``: any data column may be omitted.
    set_null_for_missing_columns: bool = False
    #: ``hoodie.hudilite.optional.columns``: the columns a write may omit (added ones).
    optional_columns: tuple[str, ...] = ()
    #: The table lock's provider, waits and lease (None: a config without its table, whose
    #: locks read the table's stored write options).
    lock: LockConfig | None = None
    #: The table the write was resolved against (for the record size estimate).
    state: TableState | None = field(default=None, compare=False, repr=False)

    def _table(self) -> TableState:
        if self.state is None:
            raise ConfigError("a write's key generator and merge rules need its table")
        return self.state

    @cached_property
    def keygen(self) -> KeyGenSpec:
        """The table's key generator under these options."""
        return self._table().keygen(self.options)

    @cached_property
    def merge_spec(self) -> MergeSpec:
        """The table's merge rules under these options (``ConfigError`` for a payload the
        merge refuses, raised at each use: only writes that merge need it)."""
        return self._table().merge_spec(self.options)

    @cached_property
    def avg_record_size(self) -> int:
        """Hudi's record size estimate from the table's recent commits, computed on first
        use (only a write that packs inserts needs it) and then kept."""
        if self.state is None:
            raise ConfigError("the record size estimate needs the table the write goes to")
        return avg_record_size(self.state, self.record_size)

    def without_payload(self) -> WriteConfig:
        """This config with no payload class (an empty payload's upsert runs as a delete,
        whose merge must not build that payload)."""
        return dataclasses.replace(
            self,
            options=self.options.with_overrides({cfg.PAYLOAD_CLASS.name: None}),
            empty_payload=False,
        )


def resolve_write_config(
    state: TableState | None, options: cfg.Options | Mapping[str, Any] | None
) -> WriteConfig:
    """Resolve a write's options once: ``options`` (a mapping of the caller's options,
    laid over ``state``'s properties and stored write defaults; or an already merged
    :class:`~hudilite.config.Options`). A bad value raises :class:`ConfigError` naming
    the key, before anything is written."""
    if isinstance(options, cfg.Options):
        opts = options
    elif state is not None:
        opts = state.options({k: str(v) for k, v in (options or {}).items()})
    else:
        opts = cfg.Options({k: str(v) for k, v in (options or {}).items()})
    return WriteConfig(
        options=opts,
        index=index_settings(opts),
        bloom=bloom_config(opts),
        max_file_size=int(opts.get(cfg.MAX_FILE_SIZE)),
        small_file_limit=int(opts.get(cfg.SMALL_FILE_LIMIT)),
        record_size=RecordSizeSettings.from_options(opts),
        bucket_num=int(opts.get(cfg.BUCKET_NUM)),
        bucket_hash_field=opts.get(cfg.BUCKET_HASH_FIELD),
        local_max_rows=int(opts.get(cfg.LOCAL_WRITE_MAX_ROWS)),
        local_max_file_groups=int(opts.get(cfg.LOCAL_WRITE_MAX_FILE_GROUPS)),
        heartbeat_interval_ms=int(opts.get(cfg.HEARTBEAT_INTERVAL_MS)),
        heartbeat_tolerable_misses=int(opts.get(cfg.HEARTBEAT_TOLERABLE_MISSES)),
        index_type=str(opts.get(cfg.INDEX_TYPE)),
        empty_payload=is_empty_payload(opts.get(cfg.PAYLOAD_CLASS)),
        delete_field=_str_or_none(opts.get(cfg.DELETE_FIELD)),
        delete_marker=_str_or_none(opts.get(cfg.DELETE_MARKER)),
        combine_before_insert=bool(opts.get(cfg.COMBINE_BEFORE_INSERT)),
        insert_dup_policy=cast(Any, str(opts.get(cfg.INSERT_DUP_POLICY)).lower()),
        null_ordering=cast(Any, str(opts.get(cfg.NULL_ORDERING_VALUE)).lower()),
        log_block_format=cast(Any, str(opts.get(cfg.LOG_BLOCK_FORMAT) or "avro").lower()),
        key_conflict_check=bool(opts.get(cfg.KEY_CONFLICT_CHECK)),
        native_keys=bool(opts.get(cfg.NATIVE_KEYS)),
        set_null_for_missing_columns=bool(opts.get(cfg.SET_NULL_FOR_MISSING_COLUMNS)),
        optional_columns=tuple(opts.get(cfg.OPTIONAL_COLUMNS) or ()),
        lock=LockConfig.resolve(state.gw, opts) if state is not None else None,
        state=state,
    )


def _str_or_none(value: Any) -> str | None:
    """An optional string option: None when unset or empty."""
    return str(value) if value else None
