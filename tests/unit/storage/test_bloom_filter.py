"""Hudi's bloom filters byte for byte: the filters Hudi wrote into the fixture tables'
footers deserialize, answer for every key of their file, and re-serialize to the identical
string; filters hudilite builds from the same keys are identical, and ours round-trip."""

from __future__ import annotations

import base64
import random
import uuid
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudilite import config as cfg
from hudilite.index.bloom_index import bloom_config, lookup_keys
from hudilite.storage import bloom_filter as bf
from hudilite.storage.fs import FileSystemGateway
from hudilite.storage.parquet_io import read_bloom_filter, read_footer, write_base_file
from tests.conftest import fixture_id, fixture_zips

ZIPS = fixture_zips()


def _base_files(zip_path: Path, dest: Path) -> list[Path]:
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(dest)
    return sorted(
        p
        for p in dest.rglob("*.parquet")
        if ".hoodie" not in p.parts and "__MACOSX" not in p.parts and not p.name.startswith("._")
    )


@pytest.mark.skipif(not ZIPS, reason="../shared/fixtures is absent")
@pytest.mark.parametrize("zip_path", ZIPS, ids=[fixture_id(z) for z in ZIPS])
def test_fixture_filters_deserialize_answer_and_reserialize(zip_path, tmp_path):
    files = _base_files(zip_path, tmp_path)
    if not files:
        pytest.skip("no base files")
    rng = random.Random(7)
    for path in files:
        pf = pq.ParquetFile(path)
        footer = {k.decode(): v.decode() for k, v in (pf.metadata.metadata or {}).items()}
        assert footer.get(bf.BLOOM_FILTER_TYPE_CODE_FOOTER) == bf.DYNAMIC_V0, path
        text = footer[bf.BLOOM_FILTER_FOOTER]
        filt = bf.from_footer(footer)
        assert isinstance(filt, bf.DynamicBloomFilter)
        # Hudi's defaults: 60000 entries at fpp 1e-9 -> 2587966 bits, 30 MurmurHash hashes.
        assert (filt.vector_size, filt.nb_hash, filt.hash_type) == (2587966, 30, bf.MURMUR_HASH)
        assert filt.serialize() == text, f"{path}: re-serialized filter differs"
        keys = pf.read(columns=["_hoodie_record_key"]).column(0)
        assert filt.current_nb_record == len(keys)
        assert filt.might_contain_many(keys).all(), path
        others = [f"not-a-key-{rng.random()}" for _ in range(500)]
        assert filt.might_contain_many(others).sum() <= 1
        # Built by hudilite from the file's keys (in file order): the very same bytes.
        assert bf.build(bf.BloomConfig(), [keys]).serialize() == text, path


def test_murmur_matches_scalar_reference_for_all_tail_lengths_and_non_ascii():
    keys = [
        "a",
        "ab",
        "abc",
        "abcd",
        "abcde",
        "é",
        "ü€",
        "日本語キー",
        "x" * 37,
        "id:1,name:Ünïcode",
    ]
    vec = bf.key_positions(keys, 1000003, 7)
    for row, key in zip(vec, keys, strict=True):
        init, expect = 0, []
        for _ in range(7):
            init = bf.murmur_hash(key.encode("utf-8"), init)
            expect.append(abs(int(np.fmod(init, 1000003))))
        assert list(row) == expect, key


def test_known_hadoop_murmur_values():
    # Values of org.apache.hadoop.util.hash.MurmurHash, worked by hand from its source:
    # the empty input with seed 0 is 0 (h = 0 ^ 0, then only multiplies and shifts of 0).
    assert bf.murmur_hash(b"", 0) == 0
    # A high tail byte is sign-extended, as Java's byte is: differs from the unsigned reading.
    assert bf.murmur_hash(b"\xff", 0) != bf.murmur_hash(b"\x7f", 0)


@pytest.mark.parametrize("kind", [bf.SIMPLE, bf.DYNAMIC_V0])
def test_our_filters_round_trip(kind):
    config = bf.BloomConfig(filter_type=kind, num_entries=200, fpp=0.001, dynamic_max_entries=500)
    keys = [str(uuid.uuid4()) for _ in range(1300)]
    filt = config.new_filter()
    filt.add(keys[:700])
    filt.add(pa.chunked_array([keys[700:1000], keys[1000:]]))
    text = filt.serialize()
    back = bf.deserialize(text, filt.footer().get(bf.BLOOM_FILTER_TYPE_CODE_FOOTER))
    assert type(back) is type(filt)
    assert back.serialize() == text
    assert back.might_contain_many(keys).all()
    if kind == bf.DYNAMIC_V0:
        # Rows of 200 keys up to 500 keys (3 rows), then round-robin past the bound.
        assert len(filt.matrix) == 3
        assert filt.current_nb_record == 1300 - 2 * 200
        assert bf.BLOOM_FILTER_TYPE_CODE_FOOTER in filt.footer()
    else:
        assert bf.BLOOM_FILTER_TYPE_CODE_FOOTER not in filt.footer()


def test_false_positive_rate_near_the_configured_one():
    keys = [str(uuid.uuid4()) for _ in range(2000)]
    for kind in (bf.SIMPLE, bf.DYNAMIC_V0):
        filt = bf.build(bf.BloomConfig(kind, num_entries=2000, fpp=0.001), [pa.array(keys)])
        others = [str(uuid.uuid4()) for _ in range(20000)]
        assert filt.might_contain_many(others).mean() < 0.005


def test_dynamic_rows_match_hudi_state_machine_key_by_key():
    """Adding in batches gives the rows InternalDynamicBloomFilter.add gives key by key."""

    def java_rows(n: int, nr: int, max_nr: int) -> list[int]:
        rows, cur, nrows, reached, idx = [], 0, 1, False, 0
        for _ in range(n):
            if reached:
                r = idx % nrows
                idx += 1
            elif cur >= nr and nrows * nr < max_nr:
                nrows += 1
                cur = 0
                r = nrows - 1
            elif cur >= nr:
                reached = True
                r = 0
            else:
                r = nrows - 1
            rows.append(r)
            cur += 1
        return rows

    for nr, max_nr, sizes in [(3, 10, [1, 5, 7, 2]), (4, 4, [9, 3]), (5, 100, [50])]:
        f = bf.DynamicBloomFilter(64, 2, nr, max_nr)
        got: list[int] = []
        for size in sizes:
            got.extend(f._rows_for(size).tolist())
        assert got == java_rows(sum(sizes), nr, max_nr)


def test_writer_footer_carries_the_configured_filter(tmp_path):
    gw = FileSystemGateway(str(tmp_path))
    keys = [f"k{i:05d}" for i in range(300)]
    table = pa.table({"_hoodie_record_key": keys, "v": list(range(300))})
    opts = cfg.Options(
        {
            "hoodie.bloom.index.filter.type": "SIMPLE",
            "hoodie.index.bloom.num_entries": "1000",
            "hoodie.index.bloom.fpp": "0.0001",
        }
    )
    write_base_file(gw, "a.parquet", table, bloom=bloom_config(opts))
    footer = read_footer(gw, "a.parquet")
    assert bf.BLOOM_FILTER_TYPE_CODE_FOOTER not in footer  # SIMPLE: no type code, as Hudi
    filt = read_bloom_filter(gw, "a.parquet")
    assert isinstance(filt, bf.SimpleBloomFilter)
    assert filt.vector_size == bf.bit_size(1000, 0.0001)
    assert filt.might_contain_many(keys).all()
    write_base_file(gw, "b.parquet", table)  # default: Hudi's DYNAMIC_V0
    footer = read_footer(gw, "b.parquet")
    assert footer[bf.BLOOM_FILTER_TYPE_CODE_FOOTER] == bf.DYNAMIC_V0
    assert (
        footer[bf.BLOOM_FILTER_FOOTER] == bf.build(bf.BloomConfig(), [pa.array(keys)]).serialize()
    )
    assert base64.b64decode(footer[bf.BLOOM_FILTER_FOOTER])[:4] == b"\xff\xff\xff\xff"
    found, read = lookup_keys(gw, "b.parquet", pa.array(["k00001", "nope", "k00299"]))
    assert read and found.to_pylist() == ["k00001", "k00299"]
    found, read = lookup_keys(gw, "b.parquet", pa.array([f"zz{i}" for i in range(50)]))
    assert not read and len(found) == 0


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, ("SIMPLE", False, True)),
        ({"hoodie.index.type": "bloom"}, ("BLOOM", False, True)),
        ({"hoodie.index.type": "GLOBAL_SIMPLE"}, ("SIMPLE", True, True)),
        (
            {
                "hoodie.index.type": "GLOBAL_SIMPLE",
                "hoodie.simple.index.update.partition.path": "false",
            },
            ("SIMPLE", True, False),
        ),
        (
            {
                "hoodie.index.type": "GLOBAL_BLOOM",
                "hoodie.bloom.index.update.partition.path": "false",
            },
            ("BLOOM", True, False),
        ),
        ({"index.global.enabled": "true"}, ("SIMPLE", True, True)),
        (
            {"hoodie.index.type": "GLOBAL_BLOOM", "index.global.enabled": "false"},
            ("BLOOM", False, True),
        ),
        ({"hoodie.index.type": "BUCKET", "index.global.enabled": "true"}, ("BUCKET", False, True)),
    ],
)
def test_index_settings(raw, expected):
    from hudilite.index.bloom_index import index_settings

    s = index_settings(cfg.Options(raw))
    assert (s.kind, s.is_global, s.update_partition_path) == expected


@pytest.mark.parametrize(
    ("kind", "first", "more"),
    [
        (bf.SIMPLE, 700, 600),
        (bf.DYNAMIC_V0, 150, 30),  # still in the first row
        (bf.DYNAMIC_V0, 150, 300),  # opens rows, then passes the 500-key bound
        (bf.DYNAMIC_V0, 700, 200),  # stored already past the bound
    ],
)
def test_a_resumed_filter_equals_one_built_from_all_keys(kind, first, more):
    """A merge adds only new keys to the old file's filter: the same bytes as hashing all."""
    config = bf.BloomConfig(filter_type=kind, num_entries=200, fpp=0.001, dynamic_max_entries=500)
    keys = [str(uuid.uuid4()) for _ in range(first + more)]
    stored = bf.build(config, [pa.array(keys[:first])])
    read = bf.deserialize(stored.serialize(), stored.footer().get(bf.BLOOM_FILTER_TYPE_CODE_FOOTER))
    resumed = config.resume(read)
    assert resumed is not None
    resumed.add(pa.array(keys[first:]))
    fresh = bf.build(config, [pa.array(keys)])
    assert resumed.might_contain_many(keys).all()
    if kind == bf.SIMPLE or first + more <= 500:
        assert resumed.serialize() == fresh.serialize()
    else:  # past the bound rows are taken round-robin from a cursor Hudi does not store
        assert len(resumed.matrix) == len(fresh.matrix)
        assert resumed.current_nb_record == fresh.current_nb_record


@pytest.mark.parametrize(
    "other",
    [
        bf.BloomConfig(filter_type=bf.SIMPLE, num_entries=200, fpp=0.001),
        bf.BloomConfig(num_entries=300, fpp=0.001),
        bf.BloomConfig(num_entries=200, fpp=0.01),
    ],
)
def test_a_filter_of_other_parameters_is_not_resumed(other):
    config = bf.BloomConfig(num_entries=200, fpp=0.001)
    assert config.resume(other.new_filter()) is None


@pytest.mark.parametrize("kind", [bf.SIMPLE, bf.DYNAMIC_V0])
def test_large_adds_hash_in_chunks_with_the_same_result(kind):
    """An add or lookup of more keys than one hashing chunk gives the filter (and answers)
    that adding the keys a few at a time gives: the chunks are an implementation detail."""
    config = bf.BloomConfig(filter_type=kind, num_entries=20_000, fpp=1e-6)
    rng = random.Random(7)
    # Same-length keys (hashed as one block) and keys of many lengths, across chunks.
    keys = [str(uuid.uuid4()) for _ in range(bf._CHUNK + 5_000)]
    keys += ["k" * rng.randint(1, 40) + str(i) for i in range(bf._CHUNK // 2)]
    whole, pieces = config.new_filter(), config.new_filter()
    whole.add(pa.array(keys))
    for start in range(0, len(keys), 997):
        pieces.add(keys[start : start + 997])
    assert whole.serialize() == pieces.serialize()
    assert whole.might_contain_many(pa.array(keys)).all()
    assert len(whole.might_contain_many(pa.array(keys))) == len(keys)
    others = [str(uuid.uuid4()) for _ in range(bf._CHUNK + 100)]
    hits = whole.might_contain_many(others)
    assert len(hits) == len(others) and hits.mean() < 0.001
    assert whole.might_contain_many([]).shape == (0,)


def test_key_positions_same_length_block_equals_per_key_hashing():
    keys = [str(uuid.uuid4()) for _ in range(300)]
    block = bf.key_positions(pa.array(keys), 1_000_003, 5)
    one_by_one = np.vstack([bf.key_positions([k], 1_000_003, 5) for k in keys])
    assert np.array_equal(block, one_by_one)
    # Sliced arrays (a non-zero offset) hash their own keys, not the buffer's first ones.
    assert np.array_equal(
        bf.key_positions(pa.array(keys).slice(100, 50), 1_000_003, 5), block[100:150]
    )
