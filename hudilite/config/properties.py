"""The Java ``Properties`` text codec (``hoodie.properties``) and the table checksum."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping

_UNESCAPE = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> Iterable[str]:
    """Join continuation lines (odd number of trailing backslashes) as java.util.Properties."""
    buf: str | None = None
    for physical in text.splitlines():
        line = physical.lstrip(" \t\f")
        if buf is None:
            if not line or line[0] in "#!":
                continue
            buf = ""
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            buf += line[:-1]
            continue
        yield buf + line
        buf = None
    if buf is not None:
        yield buf


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2 : i + 6]):
                out.append(chr(int(s[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_UNESCAPE.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    # \uXXXX escapes of a surrogate pair must become one code point; a lone one (garbage)
    # stays a lone surrogate, as in Java, instead of failing the decode.
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``Properties`` text (comments, continuations, escapes) into a dict."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        j = i
        while j < n and line[j] in " \t\f":
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in " \t\f":
                j += 1
        props[_unescape(key)] = _unescape(line[j:])
    return props


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for idx, ch in enumerate(s):
        if ch == " ":
            # Java escapes every space of a key but only the leading ones of a value.
            out.append("\\ " if is_key or idx == 0 else " ")
        elif ch in "\\=:#!":
            out.append("\\" + ch)
        elif ch in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[ch])
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            # Hudi loads hoodie.properties as ISO-8859-1, so anything else must be \uXXXX
            # (UTF-16 code units, as Java writes them).
            units = ch.encode("utf-16-be", "surrogatepass")
            for k in range(0, len(units), 2):
                out.append(f"\\u{int.from_bytes(units[k : k + 2], 'big'):04X}")
        else:
            out.append(ch)
    return "".join(out)


def render_properties(props: Mapping[str, str], comment: str | None = None) -> str:
    """Render ``props`` as Java ``Properties`` text, in the given order, ``\\n`` line ends."""
    lines: list[str] = []
    if comment is not None:
        lines.extend("#" + c for c in comment.splitlines() or [""])
    lines.extend(f"{_escape(k, True)}={_escape(str(v), False)}" for k, v in props.items())
    return "\n".join(lines) + "\n"


def table_checksum(database: str, table: str) -> int:
    """``hoodie.table.checksum``: CRC32 of ``"<database>.<table>"`` (UTF-8)."""
    return zlib.crc32(f"{database}.{table}".encode())
