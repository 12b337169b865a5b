"""Procedures that turn Parquet files into a Hudi table: ``hdfs_parquet_import`` and
``run_bootstrap`` (FULL_RECORD mode).

Both read the source with Spark and write through the engine's Spark write path
(:meth:`hudilite.Table.create`, then :meth:`hudilite.Table.write`), so the rows never pass
through the driver and the table gets ordinary commits every Hudi reader reads.

``hdfs_parquet_import`` is Hudi's ``HdfsParquetImportProcedure`` with
``HDFSParquetImporterUtils`` (apache/hudi ``1d702579`` / ``105d20c9``): ``table`` (the new
table's name), ``table_type`` (``COPY_ON_WRITE`` or ``MERGE_ON_READ``), ``src_path``,
``target_path``, ``row_key``, ``partition_key``, ``schema_file_path`` (an Avro schema: the
columns imported, read from every Parquet file under ``src_path``, recursively) are required;
``command`` is ``insert`` (default), ``upsert`` or ``bulkinsert``; ``retry`` (0) re-runs a
write that failed; ``parallelism`` and ``props_file_path`` (a properties file of options for
the write). As in Hudi the target must not exist unless ``command`` is ``upsert`` (which
creates it when missing), a null key or partition value is an error, records are keyed by
``row_key`` and partitioned by the ``partition_key`` value as text -- or, for an integer
column, by its epoch seconds as ``yyyy/MM/dd`` in the JVM's default time zone (Hudi's
``PARTITION_FORMATTER``; hudilite records it as the timestamp key generator). One row,
``import_result`` 0. Differences from Hudi, by name: a failure is an error naming its cause
(Hudi logs it and answers -1); the table's ``hoodie.properties`` names ``row_key`` and
``partition_key`` (Hudi's importer leaves them out; hudilite needs them to upsert later); an
unknown ``command`` is refused (Hudi inserts); ``parallelism`` must be positive and bounds
nothing (hudilite sizes its Spark jobs itself); float partition columns are refused.

``run_bootstrap`` is Hudi's ``RunBootstrapProcedure`` (``07fff1ff``) with
``BootstrapExecutorUtils``, in ``FULL_RECORD`` mode only: every Parquet file under
``bootstrap_path`` (hidden ``.``/``_`` files skipped; ``k=v`` folders become columns) is
rewritten as a new table at ``base_path`` with one ``bulk_insert`` commit, keyed by
``rowKey_field`` and partitioned by ``partition_path_field`` (none: a non-partitioned table,
as Hudi turns SimpleKeyGenerator into NonpartitionedKeyGenerator), with
``key_generator_class`` (a class or a key generator type) and ``payload_class``; options come
from ``props_file_path`` and the session (Hudi adds the session's SQL confs), and an
existing ``base_path`` is an error unless ``bootstrap_overwrite``. One row, ``status`` 0.
``selector_class`` defaults to Hudi's ``MetadataOnlyBootstrapModeSelector``: METADATA_ONLY
bootstrap (skeleton files pointing at the source files through a bootstrap index) is refused
by name, so pass ``FullRecordBootstrapModeSelector``; ``BootstrapRegexModeSelector`` works
when every source partition resolves to FULL_RECORD
(``hoodie.bootstrap.mode.selector.regex`` / ``.regex.mode``). Refused by name as well:
``base_file_format`` other than PARQUET, a ``full_bootstrap_input_provider`` other than
Hudi's Spark Parquet provider, a ``schema_provider_class``, ``enable_hive_sync``. Hudi
commits a full bootstrap at the fixed instant ``00000000000002`` and records
``hoodie.bootstrap.base.path`` in ``hoodie.properties``; hudilite commits at a new instant
time and records no bootstrap path -- the table holds all its data and no bootstrap index
exists for a reader to follow.
"""

from __future__ import annotations

import re
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from hudilite import config as cfg
from hudilite.config.properties import parse_properties
from hudilite.errors import ConflictError, HudiliteError, WriteError
from hudilite.schema import avro_to_arrow_schema
from hudilite.spark.convert import spark_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.table.api import Table
from hudilite.tablestate.state import PROPERTIES_FILE

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

_TABLE_TYPES = {
    "COPY_ON_WRITE": "COPY_ON_WRITE",
    "MERGE_ON_READ": "MERGE_ON_READ",
    "COW": "COPY_ON_WRITE",
    "MOR": "MERGE_ON_READ",
}
#: ``hdfs_parquet_import``'s commands and the write operation each runs.
_COMMANDS = {"insert": "insert", "upsert": "upsert", "bulkinsert": "bulk_insert"}
_SELECTORS = "org.apache.hudi.client.bootstrap.selector."
METADATA_ONLY_SELECTOR = _SELECTORS + "MetadataOnlyBootstrapModeSelector"
FULL_RECORD_SELECTOR = _SELECTORS + "FullRecordBootstrapModeSelector"
REGEX_SELECTOR = _SELECTORS + "BootstrapRegexModeSelector"
PARQUET_PROVIDER = "org.apache.hudi.bootstrap.SparkParquetBootstrapDataProvider"
SIMPLE_KEYGEN = cfg.KEYGEN_CLASSES[cfg.KEYGEN_SIMPLE]


def _table_type(ctx: ProcedureContext, value: str) -> str:
    kind = _TABLE_TYPES.get(str(value).strip().upper())
    if kind is None:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid table_type {value!r}; use COPY_ON_WRITE or MERGE_ON_READ"
        )
    return kind


def _gateway(path: str) -> tuple[FileSystemGateway, str]:
    """A gateway on ``path``'s folder and the file name in it."""
    parent, _, name = str(path).rstrip("/").rpartition("/")
    return FileSystemGateway(parent or "."), name


def read_text_file(ctx: ProcedureContext, path: str, what: str) -> str:
    """The text of ``path`` (local or a URI); an error naming it when it cannot be read."""
    gw, name = _gateway(path)
    try:
        return gw.read_bytes(name).decode("utf-8")
    except (OSError, HudiliteError) as exc:
        raise ProcedureError(f"{ctx.procedure}: could not read {what} {path!r}: {exc}") from None


def props_file_options(ctx: ProcedureContext, path: str | None) -> dict[str, str]:
    """The options of a Java properties file (``props_file_path``); none when not given."""
    if not path or not str(path).strip():
        return {}
    return dict(parse_properties(read_text_file(ctx, str(path).strip(), "props_file_path")))


def _exists(path: str) -> bool:
    """Whether anything is at ``path`` (Hudi checks the folder, not a table in it)."""
    return FileSystemGateway(path).exists("")


# ------------------------------------------------------------------- hdfs_parquet_import


def _source_frame(ctx: ProcedureContext, src: str, schema_json: str) -> DataFrame:
    """Every Parquet file under ``src`` (recursively, as Hudi's ``INPUT_DIR_RECURSIVE``),
    projected on the Avro schema's fields and cast to their types."""
    try:
        wanted = spark_schema(avro_to_arrow_schema(schema_json))
    except (ValueError, KeyError, TypeError, HudiliteError) as exc:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: schema_file_path holds no Avro record schema: {exc}"
        ) from None
    try:
        df = ctx.spark.read.option("recursiveFileLookup", "true").parquet(src)
    except Exception as exc:  # Spark's AnalysisException: path missing, no Parquet files
        first = str(exc).strip().splitlines()[0]
        raise ProcedureError(f"{ctx.procedure}: cannot read src_path {src!r}: {first}") from None
    missing = [f.name for f in wanted.fields if f.name not in df.columns]
    if missing:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: column(s) {', '.join(missing)} of the schema file are not in the "
            f"Parquet files under {src!r} (columns: {', '.join(df.columns)})"
        )
    return df.select(*[F.col(f"`{f.name}`").cast(f.dataType).alias(f.name) for f in wanted.fields])


def _partition_options(ctx: ProcedureContext, df: DataFrame, partition_key: str) -> dict[str, str]:
    """Key generator options for ``partition_key``: the value as text, or for an integer
    column its epoch seconds as ``yyyy/MM/dd`` in the JVM's zone, as Hudi's importer."""
    dtype = df.schema[partition_key].dataType
    if isinstance(dtype, T.FloatType | T.DoubleType | T.DecimalType):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: partition_key {partition_key!r} is a {dtype.simpleString()} "
            "column; hudilite imports numeric partition keys of integer types only"
        )
    if not isinstance(dtype, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        return {}
    zone = ctx.spark.sparkContext._jvm.java.time.ZoneId.systemDefault().getId()  # type: ignore[union-attr]
    return {
        cfg.KEYGEN_TYPE.name: cfg.KEYGEN_TIMESTAMP,
        cfg.TIMESTAMP_TYPE.name: "UNIX_TIMESTAMP",
        cfg.TIMESTAMP_OUTPUT_FORMAT.name: "yyyy/MM/dd",
        cfg.TIMESTAMP_TIMEZONE.name: str(zone),
    }


def _check_keys(ctx: ProcedureContext, df: DataFrame, row_key: str, partition_key: str) -> None:
    """Hudi's importer fails on a record without its key or partition value."""
    for param, column in (("row_key", row_key), ("partition_key", partition_key)):
        if column not in df.columns:
            raise ProcedureArgumentError(
                f"{ctx.procedure}: {param} {column!r} is not a column of the schema file "
                f"({', '.join(df.columns)})"
            )
    nulls = df.filter(F.col(f"`{row_key}`").isNull() | F.col(f"`{partition_key}`").isNull())
    bad = nulls.select(row_key, partition_key).limit(1).collect()
    if bad:
        column, param = (row_key, "row") if bad[0][0] is None else (partition_key, "partition")
        raise ProcedureError(
            f"{ctx.procedure}: {param} key is missing: a record has no {column!r} value"
        )


def _write(
    ctx: ProcedureContext, tbl: Table, df: DataFrame, operation: str, options: dict, retry: int
) -> None:
    """The write, tried again up to ``retry`` times when it fails (Hudi's retry loop)."""
    for attempt in range(retry + 1):
        try:
            tbl.write(df, operation, options=options)  # type: ignore[arg-type]
            return
        except (WriteError, ConflictError) as exc:
            if attempt == retry:
                raise ProcedureError(f"{ctx.procedure}: the import failed: {exc}") from None


@procedure(
    "hdfs_parquet_import",
    [
        Param("table", "string", required=True),
        Param("table_type", "string", required=True),
        Param("src_path", "string", required=True),
        Param("target_path", "string", required=True),
        Param("row_key", "string", required=True),
        Param("partition_key", "string", required=True),
        Param("schema_file_path", "string", required=True),
        Param("command", "string", default="insert"),
        Param("retry", "integer", default=0),
        Param("parallelism", "integer"),
        Param("props_file_path", "string", default=""),
    ],
    [Output("import_result", "int")],
    "Imports the Parquet files under src_path into the table at target_path (insert, upsert "
    "or bulkinsert), keyed by row_key and partitioned by partition_key.",
)
def hdfs_parquet_import(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``(0,)`` once the rows are committed; every failure is an error naming its cause."""
    table_type = _table_type(ctx, args["table_type"])
    command = str(args["command"] or "insert").strip().lower()
    if command not in _COMMANDS:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid command {args['command']!r}; use insert, upsert or "
            "bulkinsert"
        )
    if args["retry"] < 0:
        raise ProcedureArgumentError(f"{ctx.procedure}: retry must be >= 0, got {args['retry']}")
    if args["parallelism"] is not None and args["parallelism"] <= 0:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: parallelism must be positive, got {args['parallelism']}"
        )
    target = str(args["target_path"]).strip()
    row_key, partition_key = str(args["row_key"]).strip(), str(args["partition_key"]).strip()
    if _exists(target) and command != "upsert":
        raise ProcedureError(f"{ctx.procedure}: make sure {target} is not present")
    options = {**ctx.options, **props_file_options(ctx, args["props_file_path"])}
    schema_json = read_text_file(ctx, str(args["schema_file_path"]).strip(), "schema file")
    df = _source_frame(ctx, str(args["src_path"]).strip(), schema_json)
    _check_keys(ctx, df, row_key, partition_key)
    if FileSystemGateway(target).exists(PROPERTIES_FILE):
        tbl = Table.load(ctx.spark, target)
        config = tbl.config
        if (config.record_key_fields, config.partition_fields) != ((row_key,), (partition_key,)):
            raise ProcedureArgumentError(
                f"{ctx.procedure}: row_key {row_key!r} / partition_key {partition_key!r} differ "
                f"from the table at {target}: record key {','.join(config.record_key_fields)!r}, "
                f"partition field {','.join(config.partition_fields)!r}"
            )
    else:
        tbl = Table.create(
            ctx.spark,
            target,
            df.schema,
            record_key=row_key,
            partition_by=[partition_key],
            table_type=table_type,  # type: ignore[arg-type]
            table_version=int(cfg.Options(options).get(cfg.TABLE_VERSION)),  # type: ignore[arg-type]
            name=str(args["table"]).strip(),
            options={cfg.HIVE_STYLE.name: "false", **_partition_options(ctx, df, partition_key)},
        )
    _write(ctx, tbl, df, _COMMANDS[command], options, args["retry"])
    return [(0,)]


# ------------------------------------------------------------------------- run_bootstrap


def _leaf_files(gw: FileSystemGateway) -> dict[str, list[str]]:
    """Hudi's ``getAllLeafFoldersWithFiles`` for Parquet: folder -> its ``.parquet`` files,
    hidden (``.``/``_``) names skipped."""
    out: dict[str, list[str]] = {}
    for e in gw.list_recursive(""):
        parts = e.path.split("/")
        if e.is_dir or any(p.startswith((".", "_")) for p in parts):
            continue
        if e.name.endswith(".parquet"):
            out.setdefault("/".join(parts[:-1]), []).append(e.path)
    return out


def _check_selector(
    ctx: ProcedureContext, selector: str, opts: cfg.Options, folders: list[str]
) -> None:
    """FULL_RECORD for every source partition, or an error naming METADATA_ONLY."""
    hint = f"pass selector_class => '{FULL_RECORD_SELECTOR}'"
    if selector == FULL_RECORD_SELECTOR:
        return
    if selector == METADATA_ONLY_SELECTOR:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: METADATA_ONLY bootstrap ({selector}, the default selector_class) "
            f"is not supported: hudilite bootstraps FULL_RECORD only; {hint}"
        )
    if selector != REGEX_SELECTOR:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: unknown selector_class {selector!r}; {hint}"
        )
    regex = str(opts.get(cfg.BOOTSTRAP_REGEX))
    mode = str(opts.get(cfg.BOOTSTRAP_REGEX_MODE))
    other = "FULL_RECORD" if mode == "METADATA_ONLY" else "METADATA_ONLY"
    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: invalid {cfg.BOOTSTRAP_REGEX.name} {regex!r}: {exc}"
        ) from None
    metadata_only = [
        f for f in folders if (mode if pattern.fullmatch(f) else other) != "FULL_RECORD"
    ]
    if metadata_only:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: {REGEX_SELECTOR} selects METADATA_ONLY for partition(s) "
            f"{', '.join(repr(f) for f in metadata_only[:3])}; hudilite bootstraps FULL_RECORD "
            f"only (set {cfg.BOOTSTRAP_REGEX.name} / {cfg.BOOTSTRAP_REGEX_MODE.name})"
        )


def _refuse_unsupported(ctx: ProcedureContext, args: dict[str, Any]) -> None:
    if str(args["base_file_format"] or "PARQUET").strip().upper() != "PARQUET":
        raise ProcedureArgumentError(
            f"{ctx.procedure}: base_file_format {args['base_file_format']!r} is not supported; "
            "hudilite bootstraps Parquet sources into Parquet base files (PARQUET)"
        )
    provider = str(args["full_bootstrap_input_provider"] or PARQUET_PROVIDER).strip()
    if provider != PARQUET_PROVIDER:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: full_bootstrap_input_provider {provider!r} is not supported; "
            f"hudilite reads the source with {PARQUET_PROVIDER}'s rules"
        )
    if str(args["schema_provider_class"] or "").strip():
        raise ProcedureArgumentError(
            f"{ctx.procedure}: schema_provider_class {args['schema_provider_class']!r} is not "
            "supported; the source files' schema is used"
        )
    if args["enable_hive_sync"]:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: enable_hive_sync is not supported (hudilite keeps its own "
            "catalog; register the table with CREATE TABLE ... LOCATION)"
        )


def _keygen_options(key_generator: str, partition_fields: list[str]) -> dict[str, str]:
    """The key generator option for ``key_generator_class`` (a class or a type name);
    SimpleKeyGenerator without partition fields is left to inference (Hudi switches it to
    NonpartitionedKeyGenerator)."""
    value = str(key_generator or "").strip()
    if not value or (value == SIMPLE_KEYGEN and not partition_fields):
        return {}
    if value.upper() in cfg.KEYGEN_TYPES:
        return {cfg.KEYGEN_TYPE.name: value.upper()}
    return {cfg.KEYGEN_CLASS.name: value}


@procedure(
    "run_bootstrap",
    [
        Param("table", "string", required=True),
        Param("table_type", "string", required=True),
        Param("bootstrap_path", "string", required=True),
        Param("base_path", "string", required=True),
        Param("rowKey_field", "string", required=True),
        Param("base_file_format", "string", default="PARQUET"),
        Param("partition_path_field", "string", default=""),
        Param(
            "bootstrap_index_class",
            "string",
            default="org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex",
        ),
        Param("selector_class", "string", default=METADATA_ONLY_SELECTOR),
        Param("key_generator_class", "string", default=SIMPLE_KEYGEN),
        Param("full_bootstrap_input_provider", "string", default=PARQUET_PROVIDER),
        Param("schema_provider_class", "string", default=""),
        Param(
            "payload_class",
            "string",
            default="org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
        ),
        Param("parallelism", "integer", default=1500),
        Param("enable_hive_sync", "boolean", default=False),
        Param("props_file_path", "string", default=""),
        Param("bootstrap_overwrite", "boolean", default=False),
    ],
    [Output("status", "int")],
    "Bootstraps a Hudi table at base_path from the Parquet files under bootstrap_path "
    "(FULL_RECORD mode: the rows are rewritten with one bulk insert).",
)
def run_bootstrap(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``(0,)`` once the new table's bulk insert is committed."""
    _refuse_unsupported(ctx, args)
    table_type = _table_type(ctx, args["table_type"])
    if args["parallelism"] <= 0:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: parallelism must be positive, got {args['parallelism']}"
        )
    db, _, name = str(args["table"]).strip().rpartition(".")
    source, base = str(args["bootstrap_path"]).strip(), str(args["base_path"]).strip()
    if source.rstrip("/") == base.rstrip("/"):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: bootstrap_path and base_path must differ (both {base!r})"
        )
    options = {**ctx.options, **props_file_options(ctx, args["props_file_path"])}
    opts = cfg.Options(options)
    src = FileSystemGateway(source)
    folders = _leaf_files(src) if src.exists("") else {}
    if not folders:
        raise ProcedureError(f"{ctx.procedure}: no Parquet files under bootstrap_path {source!r}")
    _check_selector(ctx, str(args["selector_class"]).strip(), opts, sorted(folders))
    target = FileSystemGateway(base)
    if target.exists(""):
        if not args["bootstrap_overwrite"]:
            raise ProcedureError(
                f"{ctx.procedure}: target base path already exists at {base}; cannot bootstrap "
                "data on top of an existing table (bootstrap_overwrite => true replaces it)"
            )
        target.filesystem.delete_dir(target.abs_path(""))
    files = [src.uri(p) for paths in folders.values() for p in sorted(paths)]
    df = ctx.spark.read.option("basePath", src.uri("")).parquet(*files)
    row_key = str(args["rowKey_field"]).strip()
    partitions = [p.strip() for p in str(args["partition_path_field"] or "").split(",") if p]
    unknown = [c for c in [row_key, *partitions] if c not in df.columns]
    if unknown:
        raise ProcedureArgumentError(
            f"{ctx.procedure}: {', '.join(repr(c) for c in unknown)} not a column of the source "
            f"({', '.join(df.columns)})"
        )
    # Hudi's bootstrap names partition folders by value unless the options say otherwise.
    create = {
        cfg.HIVE_STYLE.name: "false",
        cfg.PAYLOAD_CLASS.name: str(args["payload_class"]).strip(),
    }
    create.update(_keygen_options(args["key_generator_class"], partitions))
    create.update({k: v for k, v in options.items() if cfg.find_key(k) in _CREATE_KEYS})
    tbl = Table.create(
        ctx.spark,
        base,
        df.schema,
        record_key=row_key,
        ordering_field=",".join(opts.get(cfg.ORDERING_FIELDS) or ()) or None,
        partition_by=partitions,
        table_type=table_type,  # type: ignore[arg-type]
        table_version=int(opts.get(cfg.TABLE_VERSION)),  # type: ignore[arg-type]
        name=name,
        database=db or ctx.current_database,
        options=create,
    )
    try:
        tbl.write(df, "bulk_insert", options=options)
    except HudiliteError:
        target.filesystem.delete_dir(target.abs_path(""))  # as Hudi, when the bootstrap fails
        raise
    return [(0,)]


#: Table options a props file may give the bootstrapped table (Hudi's table builder reads
#: them from the properties).
_CREATE_KEYS = (
    cfg.HIVE_STYLE,
    cfg.URL_ENCODE,
    cfg.TIMESTAMP_TYPE,
    cfg.TIMESTAMP_INPUT_FORMAT,
    cfg.TIMESTAMP_OUTPUT_FORMAT,
    cfg.TIMESTAMP_TIMEZONE,
)
