"""Partition values never make a path outside the table, into ``.hoodie`` or no reader finds.

Issue 9 item 4: with non-hive-style paths the values ``..``, ``../../outside`` and ``.hoodie``
wrote files outside the table or into its metadata folder, and a value with ``\\`` poisoned
every later read. Hudi (``PartitionPathEncodeUtils.validateNoPathTraversal``) refuses ``..``
segments whatever the URL-encoding; hudilite also refuses the other segments no reader lists.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.errors import KeyGenerationError
from hudilite.keygen import (
    COMPLEX,
    SIMPLE,
    KeyGenSpec,
    escape_path_name,
    partition_paths,
    partition_values,
)


def spec(hive: bool = False, encode: bool = False, fields: tuple[str, ...] = ("p",)) -> KeyGenSpec:
    kind = SIMPLE if len(fields) == 1 else COMPLEX
    return KeyGenSpec(kind, ("k",), fields, hive_style=hive, url_encode=encode)


def batch(**columns: list) -> pa.Table:
    return pa.table({"k": [str(i) for i in range(len(next(iter(columns.values()))))], **columns})


# Values that would leave the table, land in .hoodie, or make a segment no listing returns.
HOSTILE = ["..", "../../outside", ".hoodie", ".", "a/../../b", "a//b", "/abs", "x/", ".hidden"]


@pytest.mark.parametrize("value", HOSTILE)
def test_non_hive_style_refuses_unsafe_values_naming_value_and_column(value):
    with pytest.raises(KeyGenerationError) as err:
        partition_paths(spec(), batch(p=["ok", "ok", "ok", value]))
    message = str(err.value)
    assert repr(value) in message and "'p'" in message and "row 3" in message


@pytest.mark.parametrize("value", ["..", ".", ".hoodie", ".hidden", "../../outside"])
def test_url_encoding_does_not_neutralize_dot_segments(value):
    # escapePathName leaves '.' alone: '..%2F..%2Foutside' still starts with a dot.
    with pytest.raises(KeyGenerationError, match=r"partition field 'p'"):
        partition_paths(spec(encode=True), batch(p=[value]))


@pytest.mark.parametrize("value", ["a/../../b", "a//b", "/abs", "x/"])
def test_url_encoding_makes_slashes_one_safe_segment(value):
    s = spec(encode=True)
    (path,) = partition_paths(s, batch(p=[value])).to_pylist()
    assert "/" not in path and partition_values(s, path) == {"p": value}


@pytest.mark.parametrize("value", ["../../outside", "a/../b", "a//b", "a/.hoodie", "x/"])
def test_hive_style_refuses_a_value_whose_slashes_make_unsafe_segments(value):
    with pytest.raises(KeyGenerationError, match=r"partition field 'p'"):
        partition_paths(spec(hive=True), batch(p=[value]))


@pytest.mark.parametrize("value", ["..", ".hoodie", ".", ".x"])
def test_hive_style_keeps_dot_values_inside_their_field_segment(value):
    # p=.. is an ordinary directory name: nothing to refuse, and it reads back.
    s = spec(hive=True)
    (path,) = partition_paths(s, batch(p=[value])).to_pylist()
    assert path == f"p={value}"
    assert partition_values(s, path) == {"p": value}


def test_backslash_is_refused_unencoded_and_escaped_when_url_encoding():
    with pytest.raises(KeyGenerationError, match=r"'p'.*'a\\\\b'"):
        partition_paths(spec(), batch(p=["a\\b"]))
    with pytest.raises(KeyGenerationError, match=r"'p'"):
        partition_paths(spec(hive=True), batch(p=["..\\..\\x"]))
    s = spec(encode=True)
    (path,) = partition_paths(s, batch(p=["a\\b"])).to_pylist()
    assert path == "a%5Cb" and partition_values(s, path) == {"p": "a\\b"}


def test_nul_is_escaped_as_hudi_does_and_refused_unencoded():
    # Hudi's charToEscape covers 0x00-0x1F.
    assert escape_path_name("a\x00b") == "a%00b"
    with pytest.raises(KeyGenerationError, match=r"'p'"):
        partition_paths(spec(), batch(p=["a\x00b"]))


def test_second_partition_field_is_named():
    s = spec(fields=("a", "b"))
    with pytest.raises(KeyGenerationError, match=r"partition field 'b'.*'\.\.'.*row 1"):
        partition_paths(s, batch(a=["x", "y"], b=["ok", ".."]))


def test_safe_values_are_unchanged():
    # Slashes in a value are legitimate nested paths in Hudi (yyyy/MM/dd strings); dots
    # inside a segment are fine; empty and null go to the default partition.
    values = ["2024/01/31", "a.b", "x..y", "v=1", "sp ace", "", None, "..a/b"[2:]]
    paths = partition_paths(spec(), batch(p=values)).to_pylist()
    default = "__HIVE_DEFAULT_PARTITION__"
    assert paths == ["2024/01/31", "a.b", "x..y", "v=1", "sp ace", default, default, "a/b"]
    hive = partition_paths(spec(hive=True), batch(p=["", None])).to_pylist()
    assert hive == [f"p={default}", f"p={default}"]
