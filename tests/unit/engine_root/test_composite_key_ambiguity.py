"""Composite record key values that Hudi's ``f1:v1,f2:v2`` text cannot keep apart (issue 26).

Without the refusal, ``('x,k2:y', 'z')`` and ``('x', 'y,k2:z')`` both rendered
``k1:x,k2:y,k2:z``, a null part and ``'__null__'`` both ``k2:__null__``, ``''`` and
``'__empty__'`` both ``k2:__empty__``: one key's MERGE replaced the other's row.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudilite.errors import KeyGenerationError
from hudilite.keygen import KeyGenSpec, record_keys
from hudilite.keygen_ambiguity import ambiguous_mask, ambiguous_value_message
from hudilite.write.keying import KeyingSpec, key_batch

FIELDS = ("k1", "k2")
COMPLEX = KeyGenSpec("COMPLEX", FIELDS)


def batch(k1: list, k2: list) -> pa.Table:
    return pa.table({"k1": pa.array(k1, pa.string()), "k2": pa.array(k2, pa.string())})


def message(name: str, value: str, row: int) -> str:
    return ambiguous_value_message(name, f"{value!r} in row {row}", FIELDS)


def test_the_message_names_field_value_row_and_the_rule() -> None:
    assert message("k1", "x,k2:y", 0) == (
        "record key field 'k1' has value 'x,k2:y' in row 0, which Hudi's composite record key "
        "(fields ['k1', 'k2']) cannot tell apart from another key: a value may not contain "
        "',k1:' or ',k2:', nor be '__null__' or '__empty__' (the placeholders of null and "
        "empty parts); change the value or the record key fields"
    )


@pytest.mark.parametrize(
    ("k1", "k2", "name", "value", "row"),
    [
        (["a", "x,k2:y"], ["b", "z"], "k1", "x,k2:y", 1),  # ('x,k2:y','z') ~ ('x','y,k2:z')
        (["a", "x"], ["b", "y,k2:z"], "k2", "y,k2:z", 1),
        (["a", "x"], ["b", "__null__"], "k2", "__null__", 1),  # ~ ('x', NULL)
        (["__empty__"], ["b"], "k1", "__empty__", 0),  # ~ ('', 'b')
        (["a"], ["q,k1:r"], "k2", "q,k1:r", 0),  # Hudi's key parser splits at any field
    ],
)
def test_ambiguous_values_are_refused_by_name(
    k1: list, k2: list, name: str, value: str, row: int
) -> None:
    with pytest.raises(KeyGenerationError) as err:
        record_keys(COMPLEX, batch(k1, k2))
    assert str(err.value) == message(name, value, row)
    # The write path's keying (driver-side writes and the executors' Arrow keying) too.
    spec = KeyingSpec(keygen=COMPLEX)
    with pytest.raises(KeyGenerationError, match="cannot tell apart"):
        key_batch(spec, batch(k1, k2).to_batches()[0], 0)


def test_unambiguous_values_keep_hudis_text() -> None:
    # Commas, colons and field names without the ',<field>:' pattern, real nulls and empties.
    got = record_keys(
        COMPLEX,
        batch(["a,b", "k2:x", "x", None, "", "__nul__"], ["c:d", "k1", None, "y", "z", "k2"]),
    ).to_pylist()
    assert got == [
        "k1:a,b,k2:c:d",
        "k1:k2:x,k2:k1",
        "k1:x,k2:__null__",
        "k1:__null__,k2:y",
        "k1:__empty__,k2:z",
        "k1:__nul__,k2:k2",
    ]


def key_or_refused(k1: str | None, k2: str | None) -> str:
    try:
        return str(record_keys(COMPLEX, batch([k1], [k2]))[0].as_py())
    except KeyGenerationError:
        return "refused"


def test_the_colliding_tuples_of_the_issue_no_longer_share_a_key() -> None:
    # Each pair rendered one key text before; now the ambiguous side is refused.
    assert key_or_refused("x,k2:y", "z") == "refused"
    assert key_or_refused("x", "y,k2:z") == "refused"
    assert [key_or_refused("x", None), key_or_refused("x", "__null__")] == [
        "k1:x,k2:__null__", "refused"
    ]  # fmt: skip
    assert [key_or_refused("x", ""), key_or_refused("x", "__empty__")] == [
        "k1:x,k2:__empty__", "refused"
    ]  # fmt: skip


def test_single_field_keys_are_never_ambiguous() -> None:
    # SIMPLE refuses null and empty itself, so '__null__' can only be that value; a
    # single-field COMPLEX key is 'id:<value>' with nothing to split.
    values = pa.table({"id": ["__null__", "__empty__", "a,id:b"]})
    assert record_keys(KeyGenSpec("SIMPLE", ("id",)), values).to_pylist() == [
        "__null__", "__empty__", "a,id:b"
    ]  # fmt: skip
    assert record_keys(KeyGenSpec("COMPLEX", ("id",)), values).to_pylist() == [
        "id:__null__", "id:__empty__", "id:a,id:b"
    ]  # fmt: skip


def test_non_string_parts_are_checked_on_their_key_text() -> None:
    data = pa.table({"k1": pa.array([1, 2], pa.int64()), "k2": pa.array(["a", "__empty__"])})
    with pytest.raises(KeyGenerationError, match=r"'k2' has value '__empty__' in row 1"):
        record_keys(COMPLEX, data)


def test_mask_marks_only_ambiguous_values() -> None:
    text = pa.array(["x,k2:y", "x,k3:y", None, "__null__", "__empty__ ", ",k1:"])
    assert ambiguous_mask(text, FIELDS).to_pylist() == [True, False, False, True, False, True]
