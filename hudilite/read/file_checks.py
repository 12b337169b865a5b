"""Plan-time checks that the files the timeline names are the files on storage.

A base or log file a completed commit wrote that is gone or short would silently drop
out of the listing-based view (the read would show the file group's older version);
:mod:`hudilite.filegroup.integrity` finds such files from the commit metadata and the
listing, without opening a data file. A read fails on them naming the file and commit
(:class:`MissingFileError` for a missing file, :class:`CorruptFileError` for a short one);
with ``hoodie.hudilite.read.ignore.missing.files`` it goes on with a warning instead,
leaving out the file group of a damaged base file (its rows are in that file; showing
the older version would resurrect old values).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from hudilite.filegroup.integrity import find_damage
from hudilite.filegroup.slices import FileSlice
from hudilite.filegroup.view import FileSystemView, Visibility

_LOG = logging.getLogger(__name__)


def check_slices(
    view: FileSystemView,
    vis: Visibility,
    slices: Iterable[FileSlice],
    in_scope: Callable[[tuple[str, str]], bool],
    *,
    ignore_missing: bool = False,
) -> list[FileSlice]:
    """``slices`` after checking them against the visible commits' write stats (see the
    module docstring); ``in_scope`` says which file groups the read covers."""
    live = {s.group_key: s for s in slices}
    damage = find_damage(view, vis, live.values(), in_scope)
    problems = [(d.error, d.group if d.whole_group else None) for d in damage]
    if not problems:
        return list(live.values())
    if not ignore_missing:
        first = problems[0][0]
        more = f" (and {len(problems) - 1} more damaged files)" if len(problems) > 1 else ""
        hint = "; set hoodie.hudilite.read.ignore.missing.files=true to read without them"
        raise type(first)(f"{first}{more}{hint}")
    dropped = {drop for _, drop in problems if drop is not None}
    for error, drop in problems:
        left_out = " -- its file group is left out of the read" if drop is not None else ""
        _LOG.warning("%s%s", error, left_out)
    return [s for key, s in live.items() if key not in dropped]
