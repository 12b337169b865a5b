"""Turning failures inside Spark tasks back into hudilite's own errors.

An error raised in an executor reaches the driver as a Py4J/PySpark
exception whose text holds the Python traceback. A user who passed a null
key should see ``KeyGenerationError: ...``, not a JVM stack, so the last
hudilite error named in that text is re-raised as its own class.
"""

from __future__ import annotations

import re

from hudilite import errors

_ERROR_LINE = re.compile(r"hudilite\.errors\.(\w+): (.*)")


def hudilite_error_from(exc: BaseException) -> errors.HudiliteError | None:
    """The hudilite error a failed Spark job carried, if its message names one."""
    if isinstance(exc, errors.HudiliteError):
        return exc
    matches = _ERROR_LINE.findall(str(exc))
    if not matches:
        return None
    name, message = matches[-1]
    # Spark appends the SQL state to messages of raise_error(): not part of ours.
    message = re.sub(r"\s*SQLSTATE: \w+\s*$", "", message)
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, errors.HudiliteError)):
        return None
    return cls(message.strip())


def first_line(exc: BaseException) -> str:
    """A one-line description of a (possibly very long) Spark failure."""
    text = str(exc).strip()
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line and not line.startswith(("at ", "File ", "^", "~")) and "Error" in line:
            return line[:500]
    return text.splitlines()[0][:500] if text else type(exc).__name__
