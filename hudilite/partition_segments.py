"""Partition values whose folders cannot hold them are refused before a write.

Too long: local file systems, HDFS and the JVM's temporary paths cap one name at 255 bytes: a
partition value whose folder name (``field=value`` when hive style, after URL-encoding)
is longer failed deep in the write with the operating system's raw ``[Errno 36] File
name too long`` and the folder's path. Both key generators (the Arrow one in
:func:`hudilite.keygen.partition_paths`, the Spark expressions in
:mod:`hudilite.spark.keying`) check each segment's UTF-8 length with this rule and raise
one :class:`KeyGenerationError` naming the field and the value instead.

Ambiguous: a ``/`` inside one of several plain partition values (see
:func:`splits_ambiguously`), and the value ``__HIVE_DEFAULT_PARTITION__``, the folder of
null and empty values (whose rows it would join, and read back as null).
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


def splits_ambiguously(parts: int, hive_style: bool, url_encode: bool) -> bool:
    """Whether a ``/`` inside a plain (SIMPLE) partition value makes paths ambiguous: with
    several partition fields neither hive style (``a=x/y/b=z`` names each field) nor
    URL-encoding (``x%2Fy``) marks where a value ends, so ``('x/y', 'z')`` and
    ``('x', 'y/z')`` would share the folder ``x/y/z``. (With one field, ``x/y`` is only
    ever that value: nested folders, as Hudi's ``yyyy/MM/dd`` paths.)"""
    return parts > 1 and not hive_style and not url_encode


def slash_message(name: str, shown: str, fields: list[str]) -> str:
    """The one-line refusal for partition field ``name`` whose value ``shown`` holds ``/``."""
    return (
        f"partition field {name!r} has value {shown} holding '/', which would make its "
        f"partition path (fields {fields!r}, not hive style) the same as other values': "
        "change the value, or use hive-style partitioning or partitionpath.urlencode"
    )


def check_no_slash(name: str, text: pa.Array, fields: list[str]) -> None:
    """Raise :class:`KeyGenerationError` for the first value of ``text`` holding ``/``."""
    bad = pc.fill_null(pc.match_substring(text, "/"), False)
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        shown = f"{text[row].as_py()!r} in row {row}"
        raise KeyGenerationError(slash_message(name, shown, fields))


def placeholder_message(name: str, shown: str, placeholder: str) -> str:
    """The refusal for partition field ``name`` whose value ``shown`` is the placeholder."""
    return (
        f"partition field {name!r} has value {shown}, the folder name Hudi gives null and "
        f"empty values ({placeholder!r}): its rows would share that partition and read back "
        "as null; change the value"
    )


def check_not_placeholder(name: str, text: pa.Array, placeholder: str) -> None:
    """Raise :class:`KeyGenerationError` for the first value equal to ``placeholder``."""
    bad = pc.fill_null(pc.equal(text, placeholder), False)
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        raise KeyGenerationError(placeholder_message(name, f"{placeholder!r} in row {row}",
                                                     placeholder))  # fmt: skip


__all__ = [
    "MAX_SEGMENT_BYTES",
    "check_no_slash",
    "check_not_placeholder",
    "check_segment_lengths",
    "overlong_message",
    "placeholder_message",
    "shown_folder",
    "slash_message",
    "splits_ambiguously",
]  # fmt: skip
