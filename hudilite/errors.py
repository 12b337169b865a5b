"""The error hierarchy: one root, a few subclasses a caller can act on.

Every error hudilite raises on purpose derives from :class:`HudiliteError`, so
``except hudilite.HudiliteError`` catches them all; the subclasses say what kind
of problem it is (the thing named does not exist, the input is wrong, another
writer got there first, the files on disk are not what the format says).
"""

from __future__ import annotations

import sys
import warnings


class HudiliteError(Exception):
    """Root of every error hudilite raises deliberately."""


class TableNotFoundError(HudiliteError):
    """No Hudi table at the given path or name."""


class TableExistsError(HudiliteError):
    """A table already exists where one was to be created."""


class ConfigError(HudiliteError, ValueError):
    """An option key or value is unknown or malformed."""


class PartitionNotFoundError(ConfigError):
    """A partition path named by the caller (e.g. to delete it) is not one of the table's."""


class SchemaError(HudiliteError, ValueError):
    """Data does not match the table schema (missing or ill-typed columns)."""


class KeyGenerationError(HudiliteError, ValueError):
    """A record key or partition path cannot be computed (null key, bad timestamp)."""


class ConflictError(HudiliteError):
    """Another writer committed to the same file groups first; this write was rolled back."""


class LockError(ConflictError):
    """The table lock is held by a live holder past the configured wait (the message names it)."""


class TimelineError(HudiliteError):
    """The timeline is inconsistent or an instant is not in the expected state."""


class InstantNotFoundError(TimelineError):
    """A requested instant (time travel, rollback target) is not on the timeline or was cleaned."""


class CorruptFileError(HudiliteError):
    """A data, log or metadata file does not follow the Hudi format."""


class MissingFileError(CorruptFileError):
    """A data file the timeline names (a committed base or log file) is not on storage."""


class WriteError(HudiliteError):
    """A write failed; the table was left at its previous state."""


class DuplicateKeyError(WriteError):
    """An insert under ``hoodie.datasource.insert.dup.policy=fail`` carries keys the table
    already holds (Hudi's ``HoodieDuplicateKeyException``); the message names them."""


class HudiliteWarning(UserWarning):
    """Root of the warnings hudilite issues (``warnings.warn``); the SQL layer shows them."""


class OptionWarning(HudiliteWarning):
    """An option key hudilite does not know, does not implement, or that is deprecated."""


def warn_at_caller(message: str | Warning, category: type[Warning] | None = None) -> None:
    """``warnings.warn`` pointing at the first frame outside hudilite (the user's line that
    called into it), however deep inside hudilite the warning is raised; the immediate
    caller when every frame is hudilite's (the CLI)."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == "hudilite":
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)
