"""Key generators, index types, write operations and merge modes: the vocabulary shared by
options, hoodie.properties and commit metadata. Code compares against these names, never
against bare strings (``tests/unit/architecture/test_single_owner.py`` finds a second copy)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hudilite.errors import ConfigError

#: Key generator types (``hoodie.table.keygenerator.type``).
KEYGEN_SIMPLE = "SIMPLE"
KEYGEN_COMPLEX = "COMPLEX"
KEYGEN_NON_PARTITION = "NON_PARTITION"
KEYGEN_TIMESTAMP = "TIMESTAMP"
KEYGEN_CUSTOM = "CUSTOM"
KEYGEN_TYPES = (
    KEYGEN_SIMPLE,
    KEYGEN_COMPLEX,
    KEYGEN_NON_PARTITION,
    KEYGEN_TIMESTAMP,
    KEYGEN_CUSTOM,
)

#: Index types (``hoodie.index.type``). A write runs the kind without the ``GLOBAL_``
#: prefix, global or not (``hudilite.index.bloom_index.IndexSettings``).
INDEX_SIMPLE = "SIMPLE"
INDEX_BLOOM = "BLOOM"
INDEX_BUCKET = "BUCKET"
#: Hudi's record-level index: keys looked up in the metadata table's record_index (global).
INDEX_RECORD = "RECORD_INDEX"
GLOBAL_INDEX_PREFIX = "GLOBAL_"
INDEX_TYPES = (
    INDEX_SIMPLE,
    INDEX_BLOOM,
    GLOBAL_INDEX_PREFIX + INDEX_SIMPLE,
    GLOBAL_INDEX_PREFIX + INDEX_BLOOM,
    INDEX_BUCKET,
    INDEX_RECORD,
)

#: Write operations (``hoodie.datasource.write.operation``).
OP_UPSERT = "upsert"
OP_INSERT = "insert"
OP_BULK_INSERT = "bulk_insert"
OP_DELETE = "delete"
OP_INSERT_OVERWRITE = "insert_overwrite"
OP_INSERT_OVERWRITE_TABLE = "insert_overwrite_table"
OP_DELETE_PARTITION = "delete_partition"
WRITE_OPERATIONS = (
    OP_UPSERT,
    OP_INSERT,
    OP_BULK_INSERT,
    OP_DELETE,
    OP_INSERT_OVERWRITE,
    OP_INSERT_OVERWRITE_TABLE,
    OP_DELETE_PARTITION,
)
#: The ``operationType`` each records in commit metadata: Hudi's ``WriteOperationType``
#: names are their values upper-cased (``bulk_insert`` -> ``BULK_INSERT``).
OPERATION_TYPES: dict[str, str] = {op: op.upper() for op in WRITE_OPERATIONS}
#: Operation types of the table services' commits.
CLUSTER_OPERATION = "CLUSTER"
COMPACT_OPERATION = "COMPACT"
LOG_COMPACT_OPERATION = "LOG_COMPACT"
INDEX_OPERATION = "INDEX"
TABLE_SERVICE_OPERATIONS = frozenset({COMPACT_OPERATION, LOG_COMPACT_OPERATION, CLUSTER_OPERATION})

#: The Java class Hudi 0.x records in ``hoodie.table.keygenerator.class`` for each type.
KEYGEN_CLASSES: dict[str, str] = {
    KEYGEN_SIMPLE: "org.apache.hudi.keygen.SimpleKeyGenerator",
    KEYGEN_COMPLEX: "org.apache.hudi.keygen.ComplexKeyGenerator",
    KEYGEN_NON_PARTITION: "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    KEYGEN_TIMESTAMP: "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    KEYGEN_CUSTOM: "org.apache.hudi.keygen.CustomKeyGenerator",
}

_KEYGEN_BY_SIMPLE_CLASS = {
    "SimpleKeyGenerator": KEYGEN_SIMPLE,
    "SimpleAvroKeyGenerator": KEYGEN_SIMPLE,
    "ComplexKeyGenerator": KEYGEN_COMPLEX,
    "ComplexAvroKeyGenerator": KEYGEN_COMPLEX,
    "NonpartitionedKeyGenerator": KEYGEN_NON_PARTITION,
    "NonpartitionedAvroKeyGenerator": KEYGEN_NON_PARTITION,
    "TimestampBasedKeyGenerator": KEYGEN_TIMESTAMP,
    "TimestampBasedAvroKeyGenerator": KEYGEN_TIMESTAMP,
    "CustomKeyGenerator": KEYGEN_CUSTOM,
    "CustomAvroKeyGenerator": KEYGEN_CUSTOM,
}


def normalize_keygen_type(value: str) -> str:
    """Upper-case a key generator type; Hudi's ``*_AVRO`` variants map to the base type."""
    text = str(value).strip().upper()
    text = text.removesuffix("_AVRO")
    if text in ("NONPARTITIONED", "NON_PARTITIONED", "NONPARTITION"):
        text = KEYGEN_NON_PARTITION
    if text not in KEYGEN_TYPES:
        raise ConfigError(
            f"not a key generator type: {value!r} (expected {'|'.join(KEYGEN_TYPES)})"
        )
    return text


def keygen_type_from_class(class_name: str) -> str | None:
    """Type of a Hudi key generator class name (package ignored); None if unknown."""
    return _KEYGEN_BY_SIMPLE_CLASS.get(class_name.strip().rsplit(".", 1)[-1])


def infer_keygen_type(record_key_fields: Iterable[str], partition_fields: Iterable[str]) -> str:
    """The key generator Hudi picks when none is configured (``KeyGenUtils.inferKeyGeneratorType``).

    The one place this is decided (``Table.create``, SQL CREATE TABLE and SHOW CREATE TABLE
    call it): no partition fields -> NON_PARTITION, whatever the number of record key fields
    (its keys for several fields are COMPLEX's ``f1:v1,f2:v2``); several key or partition
    fields -> COMPLEX; else SIMPLE. ``field:type`` partition specs need the custom generator.
    """
    keys, parts = tuple(record_key_fields), tuple(partition_fields)
    if any(":" in p for p in parts):
        return KEYGEN_CUSTOM
    if not parts:
        return KEYGEN_NON_PARTITION
    if len(keys) > 1 or len(parts) > 1:
        return KEYGEN_COMPLEX
    return KEYGEN_SIMPLE


EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM_MERGE = "CUSTOM"

DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
PARTIAL_UPDATE_PAYLOAD = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"

#: ``hoodie.record.merge.strategy.id`` values of Hudi 1.x's built-in mergers.
EVENT_TIME_STRATEGY_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"


#: Payload class (simple name) -> (merge mode, partial update): the one mapping (the merge
#: spec and table config inference read it). As Hudi 1.1's upgrade to merge modes
#: (``EightToNineUpgradeHandler``): the ``OverwriteNonDefaults`` and ``PartialUpdate``
#: payloads are commit-time and event-time ordering with partial updates (IGNORE_DEFAULTS).
PAYLOADS: dict[str, tuple[str, bool]] = {
    "OverwriteWithLatestAvroPayload": (COMMIT_TIME_ORDERING, False),
    "DefaultHoodieRecordPayload": (EVENT_TIME_ORDERING, False),
    "EventTimeAvroPayload": (EVENT_TIME_ORDERING, False),
    "PartialUpdateAvroPayload": (EVENT_TIME_ORDERING, True),
    "OverwriteNonDefaultsWithLatestAvroPayload": (COMMIT_TIME_ORDERING, True),
    "PostgresDebeziumAvroPayload": (EVENT_TIME_ORDERING, False),
    "MySqlDebeziumAvroPayload": (EVENT_TIME_ORDERING, False),
    "AWSDmsAvroPayload": (COMMIT_TIME_ORDERING, False),
}

#: Debezium's change-type column (``DebeziumConstants.FLATTENED_OP_COL_NAME``); ``d`` deletes.
DEBEZIUM_OP_COL = "_change_operation_type"
#: Postgres' log sequence number column (``FLATTENED_LSN_COL_NAME``).
DEBEZIUM_LSN_COL = "_event_lsn"
#: MySQL's binlog position, ``"<file number>.<position>"`` (``ADDED_SEQ_COL_NAME``).
DEBEZIUM_SEQ_COL = "_event_seq"


@dataclass(frozen=True)
class CdcPayload:
    """What a CDC payload class fixes beyond its merge mode: its full class name, the column
    it orders by (None: the table's own) and the delete column and marker it reads.
    ``binlog_seq``: the ordering column is MySQL's ``file.pos`` text, compared as the two
    numbers (``MySqlDebeziumAvroPayload.isCurrentSeqLatest``)."""

    class_name: str
    ordering_field: str | None
    delete_field: str
    delete_marker: str
    binlog_seq: bool = False


#: The CDC payloads (simple class name -> rules), as their Java classes apply them:
#: the Debezium ones order by the source's log position whatever the table's precombine
#: field and delete on ``_change_operation_type = 'd'``; DMS deletes on ``Op = 'D'``.
CDC_PAYLOADS: dict[str, CdcPayload] = {
    "PostgresDebeziumAvroPayload": CdcPayload(
        "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload",
        DEBEZIUM_LSN_COL,
        DEBEZIUM_OP_COL,
        "d",
    ),
    "MySqlDebeziumAvroPayload": CdcPayload(
        "org.apache.hudi.common.model.debezium.MySqlDebeziumAvroPayload",
        DEBEZIUM_SEQ_COL,
        DEBEZIUM_OP_COL,
        "d",
        binlog_seq=True,
    ),
    "AWSDmsAvroPayload": CdcPayload(
        "org.apache.hudi.common.model.AWSDmsAvroPayload", None, "Op", "D"
    ),
}


def cdc_payload(payload_class: str | None) -> CdcPayload | None:
    """The CDC rules of ``payload_class`` (any package prefix), None for other payloads."""
    if not payload_class:
        return None
    return CDC_PAYLOADS.get(str(payload_class).strip().rsplit(".", 1)[-1])


def merge_mode_for_payload(payload_class: str) -> str:
    """The merge mode equivalent to a v6 payload class (unknown payloads are CUSTOM)."""
    simple = payload_class.strip().rsplit(".", 1)[-1]
    return PAYLOADS.get(simple, (CUSTOM_MERGE, False))[0]


def payload_for_merge_mode(merge_mode: str) -> str | None:
    """The v6 payload class that gives ``merge_mode``'s semantics (None for CUSTOM)."""
    return {EVENT_TIME_ORDERING: DEFAULT_PAYLOAD, COMMIT_TIME_ORDERING: OVERWRITE_PAYLOAD}.get(
        merge_mode
    )
