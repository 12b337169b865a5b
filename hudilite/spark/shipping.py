"""Ship the hudilite package to Spark executors that do not have it installed.

On a cluster the executors' Python needs hudilite's dependencies (pyarrow, fastavro,
pandas, sqlglot) but not hudilite itself: :func:`ship_package` zips the package the
driver imported and hands it to ``SparkContext.addPyFile``, so every Python worker puts
the zip on ``sys.path`` before it unpickles a hudilite function. The same zip works with
``spark-submit --py-files`` (:func:`build_package_zip`, or ``python -m
hudilite.spark.shipping DIR`` to write it from a shell).

The SQL layers live outside the ``hudilite/`` folder in the source tree (``sqlext/``,
``catalog/``, ``procedures/``, mapped to ``hudilite.sqlext`` ... by the package
configuration); the zip lays them out where the import system expects them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PACKAGE = "hudilite"
#: Subpackages that may live outside the package folder (``package-dir`` in pyproject.toml).
MAPPED_SUBPACKAGES = ("sqlext", "catalog", "procedures")

# A fixed timestamp makes the zip bytes a function of the sources alone.
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)
_SKIP_DIRS = frozenset({"__pycache__"})
_SKIP_SUFFIXES = (".pyc", ".pyo")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"cannot locate the package {name!r} to ship it")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def package_sources() -> dict[str, Path]:
    """Zip folder (``hudilite``, ``hudilite/sqlext``, ...) -> the source folder it comes from.

    Mapped subpackages that already sit inside the package folder (a regular, non-editable
    install) are covered by the package folder itself.
    """
    root = _package_dir(PACKAGE)
    sources = {PACKAGE: root}
    for sub in MAPPED_SUBPACKAGES:
        where = _package_dir(f"{PACKAGE}.{sub}")
        if not where.is_relative_to(root):
            sources[f"{PACKAGE}/{sub}"] = where
    return sources


def package_files() -> list[tuple[str, Path]]:
    """Every file of the package as ``(name in the zip, source path)``, sorted by name.

    Package data (the Avro schemas) is included; bytecode caches are not.
    """
    files: dict[str, Path] = {}
    sources = package_sources()
    mapped = {src for arc, src in sources.items() if arc != PACKAGE}
    for arc_root, src_root in sources.items():
        for dirpath, dirnames, filenames in os.walk(src_root):
            here = Path(dirpath)
            # A mapped subpackage's folder is zipped under its own name, once.
            dirnames[:] = sorted(
                d for d in dirnames if d not in _SKIP_DIRS and (here / d).resolve() not in mapped
            )
            for fname in filenames:
                if fname.endswith(_SKIP_SUFFIXES):
                    continue
                path = here / fname
                rel = path.relative_to(src_root).as_posix()
                files[f"{arc_root}/{rel}"] = path
    return sorted(files.items())


def _version() -> str:
    """The installed distribution's version (read from its metadata, not by importing the
    ``hudilite`` package, which imports this module's caller)."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "0"


def build_package_zip(dest_dir: str | os.PathLike[str] | None = None) -> str:
    """Write the hudilite package as a zip for ``addPyFile`` / ``--py-files``; return its path.

    The file is named after a hash of its contents (``hudilite-<version>-<hash>.zip``), so
    an unchanged package is not rewritten and a changed one never reuses a name Spark has
    already registered. ``dest_dir`` defaults to a per-user folder in the temp directory.
    """
    files = package_files()
    digest = hashlib.sha256()
    for arcname, path in files:
        data = path.read_bytes()
        digest.update(arcname.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    dest = Path(dest_dir) if dest_dir is not None else _default_dir()
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / f"{PACKAGE}-{_version()}-{digest.hexdigest()[:16]}.zip"
    if target.exists():
        return str(target)
    # Write aside and rename: concurrent drivers may build the same zip at once.
    fd, tmp = tempfile.mkstemp(prefix=".hudilite-", suffix=".zip.tmp", dir=dest)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
            for arcname, path in files:
                info = zipfile.ZipInfo(arcname, date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, path.read_bytes())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; executors may run as another user
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return str(target)


def _default_dir() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"hudilite-pyfiles-{uid}"


def imported_from_zip() -> str | None:
    """The archive the driver imported hudilite from (``--py-files``), or None."""
    spec = importlib.util.find_spec(PACKAGE)
    archive = getattr(spec.loader, "archive", None) if spec is not None else None
    return str(archive) if isinstance(archive, str) else None


def ship_package(spark: SparkSession, dest_dir: str | os.PathLike[str] | None = None) -> str:
    """Make the executors import hudilite from a zip of the driver's copy; return the zip path.

    A driver that itself imported hudilite from a zip (``spark-submit --py-files``) ships
    that zip. Idempotent per SparkContext: a zip already added is not added again.
    """
    path = imported_from_zip() or build_package_zip(dest_dir)
    sc = spark.sparkContext
    if os.path.basename(path) not in getattr(sc, "_python_includes", []):
        sc.addPyFile(path)
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m hudilite.spark.shipping [DIR]``: write the zip and print its path."""
    args = sys.argv[1:] if argv is None else argv
    print(build_package_zip(args[0] if args else "."))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
