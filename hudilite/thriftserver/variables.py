"""Hive variable substitution for the statements clients send (``${x}``, ``SET hivevar:x=1``).

As HiveServer2 and Spark's Thrift server, the server replaces variable references in a
statement's text before it is parsed:

* ``${x}``: the session's Hive variable ``x`` (``beeline --hivevar x=1``, PyHive's
  ``configuration={"set:hivevar:x": "1"}``, ``SET hivevar:x=1``), else the session setting
  ``x`` (as Spark, which keeps Hive variables among its settings);
* ``${hivevar:x}``: the Hive variable only;
* ``${hiveconf:key}``, ``${spark:key}``, ``${sparkconf:key}``: the session's setting ``key``
  (a hudilite option given by ``SET``, else Spark's conf). Settings whose name looks like a
  secret (Spark's default ``spark.redaction.regex``) are never substituted;
* anything else (an unknown name, ``${env:...}``, ``${system:...}``) is left as written, so
  the statement fails naming it rather than running with an empty string.

The reference syntax is Spark's (``ConfigReader``): ``${[prefix:]name}``, the name without
blanks. A value is substituted in turn (a variable may name another); a reference that
comes back to itself is an error. In a script, ``SET hivevar:x=...`` applies to the
statements after it; settings are read when the text arrives. Spark's own substitution
(``spark.sql.variable.substitute``, which would also expand ``${env:...}``) is kept off in
the server's sessions (:data:`SPARK_SUBSTITUTE`).

This module is pure Python (no JVM): the caller passes the variables and a function looking
settings up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hudilite.sqlext.statements import split_script_positions

__all__ = [
    "SPARK_SUBSTITUTE",
    "Assignment",
    "Step",
    "VariableError",
    "hivevar_assignment",
    "plan_script",
    "substitute",
]

#: Spark's switch for its own substitution; the server keeps it ``false`` in its sessions.
SPARK_SUBSTITUTE = "spark.sql.variable.substitute"
#: Spark's ConfigReader.REF_RE: ``${name}`` or ``${prefix:name}``.
REFERENCE = re.compile(r"\$\{(?:(\w+?):)?(\S+?)\}")
#: Longest text a substitution may produce (variables naming each other twice over grow
#: exponentially).
MAX_LENGTH = 16 * 1024 * 1024
#: Prefixes naming a session setting.
SETTING_PREFIXES = frozenset({"hiveconf", "spark", "sparkconf"})
#: Setting names never substituted (Spark's default ``spark.redaction.regex``).
SECRET = re.compile(r"(?i)secret|password|token|access[.]?key")
_SET_HIVEVAR = re.compile(r"SET\s+hivevar:([^=\s]+)\s*(?:=(.*))?", re.IGNORECASE | re.DOTALL)
_MENTIONS_HIVEVAR = re.compile(r"hivevar:", re.IGNORECASE)

#: Looks a session setting up: its value, or None when it is not set.
SettingLookup = Callable[[str], str | None]


class VariableError(ValueError):
    """A variable reference that cannot be substituted (a circular reference, a text grown
    too long)."""


@dataclass(frozen=True)
class Assignment:
    """``SET hivevar:name=value`` (``value`` None: ``SET hivevar:name``, show it)."""

    name: str
    value: str | None


@dataclass(frozen=True)
class Step:
    """One statement of a script after substitution, with where it starts in the text
    (1-based line and column); ``assignment`` when it sets or shows a Hive variable."""

    sql: str
    line: int
    column: int
    assignment: Assignment | None = None


def substitute(
    text: str, variables: Mapping[str, str], setting: SettingLookup | None = None
) -> str:
    """``text`` with its variable references replaced (module doc); unknown ones stay as
    written. :class:`VariableError` on a circular reference."""

    def value_of(prefix: str | None, name: str) -> str | None:
        if prefix is None:
            found = variables.get(name)
            return found if found is not None else _setting(setting, name)
        if prefix == "hivevar":
            return variables.get(name)
        if prefix in SETTING_PREFIXES:
            return _setting(setting, name)
        return None  # env:, system: and unknown prefixes are not offered

    def expand(part: str, active: tuple[str, ...]) -> str:
        def replace(m: re.Match[str]) -> str:
            prefix = m.group(1).lower() if m.group(1) else None
            name = m.group(2)
            ref = name if prefix is None else f"{prefix}:{name}"
            value = value_of(prefix, name)
            if value is None:
                return m.group(0)
            if ref in active:
                chain = " -> ".join(f"${{{r}}}" for r in (*active, ref))
                raise VariableError(f"circular variable reference: {chain}")
            return expand(value, (*active, ref))

        out = REFERENCE.sub(replace, part)
        if len(out) > MAX_LENGTH:
            raise VariableError(f"variable substitution makes a text over {MAX_LENGTH} characters")
        return out

    if "${" not in text:
        return text
    return expand(text, ())


def _setting(setting: SettingLookup | None, name: str) -> str | None:
    if setting is None or SECRET.search(name):
        return None
    return setting(name)


def hivevar_assignment(sql: str) -> Assignment | None:
    """The :class:`Assignment` when ``sql`` (one statement) is ``SET hivevar:name[=value]``
    (name and value trimmed, as Spark's ``SET``), else None."""
    m = _SET_HIVEVAR.fullmatch(sql.strip().rstrip(";").strip())
    if m is None:
        return None
    value = m.group(2)
    return Assignment(m.group(1), None if value is None else value.strip())


def plan_script(
    text: str, variables: Mapping[str, str], setting: SettingLookup | None = None
) -> list[Step]:
    """The statements of ``text`` to run, variables substituted. A text that references
    no variable and sets none is one step, as written (run whole); otherwise one step per
    statement, each substituted with the variables as the ``SET hivevar:`` statements
    before it leave them (``variables`` itself is not changed)."""
    if "${" not in text and not _MENTIONS_HIVEVAR.search(text):
        return [Step(text, 1, 1)]
    known = dict(variables)
    steps = []
    for sql, line, column in split_script_positions(text):
        sql = substitute(sql, known, setting)
        assignment = hivevar_assignment(sql)
        if assignment is not None and assignment.value is not None:
            known[assignment.name] = assignment.value
        steps.append(Step(sql, line, column, assignment))
    return steps
