"""Hudi's bloom filters, byte for byte: the ``org.apache.hudi.bloomfilter`` parquet footer.

Hudi writes one bloom filter of the record keys into every base file's footer
(``HoodieBloomFilterWriteSupport``): the key ``org.apache.hudi.bloomfilter`` holds the
filter serialized with Java's ``DataOutput`` and base64-encoded (``Base64CodecUtil``,
standard alphabet with padding), and for dynamic filters ``hoodie_bloom_filter_type_code``
names the type (``DYNAMIC_V0``); without it a reader takes the filter as ``SIMPLE``.

The two types, as in ``org.apache.hudi.common.bloom``:

* ``SIMPLE`` (``SimpleBloomFilter``) wraps Hadoop's ``org.apache.hadoop.util.bloom.BloomFilter``
  Writable::

      int   -1            (Filter VERSION; a positive value is the old unversioned format)
      int   nbHash
      byte  hashType      (1 = Hash.MURMUR_HASH, what Hudi always uses)
      int   vectorSize    (bits)
      byte[(vectorSize + 7) / 8]  bit i at byte i/8, mask 1 << (i % 8)

* ``DYNAMIC_V0`` (``HoodieDynamicBoundedBloomFilter`` over ``InternalDynamicBloomFilter``,
  Hudi's default): the same four-field header, then ``int nr`` (keys per row = num_entries),
  ``int currentNbRecord`` (keys added to the active row), ``int rows`` and every row as a
  full ``SIMPLE`` filter (header + bits). A new row is added when the active one holds
  ``nr`` keys, while ``rows * nr < maxNr`` (``hoodie.bloom.index.filter.dynamic.max.entries``);
  past that bound keys go to rows round-robin and the false-positive rate is no longer kept.

Sizes (``BloomFilterUtils``): ``bits = ceil(n * -ln(fpp) / ln(2)^2)``,
``hashes = ceil(ln(2) * bits / n)``; Hudi's defaults ``n = 60000``, ``fpp = 1e-9`` give
2587966 bits and 30 hashes.

A key is its UTF-8 bytes (``Key(key.getBytes(UTF_8))``); its ``nbHash`` positions come from
``HashFunction.hash``: ``initval = murmur(bytes, seed=initval)`` starting at 0, position
``abs(initval % vectorSize)`` (Java remainder). ``murmur`` is Hadoop's ``MurmurHash`` (MurmurHash2,
32-bit, little-endian blocks, the 1-3 tail bytes *sign-extended* as Java bytes are).

Hashing is vectorised over all keys of a batch with numpy (keys padded to a common length
per length bucket), since every written base file hashes all of its keys.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Footer keys (``HoodieBloomFilterWriteSupport``).
BLOOM_FILTER_FOOTER = "org.apache.hudi.bloomfilter"
OLD_BLOOM_FILTER_FOOTER = "com.uber.hoodie.bloomfilter"
BLOOM_FILTER_TYPE_CODE_FOOTER = "hoodie_bloom_filter_type_code"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"
TYPE_CODES = (SIMPLE, DYNAMIC_V0)

JENKINS_HASH = 0
MURMUR_HASH = 1
_VERSION = -1

_M = np.uint32(0x5BD1E995)
#: Keys hashed at a time by a filter's add and lookup (see ``BloomFilter._positions``).
_CHUNK = 16384
_LN2 = math.log(2)
_LOG2_SQUARED = _LN2 * _LN2


def bit_size(num_entries: int, fpp: float) -> int:
    """``BloomFilterUtils.getBitSize``."""
    return math.ceil(num_entries * (-math.log(fpp) / _LOG2_SQUARED))


def num_hashes(bits: int, num_entries: int) -> int:
    """``BloomFilterUtils.getNumHashes``."""
    return math.ceil(_LN2 * bits / num_entries)


# ---------------------------------------------------------------------------------------
# MurmurHash2 (Hadoop's org.apache.hadoop.util.hash.MurmurHash), scalar and vectorised


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def murmur_hash(data: bytes, seed: int) -> int:
    """Hadoop's ``MurmurHash.hash(data, data.length, seed)`` as a signed 32-bit int (reference)."""
    m = 0x5BD1E995
    length = len(data)
    h = (seed ^ length) & 0xFFFFFFFF
    len4 = length >> 2
    for i in range(len4):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    left = length - (len4 << 2)
    if left:

        def sb(b: int) -> int:  # a Java byte, sign-extended to int
            return b - 256 if b >= 128 else b

        if left >= 3:
            h ^= (sb(data[length - 3]) << 16) & 0xFFFFFFFF
        if left >= 2:
            h ^= (sb(data[length - 2]) << 8) & 0xFFFFFFFF
        h ^= sb(data[length - 1]) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return _i32(h)


def _prepare_block(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split ``n`` keys of one byte length (``mat``: n x length uint8) into the 4-byte
    little-endian words (one contiguous row per word index) and the sign-extended tail."""
    length = mat.shape[1]
    len4 = length >> 2
    words = np.ascontiguousarray(
        np.ascontiguousarray(mat[:, : len4 * 4]).view("<u4").T, dtype=np.uint32
    )
    tail = np.ascontiguousarray(
        mat[:, len4 * 4 :].astype(np.int8).astype(np.int32).view(np.uint32).T
    )
    return words, tail


def _mixed_words(words: np.ndarray, tail: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The seed-independent half of MurmurHash2 for ``n`` keys of one byte length: each
    4-byte word mixed (``k *= m; k ^= k >>> 24; k *= m``) and the tail bytes combined.

    Hadoop chains ``nb_hash`` hashes of the same bytes (each seeded by the last); mixing
    the words once instead of per hash saves three of the five operations per word."""
    with np.errstate(over="ignore"):
        mixed = words * _M
        mixed ^= mixed >> np.uint32(24)
        mixed *= _M
        left = tail.shape[0]
        if not left:
            return mixed, None
        combined = tail[left - 1].copy()
        if left >= 2:
            combined ^= tail[left - 2] << np.uint32(8)
        if left >= 3:
            combined ^= tail[left - 3] << np.uint32(16)
    return mixed, combined


def _murmur_block(
    mixed: np.ndarray, tail: np.ndarray | None, length: int, seeds: np.ndarray
) -> np.ndarray:
    """MurmurHash2 of ``n`` keys of the same byte ``length`` (from :func:`_mixed_words`),
    each with its seed; updates and returns ``seeds``."""
    with np.errstate(over="ignore"):
        h = seeds
        h ^= np.uint32(length)
        for word in mixed:
            h *= _M
            h ^= word
        if tail is not None:
            h ^= tail
            h *= _M
        h ^= h >> np.uint32(13)
        h *= _M
        h ^= h >> np.uint32(15)
    return h


def _key_array(keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> pa.Array:
    """``keys`` as one Arrow array (strings from a sequence, chunks combined)."""
    if not isinstance(keys, pa.Array | pa.ChunkedArray):
        return pa.array(list(keys), pa.string())
    if isinstance(keys, pa.ChunkedArray):
        return keys.combine_chunks() if keys.num_chunks else pa.array([], pa.string())
    return keys


def _utf8_keys(keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of ``keys`` as one flat buffer plus offsets (int64, n + 1)."""
    keys = _key_array(keys)
    if keys.null_count:
        raise ValueError("a bloom filter key cannot be null")
    keys = keys.cast(pa.large_binary())
    offsets = np.frombuffer(keys.buffers()[1], dtype=np.int64)[
        keys.offset : keys.offset + len(keys) + 1
    ]
    data_buf = keys.buffers()[2]
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    return data, offsets


def _hash_block(mat: np.ndarray, vector_size: int, nb_hash: int) -> np.ndarray:
    """The bit positions (nb_hash x n int32) of ``n`` keys of one byte length (``mat``:
    n x length uint8): ``nb_hash`` chained hashes, each seeded by the one before."""
    length = mat.shape[1]
    mixed, tail = _mixed_words(*_prepare_block(mat))
    hashes = np.empty((nb_hash, mat.shape[0]), dtype=np.uint32)
    h = np.zeros(mat.shape[0], dtype=np.uint32)
    for j in range(nb_hash):
        hashes[j] = _murmur_block(mixed, tail, length, h)
    # Java's Math.abs(hash % vectorSize) on ints: the remainder takes the hash's sign, and
    # its magnitude is below vectorSize, so the int32 arithmetic cannot overflow.
    return np.abs(np.fmod(hashes.view(np.int32), np.int32(vector_size)))


def key_positions(
    keys: pa.Array | pa.ChunkedArray | Sequence[str], vector_size: int, nb_hash: int
) -> np.ndarray:
    """The ``nb_hash`` bit positions of every key (n x nb_hash int32), as ``HashFunction.hash``."""
    data, offsets = _utf8_keys(keys)
    n = len(offsets) - 1
    if n == 0:
        return np.empty((0, nb_hash), dtype=np.int32)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    if (lengths == 0).any():
        raise ValueError("a bloom filter key must not be empty")
    first = int(lengths[0])
    if (lengths == first).all():
        # One length (UUIDs, zero-padded ids): the keys are the rows of one block of bytes,
        # hashed without gathering them.
        begin = int(starts[0])
        return _hash_block(
            data[begin : begin + n * first].reshape(n, first), vector_size, nb_hash
        ).T
    out = np.empty((n, nb_hash), dtype=np.int32)
    for length in np.unique(lengths):
        idx = np.nonzero(lengths == length)[0]
        block = data[starts[idx, None] + np.arange(int(length))[None, :]]
        out[idx] = _hash_block(block, vector_size, nb_hash).T
    return out


# ---------------------------------------------------------------------------------------
# Filters


@dataclass(frozen=True)
class BloomConfig:
    """What Hudi's write config says about the filter of each base file."""

    filter_type: str = DYNAMIC_V0
    num_entries: int = 60000
    fpp: float = 0.000000001
    dynamic_max_entries: int = 100000

    def new_filter(self) -> BloomFilter:
        """An empty filter of this configuration (``BloomFilterFactory.createBloomFilter``)."""
        code, bits, hashes = self._shape()
        if code == SIMPLE:
            return SimpleBloomFilter(bits, hashes)
        return DynamicBloomFilter(bits, hashes, self.num_entries, self.dynamic_max_entries)

    def _shape(self) -> tuple[str, int, int]:
        """Type code, bit vector size and hash count of this configuration's filters."""
        code = self.filter_type.upper()
        if code not in TYPE_CODES:
            raise ValueError(f"Bloom Filter type code not recognizable {self.filter_type}")
        bits = bit_size(self.num_entries, self.fpp)
        return code, bits, num_hashes(bits, self.num_entries)

    def resume(self, stored: BloomFilter) -> BloomFilter | None:
        """``stored`` (a base file's filter, as read) ready for more keys, or None.

        A copy-on-write merge writes the old file's keys again plus its inserts; adding
        only the inserts to the old filter gives a filter holding every key written, the
        same bits as hashing them all again when no key was deleted (a deleted key's bits
        stay set: a false positive, which a bloom filter allows). None when ``stored`` was
        written with other parameters than this configuration's, so the caller builds a
        new filter instead.
        """
        code, bits, hashes = self._shape()
        if (
            stored.type_code != code
            or stored.vector_size != bits
            or stored.nb_hash != hashes
            or stored.hash_type != MURMUR_HASH
        ):
            return None
        if isinstance(stored, DynamicBloomFilter):
            if stored.nr != self.num_entries or not stored.matrix:
                return None
            # Not serialized (Hudi's neither): the row bound comes from this configuration.
            # A full filter at that bound sends further keys to rows round-robin; where the
            # rotation starts is free, as a lookup tests every row.
            stored.max_nr = self.dynamic_max_entries
            stored.reached_max, stored.cur_matrix_index = False, 0
        return stored


class BloomFilter:
    """Common interface of :class:`SimpleBloomFilter` and :class:`DynamicBloomFilter`."""

    type_code: str
    vector_size: int
    nb_hash: int
    hash_type: int

    def add(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> None:
        raise NotImplementedError

    def might_contain_many(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
        """One bool per key: False means the key is surely not in the file."""
        raise NotImplementedError

    def might_contain(self, key: str) -> bool:
        return bool(self.might_contain_many([key])[0])

    def to_bytes(self) -> bytes:
        raise NotImplementedError

    def serialize(self) -> str:
        """The footer value: base64 (standard, padded) of the Writable bytes."""
        return base64.b64encode(self.to_bytes()).decode("ascii")

    def footer(self) -> dict[str, str]:
        """The footer entries Hudi writes for this filter."""
        out = {BLOOM_FILTER_FOOTER: self.serialize()}
        if self.type_code.startswith("DYNAMIC"):
            out[BLOOM_FILTER_TYPE_CODE_FOOTER] = self.type_code
        return out

    def _positions(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> Iterator[np.ndarray]:
        """The bit positions of ``keys``, :data:`_CHUNK` keys at a time, in key order.

        Chunks bound the memory of a large call (``nb_hash`` positions per key: 120 MB for
        a million keys at Hudi's default 30 hashes) and keep it in the CPU's caches."""
        if self.hash_type != MURMUR_HASH:
            raise NotImplementedError(
                f"bloom filter hash type {self.hash_type} (only MurmurHash, Hudi's, is supported)"
            )
        keys = _key_array(keys)
        for start in range(0, max(len(keys), 1), _CHUNK):
            yield key_positions(keys.slice(start, _CHUNK), self.vector_size, self.nb_hash)


def _header(nb_hash: int, hash_type: int, vector_size: int) -> bytes:
    return struct.pack(">iibi", _VERSION, nb_hash, hash_type, vector_size)


def _read_header(buf: memoryview, pos: int) -> tuple[int, int, int, int]:
    (ver,) = struct.unpack_from(">i", buf, pos)
    pos += 4
    if ver > 0:  # old, unversioned format: the int is nbHash, the hash Jenkins
        nb_hash, hash_type = ver, JENKINS_HASH
    elif ver == _VERSION:
        nb_hash, hash_type = struct.unpack_from(">ib", buf, pos)
        pos += 5
    else:
        raise ValueError(f"Unsupported bloom filter version: {ver}")
    (vector_size,) = struct.unpack_from(">i", buf, pos)
    return nb_hash, hash_type, vector_size, pos + 4


class _Bits:
    """One Hadoop ``BloomFilter`` row: header fields and the bit vector (bool array)."""

    def __init__(self, vector_size: int, nb_hash: int, hash_type: int = MURMUR_HASH) -> None:
        if vector_size <= 0 or nb_hash <= 0:
            raise ValueError("bloom filter vector size and hash count must be > 0")
        self.vector_size = vector_size
        self.nb_hash = nb_hash
        self.hash_type = hash_type
        self.bits = np.zeros(vector_size, dtype=bool)

    def set(self, positions: np.ndarray) -> None:
        self.bits[positions] = True

    def test(self, positions: np.ndarray) -> np.ndarray:
        if positions.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        return self.bits[positions].all(axis=1)

    def to_bytes(self) -> bytes:
        packed = np.packbits(self.bits, bitorder="little")
        return _header(self.nb_hash, self.hash_type, self.vector_size) + packed.tobytes()

    @classmethod
    def read(cls, buf: memoryview, pos: int) -> tuple[_Bits, int]:
        nb_hash, hash_type, vector_size, pos = _read_header(buf, pos)
        nbytes = (vector_size + 7) // 8
        raw = np.frombuffer(buf[pos : pos + nbytes], dtype=np.uint8)
        if len(raw) != nbytes:
            raise ValueError("bloom filter bit vector is truncated")
        row = cls(vector_size, nb_hash, hash_type)
        row.bits = np.unpackbits(raw, bitorder="little", count=vector_size).astype(bool)
        return row, pos + nbytes


class SimpleBloomFilter(BloomFilter):
    """``SimpleBloomFilter``: one Hadoop ``BloomFilter``."""

    type_code = SIMPLE

    def __init__(self, vector_size: int, nb_hash: int, hash_type: int = MURMUR_HASH) -> None:
        self.row = _Bits(vector_size, nb_hash, hash_type)
        self.vector_size, self.nb_hash, self.hash_type = vector_size, nb_hash, hash_type

    def add(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> None:
        for pos in self._positions(keys):
            self.row.set(pos)

    def might_contain_many(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
        return np.concatenate([self.row.test(pos) for pos in self._positions(keys)])

    def to_bytes(self) -> bytes:
        return self.row.to_bytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> SimpleBloomFilter:
        buf = memoryview(data)
        row, pos = _Bits.read(buf, 0)
        if pos != len(buf):
            raise ValueError(f"{len(buf) - pos} trailing bytes after a SIMPLE bloom filter")
        f = cls.__new__(cls)
        f.row = row
        f.vector_size, f.nb_hash, f.hash_type = row.vector_size, row.nb_hash, row.hash_type
        return f


class DynamicBloomFilter(BloomFilter):
    """``HoodieDynamicBoundedBloomFilter`` (``InternalDynamicBloomFilter``), type ``DYNAMIC_V0``."""

    type_code = DYNAMIC_V0

    def __init__(
        self,
        vector_size: int,
        nb_hash: int,
        nr: int,
        max_nr: int,
        hash_type: int = MURMUR_HASH,
    ) -> None:
        self.vector_size, self.nb_hash, self.hash_type = vector_size, nb_hash, hash_type
        self.nr = nr
        self.max_nr = max_nr
        self.current_nb_record = 0
        self.reached_max = False
        self.cur_matrix_index = 0
        self.matrix = [_Bits(vector_size, nb_hash, hash_type)]

    def _rows_for(self, n: int) -> np.ndarray:
        """The row each of ``n`` new keys goes to (``getActiveStandardBF``, key by key)."""
        rows = np.empty(n, dtype=np.int64)
        i = 0
        while i < n:
            if self.reached_max:
                k = n - i
                rows[i:] = (self.cur_matrix_index + np.arange(k)) % len(self.matrix)
                self.cur_matrix_index += k
                self.current_nb_record += k
                break
            if self.current_nb_record >= self.nr:
                if len(self.matrix) * self.nr < self.max_nr:
                    self.matrix.append(_Bits(self.vector_size, self.nb_hash, self.hash_type))
                    self.current_nb_record = 0
                else:
                    self.reached_max = True
                    rows[i] = 0
                    self.current_nb_record += 1
                    i += 1
                    continue
            take = min(n - i, self.nr - self.current_nb_record)
            rows[i : i + take] = len(self.matrix) - 1
            self.current_nb_record += take
            i += take
        return rows

    def add(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> None:
        for pos in self._positions(keys):
            rows = self._rows_for(pos.shape[0])
            if pos.shape[0] and rows[0] == rows[-1] and (rows == rows[0]).all():
                self.matrix[int(rows[0])].set(pos)  # the usual case: no copy of pos
                continue
            for r in np.unique(rows):
                self.matrix[int(r)].set(pos[rows == r])

    def might_contain_many(self, keys: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
        hits = []
        for pos in self._positions(keys):
            hit = np.zeros(pos.shape[0], dtype=bool)
            for row in self.matrix:
                hit |= row.test(pos)
            hits.append(hit)
        return np.concatenate(hits)

    def to_bytes(self) -> bytes:
        head = _header(self.nb_hash, self.hash_type, self.vector_size) + struct.pack(
            ">iii", self.nr, self.current_nb_record, len(self.matrix)
        )
        return head + b"".join(row.to_bytes() for row in self.matrix)

    @classmethod
    def from_bytes(cls, data: bytes) -> DynamicBloomFilter:
        buf = memoryview(data)
        nb_hash, hash_type, vector_size, pos = _read_header(buf, 0)
        nr, current, nrows = struct.unpack_from(">iii", buf, pos)
        pos += 12
        matrix = []
        for _ in range(nrows):
            row, pos = _Bits.read(buf, pos)
            matrix.append(row)
        if pos != len(buf):
            raise ValueError(f"{len(buf) - pos} trailing bytes after a DYNAMIC_V0 bloom filter")
        f = cls.__new__(cls)
        f.vector_size, f.nb_hash, f.hash_type = vector_size, nb_hash, hash_type
        f.nr, f.current_nb_record, f.matrix = nr, current, matrix
        # Not serialized by Hudi either: a read filter is for lookups, not for more adds.
        f.max_nr, f.reached_max, f.cur_matrix_index = nr * max(nrows, 1), False, 0
        return f


def deserialize(serialized: str, type_code: str | None = None) -> BloomFilter:
    """A footer's filter (``BloomFilterFactory.fromString``; no type code means ``SIMPLE``)."""
    data = base64.b64decode(serialized)
    code = (type_code or SIMPLE).upper()
    if code == SIMPLE:
        return SimpleBloomFilter.from_bytes(data)
    if code == DYNAMIC_V0:
        return DynamicBloomFilter.from_bytes(data)
    raise ValueError(f"Bloom Filter type code not recognizable {type_code}")


def from_footer(footer: dict[str, str]) -> BloomFilter | None:
    """The bloom filter of a base file's key-value footer, or None when it has none."""
    value = footer.get(BLOOM_FILTER_FOOTER) or footer.get(OLD_BLOOM_FILTER_FOOTER)
    if value is None:
        return None
    return deserialize(value, footer.get(BLOOM_FILTER_TYPE_CODE_FOOTER))


def build(config: BloomConfig, keys: Iterable[pa.Array | pa.ChunkedArray]) -> BloomFilter:
    """A filter of ``config`` holding every key of ``keys`` (batches, in write order)."""
    f = config.new_filter()
    for batch in keys:
        f.add(batch)
    return f


def record_key_strings(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """The non-null keys of a ``_hoodie_record_key`` column, as strings."""
    if column.null_count:
        column = pc.drop_null(column)
    return column
