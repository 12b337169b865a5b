"""Which index a write uses, and the bloom index's per-file key lookup (no pyspark).

Index types (``hoodie.index.type``, Hudi's names, case-insensitive):

* ``SIMPLE``: the keys of every base file whose footer key range overlaps the batch's are
  read and joined with the incoming keys, per partition.
* ``BLOOM``: Hudi's bloom index. Files are pruned per incoming key by their footer key
  range (``hoodie.bloom.index.prune.by.ranges``), then by the bloom filter in their footer;
  only files whose filter says "maybe" for some key have their keys read
  (:func:`lookup_keys`, Hudi's ``HoodieKeyLookupHandle``). With
  ``hoodie.bloom.index.use.metadata`` and the metadata table's ``bloom_filters`` partition
  (:mod:`hudilite.metadata.bloom_filters`), the filters come from there
  (:func:`metadata_filters`) instead of each file's footer, as Hudi's
  ``HoodieBloomIndex`` does; a file without a record there is read from its footer.
* ``GLOBAL_SIMPLE`` / ``GLOBAL_BLOOM``: the same lookups over every partition of the
  table, the key alone identifying a record. A record whose partition value changed moves
  (delete in the old partition, insert in the new) when
  ``hoodie.simple.index.update.partition.path`` / ``hoodie.bloom.index.update.partition.path``
  is true (Hudi's default), else it is updated where it is.
* ``BUCKET``: :mod:`hudilite.index.bucket`.
* ``RECORD_INDEX``: Hudi's record-level index, always global: keys are looked up in the
  metadata table's ``record_index`` partition (:mod:`hudilite.metadata.record_index`), no
  data file is read. A record whose partition value changed moves when
  ``hoodie.record.index.update.partition.path`` is true (Hudi's default: false). Refused by
  name unless the table keeps that partition (``hoodie.metadata.enable`` and
  ``hoodie.metadata.record.index.enable``), as Hudi refuses it.

Flink's ``index.global.enabled`` (when set) turns a SIMPLE/BLOOM index global with moving
records (``true``) or keeps it per partition (``false``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudilite import config as cfg
from hudilite.errors import ConfigError
from hudilite.keygen import KeyGenSpec
from hudilite.metadata import bloom_filters
from hudilite.storage.bloom_filter import BloomConfig, BloomFilter
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import read_bloom_filter, read_stored_keys
from hudilite.tablestate import properties_file
from hudilite.timeline.timeline import Timeline


def bloom_config(opts: cfg.Options) -> BloomConfig:
    """The bloom filter written into base files under ``opts`` (Hudi's storage config)."""
    return BloomConfig(
        filter_type=str(opts.get(cfg.BLOOM_FILTER_TYPE)).upper(),
        num_entries=int(opts.get(cfg.BLOOM_NUM_ENTRIES)),
        fpp=float(opts.get(cfg.BLOOM_FPP)),
        dynamic_max_entries=int(opts.get(cfg.BLOOM_DYNAMIC_MAX_ENTRIES)),
    )


@dataclass(frozen=True)
class IndexSettings:
    """The index of one write: ``kind`` SIMPLE | BLOOM | BUCKET, global or per partition."""

    kind: str
    is_global: bool = False
    update_partition_path: bool = True
    prune_by_ranges: bool = True
    #: ``hoodie.bloom.index.use.metadata``: filters from the bloom_filters partition
    use_metadata: bool = False


def index_settings(opts: cfg.Options) -> IndexSettings:
    """Resolve ``hoodie.index.type`` (and Flink's ``index.global.enabled``) for a write
    (``opts``: the table's properties and stored write options under the call's)."""
    name = str(opts.get(cfg.INDEX_TYPE)).upper()
    if name == cfg.INDEX_RECORD:
        check_record_index(opts)
        return IndexSettings(
            kind=name,
            is_global=True,
            update_partition_path=bool(opts.get(cfg.RECORD_INDEX_UPDATE_PARTITION_PATH)),
            prune_by_ranges=False,
        )
    is_global = name.startswith(cfg.GLOBAL_INDEX_PREFIX)
    kind = name.removeprefix(cfg.GLOBAL_INDEX_PREFIX)
    flink_global = opts.get(cfg.INDEX_GLOBAL_ENABLED)
    if flink_global is not None and kind != cfg.INDEX_BUCKET:
        is_global = bool(flink_global)
    update_key = (
        cfg.BLOOM_INDEX_UPDATE_PARTITION_PATH
        if kind == cfg.INDEX_BLOOM
        else cfg.SIMPLE_INDEX_UPDATE_PARTITION_PATH
    )
    update = bool(opts.get(update_key))
    if flink_global:
        update = True
    return IndexSettings(
        kind=kind,
        is_global=is_global,
        update_partition_path=update,
        prune_by_ranges=bool(opts.get(cfg.BLOOM_PRUNE_BY_RANGES)),
        use_metadata=bool(opts.get(cfg.BLOOM_INDEX_USE_METADATA)),
    )


def metadata_filters(
    gw: FileSystemGateway, files: Iterable[tuple[str, str]], settings: IndexSettings
) -> dict[str, BloomFilter]:
    """Table-relative base file path -> its bloom filter from the metadata table's
    ``bloom_filters`` partition, for ``files`` (partition, path) that have a record there;
    empty unless ``settings`` is a BLOOM index using the metadata table and the table lists
    the partition (then every file is read from its footer)."""
    if settings.kind != cfg.INDEX_BLOOM or not settings.use_metadata:
        return {}
    props = properties_file.load(gw)
    if not bloom_filters.listed(props):
        return {}
    by_name = {(p, rel.rsplit("/", 1)[-1]): rel for p, rel in files}
    timeline = Timeline.load(gw, cfg.TableConfig.from_properties(props))
    found = bloom_filters.filters_for(gw, by_name, timeline)
    return {by_name[f]: bloom for f, bloom in found.items()}


def check_record_index(opts: cfg.Options) -> None:
    """ConfigError naming the missing option when ``hoodie.index.type=RECORD_INDEX`` has no
    record_index partition to look keys up in."""
    for key in (cfg.METADATA_ENABLED, cfg.METADATA_RECORD_INDEX_ENABLED):
        if not opts.get(key):
            raise ConfigError(
                f"{cfg.INDEX_TYPE.name}=RECORD_INDEX needs the metadata table's record_index "
                f"partition: set {key.name}=true (with {cfg.METADATA_ENABLED.name}=true and "
                f"{cfg.METADATA_RECORD_INDEX_ENABLED.name}=true the table keeps it)"
            )


def lookup_keys(
    gw: FileSystemGateway,
    rel_path: str,
    keys: pa.Array | pa.ChunkedArray,
    virtual: KeyGenSpec | None = None,
    bloom: BloomFilter | None = None,
) -> tuple[pa.Array, bool]:
    """The ``keys`` (candidates for one base file) that the file really holds.

    Keys the footer's bloom filter rules out are dropped first; only when some key may be
    in the file are its record keys read. Returns ``(keys found, whether keys were read)``.
    A file without a bloom filter (written by a tool that omits it, or in a table without
    meta fields) is always read; ``virtual``: see :mod:`hudilite.virtual_keys`. ``bloom``:
    the file's filter from the metadata table (:func:`metadata_filters`); None reads the
    footer's.
    """
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if len(keys) == 0:
        return pa.array([], pa.string()), False
    if bloom is None:
        bloom = read_bloom_filter(gw, rel_path)
    if bloom is not None:
        maybe = bloom.might_contain_many(keys)
        if not maybe.any():
            return pa.array([], pa.string()), False
        keys = keys.filter(pa.array(np.asarray(maybe, dtype=bool)))
    stored = read_stored_keys(gw, rel_path, virtual)
    found = keys.filter(pc.is_in(keys, value_set=stored))
    return found, True
