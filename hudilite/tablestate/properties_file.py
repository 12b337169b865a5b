"""``.hoodie/hoodie.properties``: the one module that creates, loads and rewrites it.

Hudi's ``HoodieTableConfig`` is the model, because a Hudi writer and hudilite must agree on
what a valid file is and how a rewrite is recovered:

* the file is ``java.util.Properties`` text, read and written as ISO-8859-1 with ``\\uXXXX``
  escapes for anything else (:func:`hudilite.config.render_properties` writes pure ASCII);
* ``hoodie.table.checksum`` is CRC32 of ``"<database>.<table>"``
  (:func:`hudilite.config.table_checksum`). A file whose checksum line is missing or does
  not match is not trusted: the line is written last, so a torn or truncated file loses it
  (Hudi's ``fetchConfigs`` only checks a checksum that is present, for tables from before
  0.10; every table version 6 or 8 has one, so hudilite requires it);
* loading (``fetchConfigs``) takes ``hoodie.properties`` if valid, else the backup
  ``hoodie.properties.backup`` that a rewrite leaves while it runs, and never writes;
* before a rewrite, :func:`recover` (``recoverIfNeeded``) replaces a missing or invalid file
  by a valid backup and drops the backup; with neither valid it refuses, so nothing is
  written over a table whose config is unknown;
* a rewrite (``modify``) copies the current file to the backup, writes the new file, reads
  it back and compares, and only then deletes the backup; a failed read-back restores the
  old file.

Callers hold the table lock for :func:`recover` and :func:`store`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from hudilite import config as cfg
from hudilite.errors import CorruptFileError, TableExistsError, TableNotFoundError
from hudilite.storage.fs import FileSystemGateway

PROPERTIES_FILE = ".hoodie/hoodie.properties"
#: Write options given at create time that are not Hudi table properties (small-file
#: limit, index settings...), kept beside hoodie.properties so later writes apply them too.
WRITE_DEFAULTS_FILE = ".hoodie/hudilite.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"
CHECKSUM_KEY = "hoodie.table.checksum"


def decode(data: bytes) -> dict[str, str]:
    """Parse a properties file's bytes as Java does (ISO-8859-1, so any bytes decode)."""
    return cfg.parse_properties(data.decode("latin-1"))


def encode(props: Mapping[str, str], comment: str | None = None) -> bytes:
    """``props`` as properties file bytes (ASCII: the rest is ``\\uXXXX``-escaped)."""
    return cfg.render_properties(props, comment).encode("latin-1")


def checksum(props: Mapping[str, str]) -> str:
    """The ``hoodie.table.checksum`` value ``props`` must carry."""
    name = props.get("hoodie.table.name")
    if not name:
        raise CorruptFileError(f"{PROPERTIES_FILE} lacks hoodie.table.name")
    return str(cfg.table_checksum(props.get("hoodie.database.name", ""), name))


def problem(props: Mapping[str, str]) -> str | None:
    """Why parsed properties cannot be trusted, or None when their checksum holds."""
    if not props.get("hoodie.table.name"):
        return "it lacks hoodie.table.name"
    stored = props.get(CHECKSUM_KEY)
    if stored is None:
        return f"it lacks {CHECKSUM_KEY} (truncated?)"
    if stored.strip() != checksum(props):
        expected = checksum(props)
        return f"{CHECKSUM_KEY}={stored!r} does not match the table name (expected {expected})"
    return None


def _read_valid(gw: FileSystemGateway, rel: str) -> tuple[dict[str, str] | None, str | None]:
    """``(props, None)`` when ``rel`` holds a valid file, ``(None, why)`` when it holds an
    invalid one, ``(None, None)`` when it does not exist."""
    data = _read_if_exists(gw, rel)
    if data is None:
        return None, None
    if not data.strip():
        return None, "it is empty"
    props = decode(data)
    why = problem(props)
    return (None, why) if why else (props, None)


def load(gw: FileSystemGateway) -> dict[str, str]:
    """The table's properties: ``hoodie.properties`` if valid, else a valid backup.

    Raises :class:`TableNotFoundError` when neither file exists and
    :class:`CorruptFileError` naming each file and what is wrong when none is valid.
    """
    problems = []
    for rel in (PROPERTIES_FILE, BACKUP_FILE):
        props, why = _read_valid(gw, rel)
        if props is not None:
            return props
        if why is not None:
            problems.append(f"{gw.abs_path(rel)}: {why}")
    if not problems:
        where = gw.abs_path("")
        raise TableNotFoundError(f"no Hudi table at {where} (missing {PROPERTIES_FILE})")
    raise CorruptFileError(
        "the table config is damaged and no valid backup exists; restore "
        f"{PROPERTIES_FILE} from a copy ({'; '.join(problems)})"
    )


def recover(gw: FileSystemGateway) -> dict[str, str]:
    """Repair an interrupted rewrite before writing (Hudi's ``recoverIfNeeded``); returns the
    valid properties.

    A missing or invalid ``hoodie.properties`` is replaced by a valid backup; a left-over
    backup is removed once the file is valid. With no valid file at all,
    :class:`CorruptFileError` (or :class:`TableNotFoundError`) is raised and nothing changes.
    """
    props, _ = _read_valid(gw, PROPERTIES_FILE)
    if props is None:
        backup, _ = _read_valid(gw, BACKUP_FILE)
        if backup is None:
            load(gw)  # raises, naming both files
            raise AssertionError("unreachable")  # pragma: no cover
        gw.write_bytes(PROPERTIES_FILE, gw.read_bytes(BACKUP_FILE))
        props = backup
    gw.delete_file(BACKUP_FILE)
    return props


#: Keys that make Hudi's readers list files through the metadata table. Only the partitions
#: hudilite/metadata keeps exact may be listed (``store(metadata_partitions=)``); otherwise it
#: never writes them non-empty (as Hudi's ``clearMetadataPartitions``
#: leaves them): a file the metadata table does not list would not exist for those readers.
#: See :mod:`hudilite.write.metadata_guard`, which also removes the table itself.
METADATA_PARTITION_KEYS = cfg.METADATA_PARTITION_KEYS


def _stamped(
    props: Mapping[str, str], metadata_partitions: str = ""
) -> tuple[dict[str, str], bytes]:
    stored = {k: v for k, v in props.items() if k != CHECKSUM_KEY}
    for key in METADATA_PARTITION_KEYS:
        if key in stored:
            stored[key] = ""
    if metadata_partitions:
        stored[METADATA_PARTITION_KEYS[0]] = metadata_partitions
    stored[CHECKSUM_KEY] = checksum(stored)
    cfg.TableConfig.from_properties(stored)  # never write a file no reader can load
    comment = f"Updated at {datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z"
    return stored, encode(stored, comment)


def _verify(gw: FileSystemGateway, stored: Mapping[str, str]) -> bool:
    data = _read_if_exists(gw, PROPERTIES_FILE)
    return data is not None and decode(data) == dict(stored)


def create(gw: FileSystemGateway, props: Mapping[str, str]) -> dict[str, str]:
    """Write the first ``hoodie.properties`` of a new table (checksum recomputed); returns
    what was stored. Raises :class:`TableExistsError` when one exists already."""
    stored, data = _stamped(props)
    if not gw.create_exclusive(PROPERTIES_FILE, data):
        raise TableExistsError(f"a Hudi table already exists at {gw.abs_path('')}")
    if not _verify(gw, stored):
        gw.delete_file(PROPERTIES_FILE)
        raise CorruptFileError(f"{gw.abs_path(PROPERTIES_FILE)} did not read back as written")
    return stored


def store(
    gw: FileSystemGateway, props: Mapping[str, str], *, metadata_partitions: str = ""
) -> dict[str, str]:
    """Replace ``hoodie.properties`` with ``props`` (checksum recomputed); returns what was
    stored. The caller holds the table lock. The metadata partitions keys are written empty,
    except ``hoodie.table.metadata.partitions`` = ``metadata_partitions`` when given: only
    :mod:`hudilite.metadata`, which keeps those partitions exact, passes it.

    Readers see the old or the new file at every moment (the backup covers the rewrite).
    Raises :class:`CorruptFileError` when the new file does not read back as written; the
    old file is restored then.
    """
    stored, data = _stamped(props, metadata_partitions)
    recover(gw)
    gw.write_bytes(BACKUP_FILE, gw.read_bytes(PROPERTIES_FILE))
    gw.write_bytes(PROPERTIES_FILE, data)
    if not _verify(gw, stored):
        # Readers fall back to the backup meanwhile; put the old file back, not a bad one.
        gw.write_bytes(PROPERTIES_FILE, gw.read_bytes(BACKUP_FILE))
        gw.delete_file(BACKUP_FILE)
        raise CorruptFileError(
            f"{gw.abs_path(PROPERTIES_FILE)} did not read back with its checksum and keys; "
            "the previous file was restored"
        )
    gw.delete_file(BACKUP_FILE)
    return stored


def read_write_defaults(gw: FileSystemGateway) -> dict[str, str]:
    """The table's stored write options (:data:`WRITE_DEFAULTS_FILE`), ``{}`` when absent;
    decoded as ``hoodie.properties`` is. The one reader of the file (table state, the lock
    settings, SHOW TBLPROPERTIES and the property changes call it)."""
    data = _read_if_exists(gw, WRITE_DEFAULTS_FILE)
    return {} if data is None else decode(data)


def _read_if_exists(gw: FileSystemGateway, rel: str) -> bytes | None:
    # A concurrent rewrite may remove the file between the check and the read.
    if not gw.exists(rel):
        return None
    try:
        return gw.read_bytes(rel)
    except FileNotFoundError:
        return None
