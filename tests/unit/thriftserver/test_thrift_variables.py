"""Hive variable substitution of the Thrift server (hudilite.thriftserver.variables): no JVM."""

from __future__ import annotations

import pytest

pytest.importorskip("TCLIService")  # the server package comes with the `server` extra

from hudilite.thriftserver.variables import (
    Assignment,
    Step,
    VariableError,
    hivevar_assignment,
    plan_script,
    substitute,
)

SETTINGS = {"spark.sql.shuffle.partitions": "7", "lo": "from-conf", "my.password": "hunter2"}


def setting(key: str) -> str | None:
    return SETTINGS.get(key)


def test_plain_and_prefixed_references() -> None:
    v = {"lo": "2", "t": "trips"}
    assert (
        substitute("SELECT * FROM ${t} WHERE id >= ${lo}", v) == "SELECT * FROM trips WHERE id >= 2"
    )
    assert substitute("${hivevar:lo}", v) == "2"
    # ${x}: the variable first, then the setting (Spark keeps hivevars among its settings).
    assert substitute("${lo}", v, setting) == "2"
    assert substitute("${lo}", {}, setting) == "from-conf"
    assert substitute("${hiveconf:lo}|${spark:lo}|${sparkconf:lo}", v, setting) == (
        "from-conf|from-conf|from-conf"
    )
    assert substitute("${spark:spark.sql.shuffle.partitions}", {}, setting) == "7"
    assert substitute("${HIVEVAR:lo}", v) == "2"  # prefixes in any case


def test_unknown_references_stay_as_written() -> None:
    text = "SELECT '${nope}', ${hivevar:nope}, ${hiveconf:nope}, ${env:HOME}, ${system:user.dir}"
    assert substitute(text, {"x": "1"}, setting) == text
    # a hivevar: reference never falls back to settings; settings need a lookup
    assert substitute("${hivevar:lo}", {}, setting) == "${hivevar:lo}"
    assert substitute("${hiveconf:lo}", {"lo": "2"}) == "${hiveconf:lo}"
    # not references: blanks in the name, no braces, an empty name
    for text in ("${a b}", "$lo", "${}", "$ {lo}"):
        assert substitute(text, {"lo": "2", "a b": "x"}) == text


def test_secret_settings_are_not_substituted() -> None:
    assert substitute("${hiveconf:my.password}", {}, setting) == "${hiveconf:my.password}"
    assert substitute("${my.password}", {}, setting) == "${my.password}"
    # a Hive variable of that name is the client's own: substituted
    assert substitute("${my.password}", {"my.password": "pw"}, setting) == "pw"


def test_values_are_substituted_in_turn_and_cycles_fail() -> None:
    v = {"a": "${b}+1", "b": "${hivevar:c}", "c": "3", "self": "${self}", "x": "${y}", "y": "${x}"}
    assert substitute("${a}", v) == "3+1"
    with pytest.raises(
        VariableError, match=r"circular variable reference: \$\{self\} -> \$\{self\}"
    ):
        substitute("${self}", v)
    with pytest.raises(VariableError, match=r"\$\{x\} -> \$\{y\} -> \$\{x\}"):
        substitute("SELECT ${x}", v)
    # The same variable twice side by side is no cycle.
    assert substitute("${c}${c} ${a}", v) == "33 3+1"
    # A value with a $ or a backslash is put in literally (no regex replacement syntax).
    assert substitute("${p}", {"p": r"\1 $0 \g<0>"}) == r"\1 $0 \g<0>"


def test_expansion_that_explodes_is_refused() -> None:
    v = {f"v{i}": f"${{v{i + 1}}}${{v{i + 1}}}" for i in range(40)}
    v["v40"] = "x" * 1024
    with pytest.raises(VariableError, match="over 16777216 characters"):
        substitute("${v0}", v)


def test_hivevar_assignment() -> None:
    assert hivevar_assignment("SET hivevar:lo=3") == Assignment("lo", "3")
    assert hivevar_assignment("  set HIVEVAR:lo = 3 ;") == Assignment("lo", "3")
    assert hivevar_assignment("SET hivevar:s=a = b") == Assignment("s", "a = b")
    assert hivevar_assignment("SET hivevar:e=") == Assignment("e", "")
    assert hivevar_assignment("SET hivevar:lo") == Assignment("lo", None)
    for sql in ("SET lo=3", "SET hiveconf:lo=3", "SELECT 'SET hivevar:x=1'", "SET hivevar:=1"):
        assert hivevar_assignment(sql) is None


def test_plan_script_without_variables_is_the_text_whole() -> None:
    text = "SELECT 1;\n  SELECT '$' AS d"
    assert plan_script(text, {"x": "1"}, setting) == [Step(text, 1, 1)]


def test_plan_script_applies_assignments_in_order() -> None:
    variables = {"lo": "2"}
    text = "SELECT ${lo};\nSET hivevar:lo=${lo}0;\n  SELECT ${lo}, ${hiveconf:lo};SET hivevar:lo"
    assert plan_script(text, variables, setting) == [
        Step("SELECT 2", 1, 1),
        Step("SET hivevar:lo=20", 2, 1, Assignment("lo", "20")),
        Step("SELECT 20, from-conf", 3, 3),
        Step("SET hivevar:lo", 3, 32, Assignment("lo", None)),
    ]
    assert variables == {"lo": "2"}  # the session's variables change when the steps run


def test_plan_script_substitutes_after_splitting() -> None:
    # As beeline (which splits a script before sending it): a value's semicolon stays in
    # its statement, and a ${...} in a comment or a quoted string is substituted too.
    steps = plan_script("SELECT ${two} -- ${c}\n; SELECT '${c}'", {"two": "1; SELECT 2", "c": "x"})
    assert [s.sql for s in steps] == ["SELECT 1; SELECT 2 -- x", "SELECT 'x'"]
