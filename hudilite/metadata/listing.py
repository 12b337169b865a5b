"""Listing a table's files through its metadata table instead of storage.

When ``hoodie.table.metadata.partitions`` names ``files`` (a table hudilite keeps the metadata
table of, or one Hudi wrote), the files partition lists every partition and the data files of
its completed instants: what a read needs. Reading it costs a fixed number of storage calls
(the metadata timeline, the files partition's folder, its base file and log files), where a
storage walk lists every partition folder -- on S3 one LIST request or more per partition.

:func:`listing_view` gives the file-system view of a read: a
:class:`~hudilite.filegroup.view.FileSystemView` whose listing comes from the files partition
(:func:`files_partition_tree`), or the storage view itself when the table has no usable files
partition: not listed, a version hudilite does not read it on, or a metadata timeline holding
actions hudilite's reader does not follow (Hudi's log compaction or rollback of the
metadata table). Only reads use it (:func:`hudilite.read.planner.plan_snapshot` and
``plan_incremental``): a rollback or a retried table service needs the files of pending
instants, which the files partition never lists. The plan-time damage checks
(:mod:`hudilite.read.file_checks`) then compare the commits' write stats with the sizes the
files partition recorded, as Hudi's readers trust it: a file removed from storage behind the
table's back fails when the read opens it, not when it plans.
"""

from __future__ import annotations

from collections.abc import Mapping
from weakref import WeakKeyDictionary

from hudilite.filegroup.view import FileSystemView
from hudilite.metadata import table as mt
from hudilite.storage.fs import FileEntry, FileSystemGateway, join
from hudilite.tablestate.properties_file import METADATA_PARTITION_KEYS
from hudilite.timeline.timeline import Timeline


def usable(gw: FileSystemGateway, props: Mapping[str, str]) -> mt.MetadataTimeline | None:
    """The metadata timeline when a read may list the table through its files partition
    (see the module docstring), else None."""
    raw = props.get(METADATA_PARTITION_KEYS[0]) or ""
    if mt.FILES_PARTITION not in [p.strip() for p in raw.split(",")]:
        return None
    try:
        version = int(props.get("hoodie.table.version") or 0)
    except ValueError:
        return None
    if version not in mt.SUPPORTED_VERSIONS:
        return None
    timeline = mt.load_timeline(gw)
    return None if timeline.others else timeline


def files_partition_tree(
    gw: FileSystemGateway, timeline: Timeline, metadata: mt.MetadataTimeline | None = None
) -> dict[str, list[FileEntry]]:
    """Partition -> entries of its data files, as the files partition lists them (metadata
    deltacommits whose data instant did not complete on ``timeline`` left out)."""
    listing = mt.listing_of(mt.read_files_partition(gw, timeline, metadata))
    return {
        partition: [
            FileEntry(name, join(partition, name), size, 0, False)
            for name, size in sorted(files.items())
        ]
        for partition, files in listing.items()
    }


#: The listing view of each storage view, so a read that prunes partitions and then plans
#: reads the files partition once (a view is one moment of the table).
_VIEWS: WeakKeyDictionary[FileSystemView, FileSystemView] = WeakKeyDictionary()


def listing_view(view: FileSystemView) -> FileSystemView:
    """The view a read plans with: ``view``'s table listed through its files partition when
    :func:`usable`, else ``view`` itself (the same object for the same ``view``)."""
    if view in _VIEWS:
        return _VIEWS[view]
    metadata = usable(view.gw, view.config.props)
    if metadata is None:
        return view  # not cached: a value holding its own key would never be freed
    gw, timeline = view.gw, view.timeline
    out = FileSystemView(
        gw, view.config, timeline, lambda: files_partition_tree(gw, timeline, metadata)
    )
    _VIEWS[view] = out
    return out
