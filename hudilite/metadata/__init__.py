"""Hudi's metadata table (``.hoodie/metadata``), as Hudi 1.x lays it out.

Layer: above ``timeline``, ``filegroup`` and ``storage``, below ``write``. So far the ``files``
partition, the table's file listing that Hudi's readers (hudi-rs among them) list files
through when ``hoodie.table.metadata.partitions`` names it:

- :mod:`~hudilite.metadata.records`: ``HoodieMetadataRecord`` of the files partition
  (``__all_partitions__`` and one record per data partition), Hudi's merge rule;
- :mod:`~hudilite.metadata.hfiles`: the HFiles holding them (log block content, base files);
- :mod:`~hudilite.metadata.table`: the layout of ``.hoodie/metadata`` (its hoodie.properties,
  timeline and ``files-0000-0`` file group), :func:`~hudilite.metadata.table.initialize` from
  a storage listing, and the merged read of the files partition;
- :mod:`~hudilite.metadata.convert`: a data instant's records from its own metadata (commit,
  deltacommit, replacecommit, clean), as Hudi derives them;
- :mod:`~hudilite.metadata.compact`: the files partition's compaction after
  ``hoodie.metadata.compact.max.delta.commits`` deltacommits (Hudi's compaction instants on
  the metadata timeline, a new HFile base file);
- :mod:`~hudilite.metadata.column_stats` (records: :mod:`~hudilite.metadata.
  column_stats_records`, a file's statistics: :mod:`~hudilite.metadata.column_stats_files`)
  and :mod:`~hudilite.metadata.partition_stats`: the ``column_stats`` and ``partition_stats``
  partitions data skipping reads (:mod:`hudilite.read.data_skipping`), kept by the same
  deltacommits and compacted with the files partition
  (:mod:`~hudilite.metadata.column_stats_compact`);
- :mod:`~hudilite.metadata.sync`: the hook the timeline runs before a data instant's
  completed file is written (the instant's metadata deltacommit; rollback and restore), and
  the removal of metadata deltacommits whose data instant never completed.

The metadata-table guard (``hudilite/write/metadata_guard.py``) keeps a table's metadata table
when ``hoodie.metadata.enable`` is true for it (building the files partition from a listing
when missing, column_stats and partition_stats from it when their options are on, dropping
the partitions hudilite cannot keep), and removes it otherwise.
"""
