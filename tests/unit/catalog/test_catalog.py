"""The warehouse catalog: persistence, registration of real tables, errors, concurrency."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hudilite import config as cfg
from hudilite.catalog import (
    Catalog,
    CatalogError,
    DatabaseExistsError,
    DatabaseNotEmptyError,
    DatabaseNotFoundError,
    InvalidNameError,
    TableEntry,
    default_warehouse,
)
from hudilite.errors import HudiliteError, TableExistsError, TableNotFoundError
from hudilite.storage.fs import FileSystemGateway
from hudilite.tablestate.state import PROPERTIES_FILE

REPO_ROOT = Path(__file__).resolve().parents[3]


def make_hudi_table(path: str | Path, name: str = "trips") -> str:
    """A hudilite table without Spark: ``.hoodie`` folders plus ``hoodie.properties``."""
    config = cfg.TableConfig.new(
        name=name,
        record_key_fields=("uuid",),
        partition_fields=("city",),
        ordering_fields=("ts",),
        hive_style=True,
    )
    gw = FileSystemGateway(str(path))
    for d in (".hoodie", ".hoodie/.aux", ".hoodie/.temp", ".hoodie/archived"):
        gw.mkdirs(d)
    gw.write_bytes(PROPERTIES_FILE, config.render().encode())
    return gw.abs_path("")


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    return tmp_path / "wh"


@pytest.fixture
def cat(wh: Path) -> Catalog:
    return Catalog(str(wh))


def create_managed(cat: Catalog, db: str, name: str, **kw: object) -> TableEntry:
    return cat.create_table(db, name, make_hudi_table, **kw)


# ---- databases ---------------------------------------------------------------------------


def test_default_database_always_exists(cat: Catalog) -> None:
    assert cat.database_exists("default")
    assert cat.database_exists("DEFAULT")
    assert cat.list_databases() == ["default"]
    assert cat.list_tables("default") == []
    with pytest.raises(DatabaseExistsError, match=r"^database default already exists$"):
        cat.create_database("default")
    cat.create_database("default", if_not_exists=True)
    with pytest.raises(CatalogError, match="cannot drop the default database"):
        cat.drop_database("default")


def test_create_and_drop_database(cat: Catalog, wh: Path) -> None:
    entry = cat.create_database("Sales", comment="money")
    assert entry.name == "sales"
    assert entry.location == str(wh / "sales.db")
    assert cat.list_databases() == ["default", "sales"]
    assert (wh / "_catalog" / "sales" / "_database.json").is_file()
    with pytest.raises(DatabaseExistsError, match=r"^database sales already exists$"):
        cat.create_database("SALES")
    assert cat.create_database("sales", if_not_exists=True).comment == "money"
    assert cat.drop_database("sales")
    assert not cat.database_exists("sales")
    assert cat.list_databases() == ["default"]
    with pytest.raises(DatabaseNotFoundError, match=r"^database sales does not exist$"):
        cat.drop_database("sales")
    assert cat.drop_database("sales", if_exists=True) is False


def test_drop_non_empty_database_needs_cascade(cat: Catalog, wh: Path, tmp_path: Path) -> None:
    cat.create_database("s")
    managed = create_managed(cat, "s", "t1")
    ext_loc = make_hudi_table(tmp_path / "ext")
    cat.register_table("s", "t2", ext_loc)
    with pytest.raises(
        DatabaseNotEmptyError, match=r"database s is not empty \(2 tables: t1, t2\)"
    ):
        cat.drop_database("s")
    assert cat.drop_database("s", cascade=True)
    assert not cat.database_exists("s")
    assert not Path(managed.location).exists()
    assert Path(ext_loc, PROPERTIES_FILE).is_file()  # external data is kept
    assert not (wh / "s.db").exists()


def test_unknown_database_errors(cat: Catalog) -> None:
    with pytest.raises(DatabaseNotFoundError, match=r"^database nope does not exist$"):
        cat.list_tables("nope")
    with pytest.raises(DatabaseNotFoundError, match=r"^database nope does not exist$"):
        cat.get_table("nope", "t")
    with pytest.raises(DatabaseNotFoundError, match=r"^database nope does not exist$"):
        create_managed(cat, "nope", "t")
    assert not cat.table_exists("nope", "t")
    assert cat.drop_table("nope", "t", if_exists=True) is False


def test_errors_are_hudilite_errors() -> None:
    for err in (DatabaseNotFoundError, DatabaseExistsError, InvalidNameError, CatalogError):
        assert issubclass(err, HudiliteError)


# ---- tables --------------------------------------------------------------------------------


def test_managed_table_layout_and_entry(cat: Catalog, wh: Path) -> None:
    entry = create_managed(cat, "default", "Trips", properties={"primaryKey": "uuid"})
    assert entry.name == "trips" and entry.database == "default"
    assert entry.qualified_name == "default.trips"
    assert (
        entry.location
        == cat.default_location("default", "trips")
        == str(wh / "default.db" / "trips")
    )
    assert not entry.external and entry.managed
    assert (wh / "default.db" / "trips" / ".hoodie" / "hoodie.properties").is_file()
    doc = json.loads((wh / "_catalog" / "default" / "tables" / "trips.json").read_text())
    assert doc["name"] == "trips"
    assert doc["database"] == "default"
    assert doc["external"] is False
    assert doc["properties"] == {"primaryKey": "uuid"}
    assert doc["created_at"].endswith("Z")
    assert cat.list_tables("default") == ["trips"]
    assert cat.table_config("default", "TRIPS").record_key_fields == ("uuid",)


def test_persistence_across_instances(wh: Path) -> None:
    first = Catalog(str(wh))
    first.create_database("s")
    create_managed(first, "s", "t", properties={"type": "mor"})
    second = Catalog(str(wh))
    assert second.list_databases() == ["default", "s"]
    assert second.list_tables("s") == ["t"]
    assert second.get_table("s", "t") == first.get_table("s", "t")
    assert second.get_table("s", "t").properties == {"type": "mor"}


def test_second_process_sees_table(cat: Catalog, wh: Path) -> None:
    create_managed(cat, "default", "trips")
    code = (
        "import sys; from hudilite.catalog import Catalog; c = Catalog(sys.argv[1]); "
        "e = c.get_table('default', 'TRIPS'); print(e.qualified_name, e.location)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(wh)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    assert out.stdout.split() == ["default.trips", str(wh / "default.db" / "trips")]


def test_default_warehouse_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HUDILITE_WAREHOUSE", str(tmp_path / "envwh"))
    assert default_warehouse() == str(tmp_path / "envwh")
    assert Catalog().warehouse == str(tmp_path / "envwh")
    monkeypatch.delenv("HUDILITE_WAREHOUSE")
    assert default_warehouse() == "./hudilite-warehouse"


def test_table_errors_have_exact_messages(cat: Catalog) -> None:
    with pytest.raises(TableNotFoundError, match=r"^table default\.trips does not exist$"):
        cat.get_table("default", "Trips")
    with pytest.raises(TableNotFoundError, match=r"^table default\.trips does not exist$"):
        cat.drop_table("default", "trips")
    with pytest.raises(TableNotFoundError, match=r"^table default\.trips does not exist$"):
        cat.update_properties("default", "trips", {"a": "b"})
    create_managed(cat, "default", "trips")
    with pytest.raises(TableExistsError, match=r"^table default\.trips already exists$"):
        create_managed(cat, "default", "TRIPS")
    with pytest.raises(InvalidNameError, match=r"invalid table name 'bad-name'"):
        cat.table_exists("default", "bad-name")
    with pytest.raises(InvalidNameError, match=r"invalid database name '1db'"):
        cat.create_database("1db")
    with pytest.raises(InvalidNameError, match=r"invalid table name ''"):
        create_managed(cat, "default", "")


def test_create_if_not_exists_returns_existing(cat: Catalog) -> None:
    first = create_managed(cat, "default", "t", properties={"a": "1"})
    calls: list[str] = []
    again = cat.create_table(
        "default", "t", calls.append, properties={"a": "2"}, if_not_exists=True
    )
    assert again == first and calls == []


def test_failed_create_leaves_no_entry(cat: Catalog) -> None:
    def boom(location: str) -> None:
        raise ValueError("bad schema")

    with pytest.raises(ValueError, match="bad schema"):
        cat.create_table("default", "t", boom)
    assert not cat.table_exists("default", "t")


def test_external_create_at_location(cat: Catalog, tmp_path: Path) -> None:
    loc = tmp_path / "elsewhere"
    entry = cat.create_table("default", "ext", make_hudi_table, location=str(loc))
    assert entry.external and entry.location == str(loc)
    assert (loc / PROPERTIES_FILE).is_file()
    # a table already at the location must be registered, not created over
    with pytest.raises(TableExistsError, match="a Hudi table already exists at"):
        cat.create_table("default", "ext2", make_hudi_table, location=str(loc))


def test_table_named_like_catalog_files(cat: Catalog) -> None:
    cat.create_database("_catalog")
    create_managed(cat, "_catalog", "_database")
    create_managed(cat, "default", "tables")
    assert cat.list_tables("_catalog") == ["_database"]
    assert cat.list_tables("default") == ["tables"]
    assert cat.list_databases() == ["_catalog", "default"]


def test_case_insensitive_names(cat: Catalog) -> None:
    cat.create_database("MyDb")
    create_managed(cat, "MYDB", "MyTable")
    assert cat.table_exists("mydb", "mytable")
    assert cat.table_exists("MyDb", "MYTABLE")
    assert cat.list_tables("mYdB") == ["mytable"]
    assert cat.get_table("MYDB", "mytable").name == "mytable"


# ---- registration of existing tables -----------------------------------------------------


def test_register_hudilite_table(cat: Catalog, tmp_path: Path) -> None:
    loc = make_hudi_table(tmp_path / "data" / "orders", name="orders")
    entry = cat.register_table("default", "orders", loc, properties={"x": "y"})
    assert entry.external and entry.location == loc
    assert cat.table_config("default", "orders").name == "orders"
    with pytest.raises(TableExistsError, match=r"^table default\.orders already exists$"):
        cat.register_table("default", "orders", loc)
    assert cat.register_table("default", "orders", loc, if_not_exists=True) == entry


def test_register_requires_hudi_table(cat: Catalog, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(
        TableNotFoundError, match=r"cannot register table default\.t: no Hudi table at .*empty"
    ):
        cat.register_table("default", "t", str(empty))
    assert not cat.table_exists("default", "t")


@pytest.mark.parametrize(
    "fixture",
    [
        "sample_table/cow/v6_complexkeygen_hivestyle.zip",
        "sample_table/cow/v8_nonpartitioned.zip",
        "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    ],
)
def test_register_real_hudi_table(cat: Catalog, shared_fixture, fixture: str) -> None:
    base = shared_fixture(fixture)
    entry = cat.register_table("default", "real", str(base))
    assert entry.location == str(base)
    config = cat.table_config("default", "real")
    # the table's own Hudi config stays the truth; registering changes nothing on disk
    assert config.name
    assert config.table_type in ("COPY_ON_WRITE", "MERGE_ON_READ")
    assert Catalog(cat.warehouse).get_table("default", "REAL") == entry


# ---- drop, rename, properties -------------------------------------------------------------


def test_drop_managed_deletes_data(cat: Catalog) -> None:
    entry = create_managed(cat, "default", "t")
    assert cat.drop_table("default", "T")
    assert not cat.table_exists("default", "t")
    assert not Path(entry.location).exists()
    assert cat.drop_table("default", "t", if_exists=True) is False
    # the name and the folder can be reused
    create_managed(cat, "default", "t")
    assert cat.table_exists("default", "t")


def test_drop_external_keeps_data_unless_purge(cat: Catalog, tmp_path: Path) -> None:
    loc = make_hudi_table(tmp_path / "ext")
    cat.register_table("default", "e", loc)
    assert cat.drop_table("default", "e")
    assert Path(loc, PROPERTIES_FILE).is_file()
    cat.register_table("default", "e", loc)
    assert cat.drop_table("default", "e", purge=True)
    assert not Path(loc).exists()
    assert not cat.table_exists("default", "e")


def test_rename_keeps_data_folder(cat: Catalog) -> None:
    entry = create_managed(cat, "default", "old", properties={"k": "v"})
    renamed = cat.rename_table("default", "OLD", "New")
    assert renamed.name == "new"
    assert renamed.location == entry.location
    assert renamed.properties == {"k": "v"}
    assert renamed.created_at == entry.created_at
    assert cat.list_tables("default") == ["new"]
    assert not cat.table_exists("default", "old")
    with pytest.raises(TableNotFoundError, match=r"^table default\.old does not exist$"):
        cat.rename_table("default", "old", "x")
    create_managed(cat, "default", "other")
    with pytest.raises(TableExistsError, match=r"^table default\.other already exists$"):
        cat.rename_table("default", "new", "other")
    # the old managed folder is still in use by the renamed table
    with pytest.raises(TableExistsError, match=r"cannot create table default\.old"):
        create_managed(cat, "default", "old")
    assert cat.table_config("default", "new").name == "trips"


def test_update_properties(cat: Catalog) -> None:
    create_managed(cat, "default", "t", properties={"a": "1", "b": "2"})
    updated = cat.update_properties("default", "t", {"a": "10", "c": "3", "b": None})
    assert updated.properties == {"a": "10", "c": "3"}
    assert Catalog(cat.warehouse).get_table("default", "t").properties == {"a": "10", "c": "3"}


# ---- concurrency -------------------------------------------------------------------------


def _race(n: int, fn) -> tuple[list[object], list[BaseException]]:
    barrier = threading.Barrier(n)
    results: list[object] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        barrier.wait()
        try:
            r = fn(i)
            with lock:
                results.append(r)
        except BaseException as e:
            with lock:
                errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def test_concurrent_create_same_table_one_wins(cat: Catalog) -> None:
    created: list[str] = []

    def create(i: int) -> TableEntry:
        def make(location: str) -> None:
            created.append(str(i))
            make_hudi_table(location)

        return cat.create_table("default", "t", make, properties={"by": str(i)})

    for _ in range(5):
        results, errors = _race(2, create)
        assert len(results) == 1, errors
        assert len(errors) == 1 and isinstance(errors[0], TableExistsError)
        assert len(created) == 1
        assert cat.get_table("default", "t") == results[0]
        cat.drop_table("default", "t")
        created.clear()


def test_concurrent_register_same_table_one_wins(cat: Catalog, tmp_path: Path) -> None:
    loc = make_hudi_table(tmp_path / "ext")
    results, errors = _race(4, lambda i: cat.register_table("default", "e", loc))
    assert len(results) == 1
    assert len(errors) == 3 and all(isinstance(e, TableExistsError) for e in errors)


def test_concurrent_create_database_one_wins(cat: Catalog) -> None:
    results, errors = _race(4, lambda i: cat.create_database("d"))
    assert len(results) == 1
    assert len(errors) == 3 and all(isinstance(e, DatabaseExistsError) for e in errors)


# ---- relative locations (a copied or moved warehouse uses its own files) -----------------


def test_locations_inside_the_warehouse_are_stored_relative(
    cat: Catalog, wh: Path, tmp_path: Path
) -> None:
    cat.create_database("s")
    create_managed(cat, "s", "t")
    ext = cat.register_table("s", "ext", make_hudi_table(tmp_path / "ext"))
    db_doc = json.loads((wh / "_catalog" / "s" / "_database.json").read_text())
    doc = json.loads((wh / "_catalog" / "s" / "tables" / "t.json").read_text())
    ext_doc = json.loads((wh / "_catalog" / "s" / "tables" / "ext.json").read_text())
    assert db_doc["location"] == "s.db"
    assert doc["location"] == "s.db/t"
    assert ext_doc["location"] == ext.location == str(tmp_path / "ext")  # external: absolute
    cat.update_properties("s", "t", {"k": "v"})
    cat.rename_table("s", "t", "t2")
    doc = json.loads((wh / "_catalog" / "s" / "tables" / "t2.json").read_text())
    assert doc["location"] == "s.db/t"
    assert cat.get_table("s", "t2").location == str(wh / "s.db" / "t")


def test_copied_warehouse_uses_its_own_tables(cat: Catalog, wh: Path, tmp_path: Path) -> None:
    import shutil

    cat.create_database("s")
    create_managed(cat, "s", "t")
    create_managed(cat, "default", "u")
    copy = tmp_path / "copy"
    shutil.copytree(wh, copy)
    other = Catalog(str(copy))
    assert other.get_table("s", "t").location == str(copy / "s.db" / "t")
    assert other.get_table("default", "u").location == str(copy / "default.db" / "u")
    assert other.database_location("s") == str(copy / "s.db")
    assert other.default_location("s", "new") == str(copy / "s.db" / "new")


def test_old_absolute_entries_of_a_copied_warehouse(cat: Catalog, wh: Path, tmp_path: Path) -> None:
    """Entries written with absolute paths (older catalogs): a managed location that ends in
    its default place is read from the copy; an external one stays where it points."""
    import shutil

    cat.create_database("s")
    create_managed(cat, "s", "t")
    ext = cat.register_table("s", "ext", make_hudi_table(tmp_path / "ext"))
    for f, loc in [
        (wh / "_catalog" / "s" / "_database.json", str(wh / "s.db")),
        (wh / "_catalog" / "s" / "tables" / "t.json", str(wh / "s.db" / "t")),
    ]:
        doc = json.loads(f.read_text())
        doc["location"] = loc
        f.write_text(json.dumps(doc))
    assert cat.get_table("s", "t").location == str(wh / "s.db" / "t")
    copy = tmp_path / "copy"
    shutil.copytree(wh, copy)
    other = Catalog(str(copy))
    assert other.get_table("s", "t").location == str(copy / "s.db" / "t")
    assert other.database_location("s") == str(copy / "s.db")
    assert other.get_table("s", "ext").location == ext.location


def test_purge_deletes_only_the_tables_own_files(cat: Catalog, tmp_path: Path) -> None:
    # Issue 26: PURGE of a table at a LOCATION inside a shared folder deleted the folder,
    # other files included. Only .hoodie/ and the table's partition files go.
    shared = tmp_path / "shared"
    loc = shared / "t"
    make_hudi_table(loc)
    table_files = [
        "city=sf/.hoodie_partition_metadata",
        "city=sf/f1-0_0-1-2_20240101000000000.parquet",
        "city=sf/.f1-0_0-1-2_20240101000000000.parquet.crc",
        "city=sf/.f1-0_20240101000000000.log.1_0-1-2",
        "city=la/.hoodie_partition_metadata",
        "city=la/f2-0_0-1-2_20240101000000000.parquet",
        ".hoodie/20240101000000000.commit",
    ]
    others = [
        "../notes.txt",  # beside the location
        "README.md",  # inside the location, beside the partitions
        "city=sf/keep.csv",  # inside a partition folder, not a Hudi file
        "reports/2024.parquet",  # a folder without partition metadata
        "nested/.hoodie/hoodie.properties",  # another table's base path inside it
        "nested/city=ny/.hoodie_partition_metadata",
        "nested/city=ny/f3-0_0-1-2_20240101000000000.parquet",
    ]
    for rel in table_files + others:
        (loc / rel).parent.mkdir(parents=True, exist_ok=True)
        (loc / rel).write_bytes(b"x")
    cat.register_table("default", "e", str(loc))
    assert cat.drop_table("default", "e", purge=True)
    left = sorted(str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file())
    assert left == sorted(
        [
            "notes.txt",
            "t/README.md",
            "t/city=sf/keep.csv",
            "t/nested/.hoodie/hoodie.properties",
            "t/nested/city=ny/.hoodie_partition_metadata",
            "t/nested/city=ny/f3-0_0-1-2_20240101000000000.parquet",
            "t/reports/2024.parquet",
        ]
    )
    assert not (loc / ".hoodie").exists() and not (loc / "city=la").exists()


def test_purge_of_a_table_alone_at_its_location_removes_the_folder(
    cat: Catalog, tmp_path: Path
) -> None:
    loc = tmp_path / "t"
    make_hudi_table(loc)
    (loc / "p=1").mkdir()
    (loc / "p=1" / ".hoodie_partition_metadata").write_bytes(b"x")
    (loc / "p=1" / "f1-0_0-1-2_20240101000000000.parquet").write_bytes(b"x")
    cat.register_table("default", "e", str(loc))
    assert cat.drop_table("default", "e", purge=True)
    assert not loc.exists() and tmp_path.exists()


def test_relative_locations_are_refused(
    cat: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 26: a relative LOCATION resolved against the working directory of the process
    # running the statement (a SQL server's, not the client's).
    monkeypatch.chdir(tmp_path)
    message = (
        f"LOCATION 'data/t' is a relative path, which would resolve against this process's "
        f"working directory ({tmp_path}); give an absolute path or a URI"
    )
    with pytest.raises(CatalogError) as err:
        cat.create_table("default", "t", make_hudi_table, location="data/t")
    assert str(err.value) == message
    with pytest.raises(CatalogError, match="LOCATION 'data/t' is a relative path"):
        cat.register_table("default", "t", "data/t")
    with pytest.raises(CatalogError, match="LOCATION 'dbs' is a relative path"):
        cat.create_database("d", location="dbs")
    assert not (tmp_path / "data").exists() and not cat.table_exists("default", "t")
    # Absolute paths and file: URIs are taken as they are.
    entry = cat.create_table("default", "t", make_hudi_table, location=f"file:{tmp_path}/a")
    assert entry.location == str(tmp_path / "a")
