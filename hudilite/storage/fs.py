"""The only filesystem gateway: table-relative paths in, ``pyarrow.fs`` calls out.

Everything else in the engine speaks table-relative ``/``-separated paths (``""`` is the base
path). :class:`FileSystemGateway` turns them into filesystem paths for ``pyarrow.fs``, into
URIs Spark accepts, and provides the two write primitives the timeline relies on:

* :meth:`FileSystemGateway.write_bytes` replaces a file atomically where the filesystem
  allows it (temp file in the same folder, then rename); object stores replace a whole
  object per PUT, so there the object is written directly.
* :meth:`FileSystemGateway.create_exclusive` creates a file only if it does not exist. On
  local disks this is race-free (hard link of a complete temp file, or ``O_EXCL``), on S3 it
  is a conditional PUT (``If-None-Match: *``, see :mod:`hudilite.storage.conditional`). On
  other filesystems (HDFS, GCS) it is an exists-check followed by a write, so two writers
  racing within that window can both "win"; hudilite's timeline additionally re-lists.
* :meth:`FileSystemGateway.read_versioned` / :meth:`FileSystemGateway.replace_if_version` /
  :meth:`FileSystemGateway.delete_if_version` are compare-and-swap on one small file (lock
  leases): atomic locally and on S3 (``If-Match: <etag>``), best effort elsewhere.

A gateway is picklable: it ships its base URI (and an explicitly given filesystem, if any)
and re-creates the ``pyarrow`` filesystem lazily on the executor.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import posixpath
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from hudilite.storage.conditional import LocalConditional, S3Conditional

# Schemes whose "directories" are key prefixes: no rename, no real mkdir.
_OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "gcs"})
# pyarrow spells these schemes differently from Hadoop/Spark.
_PYARROW_SCHEME = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}
_SPARK_SCHEME = {"s3": "s3a", "s3n": "s3a", "gcs": "gs"}


@dataclass(frozen=True)
class FileEntry:
    """One entry of a directory listing; ``path`` is table-relative."""

    name: str
    path: str
    size: int
    mtime_ms: int
    is_dir: bool


def join(*parts: str) -> str:
    """Join table-relative path parts with ``/``, skipping empty parts (``""`` is the base)."""
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))


class FileSystemGateway:
    """Table-relative file access over a ``pyarrow.fs`` filesystem rooted at ``base_uri``.

    ``base_uri`` is a local path, a ``file:`` URI, or any URI ``pyarrow.fs.FileSystem.from_uri``
    understands (``s3://``/``s3a://``, ``gs://``, ``hdfs://``). Pass ``filesystem`` to use a
    ready-made filesystem (tests, custom credentials); ``base_uri`` is then the path inside it.
    """

    def __init__(self, base_uri: str, filesystem: pafs.FileSystem | None = None) -> None:
        self.base_uri = base_uri
        self._explicit_fs = filesystem
        self._fs: pafs.FileSystem | None = filesystem
        parts = urlsplit(base_uri)
        # A one-letter scheme is a Windows drive, not a URI.
        scheme = parts.scheme.lower() if len(parts.scheme) > 1 else ""
        if filesystem is not None:
            self.scheme = "" if scheme in ("", "file") else scheme
            self._netloc = parts.netloc
            self.base_path = base_uri.rstrip("/") if scheme == "" else parts.path.rstrip("/")
        elif scheme in ("", "file"):
            self.scheme = ""
            self._netloc = ""
            raw = unquote(parts.path) if scheme == "file" else base_uri
            self.base_path = os.path.abspath(os.path.expanduser(raw)).replace(os.sep, "/")
        else:
            self.scheme = scheme
            self._netloc = parts.netloc
            if scheme in _OBJECT_STORE_SCHEMES:
                # pyarrow's object-store paths start with the bucket.
                self.base_path = (parts.netloc + parts.path).rstrip("/")
            else:
                self.base_path = parts.path.rstrip("/") or "/"

    # ---- pickling --------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The pyarrow filesystem itself is rebuilt from the URI on the other side; only an
        # explicitly supplied one travels (it must be picklable then).
        return (type(self), (self.base_uri, self._explicit_fs))

    # ---- filesystem ------------------------------------------------------------------------

    @property
    def filesystem(self) -> pafs.FileSystem:
        """The underlying ``pyarrow.fs`` filesystem (created on first use)."""
        if self._fs is None:
            if self.scheme == "":
                self._fs = pafs.LocalFileSystem()
            else:
                scheme = _PYARROW_SCHEME.get(self.scheme, self.scheme)
                uri = scheme + self.base_uri[len(self.scheme) :]
                self._fs, _ = pafs.FileSystem.from_uri(uri)
        return self._fs

    @property
    def is_local(self) -> bool:
        """True when the files live on the local disk (``os`` calls are valid)."""
        return self._explicit_fs is None and self.scheme == ""

    @property
    def is_object_store(self) -> bool:
        """True for S3/GCS, where rename is a copy and directories are prefixes."""
        if self.scheme in _OBJECT_STORE_SCHEMES:
            return True
        return self._explicit_fs is not None and self._explicit_fs.type_name in ("s3", "gcs")

    def abs_path(self, rel: str = "") -> str:
        """Filesystem-native path of a table-relative path (what ``filesystem`` expects)."""
        rel = rel.strip("/")
        if not rel:
            return self.base_path
        if self.base_path in ("", "/"):
            return self.base_path + rel
        return f"{self.base_path}/{rel}"

    def uri(self, rel: str = "") -> str:
        """A URI for Spark: ``file:///abs/path`` locally, ``s3a://bucket/key`` on S3."""
        path = self.abs_path(rel)
        if self.scheme == "":
            return "file://" + (path if path.startswith("/") else "/" + path)
        scheme = _SPARK_SCHEME.get(self.scheme, self.scheme)
        if self.scheme in _OBJECT_STORE_SCHEMES:
            return f"{scheme}://{path}"
        return f"{scheme}://{self._netloc}{path if path.startswith('/') else '/' + path}"

    def rel_path(self, abs_path: str) -> str:
        """Inverse of :meth:`abs_path` for paths under the base path."""
        if abs_path.rstrip("/") == self.base_path.rstrip("/"):
            return ""
        prefix = "" if self.base_path == "" else self.base_path.rstrip("/") + "/"
        if not abs_path.startswith(prefix):
            raise ValueError(f"{abs_path!r} is not under {self.base_path!r}")
        return abs_path[len(prefix) :]

    # ---- reads -----------------------------------------------------------------------------

    def _info(self, rel: str) -> pafs.FileInfo:
        return self.filesystem.get_file_info(self.abs_path(rel))

    def exists(self, rel: str) -> bool:
        """True when a file or directory exists at ``rel``."""
        return bool(self._info(rel).type != pafs.FileType.NotFound)

    def is_dir(self, rel: str) -> bool:
        """True when ``rel`` is a directory."""
        return bool(self._info(rel).type == pafs.FileType.Directory)

    def size(self, rel: str) -> int:
        """Size in bytes of the file at ``rel``; FileNotFoundError when missing."""
        info = self._info(rel)
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(errno.ENOENT, "no such file", self.abs_path(rel))
        return int(info.size or 0)

    def mtime_ms(self, rel: str) -> int:
        """Modification time in epoch milliseconds; FileNotFoundError when missing."""
        info = self._info(rel)
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(errno.ENOENT, "no such file", self.abs_path(rel))
        return _mtime_ms(info)

    def read_bytes(self, rel: str) -> bytes:
        """The whole content of the file at ``rel``."""
        with self.filesystem.open_input_stream(self.abs_path(rel)) as f:
            return bytes(f.read())

    def open_input_file(self, rel: str) -> pa.NativeFile:
        """A random-access file (for Parquet footers and row groups)."""
        return self.filesystem.open_input_file(self.abs_path(rel))

    def list_dir(self, rel: str = "") -> list[FileEntry]:
        """Direct children of ``rel`` sorted by name; ``[]`` when ``rel`` does not exist.

        Hidden entries (``.hoodie``, ``.hoodie_partition_metadata``, log files) are listed
        like any other.
        """
        selector = pafs.FileSelector(self.abs_path(rel), allow_not_found=True, recursive=False)
        return self._entries(selector)

    def list_recursive(self, rel: str = "") -> list[FileEntry]:
        """Every file and directory below ``rel`` (sorted by path); ``[]`` when missing."""
        selector = pafs.FileSelector(self.abs_path(rel), allow_not_found=True, recursive=True)
        return self._entries(selector)

    def _entries(self, selector: pafs.FileSelector) -> list[FileEntry]:
        entries = []
        for info in self.filesystem.get_file_info(selector):
            path = self.rel_path(info.path)
            is_dir = info.type == pafs.FileType.Directory
            size = 0 if is_dir else int(info.size or 0)
            entries.append(FileEntry(info.base_name, path, size, _mtime_ms(info), is_dir))
        entries.sort(key=lambda e: e.path)
        return entries

    # ---- writes ----------------------------------------------------------------------------

    def mkdirs(self, rel: str) -> None:
        """Create ``rel`` and its parents (no-op on object stores, where folders are prefixes)."""
        if not self.is_object_store:
            self.filesystem.create_dir(self.abs_path(rel), recursive=True)

    def _ensure_parent(self, rel: str) -> None:
        # The parent may be the base path itself, which need not exist yet either.
        parent = posixpath.dirname(rel.strip("/"))
        if self.abs_path(parent) not in ("", "/"):
            self.mkdirs(parent)

    def open_output_stream(self, rel: str) -> pa.NativeFile:
        """A new (or truncated) file at ``rel``, parents created; not atomic."""
        self._ensure_parent(rel)
        return self.filesystem.open_output_stream(self.abs_path(rel))

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write ``data`` to ``rel``, replacing it atomically where the filesystem allows.

        Readers never see a half-written file: locally (and on HDFS) the bytes go to a temp
        file in the same folder that is then renamed over the target; an object-store PUT is
        atomic by itself.
        """
        self._ensure_parent(rel)
        if self.is_object_store:
            self._put(rel, data)
            return
        tmp = self._temp_name(rel)
        try:
            self._put(tmp, data)
            self.filesystem.move(self.abs_path(tmp), self.abs_path(rel))
        except BaseException:
            self._discard(tmp)
            raise

    def create_exclusive(self, rel: str, data: bytes = b"") -> bool:
        """Create ``rel`` with ``data`` unless it exists; True when this call created it.

        Locally: the data is written to a temp file that is hard-linked to the target (the
        link fails if the target exists, and readers only ever see the complete file); on
        filesystems without hard links, ``O_CREAT|O_EXCL``. Elsewhere: an exists-check
        followed by a write, which is not safe against a concurrent creator (see module doc).
        """
        self._ensure_parent(rel)
        if self._is_s3:
            return self._s3_conditional().create(self.abs_path(rel), data) is not None
        if not self.is_local:
            if self.exists(rel):
                return False
            self.write_bytes(rel, data)
            return True
        target = self.abs_path(rel)
        tmp = self._temp_name(rel)
        self._put(tmp, data)
        try:
            os.link(self.abs_path(tmp), target)
            return True
        except FileExistsError:
            return False
        except OSError:
            return self._create_excl_local(target, data)
        finally:
            self._discard(tmp)

    @staticmethod
    def _create_excl_local(target: str, data: bytes) -> bool:
        try:
            fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return True

    # ---- compare-and-swap (lock leases) -------------------------------------------------

    _s3_cond: S3Conditional | None = None  # built on first conditional write to S3

    @property
    def _is_s3(self) -> bool:
        if self._explicit_fs is not None:
            return bool(self._explicit_fs.type_name == "s3")
        return self.scheme in ("s3", "s3a", "s3n")

    @property
    def has_atomic_conditional_writes(self) -> bool:
        """True when create-if-absent and compare-and-swap are atomic here (local disk, S3)."""
        return self.is_local or self._is_s3

    def _s3_conditional(self) -> S3Conditional:
        # Built from the pyarrow filesystem's own settings, so both clients hit one endpoint.
        if self._s3_cond is None:
            self._s3_cond = S3Conditional.for_filesystem(self.filesystem)
        return self._s3_cond

    def create_versioned(self, rel: str, data: bytes) -> str | None:
        """Create ``rel`` unless it exists (atomically, as :meth:`create_exclusive`); the new
        file's version token, or None when the file already existed."""
        self._ensure_parent(rel)
        if self._is_s3:
            return self._s3_conditional().create(self.abs_path(rel), data)
        if self.is_local:
            return LocalConditional().create(self.abs_path(rel), data)
        if not self.create_exclusive(rel, data):
            return None
        current = self.read_versioned(rel)
        return current[1] if current is not None else None

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """The file's bytes and a version token for :meth:`replace_if_version`; None if absent."""
        if self._is_s3:
            return self._s3_conditional().read(self.abs_path(rel))
        if self.is_local:
            return LocalConditional().read(self.abs_path(rel))
        try:
            data = self.read_bytes(rel)
        except FileNotFoundError:
            return None
        return data, hashlib.sha1(data).hexdigest()

    def replace_if_version(self, rel: str, data: bytes, version: str) -> str | None:
        """Replace ``rel`` with ``data`` only if it is still at ``version`` (compare-and-swap);
        the new version, or None when the file changed or vanished meanwhile.

        Atomic locally and on S3; elsewhere a read-compare-write with a small race window.
        """
        if self._is_s3:
            return self._s3_conditional().replace(self.abs_path(rel), data, version)
        if self.is_local:
            return LocalConditional().replace(self.abs_path(rel), data, version)
        current = self.read_versioned(rel)
        if current is None or current[1] != version:
            return None
        self.write_bytes(rel, data)
        return hashlib.sha1(data).hexdigest()

    def delete_if_version(self, rel: str, version: str) -> bool:
        """Delete ``rel`` only if it is still at ``version``; False when it changed."""
        if self._is_s3:
            return self._s3_conditional().delete(self.abs_path(rel), version)
        if self.is_local:
            return LocalConditional().delete(self.abs_path(rel), version)
        current = self.read_versioned(rel)
        if current is None or current[1] != version:
            return False
        return self.delete_file(rel)

    def touch(self, rel: str) -> None:
        """Create ``rel`` empty or bump its modification time to now (heartbeats)."""
        if self.is_local and os.path.exists(self.abs_path(rel)):
            os.utime(self.abs_path(rel))
            return
        self._ensure_parent(rel)
        self._put(rel, b"")

    def delete_file(self, rel: str) -> bool:
        """Delete the file at ``rel``; False when it did not exist (rollback is idempotent)."""
        try:
            self.filesystem.delete_file(self.abs_path(rel))
        except FileNotFoundError:
            return False
        return True

    def delete_dir(self, rel: str) -> bool:
        """Delete ``rel`` and everything below it; False when it did not exist."""
        if not rel.strip("/"):
            # Deleting the table root through a relative path is never what a caller means.
            raise ValueError("refusing to delete the table base path via delete_dir('')")
        if not self.exists(rel):
            return False
        self.filesystem.delete_dir(self.abs_path(rel))
        return True

    # ---- helpers ---------------------------------------------------------------------------

    def _put(self, rel: str, data: bytes) -> None:
        with self.filesystem.open_output_stream(self.abs_path(rel)) as f:
            f.write(data)

    @staticmethod
    def _temp_name(rel: str) -> str:
        # Dot-prefixed and ".tmp"-suffixed so neither Hudi nor hudilite mistakes it for data.
        head, tail = posixpath.split(rel.strip("/"))
        return join(head, f".{tail}.{uuid.uuid4().hex}.tmp")

    def _discard(self, rel: str) -> None:
        with contextlib.suppress(OSError):
            self.filesystem.delete_file(self.abs_path(rel))

    def __repr__(self) -> str:
        return f"FileSystemGateway({self.base_uri!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FileSystemGateway)
            and other.base_uri == self.base_uri
            and other._explicit_fs == self._explicit_fs
        )

    def __hash__(self) -> int:
        return hash(self.base_uri)


def _mtime_ms(info: pafs.FileInfo) -> int:
    ns = info.mtime_ns
    return int(ns // 1_000_000) if ns is not None else 0
