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

A gateway is picklable: it ships its base URI, its resolved S3 settings (and an explicitly
given filesystem, if any) and re-creates the ``pyarrow`` filesystem lazily on the executor,
so executors need neither the driver's environment variables nor its session options.

S3 settings (``s3://``, ``s3a://``, ``s3n://``) use Hadoop's S3A option names, each
resolved when the gateway is made, first match wins: the gateway's ``storage_options``
argument, the process-wide options of :func:`set_storage_options` (filled by
``hudilite.connect(options=...)``, SQL ``SET fs.s3a...`` and ``spark.hadoop.fs.s3a.*`` of
``hudilite.spark_session(conf=...)``), then the standard AWS environment variables:

============================  ==============================================
option                        environment variable
============================  ==============================================
``fs.s3a.endpoint``           ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``
``fs.s3a.endpoint.region``    ``AWS_REGION``, ``AWS_DEFAULT_REGION``
``fs.s3a.access.key``         ``AWS_ACCESS_KEY_ID``
``fs.s3a.secret.key``         ``AWS_SECRET_ACCESS_KEY``
``fs.s3a.session.token``      ``AWS_SESSION_TOKEN``
``fs.s3a.path.style.access``  (``true``: path-style requests)
============================  ==============================================

An endpoint without ``http://``/``https://`` uses https unless
``fs.s3a.connection.ssl.enabled`` is ``false``. Without any credentials pyarrow's default
AWS chain (profiles, instance roles) applies on each process.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import posixpath
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from hudilite.errors import ConfigError
from hudilite.storage.conditional import LocalConditional, S3Conditional

# Schemes whose "directories" are key prefixes: no rename, no real mkdir.
_OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "gcs"})
# pyarrow spells these schemes differently from Hadoop/Spark.
_PYARROW_SCHEME = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}
_SPARK_SCHEME = {"s3": "s3a", "s3n": "s3a", "gcs": "gs"}
# Schemes whose files Spark's JVM reads itself (its Parquet reader); hudilite ships no Hadoop
# connectors (hadoop-aws is not on Spark's class path), so files anywhere else are read in
# the executors' Python workers through this gateway.
_JVM_SCHEMES = frozenset({"", "file", "hdfs", "viewfs"})
_S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})

#: Option key prefix of the S3 settings (Hadoop's S3A names).
S3_OPTION_PREFIX = "fs.s3a."
_SPARK_HADOOP_PREFIX = "spark.hadoop."
# Listings retried when a listed file vanishes before it is stat-ed (see _entries).
_LIST_ATTEMPTS = 5
S3_ENDPOINT = "fs.s3a.endpoint"
S3_REGION = "fs.s3a.endpoint.region"
S3_ACCESS_KEY = "fs.s3a.access.key"
S3_SECRET_KEY = "fs.s3a.secret.key"
S3_SESSION_TOKEN = "fs.s3a.session.token"
S3_PATH_STYLE = "fs.s3a.path.style.access"
S3_SSL = "fs.s3a.connection.ssl.enabled"
_S3_ENV = {
    S3_ENDPOINT: ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    S3_REGION: ("AWS_REGION", "AWS_DEFAULT_REGION"),
    S3_ACCESS_KEY: ("AWS_ACCESS_KEY_ID",),
    S3_SECRET_KEY: ("AWS_SECRET_ACCESS_KEY",),
    S3_SESSION_TOKEN: ("AWS_SESSION_TOKEN",),
}
_S3_KEYS = frozenset({*_S3_ENV, S3_PATH_STYLE, S3_SSL})

_process_options: dict[str, str] = {}


def is_storage_option(key: str) -> bool:
    """True for a filesystem connection option (``fs.s3a.*``, also ``spark.hadoop.fs.s3a.*``)."""
    return key.removeprefix(_SPARK_HADOOP_PREFIX).startswith(S3_OPTION_PREFIX)


def storage_options_of(options: Mapping[str, object] | None) -> dict[str, str]:
    """The filesystem connection options among ``options`` (``spark.hadoop.`` prefix dropped)."""
    return {
        k.removeprefix(_SPARK_HADOOP_PREFIX): str(v)
        for k, v in (options or {}).items()
        if is_storage_option(k)
    }


def set_storage_options(options: Mapping[str, object] | None, *, replace: bool = False) -> None:
    """Make ``options`` (``fs.s3a.*`` keys; others ignored) the defaults of every gateway
    made later in this process; ``replace`` drops the earlier ones first. Gateways already
    made keep the settings they resolved."""
    if replace:
        _process_options.clear()
    _process_options.update(storage_options_of(options))


def process_storage_options() -> dict[str, str]:
    """A copy of the process-wide storage options (see :func:`set_storage_options`)."""
    return dict(_process_options)


def resolve_s3_options(options: Mapping[str, object] | None = None) -> dict[str, str]:
    """The S3 settings a gateway made now would use: ``options``, then the process-wide
    options, then the AWS environment variables (see the module doc)."""
    given = storage_options_of(options)
    out: dict[str, str] = {}
    for key in sorted(_S3_KEYS):
        value = given.get(key) or _process_options.get(key)
        if not value:
            value = next((os.environ[e] for e in _S3_ENV.get(key, ()) if os.environ.get(e)), "")
        if value:
            out[key] = value
    return out


def _s3_filesystem(settings: Mapping[str, str]) -> pafs.S3FileSystem:
    """A ``pyarrow`` S3 filesystem for resolved :func:`resolve_s3_options` settings."""
    kwargs: dict[str, Any] = {}
    endpoint = settings.get(S3_ENDPOINT, "")
    if endpoint:
        scheme, sep, host = endpoint.partition("://")
        if not sep:
            ssl = settings.get(S3_SSL, "true").strip().lower() != "false"
            scheme, host = ("https" if ssl else "http"), endpoint
        if scheme not in ("http", "https") or not host.strip("/"):
            raise ConfigError(
                f"invalid value {endpoint!r} for option {S3_ENDPOINT!r}: expected "
                "http(s)://host[:port] or host[:port]"
            )
        kwargs["endpoint_override"] = host.rstrip("/")
        kwargs["scheme"] = scheme
    # A region given up front spares pyarrow a lookup (which a local server cannot answer).
    kwargs["region"] = settings.get(S3_REGION) or ("us-east-1" if endpoint else None)
    if settings.get(S3_ACCESS_KEY) or settings.get(S3_SECRET_KEY):
        if not (settings.get(S3_ACCESS_KEY) and settings.get(S3_SECRET_KEY)):
            raise ConfigError(f"S3 credentials need both {S3_ACCESS_KEY!r} and {S3_SECRET_KEY!r}")
        kwargs["access_key"] = settings[S3_ACCESS_KEY]
        kwargs["secret_key"] = settings[S3_SECRET_KEY]
        if settings.get(S3_SESSION_TOKEN):
            kwargs["session_token"] = settings[S3_SESSION_TOKEN]
    path_style = settings.get(S3_PATH_STYLE, "").strip().lower()
    if path_style == "false":
        kwargs["force_virtual_addressing"] = True
    return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})


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
    ``storage_options`` are connection options (``fs.s3a.*``, see the module doc); an S3
    gateway resolves its settings once, here, and ships them when pickled.
    """

    def __init__(
        self,
        base_uri: str,
        filesystem: pafs.FileSystem | None = None,
        storage_options: Mapping[str, object] | None = None,
    ) -> None:
        self.base_uri = base_uri
        self._explicit_fs = filesystem
        self._fs: pafs.FileSystem | None = filesystem
        self.storage_options: dict[str, str] = {}
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
                if not parts.netloc:
                    raise ConfigError(f"no bucket in {base_uri!r}: expected {scheme}://bucket/path")
                if scheme in _S3_SCHEMES:
                    self.storage_options = resolve_s3_options(storage_options)
            else:
                self.base_path = parts.path.rstrip("/") or "/"

    # ---- pickling --------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The pyarrow filesystem itself is rebuilt from the URI and the resolved settings on
        # the other side; only an explicitly supplied one travels (it must be picklable then).
        return (type(self), (self.base_uri, self._explicit_fs, self.storage_options or None))

    # ---- filesystem ------------------------------------------------------------------------

    @property
    def filesystem(self) -> pafs.FileSystem:
        """The underlying ``pyarrow.fs`` filesystem (created on first use)."""
        if self._fs is None:
            if self.scheme == "":
                self._fs = pafs.LocalFileSystem()
            elif self.scheme in _S3_SCHEMES:
                self._fs = _s3_filesystem(self.storage_options)
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
    def is_jvm_readable(self) -> bool:
        """True when Spark's JVM can read the files by :meth:`uri` (local disk, HDFS).

        Elsewhere (S3, GCS, a custom filesystem) reads go through this gateway in the
        executors' Python workers.
        """
        if self._explicit_fs is not None:
            return self.scheme == "" and self._explicit_fs.type_name == "local"
        return self.scheme in _JVM_SCHEMES

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
        # A local listing stats every name it read from the directory; a file another writer
        # removes in between (a lost instant-time race, a temp file renamed into place) makes
        # the whole listing fail with FileNotFoundError. Such a listing is simply retried: the
        # next one sees the directory without that file.
        for attempt in range(_LIST_ATTEMPTS):
            try:
                infos = self.filesystem.get_file_info(selector)
                break
            except FileNotFoundError:
                if attempt == _LIST_ATTEMPTS - 1:
                    raise
        entries = []
        for info in infos:
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
            and other.storage_options == self.storage_options
        )

    def __hash__(self) -> int:
        return hash(self.base_uri)


def _mtime_ms(info: pafs.FileInfo) -> int:
    ns = info.mtime_ns
    return int(ns // 1_000_000) if ns is not None else 0
