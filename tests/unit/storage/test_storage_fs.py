"""FileSystemGateway: path mapping, URIs, atomic/exclusive writes, listing, pickling."""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from hudilite.storage.fs import FileEntry, FileSystemGateway, join


@pytest.fixture
def gw(tmp_path: Path) -> FileSystemGateway:
    return FileSystemGateway(str(tmp_path / "tbl"))


def test_local_path_and_uri(tmp_path: Path) -> None:
    gw = FileSystemGateway(str(tmp_path / "tbl") + "/")
    base = str(tmp_path / "tbl")
    assert gw.abs_path("") == base
    assert gw.abs_path("city=sf/a.parquet") == f"{base}/city=sf/a.parquet"
    assert gw.abs_path("/.hoodie/") == f"{base}/.hoodie"
    assert gw.uri("") == f"file://{base}"
    assert gw.uri("city=sf/a.parquet") == f"file://{base}/city=sf/a.parquet"
    assert gw.uri("x").startswith("file:///")
    assert gw.is_local and not gw.is_object_store
    assert gw.rel_path(f"{base}/city=sf/a.parquet") == "city=sf/a.parquet"
    assert gw.rel_path(base) == ""
    with pytest.raises(ValueError):
        gw.rel_path("/elsewhere/x")


def test_file_uri_and_relative_local_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gw = FileSystemGateway(f"file://{tmp_path}/my%20tbl")
    assert gw.abs_path("a") == f"{tmp_path}/my tbl/a"
    assert gw.uri("a") == f"file://{tmp_path}/my tbl/a"
    monkeypatch.chdir(tmp_path)
    assert FileSystemGateway("rel/t").abs_path("x") == f"{tmp_path}/rel/t/x"


def test_s3_and_hdfs_uris_need_no_network() -> None:
    s3 = FileSystemGateway("s3://bucket/warehouse/t1")
    assert s3.abs_path("p=1/f.parquet") == "bucket/warehouse/t1/p=1/f.parquet"
    assert s3.uri("p=1/f.parquet") == "s3a://bucket/warehouse/t1/p=1/f.parquet"
    assert s3.uri() == "s3a://bucket/warehouse/t1"
    assert s3.is_object_store and not s3.is_local
    s3a = FileSystemGateway("s3a://bucket/t")
    assert s3a.uri(".hoodie") == "s3a://bucket/t/.hoodie"
    hdfs = FileSystemGateway("hdfs://nn:8020/user/t")
    assert hdfs.abs_path("a") == "/user/t/a"
    assert hdfs.uri("a") == "hdfs://nn:8020/user/t/a"
    assert not hdfs.is_object_store
    # pickling does not touch the network either: the filesystem is created lazily.
    again = pickle.loads(pickle.dumps(s3))
    assert again.uri("x") == "s3a://bucket/warehouse/t1/x"


def test_write_read_size_exists(gw: FileSystemGateway) -> None:
    assert not gw.exists("a/b.txt")
    gw.write_bytes("a/b.txt", b"hello")
    assert gw.exists("a/b.txt")
    assert gw.exists("a") and gw.is_dir("a") and not gw.is_dir("a/b.txt")
    assert gw.read_bytes("a/b.txt") == b"hello"
    assert gw.size("a/b.txt") == 5
    gw.write_bytes("a/b.txt", b"replaced")
    assert gw.read_bytes("a/b.txt") == b"replaced"
    # No temp files are left behind by the atomic replace.
    assert [e.name for e in gw.list_dir("a")] == ["b.txt"]
    with pytest.raises(FileNotFoundError):
        gw.read_bytes("missing")
    with pytest.raises(FileNotFoundError):
        gw.size("missing")
    with pytest.raises(FileNotFoundError):
        gw.mtime_ms("missing")


class _FailingMove:
    """Delegates to a real filesystem but fails every rename."""

    def __init__(self, fs: pafs.FileSystem) -> None:
        self._fs = fs

    def move(self, src: str, dst: str) -> None:
        raise OSError("rename failed")

    def __getattr__(self, name: str) -> object:
        return getattr(self._fs, name)


def test_write_bytes_failure_leaves_target_and_no_temp(gw: FileSystemGateway) -> None:
    gw.write_bytes("f", b"old")
    gw._fs = _FailingMove(gw.filesystem)
    with pytest.raises(OSError, match="rename failed"):
        gw.write_bytes("f", b"new")
    assert gw.read_bytes("f") == b"old"
    assert [e.name for e in gw.list_dir("")] == ["f"]


def test_create_exclusive(gw: FileSystemGateway) -> None:
    assert gw.create_exclusive(".hoodie/001.commit.requested", b"") is True
    assert gw.create_exclusive(".hoodie/001.commit.requested", b"x") is False
    assert gw.read_bytes(".hoodie/001.commit.requested") == b""
    assert gw.create_exclusive(".hoodie/002.commit", b"data") is True
    assert gw.read_bytes(".hoodie/002.commit") == b"data"
    assert [e.name for e in gw.list_dir(".hoodie")] == ["001.commit.requested", "002.commit"]


def test_create_exclusive_race_has_one_winner(gw: FileSystemGateway) -> None:
    results: list[bool] = []
    lock = threading.Lock()

    def attempt(i: int) -> None:
        ok = gw.create_exclusive("race", str(i).encode())
        with lock:
            results.append(ok)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1
    assert gw.read_bytes("race").decode() in {str(i) for i in range(16)}
    assert [e.name for e in gw.list_dir("")] == ["race"]


def test_create_exclusive_falls_back_to_o_excl(
    gw: FileSystemGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: str, dst: str) -> None:
        raise PermissionError("hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    assert gw.create_exclusive("x", b"1") is True
    assert gw.create_exclusive("x", b"2") is False
    assert gw.read_bytes("x") == b"1"
    assert [e.name for e in gw.list_dir("")] == ["x"]


def test_list_dir(gw: FileSystemGateway) -> None:
    assert gw.list_dir("") == []
    assert gw.list_dir("nope/deeper") == []
    gw.write_bytes("p1/.hoodie_partition_metadata", b"m")
    gw.write_bytes("p1/f.parquet", b"12345")
    gw.write_bytes(".hoodie/hoodie.properties", b"x=1\n")
    gw.mkdirs("p2/sub")
    entries = gw.list_dir("")
    assert [(e.name, e.path, e.is_dir) for e in entries] == [
        (".hoodie", ".hoodie", True),
        ("p1", "p1", True),
        ("p2", "p2", True),
    ]
    p1 = gw.list_dir("p1")
    assert [(e.name, e.path, e.size, e.is_dir) for e in p1] == [
        (".hoodie_partition_metadata", "p1/.hoodie_partition_metadata", 1, False),
        ("f.parquet", "p1/f.parquet", 5, False),
    ]
    assert all(isinstance(e, FileEntry) and e.mtime_ms > 0 for e in p1)
    assert [e.path for e in gw.list_recursive("")] == [
        ".hoodie",
        ".hoodie/hoodie.properties",
        "p1",
        "p1/.hoodie_partition_metadata",
        "p1/f.parquet",
        "p2",
        "p2/sub",
    ]


def test_delete(gw: FileSystemGateway) -> None:
    gw.write_bytes("d/a", b"1")
    gw.write_bytes("d/e/b", b"2")
    assert gw.delete_file("d/a") is True
    assert gw.delete_file("d/a") is False
    assert gw.delete_dir("d") is True
    assert gw.delete_dir("d") is False
    assert not gw.exists("d")
    with pytest.raises(ValueError):
        gw.delete_dir("")


def test_touch_and_mtime(gw: FileSystemGateway) -> None:
    gw.touch(".hoodie/.heartbeat/001")
    assert gw.read_bytes(".hoodie/.heartbeat/001") == b""
    path = gw.abs_path(".hoodie/.heartbeat/001")
    os.utime(path, (1_000_000, 1_000_000))
    assert gw.mtime_ms(".hoodie/.heartbeat/001") == 1_000_000_000
    gw.touch(".hoodie/.heartbeat/001")
    assert gw.mtime_ms(".hoodie/.heartbeat/001") > 1_000_000_000


def test_streams(gw: FileSystemGateway) -> None:
    with gw.open_output_stream("s/x.bin") as out:
        out.write(b"abcdef")
    with gw.open_input_file("s/x.bin") as f:
        f.seek(2)
        assert f.read(3) == b"cde"
        assert f.size() == 6


def test_pickle_round_trip(gw: FileSystemGateway) -> None:
    gw.write_bytes("k", b"v")
    again = pickle.loads(pickle.dumps(gw))
    assert again == gw
    assert again.read_bytes("k") == b"v"
    assert again.abs_path("k") == gw.abs_path("k")


def test_explicit_subtree_filesystem(tmp_path: Path) -> None:
    sub = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    gw = FileSystemGateway("tbl", filesystem=sub)
    assert not gw.is_local
    assert gw.abs_path("a/b") == "tbl/a/b"
    gw.write_bytes("a/b", b"data")
    assert (tmp_path / "tbl" / "a" / "b").read_bytes() == b"data"
    # Non-local filesystems use exists-check + write.
    assert gw.create_exclusive("a/c", b"1") is True
    assert gw.create_exclusive("a/c", b"2") is False
    assert [e.path for e in gw.list_dir("a")] == ["a/b", "a/c"]
    again = pickle.loads(pickle.dumps(gw))
    assert again.read_bytes("a/c") == b"1"


def test_mock_filesystem_base_at_root() -> None:
    mock = pafs._MockFileSystem()
    gw = FileSystemGateway("", filesystem=mock)
    gw.write_bytes("x/y", b"1")
    assert gw.list_dir("") == [FileEntry("x", "x", 0, gw.list_dir("")[0].mtime_ms, True)]
    assert [e.path for e in gw.list_dir("x")] == ["x/y"]
    assert gw.read_bytes("x/y") == b"1"


def test_join() -> None:
    assert join("", "a.parquet") == "a.parquet"
    assert join("city=sf", "a.parquet") == "city=sf/a.parquet"
    assert join("2023/04/01/", "/f") == "2023/04/01/f"
    assert join("", "") == ""
