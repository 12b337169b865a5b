"""Table creation: a new table's ``hoodie.properties``, its write defaults and its folders.

:func:`create_table` is the engine's half of ``Table.create`` and of ``CREATE TABLE``: it
checks the key, partition and ordering fields against the schema, builds the
:class:`~hudilite.config.TableConfig` (Hudi's rules for the inferred key generator, the
merge mode of version 9, hive-style folders by default) and lays the table out as Hudi's
``HoodieTableMetaClient.initTableAndGetMetaClient`` does: ``.hoodie`` and its ``.aux``,
``.temp`` and ``.schema`` folders, the timeline folder of the table's layout and the archive
folder, then ``hoodie.properties`` last (its presence makes the folder a table).

Options that are not Hudi table properties (:func:`hudilite.config.is_table_property`) go to
``.hoodie/hudilite.properties`` (:data:`~hudilite.tablestate.state.WRITE_DEFAULTS_FILE`),
which :meth:`~hudilite.tablestate.state.TableState.options` overlays on every later write.
The schema is an Arrow schema: the Spark facade converts a ``StructType`` first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from hudilite import config as cfg
from hudilite.auto_keys import check_new_keyless
from hudilite.errors import ConfigError, SchemaError, TableExistsError
from hudilite.schema import arrow_to_avro_schema, to_storage_schema
from hudilite.storage.fs import FileSystemGateway, is_storage_option, storage_options_of
from hudilite.tablestate import properties_file
from hudilite.tablestate.properties_file import PROPERTIES_FILE, WRITE_DEFAULTS_FILE

#: The table types ``create_table`` takes: Hudi's names and their short forms.
TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


def keygen_type(opts: cfg.Options) -> str | None:
    """The key generator a new table asks for: its type, else its Java class (how Hudi's SQL
    users name it: ``hoodie.datasource.write.keygenerator.class``); None to infer it."""
    if opts.get(cfg.KEYGEN_TYPE):
        return str(opts.get(cfg.KEYGEN_TYPE))
    class_name = opts.get(cfg.KEYGEN_CLASS)
    if not class_name:
        return None
    kind = cfg.keygen_type_from_class(str(class_name))
    if kind is None:
        raise ConfigError(
            f"key generator class {class_name!r} is not one of Hudi's built-in generators "
            f"({', '.join(sorted(cfg.KEYGEN_CLASSES.values()))})"
        )
    return kind


def _table_type(table_type: str) -> str:
    kind = TABLE_TYPES.get(str(table_type).lower(), str(table_type).upper())
    if kind not in TABLE_TYPES.values():
        raise ConfigError(f"table_type must be 'cow' or 'mor', got {table_type!r}")
    return kind


def _ordering_field(ordering_field: str | None, opts: cfg.Options) -> str | None:
    if ordering_field is None and opts.is_set(cfg.ORDERING_FIELDS):
        # An ordering field given as an option (preCombineField, Flink's
        # write.precombine.field, ...) is the table's, as in Hudi: event-time merging.
        ordering = tuple(opts.get(cfg.ORDERING_FIELDS) or ())
        if len(ordering) > 1:
            raise ConfigError(f"one ordering field is supported, got {','.join(ordering)}")
        return ordering[0] if ordering else None
    return ordering_field


def _check_fields(
    schema: pa.Schema, keys: Sequence[str], partition_by: Sequence[str], ordering: str | None
) -> None:
    names = {f.name for f in schema}
    for role, fields in (
        ("record key", list(keys)),
        ("partition", list(partition_by)),
        ("ordering", [ordering] if ordering else []),
    ):
        for f in fields:
            if f not in names:
                raise SchemaError(
                    f"{role} field {f!r} is not a column of the schema ({', '.join(sorted(names))})"
                )


def new_table_config(
    schema: pa.Schema,
    *,
    name: str,
    record_key: str | Sequence[str] | None,
    ordering_field: str | None = None,
    partition_by: Sequence[str] = (),
    table_type: str = "cow",
    table_version: int = 6,
    database: str = "default",
    options: Mapping[str, Any] | None = None,
) -> cfg.TableConfig:
    """The :class:`~hudilite.config.TableConfig` of a new table (nothing is written).

    ``record_key`` is one field, a comma-separated list or a sequence of fields; None (or
    an empty sequence) makes a keyless table, whose record keys each insert generates as
    Hudi 0.14+ does (:mod:`hudilite.auto_keys`); ``options`` are Hudi option keys or
    their aliases, kept as the config's extra properties. Raises :class:`ConfigError`
    for a bad type, version or key generator and :class:`SchemaError` for a field that is
    not a column.
    """
    if table_version not in cfg.SUPPORTED_TABLE_VERSIONS:
        raise ConfigError(f"table_version must be 6, 8 or 9, got {table_version!r}")
    kind = _table_type(table_type)
    cfg.check_options(options)
    raw_opts = {k: str(v) for k, v in (options or {}).items()}
    opts = cfg.Options(raw_opts)
    ordering_field = _ordering_field(ordering_field, opts)
    given = [record_key] if isinstance(record_key, str) else list(record_key or ())
    keys = [k.strip() for part in given for k in part.split(",") if k.strip()]
    if given and not keys:
        raise SchemaError(
            f"record_key {record_key!r} names no column (None makes a table without a record key)"
        )
    if not keys:
        check_new_keyless(name, opts)
    data_schema = to_storage_schema(schema)
    _check_fields(data_schema, keys, partition_by, ordering_field)
    avro = arrow_to_avro_schema(data_schema, f"{name}_record", f"hoodie.{name}")
    return cfg.TableConfig.new(
        name=name,
        table_type=kind,
        table_version=table_version,
        record_key_fields=tuple(keys),
        partition_fields=tuple(partition_by),
        ordering_fields=(ordering_field,) if ordering_field else (),
        # Unset: TableConfig.new infers it (cfg.infer_keygen_type, Hudi's rule).
        keygen_type=keygen_type(opts),
        # Hudi's SQL tables use field=value folders; so do ours unless told otherwise.
        hive_style=bool(opts.get(cfg.HIVE_STYLE)) if opts.is_set(cfg.HIVE_STYLE) else True,
        url_encode=bool(opts.get(cfg.URL_ENCODE)),
        create_schema=json.dumps(avro, separators=(",", ":")),
        database=database,
        # The merge the options ask for, recorded as each version's Hudi records it
        # (version 9: a payload class becomes a merge mode, partial update mode and
        # legacy payload class; 6 and 8 keep the payload class).
        merge_mode=opts.get(cfg.MERGE_MODE),
        payload_class=opts.get(cfg.PAYLOAD_CLASS),
        extra=raw_opts,
    )


def create_table(
    gw: FileSystemGateway,
    schema: pa.Schema,
    *,
    record_key: str | Sequence[str] | None,
    ordering_field: str | None = None,
    partition_by: Sequence[str] = (),
    table_type: str = "cow",
    table_version: int = 6,
    name: str | None = None,
    database: str = "default",
    options: Mapping[str, Any] | None = None,
) -> cfg.TableConfig:
    """Create an empty table at ``gw``'s root and return its config.

    The name defaults to the folder's. Raises :class:`TableExistsError` where a table
    already is, and the errors of :func:`new_table_config` before anything is written.
    """
    if gw.exists(PROPERTIES_FILE):
        raise TableExistsError(f"a Hudi table already exists at {gw.abs_path('')}")
    config = new_table_config(
        schema,
        name=name or gw.abs_path("").rstrip("/").rsplit("/", 1)[-1],
        record_key=record_key,
        ordering_field=ordering_field,
        partition_by=partition_by,
        table_type=table_type,
        table_version=table_version,
        database=database,
        options=options,
    )
    for d in (".hoodie", config.timeline_dir, ".hoodie/.aux", ".hoodie/.temp", ".hoodie/.schema"):
        gw.mkdirs(d)
    gw.mkdirs(config.archive_dir)  # Hudi creates the layout's archive folder
    raw_opts = {k: str(v) for k, v in (options or {}).items()}
    write_defaults = {k: v for k, v in raw_opts.items() if not cfg.is_table_property(k)}
    if write_defaults:
        gw.write_bytes(WRITE_DEFAULTS_FILE, properties_file.encode(write_defaults))
    properties_file.create(gw, config.to_properties())
    return config


def create_table_at(
    path: str,
    schema: pa.Schema,
    *,
    record_key: str | Sequence[str] | None,
    ordering_field: str | None = None,
    partition_by: Sequence[str] = (),
    table_type: str = "cow",
    table_version: int = 6,
    name: str | None = None,
    database: str = "default",
    options: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> FileSystemGateway:
    """:func:`create_table` at ``path`` (a local path or a URI); returns the table's gateway.

    Filesystem connection settings (``fs.s3a.*``, see :mod:`hudilite.storage.fs`) among
    ``options`` count as ``storage_options``: the gateway uses them, the table never stores
    them. ``Table.create`` and the first ``hudilite.save`` of a table create it here.
    """
    storage = {**storage_options_of(options), **storage_options_of(storage_options)}
    kept = {k: v for k, v in (options or {}).items() if not is_storage_option(k)}
    gw = FileSystemGateway(path, storage_options=storage)
    create_table(
        gw,
        schema,
        record_key=record_key,
        ordering_field=ordering_field,
        partition_by=partition_by,
        table_type=table_type,
        table_version=table_version,
        name=name,
        database=database,
        options=kept,
    )
    return gw


__all__ = ["TABLE_TYPES", "create_table", "create_table_at", "keygen_type", "new_table_config"]
