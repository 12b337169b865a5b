"""Table keys: identity, record key, ordering, partitioning, key generator, merge rules."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_table_type,
)
from hudilite.config.registry import _key
from hudilite.config.vocab import normalize_keygen_type

# Alias order matters when several spellings of one key are given: the canonical name wins,
# then the aliases in the order listed (SQL short names and Flink names before the
# ``hoodie.table.*`` names, so a user's explicit option beats a table property).

TABLE_NAME = _key(
    "hoodie.table.name", None, "Table name.", aliases=("hoodie.datasource.write.table.name",)
)
DATABASE_NAME = _key("hoodie.database.name", "default", "Database the table belongs to.")
TABLE_TYPE = _key(
    "hoodie.datasource.write.table.type",
    "COPY_ON_WRITE",
    "COPY_ON_WRITE or MERGE_ON_READ (SQL: cow|mor).",
    aliases=("type", "table.type", "hoodie.table.type"),
    parse=parse_table_type,
)
TABLE_VERSION = _key(
    "hoodie.write.table.version",
    6,
    "Table version to create: 6 (Hudi 0.14/0.15) or 8 (Hudi 1.0).",
    aliases=("hoodie.table.version",),
    parse=parse_int,
)
OPERATION = _key(
    "hoodie.datasource.write.operation",
    "upsert",
    "Write operation.",
    aliases=("write.operation",),
    parse=choice(
        "upsert",
        "insert",
        "bulk_insert",
        "delete",
        "insert_overwrite",
        "insert_overwrite_table",
        "delete_partition",
        upper=False,
    ),
)
RECORDKEY_FIELDS = _key(
    "hoodie.datasource.write.recordkey.field",
    None,
    "Record key field(s), comma-separated; parsed to a tuple.",
    aliases=("primaryKey", "recordkey.field", "hoodie.table.recordkey.fields"),
    parse=parse_fields,
)
ORDERING_FIELDS = _key(
    "hoodie.datasource.write.precombine.field",
    None,
    "Ordering (precombine) field(s) for event-time merging; parsed to a tuple.",
    aliases=(
        "preCombineField",
        "orderingFields",
        "precombine.field",
        "hoodie.table.ordering.fields",
        "hoodie.table.precombine.field",
    ),
    parse=parse_fields,
)
PARTITION_FIELDS = _key(
    "hoodie.datasource.write.partitionpath.field",
    None,
    "Partition field(s), comma-separated (custom keygen: field:simple|timestamp).",
    aliases=("partitionpath.field", "hoodie.table.partition.fields"),
    parse=parse_fields,
)
HIVE_STYLE = _key(
    "hoodie.datasource.write.hive_style_partitioning",
    False,
    "Partition folders named field=value.",
    parse=parse_bool,
)
URL_ENCODE = _key(
    "hoodie.datasource.write.partitionpath.urlencode",
    False,
    "URL-encode partition path values.",
    parse=parse_bool,
)
KEYGEN_TYPE = _key(
    "hoodie.datasource.write.keygenerator.type",
    None,
    "SIMPLE|COMPLEX|NON_PARTITION|TIMESTAMP|CUSTOM (inferred from the fields when unset).",
    aliases=("hoodie.table.keygenerator.type",),
    parse=normalize_keygen_type,
)
KEYGEN_CLASS = _key(
    "hoodie.datasource.write.keygenerator.class",
    None,
    "Java key generator class; mapped to a KEYGEN_TYPE.",
    aliases=("hoodie.table.keygenerator.class",),
)
TIMESTAMP_TYPE = _key(
    "hoodie.keygen.timebased.timestamp.type",
    None,
    "Timestamp keygen input: UNIX_TIMESTAMP|DATE_STRING|EPOCHMILLISECONDS|...",
    parse=choice(
        "UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR"
    ),
)
TIMESTAMP_OUTPUT_FORMAT = _key(
    "hoodie.keygen.timebased.output.dateformat", None, "Timestamp keygen output date format."
)
TIMESTAMP_INPUT_FORMAT = _key(
    "hoodie.keygen.timebased.input.dateformat", None, "Timestamp keygen input date format."
)
TIMESTAMP_TIMEZONE = _key(
    "hoodie.keygen.timebased.timezone", "UTC", "Timezone of the timestamp keygen."
)
MERGE_MODE = _key(
    "hoodie.record.merge.mode",
    None,
    "EVENT_TIME_ORDERING|COMMIT_TIME_ORDERING|CUSTOM (derived from ordering fields when unset).",
    aliases=("recordMergeMode",),
    parse=choice("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"),
)
PAYLOAD_CLASS = _key(
    "hoodie.datasource.write.payload.class",
    None,
    "Hudi payload class (v6 merge semantics).",
    aliases=("payloadClass", "payload.class", "hoodie.compaction.payload.class"),
)
DELETE_FIELD = _key(
    "hoodie.payload.delete.field",
    None,
    "Data column marking deletes when it equals DELETE_MARKER (default: _hoodie_is_deleted).",
)
DELETE_MARKER = _key(
    "hoodie.payload.delete.marker", None, "Value of DELETE_FIELD that marks a delete."
)
CHANGELOG_ENABLED = _key(
    "hoodie.allow.operation.metadata.field",
    False,
    "Write the _hoodie_operation column (Flink changelog mode).",
    aliases=("changelog.enabled",),
    parse=parse_bool,
)
POPULATE_META_FIELDS = _key(
    "hoodie.populate.meta.fields", True, "Write the _hoodie_* meta columns.", parse=parse_bool
)
