"""Pure helpers of the DDL handlers: column definitions, table options, column notes, partitions.

Nothing here needs a JVM: types are ``pyspark.sql.types`` objects (plain Python), so
every function is unit-tested without Spark.

* Type text and quoting live in :mod:`~hudilite.sqlext.spark_types` (:func:`parse_type`,
  :func:`type_sql`, :func:`quote_identifier`, :func:`sql_string`; re-exported here).
* :func:`columns_schema` turns ``CREATE TABLE`` column definitions into a ``StructType``
  (``NOT NULL`` and ``COMMENT`` kept) with the partition columns moved to the end in
  ``PARTITIONED BY`` order, as Spark and Hudi lay out datasource tables.
* :func:`table_spec` maps the table options (``primaryKey``, ``preCombineField``, ``type``,
  ``hoodie.write.table.version`` and every alias of them) to the arguments of
  :meth:`hudilite.Table.create`; every other option passes through unchanged.
* Column comments and ``NOT NULL`` are not part of the stored Hudi schema (its Avro
  fields are all nullable, without docs); the catalog entry keeps them under
  :data:`COLUMNS_KEY` (:func:`encode_column_notes`), and DESCRIBE and SHOW CREATE TABLE
  read them back. Keys under :data:`INTERNAL_PREFIX` are never shown as table properties.
* :func:`partitions_for_spec` turns a ``DROP PARTITION`` spec into the table's partition
  paths with the table's own key generator (Arrow only; the table state is read from disk).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (
    StructField,
    StructType,
)

from hudilite import config as cfg
from hudilite.errors import SchemaError
from hudilite.keygen import (
    DEFAULT_PARTITION_PATH,
    SIMPLE,
    partition_paths,
    partition_values,
    to_key_text,
)
from hudilite.schema import META_COLUMNS, OPERATION_COL

from .spark_types import column_sql, parse_type, quote_identifier, sql_string, type_sql
from .statements import Column, SqlError

if TYPE_CHECKING:
    from hudilite.tablestate.state import TableState

__all__ = [
    "COLUMNS_KEY",
    "CONSUMED_KEYS",
    "INTERNAL_PREFIX",
    "META_AND_OPERATION",
    "ColumnNote",
    "TableSpec",
    "check_option_conflicts",
    "column_sql",
    "columns_schema",
    "decode_column_notes",
    "encode_column_notes",
    "live_partitions",
    "notes_of",
    "parse_type",
    "partitions_for_spec",
    "quote_identifier",
    "reorder_partitions",
    "resolve_column",
    "spec_text",
    "sql_string",
    "table_spec",
    "type_sql",
    "visible_properties",
    "with_notes",
]

#: Catalog entry properties under this prefix are hudilite's own bookkeeping.
INTERNAL_PREFIX = "hudilite.sql."
#: Catalog entry property holding column comments and NOT NULL flags (JSON).
COLUMNS_KEY = INTERNAL_PREFIX + "columns"
#: Hudi's meta columns (and the changelog operation column): never declared by users.
META_AND_OPERATION = (*META_COLUMNS, OPERATION_COL)


# --------------------------------------------------------------------------------------------
# column definitions -> StructType


def resolve_column(name: str, columns: Sequence[str], role: str, display: str) -> str:
    """The spelling in ``columns`` of ``name`` (case-insensitive, as Spark resolves names);
    :class:`SchemaError` naming it (and the table's columns) when there is none."""
    for c in columns:
        if c.lower() == name.strip().lower():
            return c
    raise SchemaError(
        f"{role} {name.strip()!r} is not a column of {display} ({', '.join(columns)})"
    )


def reorder_partitions(columns: Sequence[str], partition_by: Sequence[str]) -> list[str]:
    """``columns`` with ``partition_by`` moved to the end, in that order."""
    chosen = set(partition_by)
    return [c for c in columns if c not in chosen] + list(partition_by)


def columns_schema(columns: Sequence[Column], display: str) -> StructType:
    """The ``StructType`` of ``CREATE TABLE`` column definitions, in declaration order.

    Hudi's meta columns (``_hoodie_*``, as ``SHOW CREATE TABLE`` of Hudi lists them) are
    dropped; a duplicate name (case-insensitive) is a :class:`SchemaError`.
    """
    fields: list[StructField] = []
    seen: set[str] = set()
    for col in columns:
        if col.name in META_AND_OPERATION:
            continue
        if col.name.lower() in seen:
            raise SchemaError(f"column {col.name!r} is declared twice in {display}")
        seen.add(col.name.lower())
        metadata = {"comment": col.comment} if col.comment is not None else None
        fields.append(StructField(col.name, parse_type(col.type, col.name), col.nullable, metadata))
    if not fields:
        raise SchemaError(f"table {display} needs at least one data column")
    return StructType(fields)


# --------------------------------------------------------------------------------------------
# table options -> Table.create arguments

#: Option keys :func:`table_spec` turns into ``Table.create`` arguments (every spelling).
CONSUMED_KEYS = (
    cfg.RECORDKEY_FIELDS,
    cfg.ORDERING_FIELDS,
    cfg.TABLE_TYPE,
    cfg.TABLE_VERSION,
    cfg.PARTITION_FIELDS,
)


def _is_consumed(key: str) -> bool:
    known = cfg.find_key(key)
    return known is not None and known in CONSUMED_KEYS


def _normalized(key: cfg.ConfigKey, value: str) -> Any:
    """``value`` as ``key`` reads it (``cow`` and ``COPY_ON_WRITE`` are one value)."""
    try:
        parsed = key.parse(value)
    except (ValueError, TypeError):
        parsed = value.strip()
    if isinstance(parsed, str):
        return parsed.lower()
    if isinstance(parsed, tuple | list):
        return tuple(str(p).strip().lower() for p in parsed)
    return parsed


def check_option_conflicts(options: Mapping[str, str], display: str) -> None:
    """Refuse two spellings of one option with different values
    (``'hoodie.table.type'='MERGE_ON_READ', type='cow'``): :class:`SqlError` naming both."""
    seen: dict[str, tuple[str, str, Any]] = {}
    for k, v in options.items():
        known = cfg.find_key(k)
        if known is None:
            continue
        value = _normalized(known, v)
        first = seen.setdefault(known.name, (k, v, value))
        if first[2] != value:
            raise SqlError(
                f"table {display}: options {first[0]} = {first[1]!r} and {k} = {v!r} "
                f"contradict each other (both set {known.name})"
            )


@dataclass(frozen=True)
class TableSpec:
    """What ``CREATE TABLE`` options say about the table to create."""

    record_key: tuple[str, ...]
    ordering_field: str | None
    partition_by: tuple[str, ...]
    table_type: str  # COPY_ON_WRITE | MERGE_ON_READ
    table_version: int
    options: dict[str, str] = field(default_factory=dict)


def table_spec(
    options: Mapping[str, str],
    partitioned_by: Sequence[str],
    columns: Sequence[str],
    display: str,
) -> TableSpec:
    """Map ``CREATE TABLE`` options to :meth:`hudilite.Table.create` arguments.

    The record key comes from ``primaryKey`` (or any alias of
    ``hoodie.datasource.write.recordkey.field``; comma-separated for several fields), the
    ordering field from ``preCombineField``/``orderingFields``/..., the table type from
    ``type`` (``cow``/``mor`` or ``COPY_ON_WRITE``/``MERGE_ON_READ``), the version from
    ``hoodie.write.table.version`` (default 6). Partition columns are ``PARTITIONED BY``
    (or ``hoodie.datasource.write.partitionpath.field`` without it). Field names resolve
    case-insensitively against ``columns``; one that is not a column raises
    :class:`SchemaError`; without a primary key the table is keyless (an empty
    ``record_key``). Every other option is returned in ``options`` unchanged.
    """
    opts = cfg.Options(options)
    # No primary key: a keyless, append-only table whose record keys each insert
    # generates, as Hudi 0.14+ makes it (hudilite.auto_keys).
    keys = opts.get(cfg.RECORDKEY_FIELDS) or ()
    ordering = opts.get(cfg.ORDERING_FIELDS) or ()
    if len(ordering) > 1:
        raise SqlError(
            f"table {display}: one ordering field is supported, got "
            f"preCombineField = {','.join(ordering)!r}"
        )
    parts = [p.strip() for p in partitioned_by]
    option_parts = [p.split(":", 1)[0] for p in opts.get(cfg.PARTITION_FIELDS) or ()]
    if parts and option_parts and [p.lower() for p in parts] != [p.lower() for p in option_parts]:
        raise SqlError(
            f"table {display}: PARTITIONED BY ({', '.join(parts)}) contradicts option "
            f"{cfg.PARTITION_FIELDS.name} = {','.join(option_parts)!r}"
        )
    parts = parts or option_parts
    passthrough = {k: v for k, v in options.items() if not _is_consumed(k)}
    typed_parts = opts.get_raw(cfg.PARTITION_FIELDS)
    if typed_parts and ":" in typed_parts:
        # CUSTOM key generator parts (field:SIMPLE|TIMESTAMP) are read from the options.
        passthrough[cfg.PARTITION_FIELDS.name] = typed_parts
    resolved_parts = tuple(resolve_column(p, columns, "partition column", display) for p in parts)
    if len({p.lower() for p in resolved_parts}) != len(resolved_parts):
        raise SqlError(f"table {display}: a partition column is listed twice ({', '.join(parts)})")
    return TableSpec(
        record_key=tuple(resolve_column(k, columns, "primary key field", display) for k in keys),
        ordering_field=(
            resolve_column(ordering[0], columns, "ordering (preCombine) field", display)
            if ordering
            else None
        ),
        partition_by=resolved_parts,
        table_type=opts.get(cfg.TABLE_TYPE),
        table_version=int(opts.get(cfg.TABLE_VERSION)),
        options=passthrough,
    )


# --------------------------------------------------------------------------------------------
# column notes (comments, NOT NULL) in the catalog entry


@dataclass(frozen=True)
class ColumnNote:
    """What the catalog remembers about a column beyond its stored type."""

    comment: str | None = None
    nullable: bool = True


def notes_of(schema: StructType) -> dict[str, ColumnNote]:
    """The comments and NOT NULL flags of ``schema``'s top-level columns (others omitted)."""
    out: dict[str, ColumnNote] = {}
    for f in schema.fields:
        comment = (f.metadata or {}).get("comment")
        if comment is not None or not f.nullable:
            out[f.name] = ColumnNote(None if comment is None else str(comment), f.nullable)
    return out


def encode_column_notes(notes: Mapping[str, ColumnNote]) -> str:
    """JSON text of ``notes`` for :data:`COLUMNS_KEY`."""
    doc = {
        name: {
            **({"comment": n.comment} if n.comment is not None else {}),
            **({"nullable": False} if not n.nullable else {}),
        }
        for name, n in notes.items()
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def decode_column_notes(properties: Mapping[str, str]) -> dict[str, ColumnNote]:
    """The notes kept in a catalog entry's properties, keyed by lower-case column name."""
    text = properties.get(COLUMNS_KEY)
    if not text:
        return {}
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    out: dict[str, ColumnNote] = {}
    for name, note in doc.items() if isinstance(doc, dict) else ():
        if isinstance(note, dict):
            comment = note.get("comment")
            out[str(name).lower()] = ColumnNote(
                None if comment is None else str(comment), bool(note.get("nullable", True))
            )
    return out


def visible_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """A catalog entry's properties without hudilite's bookkeeping keys."""
    return {k: v for k, v in properties.items() if not k.startswith(INTERNAL_PREFIX)}


def with_notes(schema: StructType, notes: Mapping[str, ColumnNote]) -> StructType:
    """``schema`` with the comments and NOT NULL flags of ``notes`` (by lower-case name)."""
    fields = []
    for f in schema.fields:
        note = notes.get(f.name.lower())
        if note is None:
            fields.append(f)
            continue
        metadata = dict(f.metadata or {})
        if note.comment is not None:
            metadata["comment"] = note.comment
        fields.append(StructField(f.name, f.dataType, note.nullable, metadata or None))
    return StructType(fields)


# --------------------------------------------------------------------------------------------
# partitions


def live_partitions(state: TableState) -> list[str]:
    """Partition paths holding at least one live file group, sorted."""
    # Names partitions only: a damaged file fails the reads and writes, not the listing.
    return sorted({s.partition for s in state.view.latest_slices(check=False)})


def spec_text(spec: Mapping[str, Any]) -> str:
    """A partition spec as SQL text, for messages: ``(city='sf', day=3)``."""

    def value(v: Any) -> str:
        return "NULL" if v is None else sql_string(str(v)) if isinstance(v, str) else str(v)

    return "(" + ", ".join(f"{k}={value(v)}" for k, v in spec.items()) + ")"


def _value_array(value: Any, arrow_type: pa.DataType, column: str, tz: str) -> pa.Array:
    """``value`` (a partition spec literal) as a one-element array of the column's type."""
    try:
        arr = pa.array([value])
        if pa.types.is_timestamp(arrow_type) and pa.types.is_string(arr.type):
            naive = arr.cast(pa.timestamp("us"))
            return pc.assume_timezone(naive, tz).cast(arrow_type)
        return arr.cast(arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(
            f"partition value {value!r} does not fit column {column!r} ({arrow_type}): {exc}"
        ) from None


def partitions_for_spec(
    state: TableState, spec: Mapping[str, Any], display: str, tz: str = "UTC"
) -> tuple[list[str], str | None]:
    """The live partition paths a DROP PARTITION spec names, and the path a full spec
    renders to (None for a partial spec or a TIMESTAMP/CUSTOM key generator).

    Values are cast to the columns' types and rendered by the table's key generator, so
    hive style, several fields and URL-encoding come out as the table stores them.
    """
    config = state.config
    fields = list(config.partition_field_names)
    keygen = state.keygen(state.options())
    kinds = dict(keygen.partition_parts)
    types = {f.name: f.type for f in state.data_schema}
    given: dict[str, Any] = {}
    for key, value in spec.items():
        column = resolve_column(key, fields, "partition column", display)
        if column in given:
            raise SqlError(f"partition column {column!r} is given twice in {spec_text(spec)}")
        given[column] = value
    arrays = {
        c: (
            _value_array(v, types[c], c, tz)
            if v is not None and kinds.get(c) == SIMPLE and c in types
            else None
        )
        for c, v in given.items()
    }
    rendered: str | None = None
    if set(given) == set(fields) and all(a is not None for a in arrays.values()):
        batch = pa.table({c: arrays[c] for c in fields})
        rendered = partition_paths(keygen, batch)[0].as_py()
    wanted: dict[str, str] = {}
    for c, v in given.items():
        arr = arrays[c]
        text = to_key_text(arr, c)[0].as_py() if arr is not None else v
        wanted[c] = DEFAULT_PARTITION_PATH if text is None or text == "" else str(text)
    matches = []
    for path in live_partitions(state):
        if rendered is not None:
            if path == rendered:
                matches.append(path)
            continue
        values = partition_values(keygen, path)
        if all(values.get(c) == t for c, t in wanted.items()):
            matches.append(path)
    return matches, rendered
