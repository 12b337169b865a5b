"""The Spark JVM's class-data-sharing archive (hudilite.spark.class_archive, issue 27.7): which
options a new JVM gets (map the archive, else nothing while a recorder is started in the
background), the lock that lets one process record at a time, and the end of a recording
(renamed into place only when the JVM wrote it and exited cleanly)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hudilite.spark import class_archive
from hudilite.spark.class_archive import ARCHIVE_ENV, QUIET_CDS, archive_options, finish_dump


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(class_archive, "_pending", None)

    def no_recorder(path: Path) -> None:
        raise AssertionError(f"a real recorder would start for {path}")

    monkeypatch.setattr(class_archive, "_start_recorder", no_recorder)
    for key in ("SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS"):
        monkeypatch.delenv(key, raising=False)


class FakeJvm:
    """A Popen whose exit writes ``data`` to the recording's file (as the JVM does)."""

    def __init__(self, target: Path, data: bytes, code: int = 0) -> None:
        self.target, self.data, self.code = target, data, code
        self.stdin = self
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def wait(self, timeout: float | None = None) -> int:
        assert self.closed, "the JVM exits when its standard input closes"
        if self.data:
            self.target.write_bytes(self.data)
        return self.code

    def poll(self) -> int:
        return self.code


def test_records_once_in_the_background_then_maps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "cache" / "spark.jsa"
    monkeypatch.setenv(ARCHIVE_ENV, str(archive))
    started: list[Path] = []
    monkeypatch.setattr(class_archive, "_start_recorder", started.append)
    # No archive yet: this JVM starts as before, a recorder is started, the lock taken.
    assert archive_options(None) == ""
    assert started == [archive]
    lock = archive.with_name("spark.jsa.lock")
    assert lock.is_file()
    # Another process meanwhile: neither maps nor starts a second recorder.
    assert archive_options("-Xmx1g") == ""
    assert started == [archive]
    # The recorder's end: its JVM exits, writing the file, which is renamed into place.
    tmp = archive.with_name("spark.jsa.1234.tmp")
    monkeypatch.setattr(class_archive, "_pending", (tmp, archive, lock))
    finish_dump(FakeJvm(tmp, b"classes"))
    assert archive.read_bytes() == b"classes"
    assert not lock.exists() and not tmp.exists()
    assert archive_options(None) == f"-XX:SharedArchiveFile={archive} {QUIET_CDS}"
    finish_dump(FakeJvm(tmp, b"again"))  # nothing pending: nothing changes
    assert archive.read_bytes() == b"classes"
    assert started == [archive]


def test_a_failed_recording_leaves_no_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "spark.jsa"
    monkeypatch.setenv(ARCHIVE_ENV, str(archive))
    started: list[Path] = []
    monkeypatch.setattr(class_archive, "_start_recorder", started.append)
    assert archive_options(None) == ""
    tmp = archive.with_name("spark.jsa.1234.tmp")
    lock = archive.with_name("spark.jsa.lock")
    monkeypatch.setattr(class_archive, "_pending", (tmp, archive, lock))
    finish_dump(FakeJvm(tmp, b"half", code=137))  # killed while writing
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert archive_options(None) == ""  # tried again
    assert started == [archive, archive]


def test_a_recorder_that_cannot_start_releases_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, str(tmp_path / "spark.jsa"))

    def fail(path: Path) -> None:
        raise OSError(2, "No such file or directory")

    monkeypatch.setattr(class_archive, "_start_recorder", fail)
    assert archive_options(None) == ""
    assert list(tmp_path.iterdir()) == []


def test_a_stale_recording_is_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "spark.jsa"
    monkeypatch.setenv(ARCHIVE_ENV, str(archive))
    lock = tmp_path / "spark.jsa.lock"
    left = tmp_path / "spark.jsa.999999.tmp"
    lock.write_text("")
    left.write_bytes(b"half")
    started: list[Path] = []
    monkeypatch.setattr(class_archive, "_start_recorder", started.append)
    assert archive_options(None) == ""  # a live recording
    assert started == []
    old = time.time() - class_archive.STALE_LOCK - 60
    os.utime(lock, (old, old))
    assert archive_options(None) == ""
    assert started == [archive]
    assert not left.exists() and lock.exists()  # taken over: the lock is this recorder's


@pytest.mark.parametrize(
    ("where", "given"),
    [
        ("options", "-XX:SharedArchiveFile=/x.jsa"),
        ("options", "-Xshare:off"),
        ("SPARK_SUBMIT_OPTS", "-XX:ArchiveClassesAtExit=/y.jsa"),
        ("JAVA_TOOL_OPTIONS", "-XX:SharedArchiveFile=/z.jsa"),
    ],
)
def test_an_archive_the_user_names_wins(
    where: str, given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, str(tmp_path / "spark.jsa"))
    if where != "options":
        monkeypatch.setenv(where, given)
    assert archive_options(given if where == "options" else None) == ""
    assert list(tmp_path.iterdir()) == []


def test_off_and_default_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ARCHIVE_ENV, "off")
    assert class_archive.archive_path() is None
    assert archive_options(None) == ""
    monkeypatch.delenv(ARCHIVE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    path = class_archive.archive_path()
    assert path is not None and path.parent == tmp_path / "hudilite" / "jvm"
    import pyspark

    assert path.name.startswith(f"spark-{pyspark.__version__}-") and path.suffix == ".jsa"
    # Another Java runtime: another archive (a JVM would refuse the first one anyway).
    java.touch()
    os.utime(java, ns=(1, 1))
    assert class_archive.archive_path() not in (None, path)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert class_archive.archive_path() is None


def test_unreadable_places_mean_no_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user who may not look into a PATH folder or the cache starts without an archive."""
    monkeypatch.delenv(ARCHIVE_ENV, raising=False)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    real_is_file = Path.is_file

    def is_file(self: Path) -> bool:
        if self.parent.name == "locked":
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    monkeypatch.setenv("PATH", str(tmp_path / "locked"))
    assert class_archive.archive_path() is None
    assert archive_options(None) == ""
    monkeypatch.setenv(ARCHIVE_ENV, str(tmp_path / "locked" / "spark.jsa"))
    assert archive_options(None) == ""
