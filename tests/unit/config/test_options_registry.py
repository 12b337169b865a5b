"""The one option registry (issue 11): every key declared once, aliases by family, keys never
silently ignored (unknown / unsupported keys warn, strict mode raises), docs/options.md in
sync. No JVM: keys are observed through Options, TableConfig and the Table API's checks."""

# ruff: noqa: E501  (the alias table reads best one case a line)

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from hudilite import config as cfg
from hudilite.config import reference
from hudilite.errors import ConfigError, HudiliteWarning, OptionWarning

ROOT = Path(__file__).resolve().parents[3]

#: Every option key of Hudi's Flink connector (FlinkOptions.java, apache/hudi): each must be
#: implemented with Hudi's meaning (an alias) or declared unsupported.
FLINK_KEYS = (
    "path", "hoodie.database.name", "hoodie.table.name", "table.type", "precombine.field",
    "write.precombine.field", "eventtime.field", "payload.class", "write.payload.class",
    "record.merger.impls", "record.merger.strategy", "partition.default_name",
    "changelog.enabled", "cdc.enabled", "cdc.supplemental.logging.mode", "metadata.enabled",
    "metadata.compaction.delta_commits", "index.type", "index.bootstrap.enabled",
    "index.state.ttl", "index.global.enabled", "index.partition.regex", "read.tasks",
    "source.avro-schema.path", "source.avro-schema", "hoodie.datasource.query.type",
    "hoodie.datasource.merge.type", "read.utc-timezone", "read.streaming.enabled",
    "read.streaming.check-interval", "read.streaming.skip_compaction",
    "read.streaming.skip_clustering", "read.streaming.skip_insertoverwrite",
    "read.start-commit", "read.end-commit", "read.commits.limit", "read.cdc.from.changelog",
    "read.data.skipping.enabled", "write.insert.cluster", "write.operation",
    "hoodie.write.table.version", "write.precombine", "write.retry.times",
    "write.retry.interval.ms", "write.ignore.failed", "hoodie.datasource.write.recordkey.field",
    "hoodie.bucket.index.hash.field", "hoodie.index.bucket.engine",
    "hoodie.bucket.index.num.buckets", "hoodie.datasource.write.partitionpath.field",
    "hoodie.datasource.write.partitionpath.urlencode",
    "hoodie.datasource.write.hive_style_partitioning",
    "hoodie.datasource.write.keygenerator.class", "hoodie.datasource.write.keygenerator.type",
    "write.utc-timezone", "write.partition.format", "write.index_bootstrap.tasks",
    "write.bucket_assign.tasks", "write.tasks", "write.task.max.size", "write.rate.limit",
    "write.batch.size", "write.log_block.size", "write.log.max.size",
    "write.parquet.block.size", "write.parquet.max.file.size", "write.parquet.page.size",
    "write.merge.max_memory", "write.commit.ack.timeout", "write.bulk_insert.shuffle_input",
    "write.bulk_insert.sort_input", "write.bulk_insert.sort_input.by_record_key",
    "write.sort.memory", "write.partition.overwrite.mode", "write.client.id",
    "compaction.schedule.enabled", "compaction.async.enabled", "compaction.tasks",
    "compaction.trigger.strategy", "compaction.delta_commits", "compaction.delta_seconds",
    "compaction.timeout.seconds", "compaction.max_memory", "compaction.target_io",
    "clean.async.enabled", "clean.policy", "clean.retain_commits", "clean.retain_hours",
    "clean.retain_file_versions", "archive.max_commits", "archive.min_commits",
    "clustering.schedule.enabled", "clustering.async.enabled", "clustering.delta_commits",
    "clustering.tasks", "clustering.plan.strategy.daybased.lookback.partitions",
    "clustering.plan.strategy.daybased.skipfromlatest.partitions",
    "clustering.plan.strategy.cluster.begin.partition",
    "clustering.plan.strategy.cluster.end.partition",
    "clustering.plan.strategy.partition.regex.pattern",
    "clustering.plan.strategy.partition.selected", "clustering.plan.strategy.class",
    "clustering.plan.partition.filter.mode", "clustering.plan.strategy.target.file.max.bytes",
    "clustering.plan.strategy.small.file.limit", "clustering.plan.strategy.sort.columns",
    "clustering.plan.strategy.max.num.groups", "hive_sync.enabled", "hive_sync.enable",
    "hive_sync.db", "hive_sync.table", "hive_sync.file_format", "hive_sync.mode",
    "hive_sync.username", "hive_sync.password", "hive_sync.jdbc_url",
    "hive_sync.metastore.uris", "hive_sync.partition_fields",
    "hive_sync.partition_extractor_class", "hive_sync.assume_date_partitioning",
    "hive_sync.use_jdbc", "hive_sync.auto_create_db", "hive_sync.ignore_exceptions",
    "hive_sync.skip_ro_suffix", "hive_sync.support_timestamp", "hive_sync.table_properties",
    "hive_sync.serde_properties", "hive_sync.conf.dir", "hive_sync.table.strategy",
    "lookup.join.cache.ttl",
)  # fmt: skip


# ---------------------------------------------------------------------------- one registry


def test_every_name_belongs_to_one_key_and_every_key_is_exported() -> None:
    seen: dict[str, str] = {}
    for key in cfg.all_keys():
        assert key.scope in cfg.SCOPES, key.name
        assert key.doc.strip(), key.name
        assert key.unsupported is None or key.unsupported.strip(), key.name
        for name in key.all_names():
            assert name.lower() not in seen, f"{name} in {key.name} and {seen[name.lower()]}"
            seen[name.lower()] = key.name
            assert cfg.find_key(name) is key
            assert cfg.find_key(name.upper()) is key
    assert len(cfg.ALL_KEYS) == len(cfg.all_keys())
    # Every key constant a keys_* module declares is a hudilite.config name.
    exported = {id(v) for v in vars(cfg).values() if isinstance(v, cfg.ConfigKey)}
    missing = [k.name for k in cfg.all_keys() if id(k) not in exported]
    nested = {
        id(k)
        for v in vars(cfg).values()
        if isinstance(v, dict)
        for k in v.values()
        if isinstance(k, cfg.ConfigKey)
    }
    assert [m for m in missing if id(cfg.find_key(m)) not in nested] == []


def test_no_module_declares_keys_outside_the_registry() -> None:
    offenders = []
    for folder in ("hudilite", "sqlext", "procedures", "catalog"):
        for path in (ROOT / folder).rglob("*.py"):
            if "config" in path.relative_to(ROOT).parts[:2]:
                continue
            text = path.read_text()
            if re.search(r"\bConfigKey\(|\b_key\(\s*\"", text):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


#: String constants that look like keys but are not options: commit metadata keys and
#: logger names.
NOT_OPTIONS = {
    "hudilite.retyped.column",  # commit extra-metadata key of ALTER COLUMN TYPE, not an option
    "hudilite.added.columns",
    "hudilite.rows.deleted",
    "hudilite.index.records.moved",
    "hudilite.procedures",
    "hudilite.timeline",
    "hudilite.write",
}


def test_every_key_literal_in_the_code_is_registered() -> None:
    """A module that reads ``"hoodie.x"`` or ``"hudilite.x"`` by name reads a declared key."""
    import ast

    missing: dict[str, str] = {}
    for folder in ("hudilite", "sqlext", "procedures", "catalog"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.relative_to(ROOT).parts[:2] == ("hudilite", "config"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue
                text = node.value
                if (
                    text.startswith(("hoodie.", "hudilite."))
                    and re.fullmatch(r"[A-Za-z0-9_.\-]+", text)
                    and not text.endswith(".")
                    and text not in NOT_OPTIONS
                    and cfg.find_key(text) is None
                ):
                    missing[text] = str(path.relative_to(ROOT))
    assert missing == {}


def test_every_flink_option_is_implemented_or_refused_by_name() -> None:
    unknown = [k for k in FLINK_KEYS if cfg.find_key(k) is None]
    assert unknown == []
    implemented = [k for k in FLINK_KEYS if cfg.find_key(k).supported]  # type: ignore[union-attr]
    # The keys the issue found broken are implemented.
    for name in (
        "write.precombine.field",
        "compaction.trigger.strategy",
        "compaction.delta_commits",
        "compaction.delta_seconds",
    ):
        assert name in implemented
    for name in ("write.rate.limit", "hive_sync.enabled", "hive_sync.db", "index.state.ttl"):
        assert not cfg.find_key(name).supported  # type: ignore[union-attr]


# ------------------------------------------------------------- each family, by each alias

ALIASES: list[tuple[cfg.ConfigKey, dict[str, str], Any]] = [
    # table
    (cfg.ORDERING_FIELDS, {"write.precombine.field": "ts"}, ("ts",)),
    (cfg.ORDERING_FIELDS, {"precombine.field": "ts"}, ("ts",)),
    (cfg.ORDERING_FIELDS, {"preCombineField": "ts"}, ("ts",)),
    (cfg.ORDERING_FIELDS, {"ordering.fields": "ts"}, ("ts",)),
    (cfg.ORDERING_FIELDS, {"hoodie.datasource.write.precombine.field": "ts"}, ("ts",)),
    (cfg.TABLE_TYPE, {"table.type": "MERGE_ON_READ"}, "MERGE_ON_READ"),
    (cfg.TABLE_TYPE, {"type": "mor"}, "MERGE_ON_READ"),
    (cfg.PAYLOAD_CLASS, {"write.payload.class": cfg.DEFAULT_PAYLOAD}, cfg.DEFAULT_PAYLOAD),
    (cfg.CHANGELOG_ENABLED, {"changelog.enabled": "true"}, True),
    (cfg.TIMESTAMP_TYPE, {"hoodie.deltastreamer.keygen.timebased.timestamp.type": "SCALAR"}, "SCALAR"),
    # write: INSERT INTO keys, Hudi's deprecated spellings feed them
    (cfg.INSERT_DUP_POLICY, {}, "none"),
    (cfg.INSERT_DUP_POLICY, {"insert.drop.duplicates": "true"}, "drop"),
    (cfg.INSERT_DUP_POLICY, {"write.insert.drop.duplicates": "true"}, "drop"),
    (cfg.INSERT_DUP_POLICY, {"hoodie.datasource.write.insert.drop.duplicates": "true"}, "drop"),
    (cfg.INSERT_DUP_POLICY, {"insert.drop.duplicates": "false"}, "none"),
    (cfg.INSERT_DUP_POLICY, {"hoodie.sql.insert.mode": "strict"}, "fail"),
    (cfg.INSERT_DUP_POLICY, {"hoodie.sql.insert.mode": "non-strict"}, "none"),
    (
        cfg.INSERT_DUP_POLICY,
        {"insert.drop.duplicates": "true", "hoodie.datasource.insert.dup.policy": "fail"},
        "fail",
    ),
    (cfg.INSERT_INTO_OPERATION, {}, "insert"),
    # The insert mode does not feed the operation key: INSERT INTO deduces the operation
    # from the mode and the table (hudilite.sqlext.insert_rule, Hudi's deduceOperation).
    (cfg.INSERT_INTO_OPERATION, {"hoodie.sql.insert.mode": "upsert"}, "insert"),
    (cfg.COMBINE_BEFORE_INSERT, {"write.precombine": "true"}, True),
    (cfg.MAX_FILE_SIZE, {"write.parquet.max.file.size": "64"}, 64 * 1024 * 1024),
    (cfg.MAX_FILE_SIZE, {"hoodie.parquet.max.file.size": "1m"}, 1024 * 1024),
    (cfg.OPERATION, {"write.operation": "insert"}, "insert"),
    # read
    (cfg.INCR_FALLBACK_FULL_SCAN, {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}, True),
    # index
    (cfg.INDEX_TYPE, {"index.type": "bucket"}, "BUCKET"),
    (cfg.BUCKET_NUM, {"bucket.index.num.buckets": "8"}, 8),
    # services: compaction (Flink names are Hudi's inline trigger keys)
    (cfg.INLINE_COMPACT, {"compaction.async.enabled": "true"}, True),
    (cfg.SCHEDULE_INLINE_COMPACT, {"compaction.schedule.enabled": "true"}, True),
    (cfg.INLINE_COMPACT_DELTA_COMMITS, {"compaction.delta_commits": "2"}, 2),
    (cfg.COMPACT_TRIGGER_STRATEGY, {"compaction.trigger.strategy": "num_or_time"}, "NUM_OR_TIME"),
    (cfg.COMPACT_DELTA_SECONDS, {"compaction.delta_seconds": "60"}, 60),
    (cfg.COMPACTION_TARGET_IO_MB, {"compaction.target_io": "100"}, 100),
    (cfg.COMPACTION_ORDER, {"compaction.seq": "lifo"}, "LIFO"),
    # services: clean and archive
    (cfg.CLEANER_POLICY, {"clean.policy": "KEEP_LATEST_FILE_VERSIONS"}, "KEEP_LATEST_FILE_VERSIONS"),
    (cfg.CLEANER_POLICY, {"hoodie.clean.policy": "KEEP_LATEST_BY_HOURS"}, "KEEP_LATEST_BY_HOURS"),
    (cfg.CLEANER_COMMITS_RETAINED, {"clean.retain_commits": "3"}, 3),
    (cfg.CLEANER_COMMITS_RETAINED, {"hoodie.clean.commits.retained": "4"}, 4),
    (cfg.CLEANER_HOURS_RETAINED, {"clean.retain_hours": "5"}, 5),
    (cfg.CLEANER_FILE_VERSIONS_RETAINED, {"clean.retain_file_versions": "6"}, 6),
    (cfg.AUTO_CLEAN, {"clean.async.enabled": "false"}, False),
    (cfg.KEEP_MAX_COMMITS, {"archive.max_commits": "50"}, 50),
    (cfg.KEEP_MIN_COMMITS, {"archive.min_commits": "40"}, 40),
    # services: clustering (Flink's small file limit is in MB)
    (cfg.CLUSTERING_SMALL_FILE_LIMIT, {"clustering.plan.strategy.small.file.limit": "600"}, 600 * 1024 * 1024),
    (cfg.CLUSTERING_SORT_COLUMNS, {"clustering.plan.strategy.sort.columns": "a,b"}, ("a", "b")),
    (cfg.CLUSTERING_MAX_NUM_GROUPS, {"clustering.plan.strategy.max.num.groups": "7"}, 7),
    (cfg.CLUSTERING_PARTITION_FILTER_MODE, {"clustering.plan.partition.filter.mode": "recent_days"}, "RECENT_DAYS"),
    # lock
    (cfg.LOCK_STORAGE_RENEW_SECS, {"hoodie.write.lock.storage.heartbeat.poll.secs": "2"}, 2.0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("key", "raw", "expected"), ALIASES, ids=[f"{k.name}-{r}" for k, r, _ in ALIASES]
)
def test_each_family_by_each_alias(key: cfg.ConfigKey, raw: dict[str, str], expected: Any) -> None:
    assert cfg.Options(raw).get(key) == expected


def test_a_feeding_key_with_a_bad_value_names_itself() -> None:
    with pytest.raises(ConfigError, match=re.escape("hoodie.sql.insert.mode")):
        cfg.Options({"hoodie.sql.insert.mode": "sometimes"}).get(cfg.INSERT_DUP_POLICY)


def test_table_keys_given_by_alias_reach_table_config() -> None:
    opts = cfg.Options({"write.precombine.field": "ts", "table.type": "mor"})
    tc = cfg.TableConfig.new(
        "t",
        table_type=opts.get(cfg.TABLE_TYPE),
        record_key_fields=("id",),
        ordering_fields=opts.get(cfg.ORDERING_FIELDS),
        extra={"hoodie.index.type": "BUCKET", "write.rate.limit": "0"},
    )
    assert tc.ordering_field == "ts" and tc.is_mor
    assert tc.merge_mode == cfg.EVENT_TIME_ORDERING  # an older event never wins
    assert tc.props["hoodie.index.type"] == "BUCKET"
    assert "write.rate.limit" not in tc.props


# ------------------------------------------------------------------ never silently ignored


def _warned(options: dict[str, str], **kw: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg.check_options(options, **kw)
    assert all(issubclass(w.category, OptionWarning) for w in caught)
    return [str(w.message) for w in caught]


def test_known_keys_do_not_warn() -> None:
    assert _warned({"hoodie.parquet.small.file.limit": "0", "precombine.field": "ts"}) == []
    assert _warned({"hudilite.internal.fail.point": "x", "hudilite.keygen.native": "false"}) == []
    assert _warned({"fs.s3a.endpoint": "x", "spark.sql.shuffle.partitions": "2"}) == []


def test_unknown_key_warns_naming_the_closest_keys() -> None:
    (msg,) = _warned({"hoodie.parquet.small.file.limt": "0"})
    assert "unknown option 'hoodie.parquet.small.file.limt'" in msg
    assert "did you mean 'hoodie.parquet.small.file.limit'" in msg
    assert issubclass(OptionWarning, HudiliteWarning)


@pytest.mark.parametrize(
    "name",
    ["write.rate.limit", "hive_sync.db", "hive_sync.enabled", "index.bootstrap.enabled",
     "index.state.ttl", "read.tasks", "metadata.compaction.delta_commits", "write.tasks"],
)  # fmt: skip
def test_unsupported_key_warns_by_name_with_the_reason(name: str) -> None:
    (msg,) = _warned({name: "7"})
    assert f"option {name!r}" in msg and "not supported by hudilite" in msg


def test_undeclared_keys_of_unsupported_families_are_refused_by_name() -> None:
    (msg,) = _warned({"hive_sync.some_new_option": "1"})
    assert "'hive_sync.some_new_option' is not supported" in msg and "Hive metastore" in msg
    (msg,) = _warned({"hoodie.metadata.index.expression.enable": "true"})
    assert "metadata table" in msg
    assert _warned({"hoodie.metadata.index.expression.enable": "false"}) == []


def test_unsupported_key_set_to_what_hudilite_does_is_quiet() -> None:
    quiet = {"write.rate.limit": "0", "hive_sync.enabled": "false", "metadata.enabled": "true"}
    assert _warned(quiet) == []


def test_deprecated_key_warns_and_still_works() -> None:
    (msg,) = _warned({"insert.drop.duplicates": "true"})
    assert "deprecated" in msg and "hoodie.datasource.insert.dup.policy" in msg
    # Deprecated keys are not refused in strict mode.
    assert _warned({"insert.drop.duplicates": "true"}, strict=True)


def test_strict_mode_raises_naming_every_bad_key() -> None:
    opts = {"hudilite.options.strict": "true", "foo.bar": "1", "write.rate.limit": "9"}
    with pytest.raises(ConfigError) as exc:
        cfg.check_options(opts)
    assert "'foo.bar'" in str(exc.value) and "'write.rate.limit'" in str(exc.value)
    with pytest.raises(ConfigError):
        cfg.check_options({"foo.bar": "1"}, context={"hudilite.options.strict": "true"})
    assert _warned({"foo.bar": "1"}, strict=False)


def test_strict_mode_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cfg.STRICT_ENV_VAR, "true")
    with pytest.raises(ConfigError, match=re.escape("unknown option 'foo.bar'")):
        cfg.check_options({"foo.bar": "1"})
    cfg.check_options({"hoodie.parquet.small.file.limit": "0"})


def test_unset_checks_key_names() -> None:
    (msg,) = _warned(["hoodie.parquet.small.file.limt"])  # type: ignore[arg-type]
    assert "unknown option" in msg


def test_collect_warnings_keeps_messages_and_reissues() -> None:
    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        with cfg.collect_warnings() as notes:
            cfg.check_options({"foo.bar": "1"})
            cfg.check_options({"foo.bar": "1"})
    assert notes == ["unknown option 'foo.bar': hudilite ignores it"]
    assert len(outer) == 2


def test_table_api_checks_the_options_it_is_given(tmp_path: Path) -> None:
    import pyarrow as pa

    from hudilite.table.api import Table

    schema = pa.schema([("id", pa.string()), ("ts", pa.int64())])
    with pytest.warns(OptionWarning, match=re.escape("write.rate.limit")):
        t = Table.create(
            None,  # type: ignore[arg-type]  # creating writes files only
            str(tmp_path / "t"),
            schema,
            record_key="id",
            options={"write.precombine.field": "ts", "write.rate.limit": "100"},
        )
    # The Flink spelling of the ordering field made it the table's (event-time merging).
    assert t.state().config.ordering_fields == ("ts",)
    assert t.state().config.merge_mode == cfg.EVENT_TIME_ORDERING
    with pytest.warns(
        OptionWarning, match=re.escape("did you mean 'hoodie.parquet.small.file.limit'")
    ):
        t.set_properties({"hoodie.parquet.small.file.limt": "0"})
    with pytest.raises(ConfigError, match=re.escape("hive_sync.db")):
        t.set_properties({"hive_sync.db": "x", "hudilite.options.strict": "true"})


# ----------------------------------------------------------------------- docs/options.md


def test_docs_options_md_is_up_to_date() -> None:
    path = ROOT / "docs" / "options.md"
    assert path.read_text() == reference.render(), (
        "docs/options.md is out of date: run `python -m hudilite.config.reference > "
        "docs/options.md`"
    )


def test_reference_lists_every_key_and_alias() -> None:
    text = reference.render()
    for key in cfg.all_keys():
        assert f"| `{key.name}` |" in text
        for alias in key.aliases:
            assert f"`{alias}`" in text


# ------------------------------------------------------- effects, observed without a JVM


def test_flink_compaction_keys_drive_the_inline_trigger() -> None:
    import importlib

    compaction = importlib.import_module("hudilite.services.compaction")

    def fires(options: dict[str, str], count: int, seconds: int) -> bool:
        opts = cfg.Options(options)
        strategy = str(opts.get(compaction.COMPACT_TRIGGER_STRATEGY))
        now = f"20260101000{seconds // 60:01d}{seconds % 60:02d}000"
        return compaction._triggered(strategy, count, "20260101000000000", now, opts)

    two = {"compaction.delta_commits": "2"}
    assert not fires(two, 1, 0) and fires(two, 2, 0)
    timed = {"compaction.trigger.strategy": "time_elapsed", "compaction.delta_seconds": "60"}
    assert not fires(timed, 9, 59) and fires(timed, 0, 60)
    both = {**two, **timed, "compaction.trigger.strategy": "num_and_time"}
    assert not fires(both, 2, 59) and not fires(both, 1, 60) and fires(both, 2, 60)


def test_flink_clean_keys_reach_the_cleaner_options() -> None:
    import importlib

    clean = importlib.import_module("hudilite.services.clean")  # the package exports clean()
    assert clean.CLEANER_POLICY is cfg.CLEANER_POLICY  # the cleaner reads the registry's key
    opts = cfg.Options({"clean.policy": "KEEP_LATEST_BY_HOURS", "clean.retain_hours": "2"})
    assert opts.get(clean.CLEANER_POLICY) == clean.KEEP_LATEST_BY_HOURS
    assert opts.get(clean.CLEANER_HOURS_RETAINED) == 2
