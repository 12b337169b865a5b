"""A persistent table catalog kept in the warehouse folder.

Layout (``<wh>`` is the warehouse: ``$HUDILITE_WAREHOUSE`` or ``./hudilite-warehouse``)::

    <wh>/<db>.db/<table>/                    managed table data (a Hudi table base path)
    <wh>/_catalog/<db>/_database.json        one per database (``default`` always exists)
    <wh>/_catalog/<db>/tables/<table>.json   one entry per table
    <wh>/_catalog/<db>/views/<view>.json     one entry per persistent view (its SQL text)

(Entries sit in ``tables/`` and ``views/`` so that no name can collide with
``_database.json``.) Tables and views share one namespace per database: a view cannot take
a table's name, nor a table a view's. The entry types are in :mod:`.entries`.

Every entry is a small JSON document written through :class:`FileSystemGateway`:
``write_bytes`` replaces it atomically, and new entries are made with
``create_exclusive``, so when two writers create the same table (or database) at once
exactly one wins and the other gets :class:`TableExistsError`. Readers skip entries that
vanish between listing and reading, so they never fail because of a concurrent drop.
Another process opening the same warehouse sees everything at once: nothing is cached.

The entry records *where* a table is and the SQL options it was created with; the table's
Hudi config (``.hoodie/hoodie.properties``) stays the truth about keys, partitioning and
type (:meth:`Catalog.table_config`).

Decisions:

* Names are case-insensitive: stored lower-case, validated against
  ``[A-Za-z_][A-Za-z0-9_]*``.
* A table with an explicit ``LOCATION`` is external; dropping it removes only the entry
  unless ``purge``, which deletes the table's own files and nothing else under the
  location (:mod:`.purge`). Dropping a managed table deletes its folder.
* :meth:`Catalog.rename_table` rewrites the entry only. The data folder stays where it is
  (no copy on object stores, no moving a folder under a concurrent reader or writer) and
  ``hoodie.table.name`` is left as is: ``hoodie.properties`` belongs to the table's writers,
  and Hudi readers locate a table by path, not by that name. A later managed table with the
  old name therefore cannot reuse the old folder; :meth:`Catalog.create_table` reports that
  as :class:`TableExistsError` naming the location.
* The current database (``USE``) is session state, not stored here.
* Locations inside the warehouse (managed tables, databases without a ``LOCATION``) are
  stored relative to it (``default.db/trips``), so a copied or moved warehouse uses its own
  files, never the original's. Entries written with absolute paths (before this rule) are
  still read: a managed table or database whose stored absolute path ends in its default
  place (``<db>.db/<table>``, ``<db>.db``) is taken as relative when that place exists in
  this warehouse. External locations stay absolute.

No pyspark import here: the catalog only reads and writes its entries and the tables'
``hoodie.properties``; the SQL layer opens a :class:`hudilite.Table` on an entry's location.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime

from hudilite.config import TableConfig
from hudilite.errors import HudiliteError, TableExistsError, TableNotFoundError
from hudilite.storage.fs import FileSystemGateway, join
from hudilite.tablestate.state import PROPERTIES_FILE, load_config

from .entries import DatabaseEntry, TableEntry, ViewEntry
from .purge import purge_table_files

DEFAULT_DATABASE = "default"
WAREHOUSE_ENV = "HUDILITE_WAREHOUSE"
DEFAULT_WAREHOUSE = "./hudilite-warehouse"
CATALOG_DIR = "_catalog"
DATABASE_FILE = "_database.json"
TABLES_DIR = "tables"
VIEWS_DIR = "views"

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CatalogError(HudiliteError):
    """A catalog operation is not allowed (dropping ``default``, a non-empty database)."""


class InvalidNameError(CatalogError, ValueError):
    """A database or table name does not match ``[A-Za-z_][A-Za-z0-9_]*``."""


class DatabaseNotFoundError(CatalogError):
    """No database of that name in the catalog."""


class DatabaseExistsError(CatalogError):
    """A database of that name already exists."""


class DatabaseNotEmptyError(CatalogError):
    """A database still holds tables and was dropped without ``cascade``."""


def default_warehouse() -> str:
    """``$HUDILITE_WAREHOUSE`` if set, else ``./hudilite-warehouse``."""
    return os.environ.get(WAREHOUSE_ENV) or DEFAULT_WAREHOUSE


def normalize_name(name: str, kind: str = "table") -> str:
    """The stored (lower-case) spelling of a name; :class:`InvalidNameError` if malformed."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise InvalidNameError(
            f"invalid {kind} name {name!r}: names must match [A-Za-z_][A-Za-z0-9_]*"
        )
    return name.lower()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _location_of(path: str) -> str:
    """A canonical location string: an absolute path locally, the URI elsewhere.

    A relative path is refused: it would resolve against the working directory of
    whichever process runs the statement (a SQL server's, not the client's), so the same
    statement would put the table in different places."""
    if "://" in path and not path.startswith("file:"):
        return path.rstrip("/")
    if not path.startswith("file:") and not os.path.isabs(path):
        raise CatalogError(
            f"LOCATION {path!r} is a relative path, which would resolve against this "
            f"process's working directory ({os.getcwd()}); give an absolute path or a URI"
        )
    return FileSystemGateway(path).abs_path("")


class Catalog:
    """Databases and tables of one warehouse folder (local path or URI).

    ``storage_options`` (``fs.s3a.*`` connection settings, see :mod:`hudilite.storage.fs`)
    apply to the warehouse and to every table opened through the catalog; without them the
    process-wide options and the AWS environment variables apply.
    """

    def __init__(
        self, warehouse: str | None = None, *, storage_options: Mapping[str, str] | None = None
    ) -> None:
        self.warehouse = warehouse or default_warehouse()
        self.storage_options = dict(storage_options or {})
        self.gw = self._gateway(self.warehouse)

    def _gateway(self, location: str) -> FileSystemGateway:
        """The gateway of the warehouse or of a table location, with the catalog's options."""
        return FileSystemGateway(location, storage_options=self.storage_options or None)

    def __repr__(self) -> str:
        return f"Catalog({self.warehouse!r})"

    # ---- paths -------------------------------------------------------------------------

    def _location(self, rel: str) -> str:
        if self.gw.scheme == "":
            return self.gw.abs_path(rel)
        return join(self.gw.base_uri.rstrip("/"), rel) if rel else self.gw.base_uri

    def _db_file(self, db: str) -> str:
        return join(CATALOG_DIR, db, DATABASE_FILE)

    def _table_file(self, db: str, name: str) -> str:
        return join(CATALOG_DIR, db, TABLES_DIR, f"{name}.json")

    def _view_file(self, db: str, name: str) -> str:
        return join(CATALOG_DIR, db, VIEWS_DIR, f"{name}.json")

    def _relative(self, location: str) -> str | None:
        """``location`` relative to the warehouse when it lies inside it, else None."""
        base = self._location("").rstrip("/")
        loc = location.rstrip("/")
        if self.gw.scheme == "" and "://" not in loc:
            loc = os.path.abspath(loc[5:] if loc.startswith("file:") else loc)
        if loc.startswith(base + "/"):
            return loc[len(base) + 1 :]
        return None

    def _stored(self, location: str, inside: bool) -> str:
        """How a location is written in an entry: relative when ``inside`` (a managed
        table or a database's own folder) and it lies in the warehouse."""
        rel = self._relative(location) if inside else None
        return rel if rel else location

    def _resolved(self, stored: str, inside: bool, default_rel: str) -> str:
        """The absolute location of a stored one (see the module doc on old entries)."""
        if not stored:
            return stored
        if "://" not in stored and not stored.startswith("file:") and not os.path.isabs(stored):
            return self._location(stored)
        if (
            inside
            and self._relative(stored) is None
            and stored.rstrip("/").endswith("/" + default_rel)
            and self.gw.is_dir(default_rel)
        ):
            # An absolute path written before locations were relative, in a warehouse
            # that was copied or moved since: use this warehouse's copy.
            return self._location(default_rel)
        return stored

    def _encode_table(self, entry: TableEntry) -> bytes:
        return replace(entry, location=self._stored(entry.location, entry.managed)).to_json()

    def _decode_table(self, data: bytes) -> TableEntry:
        entry = TableEntry.from_json(data)
        default_rel = f"{entry.database}.db/{entry.name}"
        return replace(entry, location=self._resolved(entry.location, entry.managed, default_rel))

    def _encode_database(self, entry: DatabaseEntry) -> bytes:
        return replace(entry, location=self._stored(entry.location, True)).to_json()

    def _decode_database(self, data: bytes) -> DatabaseEntry:
        entry = DatabaseEntry.from_json(data)
        return replace(entry, location=self._resolved(entry.location, True, f"{entry.name}.db"))

    def database_location(self, db: str) -> str:
        """Folder of the managed tables of ``db``: its ``LOCATION`` if it was created with
        one, else ``<warehouse>/<db>.db``."""
        db = normalize_name(db, "database")
        data = self._read(self._db_file(db))
        if data is not None:
            location = self._decode_database(data).location
            if location:
                return location
        return self._location(f"{db}.db")

    def default_location(self, db: str, name: str) -> str:
        """Where a managed table lives: ``<database location>/<name>``."""
        base = self.database_location(db)
        name = normalize_name(name)
        return join(base, name) if "://" in base else os.path.join(base, name)

    # ---- reading helpers ---------------------------------------------------------------

    def _read(self, rel: str) -> bytes | None:
        try:
            return self.gw.read_bytes(rel)
        except FileNotFoundError:
            return None

    # ---- databases ---------------------------------------------------------------------

    def database_exists(self, name: str) -> bool:
        """True for ``default`` and every created database."""
        db = normalize_name(name, "database")
        return db == DEFAULT_DATABASE or self.gw.exists(self._db_file(db))

    def _require_database(self, name: str) -> str:
        db = normalize_name(name, "database")
        if not self.database_exists(db):
            raise DatabaseNotFoundError(f"database {db} does not exist")
        return db

    def list_databases(self) -> list[str]:
        """Names of all databases, sorted (always including ``default``)."""
        names = {DEFAULT_DATABASE}
        for e in self.gw.list_dir(CATALOG_DIR):
            if e.is_dir and _NAME_RE.fullmatch(e.name) and self.gw.exists(self._db_file(e.name)):
                names.add(e.name)
        return sorted(names)

    def get_database(self, name: str) -> DatabaseEntry:
        """The entry of a database; ``default`` is synthesized when never written."""
        db = self._require_database(name)
        data = self._read(self._db_file(db))
        if data is None:
            if db == DEFAULT_DATABASE:
                return DatabaseEntry(db, self.database_location(db), "")
            raise DatabaseNotFoundError(f"database {db} does not exist")
        return self._decode_database(data)

    def create_database(
        self,
        name: str,
        if_not_exists: bool = False,
        *,
        comment: str | None = None,
        properties: Mapping[str, str] | None = None,
        location: str | None = None,
    ) -> DatabaseEntry:
        """Create a database; :class:`DatabaseExistsError` unless ``if_not_exists``.

        ``location`` is the folder (path or URI) for its managed tables; by default
        ``<warehouse>/<db>.db``.
        """
        db = normalize_name(name, "database")
        folder = _location_of(location) if location else self._location(f"{db}.db")
        entry = DatabaseEntry(db, folder, _now(), comment, dict(properties or {}))
        if db == DEFAULT_DATABASE or not self.gw.create_exclusive(
            self._db_file(db), self._encode_database(entry)
        ):
            if if_not_exists:
                return self.get_database(db)
            raise DatabaseExistsError(f"database {db} already exists")
        return entry

    def drop_database(self, name: str, cascade: bool = False, *, if_exists: bool = False) -> bool:
        """Drop a database; its tables too with ``cascade`` (managed data is deleted).

        Returns False when it did not exist and ``if_exists`` was given.
        """
        db = normalize_name(name, "database")
        if db == DEFAULT_DATABASE:
            raise CatalogError("cannot drop the default database")
        if not self.database_exists(db):
            if if_exists:
                return False
            raise DatabaseNotFoundError(f"database {db} does not exist")
        tables, views = self.list_tables(db), self.list_views(db)
        if tables and not cascade:
            raise DatabaseNotEmptyError(
                f"database {db} is not empty ({len(tables)} tables: {', '.join(tables)}); "
                "use CASCADE to drop it with its tables"
            )
        if views and not cascade:
            raise DatabaseNotEmptyError(
                f"database {db} is not empty ({len(views)} views: {', '.join(views)}); "
                "use CASCADE to drop it with its views"
            )
        for v in views:
            self.drop_view(db, v, if_exists=True)
        for t in tables:
            self.drop_table(db, t, if_exists=True)
        self.gw.delete_file(self._db_file(db))
        with contextlib.suppress(OSError):
            self.gw.delete_dir(join(CATALOG_DIR, db))
        folder = f"{db}.db"
        if self.gw.is_dir(folder) and not self.gw.list_dir(folder):
            with contextlib.suppress(OSError):
                self.gw.delete_dir(folder)
        return True

    # ---- tables: reading ---------------------------------------------------------------

    def table_exists(self, db: str, name: str) -> bool:
        """True when ``db.name`` is in the catalog."""
        db, name = normalize_name(db, "database"), normalize_name(name)
        return self.gw.exists(self._table_file(db, name))

    def get_table(self, db: str, name: str) -> TableEntry:
        """The entry of ``db.name``; :class:`TableNotFoundError` when there is none."""
        db, name = normalize_name(db, "database"), normalize_name(name)
        data = self._read(self._table_file(db, name))
        if data is None:
            if not self.database_exists(db):
                raise DatabaseNotFoundError(f"database {db} does not exist")
            raise TableNotFoundError(f"table {db}.{name} does not exist")
        return self._decode_table(data)

    def list_tables(self, db: str) -> list[str]:
        """Names of the tables of ``db``, sorted."""
        return self._list_entries(db, TABLES_DIR)

    def _list_entries(self, db: str, folder: str) -> list[str]:
        db = self._require_database(db)
        names = []
        for e in self.gw.list_dir(join(CATALOG_DIR, db, folder)):
            stem, ext = os.path.splitext(e.name)
            if not e.is_dir and ext == ".json" and _NAME_RE.fullmatch(stem):
                names.append(stem)
        return sorted(names)

    def table_config(self, db: str, name: str) -> TableConfig:
        """The table's Hudi config from ``hoodie.properties`` (the truth about the table)."""
        return load_config(self._gateway(self.get_table(db, name).location))

    # ---- tables: writing ---------------------------------------------------------------

    def _claim(self, entry: TableEntry, if_not_exists: bool) -> TableEntry | None:
        """Write a new entry; None when this call created it, else the existing entry."""
        self._refuse_view_name(entry.database, entry.name)
        if self.gw.create_exclusive(
            self._table_file(entry.database, entry.name), self._encode_table(entry)
        ):
            return None
        if if_not_exists:
            with contextlib.suppress(TableNotFoundError):
                return self.get_table(entry.database, entry.name)
        raise TableExistsError(f"table {entry.qualified_name} already exists")

    def register_table(
        self,
        db: str,
        name: str,
        location: str,
        *,
        external: bool = True,
        properties: Mapping[str, str] | None = None,
        if_not_exists: bool = False,
    ) -> TableEntry:
        """Add an existing Hudi table (hudilite's or Hudi's) at ``location`` to the catalog.

        ``location`` must hold ``.hoodie/hoodie.properties`` (else
        :class:`TableNotFoundError`). With ``if_not_exists`` an existing entry is returned
        unchanged; otherwise :class:`TableExistsError`.
        """
        db, name = self._require_database(db), normalize_name(name)
        loc = _location_of(location)
        try:
            load_config(self._gateway(loc))
        except TableNotFoundError:
            raise TableNotFoundError(
                f"cannot register table {db}.{name}: no Hudi table at {loc} "
                f"(missing {PROPERTIES_FILE})"
            ) from None
        now = _now()
        entry = TableEntry(name, db, loc, external, dict(properties or {}), now, now)
        existing = self._claim(entry, if_not_exists)
        return existing if existing is not None else entry

    def create_table(
        self,
        db: str,
        name: str,
        create: Callable[[str], object],
        *,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
        if_not_exists: bool = False,
    ) -> TableEntry:
        """Create a new table: claim the entry, then call ``create(location)`` to make it.

        Without ``location`` the table is managed and lives at :meth:`default_location`;
        with one it is external. The entry is claimed first (``create_exclusive``), so of
        two concurrent creators exactly one runs ``create``; the other gets
        :class:`TableExistsError` (or, with ``if_not_exists``, the winner's entry). If
        ``create`` raises, the entry is removed again and the error propagates.
        """
        db, name = self._require_database(db), normalize_name(name)
        external = location is not None
        loc = _location_of(location) if location is not None else self.default_location(db, name)
        if self.table_exists(db, name):
            if if_not_exists:
                return self.get_table(db, name)
            raise TableExistsError(f"table {db}.{name} already exists")
        self._refuse_view_name(db, name)
        if self._gateway(loc).exists(PROPERTIES_FILE):
            raise TableExistsError(
                f"cannot create table {db}.{name}: a Hudi table already exists at {loc}"
                + ("" if external else " (register it with a LOCATION instead)")
            )
        now = _now()
        entry = TableEntry(name, db, loc, external, dict(properties or {}), now, now)
        existing = self._claim(entry, if_not_exists)
        if existing is not None:
            return existing
        try:
            create(loc)
        except BaseException:
            self.gw.delete_file(self._table_file(db, name))
            raise
        return entry

    def update_properties(self, db: str, name: str, props: Mapping[str, str | None]) -> TableEntry:
        """Merge ``props`` into the entry's properties (a None value removes the key).

        Read-modify-write of one file: concurrent updates of the same table may lose one.
        """
        entry = self.get_table(db, name)
        merged = dict(entry.properties)
        for k, v in props.items():
            if v is None:
                merged.pop(k, None)
            else:
                merged[k] = str(v)
        new = replace(entry, properties=merged, updated_at=_now())
        self.gw.write_bytes(self._table_file(new.database, new.name), self._encode_table(new))
        return new

    def rename_table(self, db: str, old: str, new: str) -> TableEntry:
        """Rename ``db.old`` to ``db.new``; the data stays where it is (see module doc)."""
        entry = self.get_table(db, old)
        new_name = normalize_name(new)
        if new_name == entry.name:
            return entry
        renamed = replace(entry, name=new_name, updated_at=_now())
        self._refuse_view_name(renamed.database, new_name)
        if not self.gw.create_exclusive(
            self._table_file(renamed.database, new_name), self._encode_table(renamed)
        ):
            raise TableExistsError(f"table {renamed.qualified_name} already exists")
        self.gw.delete_file(self._table_file(entry.database, entry.name))
        return renamed

    def drop_table(
        self, db: str, name: str, *, purge: bool = False, if_exists: bool = False
    ) -> bool:
        """Remove ``db.name``; delete its data when managed or ``purge``.

        The entry goes first (the table disappears at once), then the data. Returns False
        when there was no such table and ``if_exists`` was given.
        """
        try:
            entry = self.get_table(db, name)
        except (TableNotFoundError, DatabaseNotFoundError):
            if if_exists:
                return False
            raise
        if not self.gw.delete_file(self._table_file(entry.database, entry.name)):
            if if_exists:
                return False
            raise TableNotFoundError(f"table {entry.qualified_name} does not exist")
        if entry.managed:
            _delete_table_data(self._gateway(entry.location))
        elif purge:  # a LOCATION may hold other files: only the table's own go
            purge_table_files(self._gateway(entry.location))
        return True

    # ---- views -------------------------------------------------------------------------

    def _refuse_view_name(self, db: str, name: str) -> None:
        if self.gw.exists(self._view_file(db, name)):
            raise TableExistsError(f"cannot create table {db}.{name}: a view of that name exists")

    def view_exists(self, db: str, name: str) -> bool:
        """True when ``db.name`` is a persistent view of the catalog."""
        db, name = normalize_name(db, "database"), normalize_name(name)
        return self.gw.exists(self._view_file(db, name))

    def get_view(self, db: str, name: str) -> ViewEntry:
        """The entry of view ``db.name``: its SQL, columns (``ViewEntry.columns``: name,
        Spark type, comment), comment and creation time; :class:`TableNotFoundError` when
        there is none."""
        db, name = normalize_name(db, "database"), normalize_name(name)
        data = self._read(self._view_file(db, name))
        if data is None:
            if not self.database_exists(db):
                raise DatabaseNotFoundError(f"database {db} does not exist")
            raise TableNotFoundError(f"view {db}.{name} does not exist")
        return ViewEntry.from_json(data)

    def list_views(self, db: str) -> list[str]:
        """Names of the persistent views of ``db``, sorted."""
        return self._list_entries(db, VIEWS_DIR)

    def create_view(
        self, entry: ViewEntry, *, replace: bool = False, if_not_exists: bool = False
    ) -> ViewEntry:
        """Store a view. A new name is claimed with ``create_exclusive`` (of two concurrent
        creators one wins, the other gets :class:`TableExistsError`, or with
        ``if_not_exists`` the winner's entry); ``replace`` overwrites an existing view in
        one atomic write. A table of the same name is refused either way."""
        db = self._require_database(entry.database)
        name = normalize_name(entry.name)
        now = _now()
        new = dataclasses.replace(entry, database=db, name=name, created_at=now, updated_at=now)
        if self.table_exists(db, name):
            raise TableExistsError(f"cannot create view {db}.{name}: a table of that name exists")
        path = self._view_file(db, name)
        if replace:
            self.gw.write_bytes(path, new.to_json())
            return new
        if self.gw.create_exclusive(path, new.to_json()):
            return new
        if if_not_exists:
            with contextlib.suppress(TableNotFoundError):
                return self.get_view(db, name)
        raise TableExistsError(f"view {db}.{name} already exists")

    def drop_view(self, db: str, name: str, *, if_exists: bool = False) -> bool:
        """Remove view ``db.name``; False when there was none and ``if_exists``."""
        try:
            entry = self.get_view(db, name)
        except (TableNotFoundError, DatabaseNotFoundError):
            if if_exists:
                return False
            raise
        if not self.gw.delete_file(self._view_file(entry.database, entry.name)) and not if_exists:
            raise TableNotFoundError(f"view {entry.qualified_name} does not exist")
        return True


def _delete_table_data(gw: FileSystemGateway) -> None:
    if gw.is_object_store and "/" in gw.abs_path("").strip("/"):
        # One prefix delete also removes the empty folder markers pyarrow leaves behind.
        # (Never for a whole bucket: that would delete the bucket.)
        gw.filesystem.delete_dir(gw.abs_path(""))
        return
    for child in gw.list_dir(""):
        if child.is_dir:
            gw.delete_dir(child.path)
        else:
            gw.delete_file(child.path)
    if gw.is_local:
        with contextlib.suppress(OSError):
            os.rmdir(gw.abs_path(""))
