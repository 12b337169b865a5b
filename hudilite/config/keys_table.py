"""Table keys: identity, record key, ordering, partitioning, key generator, merge rules."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_int,
    parse_table_type,
)
from hudilite.config.registry import ConfigKey, _key
from hudilite.config.sequence_groups import parse_sequence_groups
from hudilite.config.vocab import OP_UPSERT, WRITE_OPERATIONS, normalize_keygen_type

# Alias order matters when several spellings of one key are given: the canonical name wins,
# then the aliases in the order listed (SQL short names and Flink names before the
# ``hoodie.table.*`` names, so a user's explicit option beats a table property).

TABLE_NAME = _key(
    "hoodie.table.name",
    None,
    "Table name.",
    aliases=("hoodie.datasource.write.table.name",),
    scope="table",
)
DATABASE_NAME = _key(
    "hoodie.database.name", "default", "Database the table belongs to.", scope="table"
)
TABLE_TYPE = _key(
    "hoodie.datasource.write.table.type",
    "COPY_ON_WRITE",
    "COPY_ON_WRITE or MERGE_ON_READ (SQL: cow|mor).",
    aliases=("type", "table.type", "hoodie.table.type"),
    parse=parse_table_type,
    scope="table",
)
TABLE_VERSION = _key(
    "hoodie.write.table.version",
    6,
    "Table version to create: 6 (Hudi 0.14/0.15), 8 (Hudi 1.0) or 9 (Hudi 1.1/1.2).",
    aliases=("hoodie.table.version",),
    parse=parse_int,
    scope="table",
)
OPERATION = _key(
    "hoodie.datasource.write.operation",
    OP_UPSERT,
    "Write operation.",
    aliases=("write.operation",),
    parse=choice(*WRITE_OPERATIONS, upper=False),
)
PARTITIONS_TO_DELETE = _key(
    "hoodie.datasource.write.partitions.to.delete",
    None,
    "delete_partition: the partition paths to delete, comma-separated ('*' matches within a "
    "path, as Hudi 1.x resolves wildcards); unset: the partitions of the written rows.",
)
RECORDKEY_FIELDS = _key(
    "hoodie.datasource.write.recordkey.field",
    None,
    "Record key field(s), comma-separated; parsed to a tuple.",
    aliases=("primaryKey", "recordkey.field", "hoodie.table.recordkey.fields"),
    parse=parse_fields,
    scope="table",
)
ORDERING_FIELDS = _key(
    "hoodie.datasource.write.precombine.field",
    None,
    "Ordering (precombine) field(s) for event-time merging; parsed to a tuple.",
    aliases=(
        "preCombineField",
        "orderingFields",
        "precombine.field",
        "write.precombine.field",
        "ordering.fields",
        "hoodie.table.ordering.fields",
        "hoodie.table.precombine.field",
    ),
    parse=parse_fields,
    scope="table",
)
PARTITION_FIELDS = _key(
    "hoodie.datasource.write.partitionpath.field",
    None,
    "Partition field(s), comma-separated (custom keygen: field:simple|timestamp).",
    aliases=("partitionpath.field", "hoodie.table.partition.fields"),
    parse=parse_fields,
    scope="table",
)
HIVE_STYLE = _key(
    "hoodie.datasource.write.hive_style_partitioning",
    False,
    "Partition folders named field=value.",
    parse=parse_bool,
    scope="table",
)
URL_ENCODE = _key(
    "hoodie.datasource.write.partitionpath.urlencode",
    False,
    "URL-encode partition path values.",
    parse=parse_bool,
    scope="table",
)
KEYGEN_TYPE = _key(
    "hoodie.datasource.write.keygenerator.type",
    None,
    "SIMPLE|COMPLEX|NON_PARTITION|TIMESTAMP|CUSTOM (inferred from the fields when unset).",
    aliases=("hoodie.table.keygenerator.type",),
    parse=normalize_keygen_type,
    scope="table",
)
KEYGEN_CLASS = _key(
    "hoodie.datasource.write.keygenerator.class",
    None,
    "Java key generator class; mapped to a KEYGEN_TYPE.",
    aliases=("hoodie.table.keygenerator.class",),
    scope="table",
)
TIMESTAMP_TYPE = _key(
    "hoodie.keygen.timebased.timestamp.type",
    None,
    "Timestamp keygen input: UNIX_TIMESTAMP|DATE_STRING|EPOCHMILLISECONDS|...",
    parse=choice(
        "UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR"
    ),
    aliases=("hoodie.deltastreamer.keygen.timebased.timestamp.type",),
)
TIMESTAMP_OUTPUT_FORMAT = _key(
    "hoodie.keygen.timebased.output.dateformat",
    None,
    "Timestamp keygen output date format.",
    aliases=("hoodie.deltastreamer.keygen.timebased.output.dateformat",),
)
TIMESTAMP_INPUT_FORMAT = _key(
    "hoodie.keygen.timebased.input.dateformat",
    None,
    "Timestamp keygen input date format (DATE_STRING): a Java date pattern; offsets Z/X/XXX, "
    "zone ids z, quoted literals and fractions are read (a parsed offset wins over the zone).",
    aliases=("hoodie.deltastreamer.keygen.timebased.input.dateformat",),
)
TIMESTAMP_TIMEZONE = _key(
    "hoodie.keygen.timebased.timezone",
    "UTC",
    "Timezone of the timestamp keygen.",
    aliases=("hoodie.deltastreamer.keygen.timebased.timezone",),
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
    aliases=(
        "payloadClass",
        "payload.class",
        "write.payload.class",
        "hoodie.compaction.payload.class",
    ),
    scope="table",
)
# Version 9 tables record them as merge properties (Hudi 1.1's RECORD_MERGE_PROPERTY_PREFIX,
# e.g. for a table upgraded from AWSDmsAvroPayload); a write option still wins.
MERGE_PROPERTY_PREFIX = "hoodie.record.merge.property."
DELETE_FIELD = _key(
    "hoodie.payload.delete.field",
    None,
    "Data column marking deletes when it equals DELETE_MARKER (default: _hoodie_is_deleted).",
    aliases=(MERGE_PROPERTY_PREFIX + "hoodie.payload.delete.field",),
)
DELETE_MARKER = _key(
    "hoodie.payload.delete.marker",
    None,
    "Value of DELETE_FIELD that marks a delete.",
    aliases=(MERGE_PROPERTY_PREFIX + "hoodie.payload.delete.marker",),
)
CHANGELOG_ENABLED = _key(
    "hoodie.allow.operation.metadata.field",
    False,
    "Write the _hoodie_operation column (Flink changelog mode).",
    aliases=("changelog.enabled",),
    parse=parse_bool,
    scope="table",
)
POPULATE_META_FIELDS = _key(
    "hoodie.populate.meta.fields",
    True,
    "false: a table without meta fields (Hudi's virtual keys); rows stored without "
    "_hoodie_record_key are matched by their record key fields (hudilite still fills the "
    "meta columns of the records it writes).",
    parse=parse_bool,
    scope="table",
)


# Partial updates and sequence groups (read by hudilite.merge.spec).
PARTIAL_UPDATE = _key(
    "hoodie.datasource.write.partial.update",
    False,
    "Partial update: a null field of the winning record keeps the other version's value.",
    aliases=("hoodie.hudilite.partial.update", "partial.update"),
    parse=parse_bool,
)


def _parse_partial_update_mode(value: str) -> str:
    return str(value).strip().upper()


PARTIAL_UPDATE_MODE = _key(
    "hoodie.table.partial.update.mode",
    None,
    "Hudi 1.1 partial update mode: NONE | IGNORE_DEFAULTS | FILL_UNAVAILABLE (a column "
    "holding the table's unavailable value keeps the stored value; KEEP_VALUES is refused).",
    aliases=("hoodie.write.partial.update.mode",),
    parse=_parse_partial_update_mode,
    scope="table",
)


SEQUENCE_GROUPS = _key(
    "hoodie.hudilite.sequence.groups",
    (),
    "hudilite: column groups updated by their own ordering column, "
    "'ts_a:name,email;ts_b:age' (like Paimon's sequence groups).",
    aliases=("sequence.groups",),
    parse=parse_sequence_groups,
)


# More of the timestamp key generator (hudilite.keygen); Hudi's legacy
# hoodie.deltastreamer.keygen.timebased.* names are aliases.
def _ts_key(suffix: str, default: object, doc: str) -> ConfigKey:
    return _key(
        "hoodie.keygen.timebased." + suffix,
        default,
        doc,
        aliases=("hoodie.deltastreamer.keygen.timebased." + suffix,),
        scope="table",
    )


TIMESTAMP_INPUT_TIMEZONE = _ts_key(
    "input.timezone", None, "Timestamp keygen: zone of input dates (unless timezone is set)."
)
TIMESTAMP_OUTPUT_TIMEZONE = _ts_key(
    "output.timezone", None, "Timestamp keygen: zone of output paths (unless timezone is set)."
)
TIMESTAMP_SCALAR_UNIT = _ts_key(
    "timestamp.scalar.time.unit", "SECONDS", "Timestamp keygen: unit of SCALAR input values."
)
TIMESTAMP_INPUT_FORMAT_DELIMITER = _ts_key(
    "input.dateformat.list.delimiter.regex",
    ",",
    "Timestamp keygen: separator of several input date formats.",
)
COMPLEX_KEYGEN_NEW_ENCODING = _key(
    "hoodie.write.complex.keygen.new.encoding",
    False,
    "Complex key generator with one record key field writes the bare value (Hudi 1.0.2+).",
    parse=parse_bool,
)
COMPLEX_KEYGEN_VALIDATION = _key(
    "hoodie.write.complex.keygen.validation.enable",
    True,
    "Refuse a table version change (8 <-> 9) of a table whose complex key generator has "
    "one record key field (its keys may differ between Hudi releases, HUDI-7001).",
    parse=parse_bool,
)
COMPLEX_KEYGEN_ENCODING = _key(
    "hoodie.table.complex.keygen.encoding",
    None,
    "How the complex key generator encodes one-field keys (VALUE_ONLY: the bare value).",
)

# hoodie.properties keys TableConfig renders itself (they describe the table on disk; a
# user cannot set them, ALTER TABLE refuses to change them).
BASE_FILE_FORMAT = _key(
    "hoodie.table.base.file.format",
    "PARQUET",
    "Base file format: PARQUET (ORC and HFile base files are not supported).",
    parse=choice("PARQUET"),
)
PARTITION_METAFILE_USE_BASE_FORMAT = _key(
    "hoodie.partition.metafile.use.base.format",
    False,
    "Partition metadata in the base file format (.hoodie_partition_metadata.parquet) instead "
    "of the text file; set by CALL repair_migrate_partition_meta. hudilite reads both forms "
    "and writes the text form into new partitions (Hudi's readers read both).",
    parse=parse_bool,
    scope="table",
)
TABLE_INITIAL_VERSION = _key(
    "hoodie.table.initial.version", None, "Table version the table was created with."
)
TIMELINE_LAYOUT_VERSION = _key(
    "hoodie.timeline.layout.version",
    None,
    "Timeline layout: 1 (table version 6) or 2 (8 and later).",
    scope="table",
)
TABLE_CREATE_SCHEMA = _key(
    "hoodie.table.create.schema", None, "Avro schema (JSON) the table was created with."
)
TIMELINE_TIMEZONE = _key(
    "hoodie.table.timeline.timezone",
    "UTC",
    "Zone of instant times: UTC (new tables) or LOCAL (Hudi's default for older tables).",
)
TABLE_CHECKSUM = _key(
    "hoodie.table.checksum", None, "CRC32 of '<database>.<table name>' (hoodie.properties)."
)
MERGE_STRATEGY_ID = _key(
    "hoodie.record.merge.strategy.id",
    None,
    "Hudi 1.x merger strategy id (derived from the merge mode).",
    aliases=(
        "hoodie.datasource.write.record.merger.strategy",
        "record.merger.strategy",
        "hoodie.compaction.record.merger.strategy",
    ),
)
TABLE_FORMAT = _key(
    "hoodie.table.format",
    "native",
    "Table format (version 9): native, Hudi's own timeline (others are refused on write).",
    scope="table",
    unsupported="hudilite writes only Hudi's native table format",
    ignore_values=("native",),
)
LEGACY_PAYLOAD_CLASS = _key(
    "hoodie.table.legacy.payload.class",
    None,
    "Payload class a version 9 table replaced by its merge mode and partial update mode.",
    scope="table",
)
MERGE_PROPERTIES = _key(
    "hoodie.table.merge.properties",
    None,
    "Merge properties 'K1=V1,K2=V2' (RFC-97 draft; Hudi 1.1 writes "
    "hoodie.record.merge.property.<key> keys instead): refused on write when set.",
    scope="table",
    unsupported="hudilite reads merge properties from hoodie.record.merge.property.* keys",
    ignore_values=("",),
)
TIMELINE_PATH = _key(
    "hoodie.timeline.path", "timeline", "Active timeline folder under .hoodie (version 8+)."
)
TIMELINE_HISTORY_PATH = _key(
    "hoodie.timeline.history.path",
    "history",
    "LSM archived timeline folder under .hoodie/timeline (version 8+).",
)
ARCHIVELOG_FOLDER = _key(
    "hoodie.archivelog.folder", "archived", "Archived timeline folder under .hoodie (version 6)."
)
DROP_PARTITION_COLUMNS = _key(
    "hoodie.datasource.write.drop.partition.columns",
    False,
    "Drop partition columns from data files: only false is supported.",
    parse=parse_bool,
    scope="table",
    unsupported="hudilite always keeps the partition columns in data files",
    ignore_values=("false",),
)
METADATA_PARTITIONS = _key(
    "hoodie.table.metadata.partitions",
    None,
    "Metadata table partitions (readers list files through the metadata table when it names "
    "files): hudilite maintains no metadata table, so it clears this before changing a table.",
    unsupported="hudilite maintains no metadata table",
    ignore_values=("",),
)
METADATA_PARTITIONS_INFLIGHT = _key(
    "hoodie.table.metadata.partitions.inflight",
    None,
    "Metadata table partitions being built: cleared with hoodie.table.metadata.partitions.",
    unsupported="hudilite maintains no metadata table",
    ignore_values=("",),
)
INDEX_DEFS_PATH = _key(
    "hoodie.table.index.defs.path",
    None,
    "Index definitions file (Hudi 1.x, relative to the base path; default "
    ".hoodie/.index_defs/index.json): every index it defines lives in the metadata table, "
    "which hudilite removes with its definitions before changing a table.",
    unsupported="hudilite maintains no metadata table, so no index definitions",
    ignore_values=("",),
)
