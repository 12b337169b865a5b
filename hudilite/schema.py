"""Types: meta columns, the Arrow types hudilite stores, and Arrow <-> Avro schemas.

Hudi describes a table's columns with Avro schemas (``hoodie.table.create.schema``,
``extraMetadata.schema`` of every commit, the SCHEMA header of log blocks) while
its data files are Parquet. hudilite works in Arrow, so this module owns the three
mappings that must agree for Spark, Hudi (Java) and hudi-rs to read what we write:

* :func:`to_storage_schema` -- the Arrow types written to Parquet (the ones Spark's
  Parquet reader and parquet-avro produce for the same data, e.g. ``int8`` ->
  ``int32`` because Avro has no byte type and Hudi stores Spark bytes/shorts as int).
* :func:`arrow_to_avro_schema` -- the Avro JSON Hudi writes into commit metadata
  (``["null", T]`` unions with ``"default": null``; decimals as named ``fixed``;
  nested records named after their field), checked against the fixtures.
* :func:`avro_to_arrow_schema` -- the inverse, able to read every
  ``hoodie.table.create.schema`` Hudi writes (``[T, "null"]`` unions there).

No pyspark here: Spark <-> Arrow conversions live in ``hudilite/spark/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from hudilite.errors import SchemaError

# --- column names --------------------------------------------------------------------------

COMMIT_TIME_COL = "_hoodie_commit_time"
COMMIT_SEQNO_COL = "_hoodie_commit_seqno"
RECORD_KEY_COL = "_hoodie_record_key"
PARTITION_PATH_COL = "_hoodie_partition_path"
FILE_NAME_COL = "_hoodie_file_name"
#: The five meta columns every Hudi base file and log record starts with, in file order.
META_COLUMNS: tuple[str, ...] = (
    COMMIT_TIME_COL,
    COMMIT_SEQNO_COL,
    RECORD_KEY_COL,
    PARTITION_PATH_COL,
    FILE_NAME_COL,
)
#: Optional sixth meta column of changelog-mode tables (I, U, D, ...).
OPERATION_COL = "_hoodie_operation"
#: A data column whose ``true`` value marks a record as a delete.
IS_DELETED_COL = "_hoodie_is_deleted"

# Internal columns: they travel with records between hudilite's own stages and are
# never written to a Hudi file.
#: int64 write order of a record within its batch (later writes have larger values).
SEQ_COL = "_hl_seq"
#: bool, the record is a delete.
DELETE_COL = "_hl_delete"
#: string, the file group a record was tagged with by the index.
FILE_ID_COL = "_hl_file_id"
#: bool, set by the merge on output rows that came from incoming records (their
#: commit time / seqno / file name must be stamped by the writer).
CHANGED_COL = "_hl_changed"
INTERNAL_COLUMNS: tuple[str, ...] = (SEQ_COL, DELETE_COL, FILE_ID_COL, CHANGED_COL)

_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# --- storage types -------------------------------------------------------------------------


def to_storage_schema(arrow_schema: pa.Schema) -> pa.Schema:
    """The schema hudilite writes for data of ``arrow_schema``.

    Every type is mapped to the one Spark and parquet-avro use for the matching
    Spark/Avro type, so Spark, Hudi and hudi-rs all read the files back unchanged:
    ``int8``/``int16``/``uint8``/``uint16`` -> ``int32``; ``uint32``/``uint64`` ->
    ``int64``; ``float16`` -> ``float32``; large/view strings and binaries -> plain;
    ``fixed_size_binary`` -> ``binary``; every timestamp -> ``timestamp[us, UTC]``
    (Spark's TIMESTAMP is UTC-adjusted micros, Avro ``timestamp-micros``; naive
    timestamps are taken as UTC); ``date64`` -> ``date32``; decimals -> ``decimal128``;
    lists (any flavour) -> ``list<element>``; dictionaries -> their value type;
    structs and maps recursively. Every field becomes nullable (Hudi's Avro
    fields are all ``["null", T]``) except map keys, which Parquet requires.
    Schema and field metadata are dropped: the storage schema is canonical.

    Raises :class:`SchemaError` for types with no Spark/Avro counterpart (null,
    time, duration, interval, union, empty struct, maps with non-string keys are
    allowed by Parquet but not by Avro and are rejected too).
    """
    return pa.schema([_storage_field(f, f.name) for f in arrow_schema])


def _storage_field(field: pa.Field, path: str) -> pa.Field:
    return pa.field(field.name, _storage_type(field.type, path), nullable=True)


def _storage_type(t: pa.DataType, path: str) -> pa.DataType:
    """Map one Arrow type to its storage type; ``path`` names the column in errors."""
    if pa.types.is_dictionary(t):
        return _storage_type(t.value_type, path)
    if pa.types.is_boolean(t) or t in (pa.int32(), pa.int64(), pa.float32(), pa.float64()):
        return t
    if t in (pa.int8(), pa.int16(), pa.uint8(), pa.uint16()):
        return pa.int32()
    if t in (pa.uint32(), pa.uint64()):
        return pa.int64()
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_view(t, "string_view"):
        return pa.string()
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or _is_view(t, "binary_view")
    ):
        return pa.binary()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_date(t):
        return pa.date32()
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise SchemaError(
                f"column {path!r}: {t} has precision {t.precision}; at most 38 is supported"
            )
        return pa.decimal128(t.precision, t.scale)
    if pa.types.is_map(t):
        key = _storage_type(t.key_type, f"{path}.key")
        if key != pa.string():
            raise SchemaError(
                f"column {path!r}: map keys must be strings for Avro, got {t.key_type}"
            )
        value = _storage_type(t.item_type, f"{path}.value")
        return pa.map_(pa.field("key", key, nullable=False), pa.field("value", value))
    if _is_list_like(t):
        item = _storage_type(t.value_type, f"{path}.element")
        return pa.list_(pa.field("element", item, nullable=True))
    if pa.types.is_struct(t):
        if t.num_fields == 0:
            raise SchemaError(f"column {path!r}: a struct without fields cannot be stored")
        return pa.struct([_storage_field(c, f"{path}.{c.name}") for c in t])
    if pa.types.is_null(t):
        raise SchemaError(
            f"column {path!r} has Arrow type null (every value is None); give it a concrete type"
        )
    raise SchemaError(f"column {path!r}: Arrow type {t} has no Hudi/Spark counterpart")


def _is_view(t: pa.DataType, name: str) -> bool:
    check = getattr(pa.types, f"is_{name}", None)
    return bool(check is not None and check(t))


def _is_list_like(t: pa.DataType) -> bool:
    return (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or _is_view(t, "list_view")
        or _is_view(t, "large_list_view")
    )


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the five meta columns (nullable strings) first.

    Meta columns already present are moved to the front (so the function is
    idempotent); every other field keeps its order.
    """
    rest = [f for f in schema if f.name not in META_COLUMNS]
    meta = [pa.field(name, pa.string(), nullable=True) for name in META_COLUMNS]
    return pa.schema(meta + rest, metadata=schema.metadata)


def data_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` without the meta columns and hudilite's internal columns."""
    drop = set(META_COLUMNS) | set(INTERNAL_COLUMNS) | {OPERATION_COL}
    return pa.schema([f for f in schema if f.name not in drop], metadata=schema.metadata)


def latest_schema_json(recorded: Iterable[str | None], create_schema: str | None) -> str | None:
    """The table's Avro schema (JSON): the latest write's, else the create schema.

    The one place this is decided, called by ``Timeline.schema_json`` (which orders the
    writes, Hudi's rule) for the table state, table services and the read planner.
    ``recorded`` is the ``schema`` each write recorded in its commit metadata (None or
    empty when it recorded none), newest write first; it is consumed lazily, so commit
    metadata past the first recorded schema is never read. The text is kept verbatim, so
    a schema written by Hudi stays byte-identical.
    """
    return next((schema for schema in recorded if schema), None) or create_schema


# --- casting -------------------------------------------------------------------------------


def cast_to_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly the columns of ``schema``, in its order and with its types.

    Columns are matched by exact name; values are cast with Arrow's safe cast
    (no silent overflow or truncation; structs are matched by field name).
    Raises :class:`SchemaError` naming the column when one is missing, one is
    not in ``schema``, a cast fails (both types are named), or a non-nullable
    field receives nulls.
    """
    names = table.column_names
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise SchemaError(f"duplicate column names {dupes}")
    expected = set(schema.names)
    extra = [n for n in names if n not in expected]
    if extra:
        name = extra[0]
        raise SchemaError(
            f"column {name!r} ({table.schema.field(name).type}) is not in the table schema"
            f"{_did_you_mean(name, schema.names)}"
        )
    columns = []
    for field in schema:
        if field.name not in table.column_names:
            raise SchemaError(
                f"column {field.name!r} ({field.type}) is missing{_did_you_mean(field.name, names)}"
            )
        column = table[field.name]
        if column.type != field.type:
            try:
                column = column.cast(field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise SchemaError(
                    f"column {field.name!r}: cannot cast {column.type} to {field.type}: {exc}"
                ) from exc
        if not field.nullable and column.null_count:
            raise SchemaError(f"column {field.name!r} is not nullable but holds null values")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _did_you_mean(name: str, candidates: list[str]) -> str:
    """A hint for names that differ only in case (Spark matches case-insensitively)."""
    for cand in candidates:
        if cand.lower() == name.lower():
            return f" (did you mean {cand!r}?)"
    return ""


# --- Arrow -> Avro -------------------------------------------------------------------------


def arrow_to_avro_schema(schema: pa.Schema, record_name: str, namespace: str) -> dict[str, Any]:
    """The Avro record schema Hudi writes for ``schema`` (commit ``extraMetadata.schema`` style).

    Mirrors Spark's ``SchemaConverters.toAvroType`` as post-processed by Hudi:
    every field is ``["null", T]`` with ``"default": null``; a nested struct is a
    record named after its field in the namespace of the enclosing record's full
    name; list items and map values are ``["null", T]`` unions; decimals are
    ``fixed`` named ``fixed`` in namespace ``<enclosing record>.<field>`` with the
    minimal byte size for the precision; dates ``int/date``; timestamps with a
    time zone ``long/timestamp-micros`` (``-millis`` for ms units), naive ones
    ``local-timestamp-*``. Meta columns get ``"doc": ""`` as Hudi writes them.
    Typical call: ``arrow_to_avro_schema(s, f"{table}_record", f"hoodie.{table}")``.
    """
    _check_avro_name(record_name, record_name)
    fields = [_avro_field(f, _full_name(namespace, record_name)) for f in schema]
    out: dict[str, Any] = {"type": "record", "name": record_name}
    if namespace:
        out["namespace"] = namespace
    out["fields"] = fields
    return out


def _full_name(namespace: str, name: str) -> str:
    return f"{namespace}.{name}" if namespace else name


def _check_avro_name(name: str, path: str) -> None:
    if not _AVRO_NAME.match(name):
        raise SchemaError(
            f"column {path!r}: {name!r} is not a valid Avro name "
            "(letters, digits and '_', not starting with a digit)"
        )


def _avro_field(field: pa.Field, parent_full_name: str, path: str | None = None) -> dict[str, Any]:
    path = field.name if path is None else path
    _check_avro_name(field.name, path)
    avro_type = _avro_type(field.type, field.name, parent_full_name, path)
    out: dict[str, Any] = {"name": field.name, "type": ["null", avro_type]}
    if field.name in META_COLUMNS or field.name == OPERATION_COL:
        out["doc"] = ""
    out["default"] = None
    return out


def _avro_type(t: pa.DataType, name: str, namespace: str, path: str) -> Any:
    """Avro type of a value of Arrow type ``t`` held by field ``name`` of record ``namespace``."""
    if pa.types.is_dictionary(t):
        return _avro_type(t.value_type, name, namespace, path)
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return "long" if t.bit_width == 64 or t == pa.uint32() else "int"
    if pa.types.is_floating(t):
        return "double" if t == pa.float64() else "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_view(t, "string_view"):
        return "string"
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or _is_view(t, "binary_view")
    ):
        return "bytes"
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(t):
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        prefix = "timestamp" if t.tz is not None else "local-timestamp"
        return {"type": "long", "logicalType": f"{prefix}-{unit}"}
    if pa.types.is_decimal(t):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": decimal_fixed_size(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    if pa.types.is_map(t):
        if not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type)):
            raise SchemaError(f"column {path!r}: Avro map keys must be strings, got {t.key_type}")
        values = _avro_type(t.item_type, name, namespace, f"{path}.value")
        return {"type": "map", "values": ["null", values]}
    if _is_list_like(t):
        items = _avro_type(t.value_type, name, namespace, f"{path}.element")
        return {"type": "array", "items": ["null", items]}
    if pa.types.is_struct(t):
        full = _full_name(namespace, name)
        return {
            "type": "record",
            "name": name,
            "namespace": namespace,
            "fields": [_avro_field(c, full, f"{path}.{c.name}") for c in t],
        }
    raise SchemaError(f"column {path!r}: Arrow type {t} has no Avro counterpart")


def decimal_fixed_size(precision: int) -> int:
    """Bytes of the smallest two's-complement ``fixed`` holding ``precision`` decimal digits."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


# --- Avro -> Arrow -------------------------------------------------------------------------

_AVRO_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


def avro_to_arrow_schema(avro_json: str | Mapping[str, Any]) -> pa.Schema:
    """The Arrow schema of an Avro record schema (a JSON string or parsed dict).

    Reads every ``hoodie.table.create.schema`` and commit schema Hudi writes:
    two-branch unions with ``null`` (either order) become nullable fields, other
    fields are non-nullable; ``decimal`` (bytes or fixed) -> ``decimal128``;
    ``date`` -> ``date32``; ``timestamp-millis/micros`` -> ``timestamp[ms|us, UTC]``;
    ``local-timestamp-*`` -> naive timestamps; ``time-*`` -> ``time32/time64``;
    ``enum`` and ``uuid`` -> ``string``; ``fixed`` -> ``binary``; arrays ->
    ``list<element>``; maps -> ``map<string, V>``; records -> structs. Named
    types may be referenced by (full or short) name after their definition.
    Other unions and recursive types raise :class:`SchemaError`.
    """
    if isinstance(avro_json, str | bytes):
        try:
            parsed = json.loads(avro_json)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"invalid Avro schema JSON: {exc}") from exc
    else:
        parsed = avro_json
    if not isinstance(parsed, Mapping) or parsed.get("type") != "record":
        raise SchemaError("an Avro table schema must be a record")
    struct = _AvroParser().arrow_type(parsed, parsed.get("namespace", ""), "")
    return pa.schema(list(struct))


class _AvroParser:
    """Avro -> Arrow with the table of named types seen so far (for references)."""

    def __init__(self) -> None:
        self.named: dict[str, pa.DataType | None] = {}  # None while a record is being defined

    def field(self, spec: Mapping[str, Any], namespace: str, path: str) -> pa.Field:
        name = spec.get("name")
        if not isinstance(name, str):
            raise SchemaError(f"Avro field without a name in {path!r}")
        full = f"{path}.{name}" if path else name
        avro_type = spec.get("type")
        nullable = False
        if isinstance(avro_type, list):
            branches = [b for b in avro_type if b != "null"]
            if len(branches) != 1 or len(avro_type) > 2:
                raise SchemaError(f"column {full!r}: Avro union {avro_type} is not supported")
            nullable = len(avro_type) == 2
            avro_type = branches[0]
        return pa.field(name, self.arrow_type(avro_type, namespace, full), nullable=nullable)

    def arrow_type(self, spec: Any, namespace: str, path: str) -> pa.DataType:
        if isinstance(spec, list):  # union in item/value position
            branches = [b for b in spec if b != "null"]
            if len(branches) != 1:
                raise SchemaError(f"column {path!r}: Avro union {spec} is not supported")
            return self.arrow_type(branches[0], namespace, path)
        if isinstance(spec, str):
            if spec in _AVRO_PRIMITIVES:
                return _AVRO_PRIMITIVES[spec]
            return self._reference(spec, namespace, path)
        if not isinstance(spec, Mapping):
            raise SchemaError(f"column {path!r}: malformed Avro type {spec!r}")
        kind = spec.get("type")
        logical = spec.get("logicalType")
        if logical is not None:
            converted = self._logical(spec, kind, logical, namespace)
            if converted is not None:
                return converted
        if kind == "record":
            return self._record(spec, namespace, path)
        if kind == "array":
            item = self.arrow_type(spec["items"], namespace, f"{path}.element")
            return pa.list_(pa.field("element", item, nullable=_has_null(spec["items"])))
        if kind == "map":
            value = self.arrow_type(spec["values"], namespace, f"{path}.value")
            return pa.map_(
                pa.field("key", pa.string(), nullable=False),
                pa.field("value", value, nullable=_has_null(spec["values"])),
            )
        if kind in ("enum", "fixed"):
            self._define(spec, namespace, pa.string() if kind == "enum" else pa.binary())
            return pa.string() if kind == "enum" else pa.binary()
        if isinstance(kind, str | list | Mapping):
            return self.arrow_type(kind, namespace, path)  # {"type": "string"} and the like
        raise SchemaError(f"column {path!r}: malformed Avro type {spec!r}")

    def _logical(
        self, spec: Mapping[str, Any], kind: Any, logical: str, namespace: str
    ) -> pa.DataType | None:
        """Arrow type of a logical type, or None to fall back to the underlying type."""
        if logical == "decimal" and kind in ("bytes", "fixed"):
            precision, scale = int(spec["precision"]), int(spec.get("scale", 0))
            result: pa.DataType = (
                pa.decimal128(precision, scale)
                if precision <= 38
                else pa.decimal256(precision, scale)
            )
            if kind == "fixed":
                self._define(spec, spec.get("namespace", namespace), result)
            return result
        simple = {
            ("int", "date"): pa.date32(),
            ("int", "time-millis"): pa.time32("ms"),
            ("long", "time-micros"): pa.time64("us"),
            ("long", "timestamp-millis"): pa.timestamp("ms", tz="UTC"),
            ("long", "timestamp-micros"): pa.timestamp("us", tz="UTC"),
            ("long", "local-timestamp-millis"): pa.timestamp("ms"),
            ("long", "local-timestamp-micros"): pa.timestamp("us"),
            ("string", "uuid"): pa.string(),
        }
        return simple.get((kind, logical))  # unknown logical types: Avro says ignore them

    def _record(self, spec: Mapping[str, Any], namespace: str, path: str) -> pa.DataType:
        name = spec["name"]
        ns = spec.get("namespace", namespace) if "." not in name else name.rsplit(".", 1)[0]
        full = name if "." in name else _full_name(ns, name)
        self.named[full] = None  # being defined: a reference now would be recursive
        fields = [self.field(f, full, path) for f in spec.get("fields", [])]
        result = pa.struct(fields)
        self.named[full] = result
        return result

    def _define(self, spec: Mapping[str, Any], namespace: str, arrow: pa.DataType) -> None:
        name = spec.get("name")
        if isinstance(name, str):
            self.named[name if "." in name else _full_name(namespace, name)] = arrow

    def _reference(self, name: str, namespace: str, path: str) -> pa.DataType:
        candidates = [name, _full_name(namespace, name)]
        candidates += [k for k in self.named if k.rsplit(".", 1)[-1] == name]
        for cand in candidates:
            if cand in self.named:
                found = self.named[cand]
                if found is None:
                    raise SchemaError(f"column {path!r}: recursive Avro type {name!r}")
                return found
        raise SchemaError(f"column {path!r}: unknown Avro type {name!r}")


def _has_null(spec: Any) -> bool:
    return isinstance(spec, list) and "null" in spec


__all__ = [
    "CHANGED_COL",
    "COMMIT_SEQNO_COL",
    "COMMIT_TIME_COL",
    "DELETE_COL",
    "FILE_ID_COL",
    "FILE_NAME_COL",
    "INTERNAL_COLUMNS",
    "IS_DELETED_COL",
    "META_COLUMNS",
    "OPERATION_COL",
    "PARTITION_PATH_COL",
    "RECORD_KEY_COL",
    "SEQ_COL",
    "arrow_to_avro_schema",
    "avro_to_arrow_schema",
    "cast_to_schema",
    "data_schema",
    "decimal_fixed_size",
    "to_storage_schema",
    "with_meta_columns",
]
