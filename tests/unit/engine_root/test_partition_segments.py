"""Overlong partition folder names are refused by name (issue 26: a raw ``[Errno 36]``)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.errors import KeyGenerationError
from hudilite.keygen import KeyGenSpec, partition_paths
from hudilite.partition_segments import MAX_SEGMENT_BYTES, overlong_message, shown_folder


def test_overlong_values_are_refused_naming_field_folder_and_row() -> None:
    long = "v" * 300
    data = pa.table({"id": ["a", "b"], "p": ["ok", long]})
    with pytest.raises(KeyGenerationError) as err:
        partition_paths(KeyGenSpec("SIMPLE", ("id",), ("p",)), data)
    assert str(err.value) == (
        "partition field 'p': the folder name '" + "v" * 40 + "...' (300 bytes) in row 1 is "
        "longer than the 255 bytes a file system allows; shorten the value or partition by "
        "another field"
    )
    # Hive style counts the 'p=' prefix; URL-encoding counts the escapes (':' -> '%3A').
    edge = "v" * (MAX_SEGMENT_BYTES - 2)
    hive = KeyGenSpec("SIMPLE", ("id",), ("p",), hive_style=True)
    assert partition_paths(hive, pa.table({"id": ["a"], "p": [edge]})).to_pylist() == [f"p={edge}"]
    with pytest.raises(KeyGenerationError, match=r"\(256 bytes\) in row 0"):
        partition_paths(hive, pa.table({"id": ["a"], "p": [edge + "v"]}))
    encoded = KeyGenSpec("SIMPLE", ("id",), ("p",), url_encode=True)
    with pytest.raises(KeyGenerationError, match=r"'%3A%3A.*\(258 bytes\)"):
        partition_paths(encoded, pa.table({"id": ["a"], "p": [":" * 86]}))


def test_segments_are_measured_in_utf8_bytes_per_folder() -> None:
    spec = KeyGenSpec("SIMPLE", ("id",), ("p",))
    # 128 two-byte characters: 256 bytes in one folder.
    with pytest.raises(KeyGenerationError, match=r"\(256 bytes\) in row 0"):
        partition_paths(spec, pa.table({"id": ["a"], "p": ["é" * 128]}))
    # A '/' in a value makes nested folders, each within the limit.
    nested = "a" * 200 + "/" + "b" * 200
    assert partition_paths(spec, pa.table({"id": ["a"], "p": [nested]})).to_pylist() == [nested]


def test_message_parts() -> None:
    assert shown_folder("x" * 10) == "'xxxxxxxxxx' (10 bytes)"
    assert overlong_message("p", "F").startswith("partition field 'p': the folder name F is")


def test_a_slash_in_one_of_several_plain_values_is_refused() -> None:
    # ('x/y', 'z') and ('x', 'y/z') both became the folder x/y/z.
    spec = KeyGenSpec("COMPLEX", ("id",), ("a", "b"))
    data = pa.table({"id": ["1", "2"], "a": ["x", "x"], "b": ["z", "y/z"]})
    with pytest.raises(KeyGenerationError) as err:
        partition_paths(spec, data)
    assert str(err.value) == (
        "partition field 'b' has value 'y/z' in row 1 holding '/', which would make its "
        "partition path (fields ['a', 'b'], not hive style) the same as other values': "
        "change the value, or use hive-style partitioning or partitionpath.urlencode"
    )
    # Hive style and URL-encoding keep the fields apart; one field is only ever that value.
    hive = KeyGenSpec("COMPLEX", ("id",), ("a", "b"), hive_style=True)
    assert partition_paths(hive, data).to_pylist() == ["a=x/b=z", "a=x/b=y/z"]
    encoded = KeyGenSpec("COMPLEX", ("id",), ("a", "b"), url_encode=True)
    assert partition_paths(encoded, data).to_pylist() == ["x/z", "x/y%2Fz"]
    one = KeyGenSpec("SIMPLE", ("id",), ("b",))
    assert partition_paths(one, data).to_pylist() == ["z", "y/z"]


@pytest.mark.parametrize("hive", [False, True])
def test_the_default_partition_name_as_a_value_is_refused(hive: bool) -> None:
    # '' and NULL go to __HIVE_DEFAULT_PARTITION__ (as in Hudi); the literal value joined
    # them there and read back as null.
    spec = KeyGenSpec("SIMPLE", ("id",), ("p",), hive_style=hive)
    data = pa.table({"id": ["1", "2", "3"], "p": ["", None, "__HIVE_DEFAULT_PARTITION__"]})
    with pytest.raises(KeyGenerationError) as err:
        partition_paths(spec, data)
    assert str(err.value) == (
        "partition field 'p' has value '__HIVE_DEFAULT_PARTITION__' in row 2, the folder name "
        "Hudi gives null and empty values ('__HIVE_DEFAULT_PARTITION__'): its rows would "
        "share that partition and read back as null; change the value"
    )
    folder = "p=__HIVE_DEFAULT_PARTITION__" if hive else "__HIVE_DEFAULT_PARTITION__"
    assert partition_paths(spec, data.slice(0, 2)).to_pylist() == [folder, folder]
