"""Hudi's metadata table (``.hoodie/metadata``), as Hudi 1.x lays it out.

Layer: above ``timeline``, ``filegroup`` and ``storage``, below ``write``. So far the ``files``
partition, the table's file listing that Hudi's readers (hudi-rs among them) list files
through when ``hoodie.table.metadata.partitions`` names it:

- :mod:`~hudilite.metadata.records`: ``HoodieMetadataRecord`` of the files partition
  (``__all_partitions__`` and one record per data partition), Hudi's merge rule;
- :mod:`~hudilite.metadata.hfiles`: the HFiles holding them (log block content, base files).
"""
