"""Users, their passwords and roles, and what each role may run.

The users file is JSON: ``{"users": {"alice": {"role": "admin", "kdf": "scrypt", "n": 16384,
"r": 8, "p": 1, "salt": "<hex>", "hash": "<hex>"}}}``. Passwords are kept only as scrypt
hashes (``hashlib.scrypt``, a slow, memory-hard function) with a random 16-byte salt per
user, compared in constant time. ``hudilite users add|remove|list`` manage the file.

Roles nest: a ``reader`` runs queries (SELECT, SHOW, DESCRIBE, EXPLAIN), session settings
(USE, SET, RESET) and ``CALL`` of the procedures that write nothing (``show_*``, ``stats_*``,
``help``: the registry's ``read_only`` flag); a ``writer`` also changes rows (INSERT,
UPDATE, DELETE, MERGE); an ``admin`` also runs DDL (CREATE, DROP, ALTER, TRUNCATE, ...) and
every ``CALL``.
Statements are classified by the SQL front end's parser (:mod:`hudilite.sqlext`), never by
matching text. What a statement may do beyond its kind (OS commands, reflection, paths,
which settings) is the sandbox's decision (:mod:`.sandbox`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

from hudilite.errors import HudiliteError
from hudilite.procedures import procedure_spec
from hudilite.sqlext import statements as st

__all__ = [
    "ROLES",
    "PermissionDenied",
    "UserStore",
    "check_allowed",
    "statement_kind",
]

ROLES = ("reader", "writer", "admin")
#: scrypt cost: 2**14 rounds, 16 MiB of memory, about 50 ms per check.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}

# Statement kinds and the lowest role allowed to run them.
QUERY, SETTING, WRITE, DDL, CALL = "query", "session setting", "write", "DDL", "CALL"
READ_CALL = "read-only CALL"
_LOWEST_ROLE = {
    QUERY: "reader",
    SETTING: "reader",
    READ_CALL: "reader",
    WRITE: "writer",
    DDL: "admin",
    CALL: "admin",
}

_QUERIES = (
    st.Query,
    st.Explain,
    st.ShowDatabases,
    st.ShowTables,
    st.Describe,
    st.ShowCreateTable,
    st.ShowPartitions,
    st.ShowTblProperties,
    st.DescribeHistory,
    st.ShowViews,
)
_SETTINGS = (st.UseDatabase, st.SetOption, st.ResetOption)
_WRITES = (st.InsertInto, st.Update, st.Delete, st.MergeInto)
# Spark statements hudilite hands over that only read (SHOW FUNCTIONS, DESCRIBE FUNCTION).
_READ_ONLY_WORDS = ("SHOW", "DESCRIBE", "DESC", "EXPLAIN", "LIST")


class PermissionDenied(HudiliteError):
    """A user's role does not allow a statement (SQLSTATE 42501)."""


def statement_kind(stmt: object) -> str:
    """``query``, ``session setting``, ``read-only CALL``, ``write``, ``DDL`` or ``CALL`` for
    a parsed statement.
    Kinds the front end may add later (views, ...) count as DDL unless they only show or
    describe something, so a new statement is never let through by accident."""
    if isinstance(stmt, _QUERIES):
        return QUERY
    if isinstance(stmt, _SETTINGS):
        return SETTING
    if isinstance(stmt, _WRITES):
        return WRITE
    if isinstance(stmt, st.Call):
        spec = procedure_spec(stmt.procedure)  # an unknown one: the admin's error to see
        return READ_CALL if spec is not None and spec.read_only else CALL
    if isinstance(stmt, st.SparkStatement):
        first = stmt.words.split()[0].upper() if stmt.words.split() else ""
        return QUERY if first in _READ_ONLY_WORDS else DDL
    name = type(stmt).__name__
    if name.startswith(("Show", "Describe")):
        return QUERY
    return DDL


def _describe(stmt: object) -> str:
    if isinstance(stmt, st.Call):
        return stmt.procedure
    if isinstance(stmt, st.SparkStatement):
        return " ".join(stmt.words.split()[:2]).upper() or "statement"
    return type(stmt).__name__


def check_allowed(role: str, stmt: object) -> None:
    """Raise :class:`PermissionDenied` naming the role and the statement kind when ``role``
    may not run ``stmt``."""
    kind = statement_kind(stmt)
    needed = _LOWEST_ROLE[kind]
    if ROLES.index(role) < ROLES.index(needed):
        raise PermissionDenied(
            f"permission denied: role {role!r} may not run {kind} statements "
            f"({_describe(stmt)}); it needs role {needed!r}"
        )


@dataclass(frozen=True)
class User:
    """One entry of the users file."""

    name: str
    role: str


def _hash(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=32)


class UserStore:
    """The users file at ``path``: add, remove, list and verify users."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, object]]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text())
            users = data["users"]
        except (ValueError, KeyError, TypeError) as exc:
            raise HudiliteError(f"users file {self.path} is not valid: {exc}") from None
        if not isinstance(users, dict):
            raise HudiliteError(f"users file {self.path} is not valid: 'users' is not a map")
        return users

    def _refuse_symlink(self) -> None:
        # The rename would replace the link, not write where it points; and a link may
        # point where the administrator did not mean to write.
        if self.path.is_symlink():
            raise HudiliteError(
                f"users file {self.path} is a symbolic link: give the real file's path"
            )

    def _save(self, users: dict[str, dict[str, object]]) -> None:
        # Written whole to a fresh temporary file beside it (a random name, created
        # exclusively and never through a symlink, so a planted users.json.tmp or link is
        # never written to), mode 0600 whatever the umask, then renamed over the file: a
        # reader never sees half a file, and the hashes stay readable by the owner only.
        self._refuse_symlink()
        folder = self.path.parent
        for _ in range(16):
            tmp = folder / f".{self.path.name}.{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(
                    tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
                )
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover - 16 collisions of 64 random bits
            raise HudiliteError(f"cannot create a temporary file in {folder}")
        try:
            os.fchmod(fd, 0o600)  # the umask may have taken bits away, never added: explicit
            with os.fdopen(fd, "w") as f:
                json.dump({"users": users}, f, indent=2, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def add(self, name: str, password: str, role: str) -> None:
        """Add ``name`` (or replace its password and role)."""
        if role not in ROLES:
            raise HudiliteError(f"unknown role {role!r}: expected one of {', '.join(ROLES)}")
        if not name or any(c in name for c in "\0\n"):
            raise HudiliteError(f"invalid user name {name!r}")
        if not password:
            raise HudiliteError(f"empty password for user {name!r}")
        salt = secrets.token_bytes(16)
        entry: dict[str, object] = {
            "role": role,
            "kdf": "scrypt",
            **_SCRYPT,
            "salt": salt.hex(),
            "hash": _hash(password, salt, **_SCRYPT).hex(),
        }
        self._refuse_symlink()
        with self._lock:
            users = self._load()
            users[name] = entry
            self._save(users)

    def remove(self, name: str) -> None:
        """Remove ``name``; :class:`HudiliteError` naming it when absent."""
        self._refuse_symlink()
        with self._lock:
            users = self._load()
            if name not in users:
                raise HudiliteError(f"no user {name!r} in {self.path}")
            del users[name]
            self._save(users)

    def list(self) -> list[User]:
        """Every user and role, by name."""
        return [User(n, str(e.get("role"))) for n, e in sorted(self._load().items())]

    def verify(self, name: str, password: str) -> User | None:
        """The user when ``password`` is right, else None (the file is re-read each time,
        so ``users add``/``remove`` take effect without a restart)."""
        entry = self._load().get(name)
        if entry is None:
            # Hash anyway so an unknown name takes as long as a wrong password.
            _hash(password, b"\0" * 16, **_SCRYPT)
            return None
        try:
            salt = bytes.fromhex(str(entry["salt"]))
            expected = bytes.fromhex(str(entry["hash"]))
            params = {k: int(str(entry[k])) for k in ("n", "r", "p")}
        except (KeyError, ValueError):
            return None
        if not hmac.compare_digest(_hash(password, salt, **params), expected):
            return None
        role = str(entry.get("role"))
        return User(name, role if role in ROLES else "reader")
