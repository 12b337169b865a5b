"""The save request behind ``hudilite.save`` and ``df.write.format("hudilite")``: Hudi's
DataFrame-writer options resolved, checked against an existing table, and the table a
first write creates.

:func:`hudilite.save` (:mod:`hudilite.table.save`, which documents the semantics) and the
Python data source's writer (:mod:`hudilite.spark.datasource_writer`) share these steps, so
both take Hudi's options alike:

* :func:`resolve`: the save mode and ``hoodie.datasource.write.operation`` (an upsert
  with ``insert.drop.duplicates`` runs an insert, as Hudi corrects it), storage settings
  (``fs.s3a.*``) split off;
* :func:`check_mode`: the mode applied before anything is written (``overwrite`` deletes
  the table folder unless the operation is ``insert_overwrite_table``);
* :func:`check_table` / :func:`check_name`: options that contradict the existing table
  (Hudi's ``validateTableConfig``) and the table's name on ``append``;
* :func:`check_new_table` / :func:`create_table`: the table a first write creates, from the
  table options only (:data:`CREATE_KEYS` and table properties);
* :func:`write_options`: the options the write itself takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from hudilite import config as cfg
from hudilite.errors import ConfigError, SchemaError, TableExistsError, TableNotFoundError
from hudilite.spark.convert import arrow_schema
from hudilite.storage.fs import FileSystemGateway, is_storage_option, storage_options_of
from hudilite.tablestate.create import create_table_at, keygen_type
from hudilite.tablestate.state import PROPERTIES_FILE

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
    req: SaveRequest, schema: StructType, *, options: Mapping[str, str] | None = None
) -> FileSystemGateway:
    """Create the table a first write makes, from the table options (see
    :mod:`hudilite.table.save`); ``schema``: the data's Spark schema. Returns the new
    table's gateway."""
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
    return create_table_at(
        req.path,
        arrow_schema(schema),
        record_key=list(keys) or None,
        partition_by=list(_fields(opts.get(cfg.PARTITION_FIELDS))),
        table_type=str(opts.get(cfg.TABLE_TYPE)),
        table_version=int(opts.get(cfg.TABLE_VERSION)),
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
