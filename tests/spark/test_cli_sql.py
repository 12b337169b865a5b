"""``hudilite sql`` end to end: the command drives a real SQL session on the shared
SparkSession (``connect`` picks up the active session) with a temporary warehouse."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hudilite.cli import main

QUERY = (
    "SELECT 1 AS id, 'a' AS name, DATE'2024-01-02' AS d, "
    "TIMESTAMP'2024-01-02 03:04:05.5' AS ts, CAST(1.5 AS DECIMAL(5, 2)) AS amount, "
    "CAST(0.1 AS FLOAT) AS f, ARRAY(1, 2) AS arr, NAMED_STRUCT('k', 'v') AS st "
    "UNION ALL SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL ORDER BY id"
)

CREATE = (
    "CREATE TABLE trips (id INT, ts BIGINT, name STRING, fare DOUBLE) USING hudi\n"
    "TBLPROPERTIES ('primaryKey' = 'id', 'preCombineField' = 'ts')"
)


@pytest.fixture
def warehouse(spark, tmp_path: Path) -> str:
    """An empty warehouse folder; the ``spark`` fixture makes the shared session active."""
    return str(tmp_path / "warehouse")


def run(warehouse: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, ["sql", "--warehouse", warehouse, *args], input=input)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_table_format(warehouse):
    r = ok(run(warehouse, "-e", QUERY))
    assert r.stderr == ""
    assert r.stdout == (
        "+----+------+------------+-----------------------+--------+------+-------+-----------+\n"
        "| id | name | d          | ts                    | amount | f    | arr   | st        |\n"
        "+----+------+------------+-----------------------+--------+------+-------+-----------+\n"
        '|  1 | a    | 2024-01-02 | 2024-01-02 03:04:05.5 |   1.50 |  0.1 | [1,2] | {"k":"v"} |\n'
        "|  2 | NULL | NULL       | NULL                  |   NULL | NULL | NULL  | NULL      |\n"
        "+----+------+------------+-----------------------+--------+------+-------+-----------+\n"
        "(2 rows)\n"
    )


def test_csv_format(warehouse):
    r = ok(run(warehouse, "-e", QUERY, "--format", "csv"))
    assert r.stdout_bytes.decode() == (
        "id,name,d,ts,amount,f,arr,st\r\n"
        '1,a,2024-01-02,2024-01-02 03:04:05.5,1.50,0.1,"[1,2]","{""k"":""v""}"\r\n'
        "2,,,,,,,\r\n"
    )


def test_json_format(warehouse):
    r = ok(run(warehouse, "-e", QUERY, "--format", "json"))
    assert r.stdout == (
        '{"id":1,"name":"a","d":"2024-01-02","ts":"2024-01-02 03:04:05.5","amount":"1.50",'
        '"f":0.1,"arr":[1,2],"st":{"k":"v"}}\n'
        '{"id":2,"name":null,"d":null,"ts":null,"amount":null,"f":null,"arr":null,"st":null}\n'
    )


def test_statement_without_columns_prints_a_confirmation(warehouse):
    r = ok(
        run(warehouse, "-e", "CREATE TEMPORARY VIEW cli_v AS SELECT 1 AS a; SELECT * FROM cli_v")
    )
    assert r.stdout == "OK\n\n+---+\n| a |\n+---+\n| 1 |\n+---+\n(1 row)\n"
    assert ok(run(warehouse, "-e", "DROP VIEW cli_v", "--format", "json")).stdout == ""


def test_max_rows(warehouse):
    r = ok(run(warehouse, "-e", "SELECT id FROM range(5) ORDER BY id", "--max-rows", "2"))
    assert r.stdout == "+----+\n| id |\n+----+\n|  0 |\n|  1 |\n+----+\n(showing first 2 rows)\n"
    r = ok(run(warehouse, "-e", "SELECT id FROM range(5)", "--max-rows", "2", "--format", "csv"))
    assert r.stdout_bytes == b"id\r\n0\r\n1\r\n"
    assert r.stderr == "(showing first 2 rows)\n"
    r = ok(run(warehouse, "-e", "SELECT id FROM range(3)", "--max-rows", "0", "--format", "json"))
    assert r.stdout == '{"id":0}\n{"id":1}\n{"id":2}\n'


def test_stdin_script(warehouse):
    r = ok(run(warehouse, input="SELECT 1 AS one;\nSELECT 'x' AS two;\n"))
    assert r.stdout == (
        "+-----+\n| one |\n+-----+\n|   1 |\n+-----+\n(1 row)\n\n"
        "+-----+\n| two |\n+-----+\n| x   |\n+-----+\n(1 row)\n"
    )


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_file_script_then_a_second_invocation_sees_the_tables(warehouse, tmp_path):
    script = tmp_path / "setup.sql"
    script.write_text(
        "-- a trips table\n"
        f"{CREATE};\n"
        "/* two rows; one more later */\n"
        "INSERT INTO trips VALUES (1, 10, 'a', 1.5), (2, 10, 'b', 2.5);\n"
        "INSERT INTO trips VALUES (2, 20, 'b2', 3.5); -- an upsert by id\n"
        "SELECT id, name, fare FROM trips ORDER BY id;\n"
    )
    upsert = "hoodie.spark.sql.insert.into.operation=upsert"
    r = ok(run(warehouse, "-f", str(script), "--format", "json", "--conf", upsert))
    lines = _json_lines(r.stdout)
    metrics = [row for row in lines if "num_inserted_rows" in row]
    assert [(m["num_inserted_rows"], m["num_updated_rows"]) for m in metrics] == [(2, 0), (0, 1)]
    assert [row for row in lines if "num_inserted_rows" not in row][-2:] == [
        {"id": 1, "name": "a", "fare": 1.5},
        {"id": 2, "name": "b2", "fare": 3.5},
    ]

    r = ok(run(warehouse, "-e", "SELECT id, name FROM trips ORDER BY id; SHOW TABLES"))
    first, second = r.stdout.split("\n\n")
    assert first == (
        "+----+------+\n| id | name |\n+----+------+\n|  1 | a    |\n|  2 | b2   |\n"
        "+----+------+\n(2 rows)"
    )
    assert re.search(r"^\| .*\btrips\b.* \|$", second, re.M), second
    assert second.endswith("(1 row)\n")


def test_table_format_of_ddl_and_dml(warehouse):
    r = ok(run(warehouse, "-e", f"{CREATE}; INSERT INTO trips VALUES (1, 10, 'a', 1.5)"))
    out = r.stdout
    assert "num_inserted_rows" in out, out
    assert re.search(r"^\| \d{17} ", out, re.M), out  # the instant of the insert
    assert out.endswith("(1 row)\n")


def test_parse_error_names_script_line_and_column(warehouse):
    r = run(warehouse, "-e", "SELECT 1 AS one;\n-- a comment\nSELECT * FORM t WHERE;\nSELECT 2;")
    assert r.exit_code == 1
    assert r.stdout == "+-----+\n| one |\n+-----+\n|   1 |\n+-----+\n(1 row)\n"
    assert r.stderr == ("error: line 3, column 15: SQL parse error: Syntax error at or near 't'\n")


def test_unknown_table_is_one_line_without_traceback(warehouse):
    r = run(warehouse, "-e", "SELECT 1;\n  SELECT * FROM nope")
    assert r.exit_code == 1
    assert r.stderr.startswith("error: line 2, column 3: ")
    assert "nope" in r.stderr
    assert r.stderr.count("\n") == 1
    assert "Traceback" not in r.output


def test_spark_errors_are_one_line(warehouse):
    r = run(warehouse, "-e", "SELECT 10 DIV (id - 1) FROM range(3)")
    assert r.exit_code == 1
    assert r.stdout == ""
    assert r.stderr.startswith("error: line 1, column 1: [DIVIDE_BY_ZERO] Division by zero.")
    assert r.stderr.count("\n") == 1


def test_debug_shows_the_traceback(warehouse):
    r = run(warehouse, "-e", "SELECT * FROM nope", "--debug")
    assert r.exit_code == 1
    assert r.stderr.startswith("Traceback (most recent call last):")
    assert "nope" in r.stderr


def test_conf_sets_options_before_the_script(warehouse, spark):
    key = "spark.hudilite.test.cli_conf"
    try:
        ok(run(warehouse, "--conf", f"{key}=yes", "-e", "SELECT 1"))
        assert spark.conf.get(key) == "yes"
    finally:
        spark.conf.unset(key)


def test_missing_script_file(warehouse, tmp_path):
    r = run(warehouse, "-f", str(tmp_path / "none.sql"))
    assert r.exit_code == 1
    assert r.stderr.startswith("error: Could not open file")
    assert r.stderr.count("\n") == 1


def test_insert_through_a_copied_warehouse_writes_the_copy(warehouse, tmp_path):
    import shutil

    ok(run(warehouse, "-e", f"{CREATE}; INSERT INTO trips VALUES (1, 10, 'a', 1.5)"))
    copy = str(tmp_path / "copy")
    shutil.copytree(warehouse, copy)
    ok(run(copy, "-e", "INSERT INTO trips VALUES (2, 10, 'b', 2.5)"))
    query = ["-e", "SELECT id FROM trips ORDER BY id", "--format", "csv"]
    assert ok(run(warehouse, *query)).stdout_bytes == b"id\r\n1\r\n"
    assert ok(run(copy, *query)).stdout_bytes == b"id\r\n1\r\n2\r\n"


# ---- the command in a process of its own: quiet start, static settings, Ctrl-C ------------
# (each starts a JVM: keep them few)


def _cli_env() -> dict[str, str]:
    """The environment of a command started as a user would start it, except that it keeps
    ``SPARK_SUBMIT_OPTS`` (tests/conftest.py): JVM performance flags that print nothing, with
    which the driver JVM starts seconds faster."""
    env = dict(os.environ)
    for key in ("HUDILITE_SPARK_LOG_LEVEL", "PYSPARK_GATEWAY_PORT"):
        env.pop(key, None)
    env["HUDILITE_SPARK_MASTER"] = "local[2]"
    return env


HUDILITE = str(Path(sys.executable).with_name("hudilite"))


_CONNECT_CODE = (
    "import sys, hudilite\n"
    "s = hudilite.connect(sys.argv[1])\n"
    "assert s.sql('SELECT 1 AS one').collect()[0].one == 1\n"
    "try:\n"
    "    s.sql('SELECT nope FROM range(1)').collect()\n"
    "except Exception as e:\n"
    "    print(type(e).__name__)\n"
)


@pytest.fixture(scope="module")
def quiet_starts(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, subprocess.Popen[str]]]:
    """The processes of the two quiet start-up tests, started together (two independent
    JVM start-ups at once): ``cli``, the command with static settings, and ``connect``,
    ``hudilite.connect()`` starting its own session."""
    cli_dir, connect_dir = tmp_path_factory.mktemp("cli"), tmp_path_factory.mktemp("connect")
    procs = {
        "cli": subprocess.Popen(
            [
                HUDILITE, "sql", "--warehouse", str(cli_dir / "wh"),
                "--driver-memory", "1g", "--conf", "spark.driver.maxResultSize=512m",
                "--format", "csv",
                "-e", "SET spark.driver.memory; SET spark.driver.maxResultSize",
            ],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cli_dir,
            env=_cli_env(),
        ),
        "connect": subprocess.Popen(
            [sys.executable, "-c", _CONNECT_CODE, str(connect_dir / "wh")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=connect_dir,
            env=_cli_env(),
        ),
    }  # fmt: skip
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_subprocess_start_is_quiet_and_static_spark_settings_apply(quiet_starts):
    """No start-up noise on stderr (hostname, log4j banner, native-hadoop, incubator
    modules), and static settings (--driver-memory, --conf spark.driver.*) reach the JVM."""
    proc = quiet_starts["cli"]
    out, err = proc.communicate(timeout=600)
    assert (proc.returncode, err) == (0, ""), err
    assert out.replace("\r\n", "\n") == (
        "key,value\nspark.driver.memory,1g\n\nkey,value\nspark.driver.maxResultSize,512m\n"
    )


def test_connect_in_a_new_process_keeps_stderr_clean(quiet_starts):
    """hudilite.connect() starting its own session: no start-up noise, and a failing query
    raises without pyspark's JSON log line."""
    proc = quiet_starts["connect"]
    out, err = proc.communicate(timeout=600)
    assert (proc.returncode, err) == (0, ""), err
    assert out == "AnalysisException\n"


def test_ctrl_c_cancels_the_write_rolls_it_back_and_exits_130(spark, tmp_path):
    wh = tmp_path / "wh"
    # The table and its one committed row come from this process's warm session (a write
    # costs seconds more in a new JVM); the command's own write is the long INSERT.
    create = (
        "CREATE TABLE big (id BIGINT, ts BIGINT, v STRING) USING hudi\n"
        "  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');\n"
        "INSERT INTO big VALUES (1, 1, 'a');\n"
    )
    ok(run(str(wh), "-e", create))
    script = tmp_path / "long.sql"
    script.write_text(
        "-- big holds one committed row: (1, 1, 'a')\n"
        "\n"
        "\n"
        "SELECT 'go' AS ready;\n"
        "INSERT INTO big SELECT id, 1, repeat('x', 200) FROM range(2, 3000000000);\n"
    )
    proc = subprocess.Popen(
        [
            HUDILITE, "sql", "--warehouse", str(wh), "-f", str(script), "--format", "csv",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=_cli_env(), start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "go":
                break
        else:
            pytest.fail(f"the script ended early: {proc.stderr.read() if proc.stderr else ''}")
        # The long INSERT starts now: the press lands while it is still being planned
        # (before its first Spark job, which must be cancelled all the same) or, on a
        # faster machine, while its first job runs.
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err.startswith("error: line 5, column 1: interrupted (Ctrl-C)"), err
    assert err.count("\n") == 1, err
    # Nothing of the cancelled write remains: every instant on the timeline completed ...
    hoodie = wh / "default.db" / "big" / ".hoodie"
    if (hoodie / "timeline").is_dir():  # table version 8
        hoodie = hoodie / "timeline"
    states: dict[str, set[str]] = {}
    for f in hoodie.iterdir():
        if f.is_file() and f.name[:1].isdigit():
            t, _, rest = f.name.partition(".")
            states.setdefault(t.split("_")[0], set()).add(rest)
    pending = [
        t
        for t, kinds in states.items()
        if all(k.endswith(("requested", "inflight")) for k in kinds)
    ]
    assert pending == [], states
    # ... and the table holds the one committed row.
    r = ok(run(str(wh), "-e", "SELECT count(*) AS n FROM big", "--format", "csv"))
    assert r.stdout_bytes == b"n\r\n1\r\n"


# ---- a read-only warehouse: one line, exit status 1, nothing changed ----------------------

_WRITES = (
    "mkdirs",
    "open_output_stream",
    "write_bytes",
    "create_exclusive",
    "create_versioned",
    "replace_if_version",
    "delete_if_version",
    "touch",
    "delete_file",
    "delete_dir",
)


def _latest_commit(table: Path) -> str:
    return max(f.name.split(".")[0] for f in (table / ".hoodie").glob("*.commit"))


def test_read_only_warehouse_errors_are_one_line(warehouse, monkeypatch):
    """Writes refused as a read-only file system refuses them (tests run as root, for
    whom permissions do not apply; the next test uses a real one)."""
    from hudilite.storage.fs import FileSystemGateway

    ok(run(warehouse, "-e", f"{CREATE}; INSERT INTO trips VALUES (1, 10, 'a', 1.5)"))
    instant = _latest_commit(Path(warehouse) / "default.db" / "trips")
    root = os.path.abspath(warehouse)

    def refusing(name: str):
        original = getattr(FileSystemGateway, name)

        def method(self, rel="", *args, **kwargs):
            path = self.abs_path(rel)
            if path.startswith(root):
                raise PermissionError(13, "Permission denied", path)
            return original(self, rel, *args, **kwargs)

        return method

    for name in _WRITES:
        monkeypatch.setattr(FileSystemGateway, name, refusing(name))
    for stmt in (
        "CREATE TABLE t2 (id INT) USING hudi TBLPROPERTIES (primaryKey = 'id')",
        "CALL run_clean(table => 'trips')",
        f"CALL create_savepoint(table => 'trips', commit_time => '{instant}')",
    ):
        r = run(warehouse, "-e", stmt)
        assert r.exit_code == 1, (stmt, r.output, r.exception)
        assert r.stderr.startswith("error: line 1, column 1: [Errno 13] Permission denied: "), (
            stmt,
            r.stderr,
        )
        assert r.stderr.count("\n") == 1, r.stderr
    monkeypatch.undo()
    r = ok(run(warehouse, "-e", "SHOW TABLES; SELECT id FROM trips", "--format", "json"))
    assert "t2" not in r.stdout and '{"id":1}' in r.stdout


def test_read_only_warehouse_in_a_process_of_its_own(warehouse, tmp_path):
    ok(run(warehouse, "-e", f"{CREATE}; INSERT INTO trips VALUES (1, 10, 'a', 1.5)"))
    cmd = [HUDILITE, "sql", "--warehouse", warehouse, "-e", "CALL run_clean(table => 'trips')"]
    env = _cli_env()
    home = tmp_path / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    env["HOME"] = str(home)
    # The folders nobody must pass through: pytest's temporary ones and the checkout's
    # (a clone made by ``mktemp -d`` is private to its owner, and holds the venv).
    folders = {*tmp_path.parents, Path(sys.prefix), *Path(sys.prefix).parents}
    modes = {p: p.stat().st_mode for p in folders if p != Path("/")}
    if os.geteuid() == 0:  # root ignores permissions: run as nobody on a root-owned folder
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("needs setpriv to drop root")
        for p, mode in modes.items():
            p.chmod(mode | 0o001)  # nobody may pass through pytest's private folders
        subprocess.run(["chmod", "-R", "a+rX,go-w", warehouse], check=True)
        tmp_path.chmod(0o755)
        cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    else:
        subprocess.run(["chmod", "-R", "a-w", warehouse], check=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=home, env=env, timeout=600)
    finally:
        subprocess.run(["chmod", "-R", "u+w", warehouse], check=True)
        for p, mode in modes.items():
            p.chmod(mode)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("error: line 1, column 1: [Errno 13] "), r.stderr
    assert "Permission denied" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def _read_until(fd: int, wanted: str, term: dict[str, Any], deadline: float) -> str:
    """Read the pseudo-terminal until ``wanted`` appears after the previous call's match
    (ANSI escapes removed); the text from there through ``wanted``, or an AssertionError
    with it at the deadline. Searching from the previous match, not from the previous
    read, matters: one read may carry a result and the next prompt together."""
    import select

    while True:
        found = term["text"].find(wanted, term["pos"])
        if found >= 0:
            out = term["text"][term["pos"] : found + len(wanted)]
            term["pos"] = found + len(wanted)
            return str(out)
        if time.monotonic() >= deadline:
            raise AssertionError(f"{wanted!r} did not arrive; got {term['text'][term['pos'] :]!r}")
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                raise AssertionError(
                    f"{wanted!r} did not arrive; got {term['text'][term['pos'] :]!r}"
                ) from None
            term["text"] += _ANSI.sub("", data.decode(errors="replace"))


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


def test_prompt_through_a_pseudo_terminal(tmp_path):
    """The interactive prompt on a real terminal: a statement over two lines, the result
    and its timing line, history written to $HUDILITE_HISTORY, and quit."""
    import pty

    history = tmp_path / "history"
    env = {**_cli_env(), "HUDILITE_HISTORY": str(history), "TERM": "xterm"}
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # no cursor-position queries to answer
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [HUDILITE, "sql", "--warehouse", str(tmp_path / "wh")],
        stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path, env=env, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    term: dict[str, Any] = {"text": "", "pos": 0}
    deadline = time.monotonic() + 180
    try:
        _read_until(master, "hudilite>", term, deadline)
        os.write(master, b"SELECT 40 + 2\r")
        os.write(master, b"AS answer;\r")
        out = _read_until(master, "Fetched 1 row(s)", term, deadline)
        assert "      -> AS answer;" in out
        assert "| answer |\n+--------+\n|     42 |" in out.replace("\r", "")
        assert re.search(r"Time taken: \d+\.\d\d seconds, Fetched 1 row\(s\)", out)
        _read_until(master, "hudilite>", term, deadline)
        os.write(master, b"quit\r")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    # prompt-toolkit's history file: one entry per statement, its lines prefixed with '+'.
    entries = [ln for ln in history.read_text().splitlines() if ln.startswith("+")]
    assert entries == ["+SELECT 40 + 2", "+AS answer;", "+quit"]
