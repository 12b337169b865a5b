"""``hudilite.save``: Hudi's DataFrame write, ``df.write.format("hudi").options(**o)
.mode(m).save(path)``, driven by the same options.

A pipeline written for Hudi keeps its option dictionaries; only the write call changes::

    hudilite.save(df, path, options=hudi_options, mode="append")

What it does, as Hudi's ``HoodieSparkSqlWriter`` does:

* **The first write creates the table** from ``hoodie.table.name`` (required),
  ``hoodie.datasource.write.recordkey.field`` (none: a keyless table, Hudi 0.14+'s
  auto-generated keys), ``.partitionpath.field``,
  ``.precombine.field`` (or Hudi 1.x's ``hoodie.table.ordering.fields``), ``.table.type``,
  ``.keygenerator.class`` / ``.type`` with the ``hoodie.keygen.timebased.*`` options,
  ``.hive_style_partitioning`` (Hudi's DataFrame default: off, ``<value>`` folders) and
  ``.partitionpath.urlencode``, and the table version ``hoodie.write.table.version``.
  Only those (and other table properties) are kept in ``hoodie.properties``: the rest of
  the options apply to this write alone, as in Hudi.
* **``hoodie.datasource.write.operation``**: ``upsert`` (the default; ``insert`` when
  ``hoodie.datasource.write.insert.drop.duplicates`` is on, as Hudi corrects it;
  ``bulk_insert`` on a table without a record key, whose keys are generated, when the rows
  hold no ``_hoodie_record_key``, as Hudi's ``deduceOperation`` picks it),
  ``insert``, ``bulk_insert``, ``delete`` (the rows' keys), ``delete_partition``
  (``hoodie.datasource.write.partitions.to.delete``, else the rows' partitions),
  ``insert_overwrite``, ``insert_overwrite_table``.
* **``mode``**: ``append`` writes into the table (creating it if missing); ``overwrite``
  deletes an existing table and writes a new one -- except with ``insert_overwrite_table``,
  which replaces the rows of the existing table; ``error`` (``errorifexists``) fails when a
  table exists; ``ignore`` does nothing when one exists (and returns None). ``delete`` and
  ``delete_partition`` take ``append`` only.
* **Options that contradict the existing table** (record key, ordering and partition
  fields, table type and version, key generator and its settings, partition folder style)
  fail before anything is written, naming the option, its value and the table's; so does
  another ``hoodie.table.name`` on ``append``. (Hudi skips this check on ``overwrite``,
  which recreates the table from the options.)
* Hudi's meta columns (``_hoodie_commit_time`` ...) in the DataFrame are dropped, so rows
  read from the table can be written back (the quick start's update and delete).
* A batch write to a merge-on-read table compacts inline (its trigger decides when) unless
  ``hoodie.compact.inline`` or ``hoodie.datasource.compaction.async.enable`` is given, as
  Hudi's DataFrame writer does.

Returns the :class:`~hudilite.WriteResult` of the write (``Table.write``'s metrics).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hudilite import config as cfg
from hudilite.auto_keys import is_keyless
from hudilite.errors import ConfigError, SchemaError, TableExistsError, TableNotFoundError
from hudilite.schema import META_COLUMNS, OPERATION_COL, PARTITION_PATH_COL, RECORD_KEY_COL
from hudilite.spark.keying import keyed_frame
from hudilite.storage.fs import FileSystemGateway, is_storage_option, storage_options_of
from hudilite.table.api import Table
from hudilite.tablestate.create import keygen_type
from hudilite.tablestate.state import PROPERTIES_FILE, TableState
from hudilite.write.keying import KeyingSpec
from hudilite.write.result import WriteResult

#: Save modes by Spark's names (``errorifexists`` is ``error``'s long name, ``default`` too).
MODES = {
    "append": "append",
    "overwrite": "overwrite",
    "error": "error",
    "errorifexists": "error",
    "default": "error",
    "ignore": "ignore",
}
DELETES = ("delete", "delete_partition")

#: Options that describe the table: read when it is created (and checked against it after).
CREATE_KEYS: tuple[cfg.ConfigKey, ...] = (
    cfg.TABLE_NAME,
    cfg.DATABASE_NAME,
    cfg.TABLE_TYPE,
    cfg.TABLE_VERSION,
    cfg.RECORDKEY_FIELDS,
    cfg.ORDERING_FIELDS,
    cfg.PARTITION_FIELDS,
    cfg.HIVE_STYLE,
    cfg.URL_ENCODE,
    cfg.KEYGEN_TYPE,
    cfg.KEYGEN_CLASS,
    cfg.TIMESTAMP_TYPE,
    cfg.TIMESTAMP_INPUT_FORMAT,
    cfg.TIMESTAMP_OUTPUT_FORMAT,
    cfg.TIMESTAMP_TIMEZONE,
)
#: Options of this call only: never written to the table, never passed to the write.
CALL_KEYS: tuple[cfg.ConfigKey, ...] = (cfg.OPERATION, cfg.PARTITIONS_TO_DELETE)


@dataclass(frozen=True)
class SaveRequest:
    """One ``save`` call's options, resolved: what :func:`save` and the data source share."""

    path: str
    options: dict[str, str]  # the caller's options without storage settings
    storage: dict[str, str]  # filesystem settings (fs.s3a.*), never stored
    mode: str  # append | overwrite | error | ignore
    operation: str

    @property
    def opts(self) -> cfg.Options:
        """The options with alias resolution."""
        return cfg.Options(self.options)

    @property
    def table_name(self) -> str:
        """``hoodie.table.name`` (required, as in Hudi)."""
        name = str(self.opts.get(cfg.TABLE_NAME) or "").strip()
        if not name:
            raise ConfigError(f"'{cfg.TABLE_NAME.name}' must be set (the table's name)")
        return name


def resolve(path: str, options: Mapping[str, Any] | None, mode: str) -> SaveRequest:
    """Check the mode and the operation and split off storage settings."""
    given = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    storage = storage_options_of(given)
    opts = {k: v for k, v in given.items() if not is_storage_option(k)}
    cfg.check_options(opts)
    parsed = cfg.Options(opts)
    key = str(mode).strip().lower()
    if key not in MODES:
        raise ConfigError(f"unknown save mode {mode!r}; use append, overwrite, error or ignore")
    operation = str(parsed.get(cfg.OPERATION)).strip().lower()
    if operation == "upsert" and parsed.get(cfg.INSERT_DROP_DUPLICATES):
        # Hudi: an upsert makes no sense when duplicates are dropped; it runs an insert.
        operation = "insert"
    return SaveRequest(str(path), opts, storage, MODES[key], operation)


def check_mode(req: SaveRequest, gw: FileSystemGateway) -> bool:
    """Apply the save mode before anything is written; returns whether a table exists
    afterwards (``overwrite`` deletes one, except for ``insert_overwrite_table``). An
    ``ignore`` on an existing table is the caller's to skip (see :func:`save`)."""
    exists = gw.exists(PROPERTIES_FILE)
    where = gw.abs_path("")
    if req.operation in DELETES:
        if req.mode != "append":
            raise ConfigError(
                f"append is the only save mode applicable for the {req.operation} operation "
                f"(got mode {req.mode!r})"
            )
        if not exists:
            raise TableNotFoundError(f"no Hudi table at {where} to {req.operation} from")
        return True
    if not exists:
        return False
    if req.mode == "error":
        raise TableExistsError(f"a Hudi table already exists at {where} (mode 'error')")
    if req.mode == "overwrite" and req.operation != "insert_overwrite_table":
        # Hudi's overwrite deletes the table folder and writes a new table.
        gw.filesystem.delete_dir(where)
        return False
    return True


# --------------------------------------------------------------------- option conflicts


def _fields(value: Any) -> tuple[str, ...]:
    return tuple(str(v).strip() for v in value or () if str(v).strip())


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value) or "(none)"
    return "(none)" if value is None else str(value)


def conflicts(req: SaveRequest, config: cfg.TableConfig) -> list[str]:
    """The given options that contradict the table's properties, one phrase each."""
    opts = req.opts
    out: list[str] = []

    def differs(key: cfg.ConfigKey, norm: Any, stored: Any) -> None:
        # Every spelling given is checked (precombine.field and Hudi 1.x's
        # hoodie.table.ordering.fields may both be there).
        for name, raw in req.options.items():
            if cfg.find_key(name) is key and norm(cfg.Options({name: raw}).get(key)) != stored:
                out.append(f"{name}={raw!r} but the table's is {_show(stored)!r}")

    def partition_names(value: Any) -> tuple[str, ...]:
        # Custom key generators spell ``field:simple``; the table keeps either spelling.
        return tuple(f.split(":", 1)[0] for f in _fields(value))

    differs(cfg.TABLE_TYPE, str, config.table_type)
    differs(cfg.TABLE_VERSION, int, config.table_version)
    differs(cfg.RECORDKEY_FIELDS, _fields, config.record_key_fields)
    differs(cfg.ORDERING_FIELDS, _fields, config.ordering_fields)
    differs(cfg.PARTITION_FIELDS, partition_names, config.partition_field_names)
    differs(cfg.HIVE_STYLE, bool, config.hive_style)
    differs(cfg.URL_ENCODE, bool, config.url_encode)
    kind = keygen_type(opts)
    if kind is not None and kind != config.keygen_type:
        key = cfg.KEYGEN_TYPE if opts.is_set(cfg.KEYGEN_TYPE) else cfg.KEYGEN_CLASS
        stored = config.keygen_type if key is cfg.KEYGEN_TYPE else _stored_class(config)
        out.append(f"{key.name}={opts.get_raw(key)!r} but the table's is {_show(stored)!r}")
    for key in (
        cfg.TIMESTAMP_TYPE,
        cfg.TIMESTAMP_INPUT_FORMAT,
        cfg.TIMESTAMP_OUTPUT_FORMAT,
        cfg.TIMESTAMP_TIMEZONE,
    ):
        stored = config.props.get(key.name)
        if opts.is_set(key) and stored is not None and str(opts.get_raw(key)) != stored:
            out.append(f"{key.name}={opts.get_raw(key)!r} but the table's is {stored!r}")
    if config.database:  # Hudi ignores a database name the table does not record
        differs(cfg.DATABASE_NAME, lambda v: str(v).lower(), config.database.lower())
    return out


def _stored_class(config: cfg.TableConfig) -> str | None:
    return config.props.get("hoodie.table.keygenerator.class") or cfg.KEYGEN_CLASSES.get(
        config.keygen_type
    )


def check_table(req: SaveRequest, config: cfg.TableConfig, where: str) -> None:
    """Refuse a write into an existing table whose options contradict it (Hudi's
    ``validateTableConfig``; not on ``overwrite``, which recreates the table)."""
    if req.mode == "overwrite":
        return
    found = conflicts(req, config)
    if found:
        raise ConfigError(f"options conflict with the table at {where}: " + "; ".join(found))


def check_name(req: SaveRequest, config: cfg.TableConfig, where: str) -> None:
    """An ``append`` names the table it appends to (Hudi's ``handleSaveModes``)."""
    name = req.table_name
    if req.mode == "append" and name.lower() != config.name.lower():
        raise ConfigError(
            f"a Hudi table named {config.name!r} already exists at {where}: cannot append to "
            f"it as {cfg.TABLE_NAME.name}={name!r}"
        )


# ------------------------------------------------------------------------------ the write


def create_table(
    spark: Any, req: SaveRequest, schema: Any, *, options: Mapping[str, str] | None = None
) -> Table:
    """Create the table a first write makes, from the table options (see the module
    docstring); ``schema``: the data's Spark schema."""
    opts = req.opts
    check_new_table(req, list(schema.fieldNames()))
    keys = _fields(opts.get(cfg.RECORDKEY_FIELDS))
    keep = {
        k: v
        for k, v in req.options.items()
        if (cfg.find_key(k) in CREATE_KEYS or cfg.is_table_property(_canonical(k)))
        and cfg.find_key(k) not in CALL_KEYS
    }
    # Hudi's DataFrame writer names partition folders by value unless told otherwise
    # (Table.create, like Hudi's SQL, defaults to field=value).
    if not opts.is_set(cfg.HIVE_STYLE):
        keep[cfg.HIVE_STYLE.name] = "false"
    return Table.create(
        spark,
        req.path,
        schema,
        record_key=list(keys) or None,
        partition_by=list(_fields(opts.get(cfg.PARTITION_FIELDS))),
        table_type=opts.get(cfg.TABLE_TYPE),
        table_version=int(opts.get(cfg.TABLE_VERSION)),  # type: ignore[arg-type]
        name=req.table_name,
        database=str(opts.get(cfg.DATABASE_NAME)),
        options={**keep, **(options or {})},
        storage_options=req.storage,
    )


def check_new_table(req: SaveRequest, columns: list[str]) -> None:
    """Before an ``overwrite`` deletes a table or a first write creates one: the record key
    and every key, partition and ordering field is a column of the data (no record key field
    makes a keyless table, as Hudi 0.14+ does)."""
    opts = req.opts
    names = set(columns)
    for key in (cfg.RECORDKEY_FIELDS, cfg.PARTITION_FIELDS, cfg.ORDERING_FIELDS):
        for field in _fields(opts.get(key)):
            name = field.split(":", 1)[0]
            if name not in names:
                raise SchemaError(
                    f"{key.name}={opts.get_raw(key)!r}: {name!r} is not a column of the data "
                    f"({', '.join(sorted(names))})"
                )


def _canonical(name: str) -> str:
    known = cfg.find_key(name)
    return known.name if known is not None else name


def write_options(req: SaveRequest, config: cfg.TableConfig) -> dict[str, str]:
    """The options the write itself takes: everything but the table's description (checked
    against the table already) and this call's own keys."""
    out = {
        k: v
        for k, v in req.options.items()
        if cfg.find_key(k) not in CREATE_KEYS and cfg.find_key(k) not in CALL_KEYS
    }
    opts = req.opts
    if config.is_mor and not (opts.is_set(cfg.INLINE_COMPACT) or opts.is_set(cfg.ASYNC_COMPACT)):
        # Hudi's batch DataFrame writes compact a merge-on-read table inline by default.
        out[cfg.INLINE_COMPACT.name] = "true"
    return out


def without_meta_columns(df: DataFrame) -> DataFrame:
    """``df`` without Hudi's meta columns (rows read from a table can be written back)."""
    drop = [c for c in df.columns if c in META_COLUMNS or c == OPERATION_COL]
    return df.drop(*drop) if drop else df


def partitions_to_delete(table: Table, req: SaveRequest, data: DataFrame) -> list[str]:
    """The partitions a ``delete_partition`` removes: the option's paths (with ``*``
    wildcards matched against the table's partitions), else the rows' partition paths."""
    state: TableState = table.state()
    named = req.opts.get(cfg.PARTITIONS_TO_DELETE)
    if named:
        wanted = [p.strip() for p in str(named).split(",") if p.strip()]
        existing = state.view.partitions()
        out: list[str] = []
        for p in wanted:
            matches = [e for e in existing if fnmatch.fnmatchcase(e, p)] if "*" in p else [p]
            out.extend(m for m in matches if m not in out)
        return out
    opts = state.options(write_options(req, state.config))
    keyed = keyed_frame(data, KeyingSpec(keygen=state.keygen(opts)))
    rows = keyed.select(F.col(PARTITION_PATH_COL)).distinct().collect()
    return sorted(str(r[0]) for r in rows)


def save(
    df: DataFrame, path: str, *, options: Mapping[str, Any] | None = None, mode: str = "append"
) -> WriteResult | None:
    """Write ``df`` to the Hudi table at ``path`` as Hudi's
    ``df.write.format("hudi").options(**options).mode(mode).save(path)`` does (see the
    module docstring); returns the write's metrics, or None when ``mode="ignore"`` found a
    table. Filesystem settings (``fs.s3a.*``) may be among ``options``; they are never
    stored."""
    req = resolve(path, options, mode)
    gw = FileSystemGateway(req.path, storage_options=req.storage)
    spark = df.sparkSession
    data = without_meta_columns(df)
    where = gw.abs_path("")
    req.table_name  # noqa: B018  (required before anything else, as in Hudi)
    if gw.exists(PROPERTIES_FILE):
        # Hudi's order: the options are checked against the table, then the mode applies.
        current = TableState.load(gw).config
        check_table(req, current, where)
        if req.mode == "ignore":
            return None
        check_name(req, current, where)
    if req.operation not in DELETES and not (
        gw.exists(PROPERTIES_FILE)
        and (req.mode != "overwrite" or req.operation == "insert_overwrite_table")
    ):
        check_new_table(req, data.columns)  # before an overwrite deletes anything
    exists = check_mode(req, gw)
    if exists:
        table = Table.load(spark, req.path, storage_options=req.storage)
    else:
        table = create_table(spark, req, data.schema)
    config = table.config
    if req.operation == "delete_partition":
        parts = partitions_to_delete(table, req, data)
        return table.delete_partitions(parts, options=write_options(req, config))
    operation = req.operation
    if is_keyless(config) and RECORD_KEY_COL in df.columns:
        # Rows read back from a keyless table: written by their stored keys (Hudi's writer
        # keeps the meta key of such rows), so an upsert or delete finds them.
        data = df.drop(*[c for c in df.columns if c != RECORD_KEY_COL and c not in data.columns])
    if (
        is_keyless(config)
        and operation == "upsert"
        and not req.opts.is_set(cfg.OPERATION)
        and RECORD_KEY_COL not in df.columns
    ):
        # Hudi's deduceOperation: with no record key, no operation given and no stored keys
        # in the rows, the write is an append (bulk insert with generated keys).
        operation = "bulk_insert"
    return table.write(data, operation, options=write_options(req, config))  # type: ignore[arg-type]
