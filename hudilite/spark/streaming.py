"""Exactly-once Structured Streaming into a hudilite table (Hudi's streaming sink rules).

:meth:`hudilite.Table.write_stream` starts a ``foreachBatch`` query whose function is
:func:`foreach_batch` (public, for users who compose their own query)::

    q = t.write_stream(stream_df, checkpoint_location="/chk/orders", operation="upsert",
                       trigger={"processingTime": "10 seconds"})

    # or, by hand:
    stream_df.writeStream.foreachBatch(hudilite.spark.streaming.foreach_batch(t, "upsert"))
             .option("checkpointLocation", "/chk/orders").start()

Each non-empty micro-batch becomes one commit whose extra metadata records the batch under
Hudi's key ``_hudi_streaming_sink_checkpoint`` as ``{"<identifier>": "<batchId>"}``, the
identifier being ``hoodie.datasource.write.streaming.checkpoint.identifier`` (default
``default_single_writer``, as Hudi). Before writing, the latest completed commit carrying
this identifier is looked up (Hudi's ``CommitUtils.getValidCheckpointForCurrentWriter``):
a batch id not above its batch id was committed already -- Spark replays the last batch
after a crash between the commit and its own checkpoint -- and is skipped. So every
operation, ``insert`` and ``bulk_insert`` included, writes each batch once, and several
queries with different identifiers may write one table. An empty batch commits nothing.
A write that fails is rolled back and the batch retried, as Hudi's sink does
(``hoodie.datasource.write.streaming.retry.count`` attempts, default 3, waiting
``hoodie.datasource.write.streaming.retry.interval.ms``, default 2000, doubled each time;
invalid input -- config, schema or key errors -- fails at once). A driver that dies
mid-write leaves a pending instant that the next write rolls back once its heartbeat has
expired (readers never see it); Spark then re-runs the batch.

Merge-on-read tables compact beside the stream (``hoodie.datasource.compaction.async.enable``
/ Flink's ``compaction.async.enabled``, default on, as Hudi's sink and Flink do): the sink
schedules a plan after each commit when the trigger fires and a driver thread executes the
plans while later batches keep committing (:mod:`hudilite.spark.async_compaction`;
:func:`compactor_of` gives a query's compactor). ``hoodie.compact.inline=true`` compacts
inline instead. Clean and archive run after each commit, as for every write.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pyspark.sql import DataFrame, SparkSession

from hudilite import config as cfg
from hudilite.errors import ConfigError, KeyGenerationError, SchemaError
from hudilite.spark.async_compaction import (
    AsyncCompactor,
    async_compaction_enabled,
    write_options,
)
from hudilite.tablestate.state import TableState

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

    from hudilite.storage.fs import FileSystemGateway
    from hudilite.write.result import WriteResult


class SinkTable(Protocol):
    """What the sink uses of a :class:`hudilite.Table` (a protocol, because the Table API
    imports this module: this module does not import it back)."""

    gw: FileSystemGateway

    def __init__(self, spark: SparkSession, gw: FileSystemGateway) -> None: ...

    def write(
        self,
        data: Any,
        operation: Any = ...,
        *,
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> WriteResult: ...


#: Hudi's commit extra-metadata key of the streaming sink (``HoodieStreamingSink``).
SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"
#: The option naming a query's checkpoint entry, and Hudi's default.
CHECKPOINT_IDENTIFIER = "hoodie.datasource.write.streaming.checkpoint.identifier"
DEFAULT_IDENTIFIER = "default_single_writer"


def checkpoint_identifier(options: Mapping[str, Any] | None) -> str:
    """The sink's checkpoint identifier from the write options (Hudi's default)."""
    value = (options or {}).get(CHECKPOINT_IDENTIFIER)
    return str(value) if value else DEFAULT_IDENTIFIER


def checkpoint_value(identifier: str, batch_id: int) -> str:
    """Hudi's checkpoint entry: a JSON object ``{identifier: "batchId"}``."""
    return json.dumps({identifier: str(batch_id)})


def last_committed_batch(state: TableState, identifier: str) -> int | None:
    """The batch id of the latest completed commit carrying ``identifier``'s checkpoint
    (commits ordered by completion time), or None when there is none."""
    timeline = state.timeline
    commits = sorted(
        timeline.commits(),
        key=lambda i: timeline.completion_time(i.requested_time) or i.requested_time,
        reverse=True,
    )
    for instant in commits:
        metadata = timeline.commit_metadata(instant)
        value = metadata.extra_metadata.get(SINK_CHECKPOINT_KEY) if metadata else None
        if not value:
            continue
        try:
            entries = json.loads(value)
        except ValueError:
            continue
        if isinstance(entries, dict) and identifier in entries:
            return int(entries[identifier])
    return None


def write_batch(
    table: SinkTable,
    df: DataFrame,
    batch_id: int,
    operation: str = "upsert",
    options: Mapping[str, Any] | None = None,
    compactor: AsyncCompactor | None = None,
) -> WriteResult | None:
    """Commit micro-batch ``batch_id`` once: None when it was committed before or is
    empty, else the write's result (see the module docstring). With a ``compactor`` the
    write does not compact inline; a compaction is scheduled after the commit for the
    compactor's thread, and a failure of that thread is raised here first."""
    if compactor is not None:
        compactor.raise_if_failed()
    identifier = checkpoint_identifier(options)
    last = last_committed_batch(TableState.load(table.gw), identifier)
    if last is not None and batch_id <= last:
        return None
    if df.isEmpty():
        return None
    # The batch's own session (foreachBatch hands in a DataFrame of the query's session).
    target = type(table)(df.sparkSession, table.gw)
    result = target.write(
        df,
        operation,
        options=write_options(options) if compactor is not None else options,
        extra_metadata={SINK_CHECKPOINT_KEY: checkpoint_value(identifier, batch_id)},
    )
    if compactor is not None:
        compactor.schedule()
    return result


def write_batch_retrying(
    table: Any,
    df: DataFrame,
    batch_id: int,
    operation: str = "upsert",
    options: Mapping[str, Any] | None = None,
    compactor: AsyncCompactor | None = None,
) -> WriteResult | None:
    """:func:`write_batch`, retried after a failed write as Hudi's streaming sink does
    (see the module docstring); each attempt first checks whether the batch committed."""
    opts = cfg.Options({k: str(v) for k, v in (options or {}).items()})
    attempts = max(1, int(opts.get(cfg.STREAMING_RETRY_COUNT)))
    wait_s = max(0, int(opts.get(cfg.STREAMING_RETRY_INTERVAL_MS))) / 1000
    for attempt in range(1, attempts + 1):
        try:
            return write_batch(table, df, batch_id, operation, options, compactor)
        except (ConfigError, SchemaError, KeyGenerationError):
            raise  # the same input fails the same way again
        except Exception:
            if attempt == attempts:
                raise
            time.sleep(wait_s * 2 ** (attempt - 1))
    return None


def foreach_batch(
    table: SinkTable,
    operation: str = "upsert",
    options: Mapping[str, Any] | None = None,
    compactor: AsyncCompactor | None = None,
) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function writing each micro-batch into ``table`` exactly once
    (:func:`write_batch_retrying`); ``options`` are write options (the checkpoint
    identifier and the retry settings among them). With a started ``compactor`` the
    batches schedule compactions for it instead of compacting inline."""
    opts = dict(options or {})

    def run(df: DataFrame, batch_id: int) -> None:
        write_batch_retrying(table, df, int(batch_id), operation, opts, compactor)

    return run


#: query run id -> the compactor started beside that run (kept for the session, so a
#: finished query can still finish its pending plans).
_COMPACTORS: dict[str, AsyncCompactor] = {}


def compactor_of(query: StreamingQuery) -> AsyncCompactor | None:
    """The :class:`~hudilite.spark.async_compaction.AsyncCompactor` started beside
    ``query`` by :func:`write_stream` (None on copy-on-write tables or with async
    compaction off); ``compactor_of(q).stop(finish_pending=True)`` after the query ended
    runs the plans still pending."""
    return _COMPACTORS.get(str(query.runId))


def write_stream(
    table: SinkTable,
    df: DataFrame,
    *,
    checkpoint_location: str,
    operation: str = "upsert",
    trigger: Mapping[str, Any] | str | None = None,
    options: Mapping[str, Any] | None = None,
    query_name: str | None = None,
) -> StreamingQuery:
    """Start the exactly-once streaming write (:meth:`hudilite.Table.write_stream`)."""
    if not df.isStreaming:
        raise TypeError("write_stream needs a streaming DataFrame (spark.readStream...)")
    compactor = None
    started: list[StreamingQuery] = []
    if async_compaction_enabled(TableState.load(table.gw), options):
        compactor = AsyncCompactor(
            df.sparkSession,
            table.gw,
            options,
            is_active=lambda: bool(started) and started[0].isActive,
        )
    writer = (
        df.writeStream.foreachBatch(foreach_batch(table, operation, options, compactor))
        .option("checkpointLocation", checkpoint_location)
        .outputMode("append")
    )
    if query_name:
        writer = writer.queryName(query_name)
    if isinstance(trigger, str):
        writer = writer.trigger(processingTime=trigger)
    elif trigger:
        writer = writer.trigger(**dict(trigger))
    query = writer.start()
    if compactor is not None:
        started.append(query)
        _COMPACTORS[str(query.runId)] = compactor.start()
    return query
