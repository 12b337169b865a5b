"""``hudi_metadata(t)``: the table's metadata table read as a relation, as Hudi's Spark SQL does.

Hudi resolves ``hudi_metadata('db.t' | '/path')`` (``HoodieMetadataTableValuedFunction``) by
loading ``<base>/.hoodie/metadata`` through its data source: a snapshot read of that
merge-on-read table, one row per ``HoodieMetadataRecord`` key with the merged latest record
of each file group's latest slice. The metadata table keeps no meta fields
(``hoodie.populate.meta.fields=false``), so Hudi's relation shows only the record's columns:
``key``, ``type``, ``filesystemMetadata``, ``BloomFilterMetadata``, ``ColumnStatsMetadata``,
``recordIndexMetadata``, ``SecondaryIndexMetadata``, typed as Spark's Avro converter types
them (records as structs, the map as a map, a union of several records as a struct of
``member0``, ``member1``, ... in the union's order without ``null``: Hudi's own tests read
``ColumnStatsMetadata.minValue.member1.value`` for an int column).

The records are those :mod:`hudilite.metadata`'s readers merge, partition by partition of
``hoodie.table.metadata.partitions`` (metadata deltacommits whose data instant did not
complete left out, as Hudi's readers filter by the data timeline):

* ``files``: merged listings; a file deleted after it was added is gone from its map;
* ``column_stats`` / ``partition_stats`` / ``bloom_filters``: the newest record of each key,
  tombstones kept with ``isDeleted=true`` (Hudi merges them the same way and its readers skip
  them);
* ``record_index``: keys removed by a delete block are gone;
* ``secondary_index_*`` (written by Hudi): the newest record of each key, keys of a delete
  block or marked ``isDeleted`` gone (Hudi's secondary-index merge drops them).

A table without a metadata table is refused naming it, with Hudi's message for the missing
``.hoodie/metadata`` table.
"""

from __future__ import annotations

import decimal
import io
import json
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, cast

import fastavro
from pyspark.sql import types as T

from hudilite.metadata import bloom_filters as bf
from hudilite.metadata import column_stats as cs
from hudilite.metadata import column_stats_records as csr
from hudilite.metadata import partition_stats as ps
from hudilite.metadata import record_index as ri
from hudilite.metadata import record_index_records as rir
from hudilite.metadata import records as rec
from hudilite.metadata import table as mt
from hudilite.procedures.fsview import display_path
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.storage.hfile import HFileReader
from hudilite.storage.layout import BaseFileName, LogFileName, parse_data_file_name
from hudilite.storage.log_format import BlockType, block_deletes, read_log_file
from hudilite.tablestate.properties_file import METADATA_PARTITION_KEYS
from hudilite.tablestate.state import TableState

from .statements import UnsupportedStatementError

__all__ = ["metadata_records", "metadata_rows", "metadata_schema"]

#: Hudi's ``MetadataPartitionType`` prefix of a secondary index's partition.
_SECONDARY_PREFIX = "secondary_index_"


def listed_partitions(state: TableState) -> list[str]:
    """The metadata partitions ``hoodie.table.metadata.partitions`` lists, in its order."""
    raw = state.config.props.get(METADATA_PARTITION_KEYS[0]) or ""
    return [p.strip() for p in str(raw).split(",") if p.strip()]


def metadata_records(state: TableState, target: str) -> Iterator[dict[str, Any]]:
    """The merged latest ``HoodieMetadataRecord`` of every key (fastavro dicts, meta fields
    dropped), partition by partition; ``target`` names the table in the refusals."""
    parts = listed_partitions(state)
    gw = state.gw
    if not parts or not gw.exists(mt.METADATA_DIR):
        raise UnsupportedStatementError(
            f"hudi_metadata: table {target} has no metadata table "
            f"(hoodie.table.metadata.partitions is empty): Hoodie table not found in path "
            f"{display_path(gw, mt.METADATA_DIR)}"
        )
    timeline = state.timeline
    for part in parts:
        if part == mt.FILES_PARTITION:
            files = mt.read_files_partition(gw, timeline)
            yield from (rec.to_avro(files[k]) for k in sorted(files))
        elif part in (cs.PARTITION, ps.PARTITION):
            stats = cs.read_partition(gw, timeline, part=part)
            yield from (csr.to_avro(stats[k]) for k in sorted(stats))
        elif part == bf.PARTITION:
            blooms = bf.read_partition(gw, timeline)
            yield from (_bloom_avro(blooms[k]) for k in sorted(blooms))
        elif part == ri.PARTITION:
            locations = ri.read_all(gw, timeline)
            yield from (rir.to_avro(k, locations[k]) for k in sorted(locations))
        elif part.startswith(_SECONDARY_PREFIX):
            yield from _secondary_records(gw, part, timeline)
        else:
            raise UnsupportedStatementError(
                f"hudi_metadata: table {target} lists metadata partition {part!r}, which "
                "hudilite cannot read (files, column_stats, partition_stats, bloom_filters, "
                "record_index and secondary_index_* are read)"
            )


def _bloom_avro(record: bf.BloomRecord) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(rec.META_FIELDS)
    out.update(dict.fromkeys(rec.OTHER_PAYLOADS))
    out.update(key=record.key, type=bf.BLOOM_FILTER_TYPE, filesystemMetadata=None)
    out["BloomFilterMetadata"] = {
        "type": record.type_code,
        "timestamp": record.timestamp,
        "bloomFilter": record.bloom,
        "isDeleted": record.deleted,
    }
    return out


@cache
def _parsed() -> Any:
    return fastavro.parse_schema(json.loads(rec.schema_json()))


def _decode(key: str, data: bytes) -> dict[str, Any]:
    value = cast(dict[str, Any], fastavro.schemaless_reader(io.BytesIO(data), _parsed(), None))
    value["key"] = key  # HFile values carry a blank key: the HFile's key is the record's
    return value


def _secondary_records(gw: FileSystemGateway, part: str, timeline: Any) -> Iterator[dict[str, Any]]:
    """A secondary index partition's merged records: each group's latest slice (the stats
    partitions' slicing rule), newer entries over older, delete-block keys and ``isDeleted``
    entries dropped."""
    folder = join(mt.METADATA_DIR, part)
    if not gw.exists(folder):
        return
    mdt = mt.load_timeline(gw)
    entries = [(parse_data_file_name(e.name), e.path) for e in gw.list_dir(folder)]
    fids = sorted({p.file_id for p, _ in entries if isinstance(p, BaseFileName | LogFileName)})
    out: dict[str, dict[str, Any] | None] = {}
    for fid in fids:
        base, logs = cs.group_slice(gw, fid, entries, mdt, timeline)
        if base is not None:
            for k, v in HFileReader(gw.read_bytes(base)).entries():
                out[k.decode("utf-8")] = _decode(k.decode("utf-8"), v)
        for path in logs:
            for block in read_log_file(gw, path):
                if block.block_type == BlockType.HFILE:
                    for k, v in HFileReader(block.content).entries():
                        out[k.decode("utf-8")] = _decode(k.decode("utf-8"), v)
                elif block.block_type == BlockType.DELETE:
                    for d in block_deletes(block):
                        out[d.record_key] = None
    for key in sorted(out):
        value = out[key]
        meta = value.get("SecondaryIndexMetadata") if value is not None else None
        if value is not None and not (isinstance(meta, dict) and meta.get("isDeleted")):
            yield value


# --- Avro -> Spark, as Spark's SchemaConverters types HoodieMetadataRecord ------------------


@cache
def _expanded() -> dict[str, Any]:
    schema = json.loads(rec.schema_json_without_meta())
    return cast(dict[str, Any], fastavro.parse_schema(schema, expand=True, _write_hint=False))


def _branches(schema: list[Any]) -> list[Any]:
    return [b for b in schema if b != "null"]


def _spark_type(schema: Any) -> T.DataType:
    if isinstance(schema, list):
        branches = _branches(schema)
        if len(branches) == 1:
            return _spark_type(branches[0])
        return T.StructType(
            [T.StructField(f"member{i}", _spark_type(b), True) for i, b in enumerate(branches)]
        )
    if isinstance(schema, str):
        schema = {"type": schema}
    kind, logical = schema["type"], schema.get("logicalType")
    if isinstance(kind, list | dict):
        return _spark_type(kind)
    if logical == "decimal":
        return T.DecimalType(schema["precision"], schema.get("scale", 0))
    if kind == "record":
        return T.StructType(
            [
                T.StructField(f["name"], _spark_type(f["type"]), _nullable(f["type"]))
                for f in schema["fields"]
            ]
        )
    if kind == "map":
        return T.MapType(T.StringType(), _spark_type(schema["values"]), _nullable(schema["values"]))
    if kind == "array":
        return T.ArrayType(_spark_type(schema["items"]), _nullable(schema["items"]))
    primitive = {
        "string": T.StringType(),
        "int": T.IntegerType(),
        "long": T.LongType(),  # time-micros too: Spark has no time type
        "boolean": T.BooleanType(),
        "bytes": T.BinaryType(),
        "float": T.FloatType(),
        "double": T.DoubleType(),
    }
    return primitive[kind]


def _nullable(schema: Any) -> bool:
    return isinstance(schema, list) and "null" in schema


def metadata_schema() -> T.StructType:
    """The relation's Spark schema (``HoodieMetadataRecord`` without meta fields)."""
    return cast(T.StructType, _spark_type(_expanded()))


def _name(schema: Any) -> str | None:
    return schema.get("name") if isinstance(schema, dict) else None


def _value(schema: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(schema, list):
        branches = _branches(schema)
        tagged = isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)
        if len(branches) == 1:
            return _value(branches[0], value[1] if tagged else value)
        if tagged:
            short = value[0].rsplit(".", 1)[-1]
            index = next(i for i, b in enumerate(branches) if _name(b) in (value[0], short))
            value = value[1]
        else:
            index = next(
                i
                for i, b in enumerate(branches)
                if fastavro.validation.validate(value, b, raise_errors=False)
            )
        members: list[Any] = [None] * len(branches)
        members[index] = _value(branches[index], value)
        return tuple(members)
    if isinstance(schema, str):
        schema = {"type": schema}
    kind = schema["type"]
    if isinstance(kind, list | dict):
        return _value(kind, value)
    if schema.get("logicalType") == "decimal" and isinstance(value, bytes | bytearray):
        unscaled = int.from_bytes(value, "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-int(schema.get("scale", 0)))
    if kind == "record":
        return tuple(_value(f["type"], value.get(f["name"])) for f in schema["fields"])
    if kind == "map":
        return {k: _value(schema["values"], v) for k, v in cast(Mapping[str, Any], value).items()}
    if kind == "array":
        return [_value(schema["items"], v) for v in value]
    if kind == "bytes":
        return bytearray(value)
    return value


def metadata_rows(state: TableState, target: str) -> list[tuple[Any, ...]]:
    """The relation's rows: :func:`metadata_records` in :func:`metadata_schema`'s shape."""
    schema = _expanded()
    return [_value(schema, record) for record in metadata_records(state, target)]
