"""``export_instants``: copy a table's completed instants to a local folder, as Hudi's
``ExportInstantsProcedure`` does.

Parameters and output are Hudi's: ``table``, ``local_folder`` (an existing local folder),
``limit`` (-1: all), ``actions`` (comma-separated; default
``clean,commit,deltacommit,rollback,savepoint,restore``) and ``desc`` (newest first), one row
``export_detail`` = ``Exported <n> Instants to <local_folder>``. As in the other procedures,
``path`` may name the table instead, after Hudi's parameters.

Each completed instant of the active timeline whose action is listed is written to
``<local_folder>/<its timeline file name>`` (an existing file is overwritten), oldest first:

* ``commit`` and ``deltacommit``: the instant file's bytes as they are (Hudi: "already in
  json format"; on table version 8 they are Avro, and Hudi 1.x copies them as they are too);
* ``clean``, ``rollback``, ``savepoint``: the Avro metadata as Avro's pretty JSON encoding
  (Hudi's ``HoodieAvroUtils.avroToJson(metadata, true)``: a union value is wrapped in its
  branch name, ``{"int" : 2}``), with the schema the file was written with;
* any other action (``restore``, ``replacecommit``, ...) is skipped and not counted, as in
  Hudi, whose export has no case for it.

Where Hudi differs: its ``limit`` only bounds archived instants (the active ones are all
written); here it bounds the instants written. Hudi also exports archived instants from
``.hoodie/.commits_.archive*`` -- a place where no table of version 6 or 8 keeps its archive
(``.hoodie/archived``, the LSM history), so neither exports archived instants.
"""

from __future__ import annotations

import io
import json
import math
import os
from decimal import Decimal
from typing import Any

import fastavro

from hudilite.errors import CorruptFileError
from hudilite.storage.fs import join
from hudilite.timeline.instant import CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, ROLLBACK, SAVEPOINT
from hudilite.timeline.timeline import savepoint_instants

from .registry import (
    Output,
    Param,
    ProcedureArgumentError,
    ProcedureContext,
    ProcedureError,
    procedure,
)

DEFAULT_ACTIONS = "clean,commit,deltacommit,rollback,savepoint,restore"
_RAW = (COMMIT, DELTA_COMMIT, COMPACTION)
_AS_JSON = (CLEAN, ROLLBACK, SAVEPOINT)

# ---------------------------------------------------------------------------------------
# Avro's JSON encoding (org.apache.avro.io.JsonEncoder) with Jackson's default pretty printer

_PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))


class _Names:
    """Named types of a schema by full name, so a later reference by name resolves."""

    def __init__(self) -> None:
        self.types: dict[str, dict[str, Any]] = {}

    def resolve(self, schema: Any, namespace: str) -> Any:
        """``schema`` with a name reference replaced by the type it names; a named type
        seen for the first time is registered (with its full name and namespace)."""
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return schema
            full = schema if "." in schema or not namespace else f"{namespace}.{schema}"
            found = self.types.get(full) or self.types.get(schema)
            if found is None:
                raise CorruptFileError(f"Avro schema names unknown type {schema!r}")
            return found
        if isinstance(schema, dict) and schema.get("type") in ("record", "enum", "fixed"):
            if "_full" in schema:
                return schema
            full = self.full_name(schema, namespace)
            return self.types.setdefault(full, {**schema, "_full": full})
        return schema

    @staticmethod
    def full_name(schema: dict[str, Any], namespace: str) -> str:
        """A named type's full name (its own namespace, else the enclosing one)."""
        name = str(schema["name"])
        ns = schema.get("namespace", namespace)
        return name if "." in name or not ns else f"{ns}.{name}"

    def register(self, schema: Any, namespace: str) -> None:
        """Register every named type defined anywhere in ``schema`` (a reference may come
        before the definition is reached, e.g. when the defining field's value is null)."""
        if isinstance(schema, list):
            for branch in schema:
                self.register(branch, namespace)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "enum", "fixed"):
                full = self.full_name(schema, namespace)
                self.types.setdefault(full, {**schema, "_full": full})
                for f in schema.get("fields") or []:
                    self.register(f["type"], full.rpartition(".")[0])
            elif kind == "array":
                self.register(schema["items"], namespace)
            elif kind == "map":
                self.register(schema["values"], namespace)
            elif isinstance(kind, dict | list):
                self.register(kind, namespace)


def _type_name(schema: Any) -> str:
    """The union branch name Avro's JSON encoding writes: a named type's full name."""
    if isinstance(schema, dict):
        return str(schema.get("_full") or schema["type"])
    return str(schema)


def _matches(schema: Any, value: Any) -> bool:
    """Whether ``value`` (as fastavro decodes) is of union branch ``schema``."""
    kind = schema["type"] if isinstance(schema, dict) else schema
    if isinstance(kind, dict | list):
        return False
    return {
        "null": value is None,
        "boolean": isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "long": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, float),
        "double": isinstance(value, float),
        "bytes": isinstance(value, bytes),
        "fixed": isinstance(value, bytes),
        "string": isinstance(value, str),
        "enum": isinstance(value, str),
        "array": isinstance(value, list),
        "map": isinstance(value, dict),
        "record": isinstance(value, dict),
    }.get(str(kind), False)


def _java_double(value: float) -> str:
    """Jackson's ``writeNumber(double)``: Java's ``Double.toString`` (shortest digits; plain
    from 10^-3 up to 10^7, else ``d.dddE<n>``)."""
    if math.isnan(value) or math.isinf(value):
        return '"NaN"' if math.isnan(value) else ('"Infinity"' if value > 0 else '"-Infinity"')
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(float(value))  # Python's repr is plain in this range and keeps ".0"
    exact = Decimal(repr(float(value)))
    sign, digits, _ = exact.as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{exact.adjusted()}"


def _string(text: str) -> str:
    """A JSON string as Jackson writes it (UTF-8, control characters escaped)."""
    return json.dumps(text, ensure_ascii=False)


class _Writer:
    """Avro JSON encoding of one record, laid out as Jackson's ``DefaultPrettyPrinter``
    (two-space indent, ``"key" : value``, arrays on one line as ``[ a, b ]``, empty
    containers ``{ }`` and ``[ ]``)."""

    def __init__(self) -> None:
        self.names = _Names()

    def value(self, schema: Any, value: Any, depth: int, namespace: str) -> str:
        schema = self.names.resolve(schema, namespace)
        if isinstance(schema, list):
            branches = [self.names.resolve(s, namespace) for s in schema]
            branch = next((b for b in branches if _matches(b, value)), None)
            if branch is None:
                raise CorruptFileError(f"Avro value {value!r} matches no branch of {schema!r}")
            if branch == "null":
                return "null"
            inner = self.value(branch, value, depth + 1, namespace)
            return self._object([(_type_name(branch), inner)], depth)
        kind = schema["type"] if isinstance(schema, dict) else schema
        if isinstance(kind, dict | list):  # {"type": {...}}: a wrapped type
            return self.value(kind, value, depth, namespace)
        if kind == "null":
            return "null"
        if kind == "boolean":
            return "true" if value else "false"
        if kind in ("int", "long"):
            return str(int(value))
        if kind in ("float", "double"):
            return _java_double(float(value))
        if kind in ("bytes", "fixed"):
            return _string(bytes(value).decode("latin-1"))
        if kind in ("string", "enum"):
            return _string(str(value))
        if kind == "array":
            items = [self.value(schema["items"], v, depth, namespace) for v in value]
            return "[ " + ", ".join(items) + " ]" if items else "[ ]"
        if kind == "map":
            pairs = [
                (k, self.value(schema["values"], v, depth + 1, namespace)) for k, v in value.items()
            ]
            return self._object(pairs, depth)
        if kind == "record":
            ns = schema["_full"].rpartition(".")[0]
            pairs = [
                (f["name"], self.value(f["type"], value.get(f["name"]), depth + 1, ns))
                for f in schema["fields"]
            ]
            return self._object(pairs, depth)
        raise CorruptFileError(f"unsupported Avro type {kind!r}")

    @staticmethod
    def _object(pairs: list[tuple[str, str]], depth: int) -> str:
        if not pairs:
            return "{ }"
        pad = "  " * (depth + 1)
        body = ",\n".join(f"{pad}{_string(k)} : {v}" for k, v in pairs)
        return "{\n" + body + "\n" + "  " * depth + "}"


def avro_to_json(data: bytes) -> bytes:
    """The one record of an Avro container as Hudi's ``avroToJson(record, pretty=true)``
    writes it, with the container's writer schema."""
    try:
        reader = fastavro.reader(io.BytesIO(data))
        records = list(reader)
        schema = reader.writer_schema
    except Exception as exc:  # fastavro raises assorted errors on garbage
        raise CorruptFileError(f"unreadable Avro container: {exc}") from exc
    if len(records) != 1:
        raise CorruptFileError(f"expected one Avro record, found {len(records)}")
    writer = _Writer()
    writer.names.register(schema, "")
    return writer.value(schema, records[0], 0, "").encode("utf-8")


# ---------------------------------------------------------------------------------------
# export_instants


@procedure(
    "export_instants",
    [
        Param("table", "string"),
        Param("local_folder", "string", required=True),
        Param("limit", "integer", default=-1),
        Param("actions", "string", default=DEFAULT_ACTIONS),
        Param("desc", "boolean", default=False),
        Param("path", "string"),
    ],
    [Output("export_detail")],
    "Exports the table's completed instants (commit files, clean, rollback and savepoint "
    "metadata as JSON) to a local folder.",
)
def export_instants(ctx: ProcedureContext, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """One file per exported completed instant, named as its timeline file: commit and
    deltacommit files as they are, clean, rollback and savepoint metadata as Avro's pretty
    JSON, other actions skipped; oldest first (``desc``: newest), at most ``limit``. One
    row says how many were written."""
    state = ctx.table(args).state()
    folder = str(args["local_folder"])
    if not os.path.isdir(folder):
        raise ProcedureArgumentError(
            f"{ctx.procedure}: local_folder {folder!r} is not a valid local directory"
        )
    actions = {a.strip() for a in str(args["actions"] or "").split(",") if a.strip()}
    limit = args["limit"]
    if limit < -1:
        raise ProcedureArgumentError(f"{ctx.procedure}: limit {limit} is negative (-1: all)")
    # A savepoint shares its commit's time, so the timeline's instants leave it out.
    candidates = state.timeline.completed() + [
        i for i in savepoint_instants(state.gw, state.config) if i.is_completed
    ]
    instants = sorted(
        (i for i in candidates if i.action in actions),
        key=lambda i: (i.requested_time, i.action),
        reverse=bool(args["desc"]),
    )
    # Read and encode everything first: a damaged instant fails the call before any file.
    out: list[tuple[str, bytes]] = []
    for inst in instants:
        if limit != -1 and len(out) >= limit:
            break
        if inst.action not in _RAW + _AS_JSON:
            continue
        data = state.timeline.instant_content(inst)
        name = state.timeline.file_name(inst)
        if inst.action in _AS_JSON:
            try:
                data = avro_to_json(data)
            except CorruptFileError as exc:
                raise ProcedureError(
                    f"{ctx.procedure}: {join(state.config.timeline_dir, name)}: {exc}"
                ) from None
        out.append((name, data))
    for name, data in out:
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    return [(f"Exported {len(out)} Instants to {folder}",)]
