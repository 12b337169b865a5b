"""Partition path segments longer than a folder name may be are refused before a write.

Local file systems, HDFS and the JVM's temporary paths cap one name at 255 bytes: a
partition value whose folder name (``field=value`` when hive style, after URL-encoding)
is longer failed deep in the write with the operating system's raw ``[Errno 36] File
name too long`` and the folder's path. Both key generators (the Arrow one in
:func:`hudilite.keygen.partition_paths`, the Spark expressions in
:mod:`hudilite.spark.keying`) check each segment's UTF-8 length with this rule and raise
one :class:`KeyGenerationError` naming the field and the value instead.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import KeyGenerationError

#: The longest folder name, in UTF-8 bytes, that every supported file system takes.
MAX_SEGMENT_BYTES = 255


def overlong_message(name: str, shown: str) -> str:
    """The one-line refusal for partition field ``name`` whose folder name is ``shown``."""
    return (
        f"partition field {name!r}: the folder name {shown} is longer than the "
        f"{MAX_SEGMENT_BYTES} bytes a file system allows; shorten the value or partition by "
        "another field"
    )


def shown_folder(folder: str, row: int | None = None) -> str:
    """A folder name as the message shows it: its first 40 characters and its length."""
    head = folder if len(folder) <= 40 else folder[:40] + "..."
    where = f" in row {row}" if row is not None else ""
    return f"'{head}' ({len(folder.encode())} bytes){where}"


def check_segment_lengths(name: str, folder: pa.Array) -> None:
    """Raise :class:`KeyGenerationError` for the first row whose ``folder`` text (the
    field's partition path part: hive prefix and encoding applied, ``/`` separating
    folders) has a segment over :data:`MAX_SEGMENT_BYTES`, naming the field and the row."""
    if (pc.max(pc.binary_length(folder)).as_py() or 0) <= MAX_SEGMENT_BYTES:
        return  # no part is that long: no segment can be (the common case, vectorised)
    for row, text in enumerate(folder.to_pylist()):
        for segment in (text or "").split("/"):
            if len(segment.encode()) > MAX_SEGMENT_BYTES:
                raise KeyGenerationError(overlong_message(name, shown_folder(segment, row)))


__all__ = ["MAX_SEGMENT_BYTES", "check_segment_lengths", "overlong_message", "shown_folder"]
