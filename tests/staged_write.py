"""A one-file-group copy-on-write table written without Spark, with a pause before the
commit: what the lock tests race and crash (local disk or S3, any gateway)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from hudilite.config import TableConfig, render_properties
from hudilite.keygen import KeyGenSpec
from hudilite.read.arrow_reader import read_plan_arrow
from hudilite.read.planner import plan_snapshot
from hudilite.schema import arrow_to_avro_schema, to_storage_schema
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.layout import write_partition_metadata
from hudilite.tablestate.state import PROPERTIES_FILE, TableState
from hudilite.timeline.instant import COMMIT
from hudilite.timeline.metadata import CommitMetadata, WriteStat
from hudilite.write.file_group_writer import (
    ExistingFile,
    WriteContext,
    write_file_group,
    write_stat_from_row,
)
from hudilite.write.keying import KeyingSpec, key_batch
from hudilite.write.transaction import WriteTransaction
from tests.helpers import rows

SCHEMA = pa.schema([("k", pa.string()), ("v", pa.string())])


def create_table(gw: FileSystemGateway) -> TableConfig:
    avro = arrow_to_avro_schema(to_storage_schema(SCHEMA), "t_record", "hoodie.t")
    config = TableConfig.new(
        name="t",
        table_type="COPY_ON_WRITE",
        table_version=8,
        record_key_fields=("k",),
        partition_fields=(),
        ordering_fields=(),
        create_schema=json.dumps(avro),
    )
    gw.write_bytes(PROPERTIES_FILE, render_properties(config.to_properties()).encode())
    return config


def upsert(
    gw: FileSystemGateway,
    records: list[tuple[str, str]],
    lock_options: dict[str, str] | None = None,
    *,
    ready: Any = None,
    go: Any = None,
) -> str:
    """Upsert ``records`` into file group ``fg-0``; ``ready``/``go`` pause before the commit."""
    state = TableState.load(gw)
    with WriteTransaction(gw, state.config, COMMIT, lock_options=lock_options) as txn:
        state = TableState.load(gw)
        existing = {
            s.group_key: ExistingFile(s.base_file.path, s.base_file.instant_time)
            for s in state.view.latest_slices()
            if s.base_file is not None
        }
        ctx = WriteContext(
            gw=gw,
            instant_time=txn.instant_time,
            storage_schema=state.storage_schema,
            merge_spec=state.merge_spec(state.options()),
            operation="upsert",
            existing=existing,
            table_version=8,
        )
        write_partition_metadata(gw, "", txn.instant_time, 1)
        txn.start_inflight()
        batch = pa.RecordBatch.from_pylist([{"k": k, "v": v} for k, v in records], SCHEMA)
        spec = KeyingSpec(KeyGenSpec("NON_PARTITION", ("k",), ()))
        incoming = pa.Table.from_batches([key_batch(spec, batch, 0)])
        stat = write_file_group(ctx, "", "fg-0", incoming, "0-1-0", 0).to_pylist()[0]
        stats: dict[str, list[WriteStat]] = {"": [write_stat_from_row(stat)]}
        if ready is not None:
            ready()
            go()
        txn.commit(
            CommitMetadata(
                partition_to_write_stats=stats,
                operation_type="UPSERT",
                extra_metadata={"schema": state.config.create_schema or ""},
            )
        )
        return txn.instant_time


def read_rows(gw: FileSystemGateway) -> list[tuple[Any, ...]]:
    state = TableState.load(gw)
    table = read_plan_arrow(gw, plan_snapshot(state.view), state.storage_schema)
    return rows(table, ["k", "v"])
