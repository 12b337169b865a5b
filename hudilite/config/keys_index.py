"""Index keys: index type and bucket index."""

from __future__ import annotations

from hudilite.config.parsers import (
    choice,
    parse_fields,
    parse_int,
)
from hudilite.config.registry import _key

INDEX_TYPE = _key(
    "hoodie.index.type",
    "SIMPLE",
    "SIMPLE or BUCKET.",
    aliases=("index.type",),
    parse=choice("SIMPLE", "BUCKET"),
)
BUCKET_NUM = _key(
    "hoodie.bucket.index.num.buckets",
    4,
    "Buckets per partition for the bucket index.",
    aliases=("bucket.index.num.buckets",),
    parse=parse_int,
)
BUCKET_HASH_FIELD = _key(
    "hoodie.bucket.index.hash.field",
    None,
    "Fields hashed into buckets (default: the record key fields).",
    parse=parse_fields,
)
