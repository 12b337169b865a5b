"""Index keys: index type, bucket index, bloom filters and the global index."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_bool,
    parse_fields,
    parse_float,
    parse_int,
    parse_size,
)
from hudilite.config.registry import _key
from hudilite.config.vocab import INDEX_SIMPLE, INDEX_TYPES
from hudilite.errors import ConfigError


def _parse_fpp(value: str | float) -> float:
    """A false-positive probability in (0, 1)."""
    try:
        fpp = float(str(value).strip())
    except ValueError:
        raise ConfigError(f"not a number: {value!r}") from None
    if not 0.0 < fpp < 1.0:
        raise ConfigError(f"not a probability in (0, 1): {value!r}")
    return fpp


INDEX_TYPE = _key(
    "hoodie.index.type",
    INDEX_SIMPLE,
    "SIMPLE, BLOOM (key ranges and bloom filters prune files), GLOBAL_SIMPLE and "
    "GLOBAL_BLOOM (a key is unique across partitions), BUCKET or RECORD_INDEX (global: keys "
    "are looked up in the metadata table's record_index partition, no data file is read; "
    "needs hoodie.metadata.record.index.enable).",
    aliases=("index.type",),
    parse=choice(*INDEX_TYPES),
)
BUCKET_NUM = _key(
    "hoodie.bucket.index.num.buckets",
    4,
    "Buckets per partition for the bucket index.",
    aliases=("bucket.index.num.buckets",),
    parse=parse_int,
)
BUCKET_HASH_FIELD = _key(
    "hoodie.bucket.index.hash.field",
    None,
    "Fields hashed into buckets (default: the record key fields).",
    parse=parse_fields,
)
BLOOM_FILTER_TYPE = _key(
    "hoodie.bloom.index.filter.type",
    "DYNAMIC_V0",
    "Bloom filter written into every base file's footer: DYNAMIC_V0 (grows by rows up to "
    "the dynamic max entries) or SIMPLE.",
    parse=choice("SIMPLE", "DYNAMIC_V0"),
)
BLOOM_NUM_ENTRIES = _key(
    "hoodie.index.bloom.num_entries",
    60000,
    "Keys a bloom filter (a DYNAMIC_V0 row) is sized for.",
    parse=parse_int,
)
BLOOM_FPP = _key(
    "hoodie.index.bloom.fpp",
    0.000000001,
    "Target false-positive probability of the bloom filter at num_entries keys.",
    parse=_parse_fpp,
)
BLOOM_DYNAMIC_MAX_ENTRIES = _key(
    "hoodie.bloom.index.filter.dynamic.max.entries",
    100000,
    "Keys after which a DYNAMIC_V0 filter stops adding rows.",
    parse=parse_int,
)
BLOOM_PRUNE_BY_RANGES = _key(
    "hoodie.bloom.index.prune.by.ranges",
    True,
    "BLOOM index: skip files whose footer key range does not cover a key.",
    parse=parse_bool,
)
SIMPLE_INDEX_UPDATE_PARTITION_PATH = _key(
    "hoodie.simple.index.update.partition.path",
    True,
    "GLOBAL_SIMPLE: a record whose partition value changed moves to its new partition "
    "(deleted from the old one); false keeps it in the old partition.",
    parse=parse_bool,
)
BLOOM_INDEX_UPDATE_PARTITION_PATH = _key(
    "hoodie.bloom.index.update.partition.path",
    True,
    "GLOBAL_BLOOM: as hoodie.simple.index.update.partition.path.",
    parse=parse_bool,
)
BLOOM_INDEX_USE_METADATA = _key(
    "hoodie.bloom.index.use.metadata",
    False,
    "BLOOM and GLOBAL_BLOOM: read the files' bloom filters from the metadata table's "
    "bloom_filters partition when the table has it, instead of each base file's footer "
    "(a file without a record there is still read from its footer).",
    parse=parse_bool,
)
INDEX_GLOBAL_ENABLED = _key(
    "index.global.enabled",
    None,
    "Flink: true makes the index global (a key changing partition moves); false keeps "
    "the index per partition. Unset: hoodie.index.type decides.",
    parse=parse_bool,
)
RECORD_INDEX_UPDATE_PARTITION_PATH = _key(
    "hoodie.record.index.update.partition.path",
    False,
    "RECORD_INDEX: a record whose partition value changed moves to its new partition "
    "(deleted from the old one); false (Hudi's default) updates it in the old partition.",
    parse=parse_bool,
)
METADATA_RECORD_INDEX_ENABLED = _key(
    "hoodie.metadata.record.index.enable",
    False,
    "Keep the metadata table's record_index partition (with hoodie.metadata.enable): the "
    "partition and file group of every record key, kept exact by every action, built from "
    "the table's latest file slices when turned on, dropped when turned off. The "
    "RECORD_INDEX index type looks keys up in it.",
    parse=parse_bool,
)
RECORD_INDEX_MIN_FILE_GROUPS = _key(
    "hoodie.metadata.record.index.min.filegroup.count",
    10,
    "Fewest file groups of record_index, fixed when it is built.",
    parse=parse_int,
)
RECORD_INDEX_MAX_FILE_GROUPS = _key(
    "hoodie.metadata.record.index.max.filegroup.count",
    10000,
    "Most file groups of record_index.",
    parse=parse_int,
)
RECORD_INDEX_GROWTH_FACTOR = _key(
    "hoodie.metadata.record.index.growth.factor",
    2.0,
    "The key count record_index is sized for when built: the table's keys times this.",
    parse=parse_float,
)
RECORD_INDEX_MAX_FILE_GROUP_SIZE = _key(
    "hoodie.metadata.record.index.max.filegroup.size",
    1073741824,
    "Bytes of entries (48 a key) one record_index file group is sized for.",
    parse=parse_size,
)
