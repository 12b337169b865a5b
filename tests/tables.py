"""The shared catalog of test tables (issue 28): one definition per table shape the tests use.

Each :class:`TableDef` names a schema with its record key, ordering field and partition
fields, and builds what the tests need from it: Arrow batches of tuples (:meth:`TableDef.batch`),
the table made by Spark through ``hudilite.Table.create`` (:meth:`TableDef.create`), an empty
table made by the engine alone, without a JVM (:meth:`TableDef.create_engine`), the keying spec
the engine's writers use (:meth:`TableDef.keying`) and the SQL column list (:attr:`TableDef.ddl`).

A test that needs another key, partitioning or table type passes it to the builder; a
shape used by one file only stays in that file. Rows stay in the tests: what a test asserts
is read next to the rows it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hudilite.config import TableConfig, render_properties
from hudilite.keygen import KeyGenSpec
from hudilite.schema import arrow_to_avro_schema, to_storage_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import PROPERTIES_FILE
from hudilite.write.keying import KeyingSpec

#: Spark SQL names of the Arrow types the catalog's schemas use (:attr:`TableDef.ddl`).
_SQL_TYPES = {
    pa.string(): "STRING",
    pa.int32(): "INT",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
}


@dataclass(frozen=True)
class TableDef:
    """A table shape: schema, record key, ordering field and partition fields."""

    name: str
    schema: pa.Schema
    record_key: tuple[str, ...]
    ordering_field: str | None
    partition_by: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        """The column names, in schema order (the order of :meth:`batch`'s tuples)."""
        return list(self.schema.names)

    @property
    def ddl(self) -> str:
        """The columns as a Spark SQL column list (``uuid STRING, ts BIGINT, ...``)."""
        return ", ".join(f"{f.name} {_SQL_TYPES[f.type]}" for f in self.schema)

    def batch(self, *recs: tuple[Any, ...], schema: pa.Schema | None = None) -> pa.Table:
        """Tuples in :attr:`columns` order as an Arrow table of the schema (or of ``schema``,
        e.g. the schema with a column added, for evolution tests)."""
        s = schema if schema is not None else self.schema
        return pa.Table.from_pylist([dict(zip(s.names, r, strict=True)) for r in recs], s)

    def record_batch(self, *recs: tuple[Any, ...]) -> pa.RecordBatch:
        """Tuples in :attr:`columns` order as one Arrow record batch (what the engine's
        keying step takes)."""
        return pa.RecordBatch.from_pylist(
            [dict(zip(self.columns, r, strict=True)) for r in recs], self.schema
        )

    def create(self, spark: Any, path: str, **overrides: Any) -> Any:
        """``hudilite.Table.create`` of this shape at ``path``; ``overrides`` replace the
        definition's keyword arguments (``partition_by=[]``) or add others (``table_type``,
        ``table_version``, ``options``)."""
        import hudilite

        key: str | list[str] | None = list(self.record_key) or None
        if len(self.record_key) == 1:
            key = self.record_key[0]
        kwargs: dict[str, Any] = {
            "record_key": key,
            "ordering_field": self.ordering_field,
            "partition_by": list(self.partition_by),
        }
        kwargs.update(overrides)
        return hudilite.Table.create(spark, path, self.schema, **kwargs)

    def create_sql(
        self,
        session: Any,
        name: str = "t",
        *,
        table_type: str = "cow",
        table_version: int = 6,
        properties: dict[str, str] | None = None,
    ) -> None:
        """``CREATE TABLE name (...) USING hudi`` of this shape through a hudilite SQL
        session: partitioned by the partition fields, with the key and ordering field as
        ``primaryKey`` / ``preCombineField`` and ``properties`` added to TBLPROPERTIES."""
        props = {
            "primaryKey": ",".join(self.record_key),
            **({"preCombineField": self.ordering_field} if self.ordering_field else {}),
            "type": table_type,
            "hoodie.write.table.version": str(table_version),
            **(properties or {}),
        }
        parts = f" PARTITIONED BY ({', '.join(self.partition_by)})" if self.partition_by else ""
        # Plain names unquoted (primaryKey='id'), dotted ones quoted, as the tests wrote them.
        tblprops = ", ".join(
            f"{k if k.isidentifier() else repr(k)}='{v}'" for k, v in props.items()
        )
        session.sql(
            f"CREATE TABLE {name} ({self.ddl}) USING hudi{parts} TBLPROPERTIES ({tblprops})"
        )

    def create_engine(
        self,
        root: str | Any,
        *,
        table_type: str = "COPY_ON_WRITE",
        table_version: int = 6,
        partition_by: Sequence[str] | None = None,
    ) -> tuple[FileSystemGateway, TableConfig]:
        """An empty table at ``root`` made without Spark: the ``hoodie.properties`` of
        ``TableConfig.new`` (named ``t``, schema recorded as the Avro record
        ``hoodie.t.t_record``) and the timeline folder. Returns its gateway and config."""
        gw = FileSystemGateway(str(root))
        parts = self.partition_by if partition_by is None else tuple(partition_by)
        avro = arrow_to_avro_schema(to_storage_schema(self.schema), "t_record", "hoodie.t")
        config = TableConfig.new(
            name="t",
            table_type=table_type,
            table_version=table_version,
            record_key_fields=self.record_key,
            partition_fields=parts,
            ordering_fields=(self.ordering_field,) if self.ordering_field else (),
            create_schema=json.dumps(avro, separators=(",", ":")),
        )
        gw.mkdirs(config.timeline_dir)
        gw.write_bytes(PROPERTIES_FILE, render_properties(config.to_properties()).encode())
        return gw, config

    def keying(self, *, delete_all: bool = False) -> KeyingSpec:
        """The keying spec of the engine's writers for this shape (simple key generator
        when partitioned, non-partitioned otherwise); ``delete_all`` marks every record a
        delete."""
        kind = "SIMPLE" if self.partition_by else "NON_PARTITION"
        return KeyingSpec(
            KeyGenSpec(kind, self.record_key, self.partition_by), delete_all=delete_all
        )


#: Hudi's quickstart trips: keyed by ``uuid``, latest ``ts`` wins, partitioned by ``city``.
TRIPS = TableDef(
    "trips",
    pa.schema(
        [("uuid", pa.string()), ("ts", pa.int64()), ("fare", pa.float64()), ("city", pa.string())]
    ),
    record_key=("uuid",),
    ordering_field="ts",
    partition_by=("city",),
)

#: Keyed ``id`` rows with an ordering ``ts``, a string value ``v`` and a partition ``p``.
ID_TS_V_P = TableDef(
    "id_ts_v_p",
    pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("p", pa.string())]),
    record_key=("id",),
    ordering_field="ts",
    partition_by=("p",),
)

#: :data:`ID_TS_V_P` with an integer key, as the procedure tests create it in SQL.
INT_ID_TS_V_P = TableDef(
    "int_id_ts_v_p",
    pa.schema([("id", pa.int32()), ("ts", pa.int64()), ("v", pa.string()), ("p", pa.string())]),
    record_key=("id",),
    ordering_field="ts",
    partition_by=("p",),
)

#: Keyed ``id`` rows with an ordering ``ts`` and a partition ``p`` (no value column).
ID_TS_P = TableDef(
    "id_ts_p",
    pa.schema([("id", pa.string()), ("ts", pa.int64()), ("p", pa.string())]),
    record_key=("id",),
    ordering_field="ts",
    partition_by=("p",),
)

#: The engine-built tables of the unit tests: key ``k``, ordering ``ts``, value ``v``,
#: partition ``p``.
K_TS_V_P = TableDef(
    "k_ts_v_p",
    pa.schema([("k", pa.string()), ("ts", pa.int64()), ("v", pa.string()), ("p", pa.string())]),
    record_key=("k",),
    ordering_field="ts",
    partition_by=("p",),
)

#: Trips without fares: keyed by ``uuid``, latest ``ts`` wins, partitioned by ``city``.
UUID_TS_CITY = TableDef(
    "uuid_ts_city",
    pa.schema([("uuid", pa.string()), ("ts", pa.int64()), ("city", pa.string())]),
    record_key=("uuid",),
    ordering_field="ts",
    partition_by=("city",),
)

#: The Table API tests' small tables: keyed ``id``, ordering ``ts``, an integer value ``v``,
#: unpartitioned.
KV = TableDef(
    "kv",
    pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.int64())]),
    record_key=("id",),
    ordering_field="ts",
)

#: Every definition, by name.
CATALOG = {
    d.name: d for d in (TRIPS, ID_TS_V_P, INT_ID_TS_V_P, ID_TS_P, K_TS_V_P, UUID_TS_CITY, KV)
}
