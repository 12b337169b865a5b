"""Conditional writes: create-if-absent and compare-and-swap, the primitives locks rest on.

A *version* is an opaque token naming one state of a file; a compare-and-swap replaces the
file only when it is still in the state the caller read. Two implementations:

* :class:`S3Conditional` -- S3 conditional requests through boto3 (``pyarrow``'s
  S3FileSystem cannot send them): ``PutObject`` with ``If-None-Match: *`` creates an object
  only if the key is free, ``PutObject``/``DeleteObject`` with ``If-Match: <etag>`` replace
  or delete it only if it is unchanged. The version is the ETag. S3 answers 412 when the
  condition fails and 409 when a concurrent conditional write to the same key is in flight;
  both mean "someone else got there", which is what the callers need to know.
* :class:`LocalConditional` -- on a local disk every read-compare-write runs under an
  ``flock`` on a guard file next to the target (the kernel drops an ``flock`` when its
  process dies, so a killed process never leaves the guard held). The version is the
  inode number plus a digest of the content: every write is a new file renamed into place.

boto3 is imported only when an S3 table needs it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import uuid
from collections.abc import Iterator
from typing import Any

from hudilite.errors import HudiliteError

# ---- S3 --------------------------------------------------------------------------------------

# 412: the condition failed. 409 (ConditionalRequestConflict): another conditional write on
# the key is in flight. NoSuchKey: If-Match on a key that does not exist (any more).
_LOST_RACE_STATUS = frozenset({409, 412})


class S3Conditional:
    """Conditional PUT/DELETE on one S3 endpoint, configured like a ``pyarrow`` S3FileSystem.

    ``settings`` are the keyword arguments ``pyarrow.fs.S3FileSystem`` was built with (its
    ``__reduce__`` carries them), so boto3 talks to the same endpoint with the same
    credentials; unset credentials fall back to boto3's own chain (environment, profile).
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self._settings = settings
        self._client: Any = None

    @classmethod
    def for_filesystem(cls, filesystem: Any) -> S3Conditional:
        """The conditional writer for a ``pyarrow.fs.S3FileSystem``."""
        _, args = filesystem.__reduce__()
        return cls(dict(args[0]) if args and isinstance(args[0], dict) else {})

    @property
    def client(self) -> Any:
        """The boto3 S3 client (created on first use)."""
        if self._client is None:
            try:  # why lazy: boto3 is optional (the s3 extra), needed only for S3 tables
                import boto3
                from botocore.config import Config
            except ImportError:  # pragma: no cover - depends on the installation
                raise HudiliteError(
                    "S3 tables need boto3 for conditional writes (pip install boto3)"
                ) from None
            s = self._settings
            endpoint = s.get("endpoint_override") or None
            if endpoint and "://" not in endpoint:
                endpoint = f"{s.get('scheme') or 'https'}://{endpoint}"
            kwargs: dict[str, Any] = {
                "endpoint_url": endpoint,
                "region_name": s.get("region") or None,
                "config": Config(retries={"max_attempts": 3, "mode": "standard"}),
            }
            if s.get("access_key"):
                kwargs["aws_access_key_id"] = s["access_key"]
                kwargs["aws_secret_access_key"] = s.get("secret_key")
                kwargs["aws_session_token"] = s.get("session_token") or None
            self._client = boto3.client("s3", **kwargs)
        return self._client

    @staticmethod
    def _split(path: str) -> tuple[str, str]:
        bucket, _, key = path.lstrip("/").partition("/")
        return bucket, key

    @staticmethod
    def _status(exc: Exception) -> int | None:
        response = getattr(exc, "response", None)
        if not isinstance(response, dict):
            return None
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return int(status) if status is not None else None

    @classmethod
    def _lost_race(cls, exc: Exception, *, missing_key_too: bool) -> bool:
        # A missing bucket is a real error, never a lost race.
        if cls._status(exc) in _LOST_RACE_STATUS:
            return True
        code = getattr(exc, "response", {}).get("Error", {}).get("Code")
        return missing_key_too and code == "NoSuchKey"

    def create(self, path: str, data: bytes) -> str | None:
        """PUT ``data`` at ``bucket/key`` only if the key is free; its ETag, or None if taken."""
        bucket, key = self._split(path)
        try:
            response = self.client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except Exception as exc:
            if self._lost_race(exc, missing_key_too=False):
                return None
            raise
        return str(response["ETag"])

    def read(self, path: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, or None when it does not exist."""
        bucket, key = self._split(path)
        try:
            response = self.client.get_object(Bucket=bucket, Key=key)
        except Exception as exc:
            code = getattr(exc, "response", {}).get("Error", {}).get("Code")
            if code == "NoSuchKey":
                return None
            raise
        return bytes(response["Body"].read()), str(response["ETag"])

    def replace(self, path: str, data: bytes, version: str) -> str | None:
        """PUT ``data`` only if the object's ETag is still ``version``; the new ETag or None."""
        bucket, key = self._split(path)
        try:
            response = self.client.put_object(Bucket=bucket, Key=key, Body=data, IfMatch=version)
        except Exception as exc:
            if self._lost_race(exc, missing_key_too=True):
                return None
            raise
        return str(response["ETag"])

    def delete(self, path: str, version: str) -> bool:
        """DELETE the object only if its ETag is still ``version``; False when it changed."""
        bucket, key = self._split(path)
        try:
            self.client.delete_object(Bucket=bucket, Key=key, IfMatch=version)
        except Exception as exc:
            if self._lost_race(exc, missing_key_too=True):
                return False
            raise
        return True


# ---- local disk ------------------------------------------------------------------------------


class LocalConditional:
    """Compare-and-swap on local files, serialised by an ``flock``-ed guard file per target."""

    @staticmethod
    def _guard_path(path: str) -> str:
        head, tail = posixpath.split(path)
        return posixpath.join(head, f".{tail}.guard")

    @contextlib.contextmanager
    def _guarded(self, path: str) -> Iterator[None]:
        # why lazy: fcntl is POSIX only; imported here so the module loads everywhere
        import fcntl

        os.makedirs(posixpath.dirname(path) or ".", exist_ok=True)
        # The guard file is never deleted: unlinking an flock-ed file lets a second process
        # lock a fresh inode under the same name while the first still holds the old one.
        fd = os.open(self._guard_path(path), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor drops the flock

    @staticmethod
    def _read(path: str) -> tuple[bytes, str] | None:
        try:
            with open(path, "rb") as f:
                data = f.read()
                ino = os.fstat(f.fileno()).st_ino
        except FileNotFoundError:
            return None
        return data, f"{ino}-{hashlib.sha1(data).hexdigest()}"

    @staticmethod
    def _temp(path: str) -> str:
        head, tail = posixpath.split(path)
        return posixpath.join(head, f".{tail}.{uuid.uuid4().hex}.tmp")

    def _write(self, path: str, data: bytes) -> str:
        tmp = self._temp(path)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        current = self._read(path)
        assert current is not None  # we hold the guard: nobody else writes it
        return current[1]

    def create(self, path: str, data: bytes) -> str | None:
        """Create ``path`` with ``data`` unless it exists; its version, or None if taken."""
        with self._guarded(path):
            tmp = self._temp(path)
            with open(tmp, "wb") as f:
                f.write(data)
            try:
                # A hard link fails if the target exists, even for creators that do not
                # take the guard (FileSystemGateway.create_exclusive links the same way).
                os.link(tmp, path)
            except FileExistsError:
                return None
            finally:
                os.unlink(tmp)
            current = self._read(path)
            assert current is not None
            return current[1]

    def read(self, path: str) -> tuple[bytes, str] | None:
        """The file's bytes and version, or None when it does not exist."""
        with self._guarded(path):
            return self._read(path)

    def replace(self, path: str, data: bytes, version: str) -> str | None:
        """Replace the file with ``data`` only if it is still at ``version``."""
        with self._guarded(path):
            current = self._read(path)
            if current is None or current[1] != version:
                return None
            return self._write(path, data)

    def delete(self, path: str, version: str) -> bool:
        """Delete the file only if it is still at ``version``."""
        with self._guarded(path):
            current = self._read(path)
            if current is None or current[1] != version:
                return False
            os.unlink(path)
            return True
