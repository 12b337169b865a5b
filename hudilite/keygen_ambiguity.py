"""Record key values Hudi's complex key format cannot keep apart, refused before a write.

A composite record key is ``f1:v1,f2:v2`` with ``__null__`` for a null part and
``__empty__`` for an empty one (:func:`hudilite.keygen.record_keys`). That text is what
the index matches and what a MERGE updates by, so two distinct key tuples rendering the
same text are one row: ``('x,k2:y', 'z')`` and ``('x', 'y,k2:z')`` both become
``k1:x,k2:y,k2:z``, a null part and the value ``'__null__'`` both become ``k:__null__``,
and ``''`` and ``'__empty__'`` both ``k:__empty__``. The key format must stay the one
Hudi writes and reads, so instead of escaping, hudilite refuses such values:

* a value equal to ``__null__`` or ``__empty__``;
* a value containing ``,<a record key field>:``. Only a later field's name makes two
  tuples collide, but Hudi's own parser (``KeyGenUtils.extractRecordKeysByFields``, which
  the bucket index hashes by) splits at any ``,<field>:``, so every field's name is refused.

A single-field key (SIMPLE, or COMPLEX rendering one field) is never ambiguous: its null
and empty values are refused by the key generator itself, so ``'__null__'`` can only be
that value. Both key generators (the Arrow one and the Spark expressions of
:mod:`hudilite.spark.keying`) check with the rule above, before any instant exists.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudilite.errors import KeyGenerationError

NULL_PLACEHOLDER = "__null__"
EMPTY_PLACEHOLDER = "__empty__"
PLACEHOLDERS = (NULL_PLACEHOLDER, EMPTY_PLACEHOLDER)


def field_markers(fields: Sequence[str]) -> tuple[str, ...]:
    """The ``,<field>:`` separators a value of a composite key must not contain."""
    return tuple(f",{name}:" for name in fields)


def ambiguous_value_message(name: str, shown: str, fields: Sequence[str]) -> str:
    """The one-line refusal for key field ``name`` whose value is ``shown`` (quoted text)."""
    markers = " or ".join(repr(m) for m in field_markers(fields))
    return (
        f"record key field {name!r} has value {shown}, which Hudi's composite record key "
        f"(fields {list(fields)!r}) cannot tell apart from another key: a value may not "
        f"contain {markers}, nor be '{NULL_PLACEHOLDER}' or '{EMPTY_PLACEHOLDER}' (the "
        "placeholders of null and empty parts); change the value or the record key fields"
    )


def ambiguous_mask(text: pa.Array, fields: Sequence[str]) -> pa.Array:
    """Which values of one key field (its key text, nulls allowed) are ambiguous."""
    bad = pc.is_in(text, value_set=pa.array(PLACEHOLDERS, pa.string()))
    for marker in field_markers(fields):
        bad = pc.or_(bad, pc.match_substring(text, marker))
    return pc.fill_null(bad, False)


def check_composite_values(name: str, text: pa.Array, fields: Sequence[str]) -> None:
    """Raise :class:`KeyGenerationError` for the first ambiguous value of key field ``name``.

    ``text`` is the field's key text (:func:`hudilite.keygen.to_key_text`); ``fields``
    all the record key fields of a key rendered as ``f1:v1,f2:v2``.
    """
    bad = ambiguous_mask(text, fields)
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        shown = f"{text[row].as_py()!r} in row {row}"
        raise KeyGenerationError(ambiguous_value_message(name, shown, fields))


__all__ = ["PLACEHOLDERS", "ambiguous_mask", "ambiguous_value_message",
           "check_composite_values", "field_markers"]  # fmt: skip
