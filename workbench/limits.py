"""Limits on what one input may hold, and the checks that apply them before a parser sees it.

Every bound an import or a request meets lives here, once: a named constant with the reason for
its value. Each check raises :class:`~workbench.errors.Invalid` (or ``ParseError``) that names
the limit (``limits.MAX_LINE_BYTES``) and where it was passed (``file:line``, a field, a
parameter), so bad input changes nothing and says why (DESIGN.md, invariant 10). The checks
stream: a file is read in chunks of :data:`CHUNK` bytes, never held whole.

Measured with pyoxigraph 0.5.13 on the 2-core machine (docs in each constant):

* pyoxigraph's Turtle, TriG, N-Triples, N-Quads and JSON-LD parsers hold one token in a buffer
  that stops at 16 MiB with ``MemoryError: Reached the buffer maximal size of 16777216`` (a bare
  MemoryError, which is what "a 50 MB line" met); a long line of many small tokens is fine.
* Its JSON-LD parser recurses on nested objects, about 2.3 KB of stack a level: it kills the
  process (SIGSEGV) at about 3,500 levels on an 8 MiB stack, under 1,000 on a 2 MiB thread stack.
* Its RDF/XML parser expands internal DTD entities, nested ones too (``billion laughs``), found
  anywhere in the file: in a DOCTYPE after the root element, and in comments inside the DTD.

>>> json_depth('{"a": [1, {"b": "[[["}]}')
3
>>> check_count(0, "limit")
Traceback (most recent call last):
...
workbench.errors.Invalid: limit: must be at least 1, not 0
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate, count
from operator import sub
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.errors import Invalid, ParseError

# ---------------------------------------------------------------------- the limits

# One literal's value, in characters. A 1 Mi-character literal imports in 0.04 s and adds ~10 MB
# of peak memory (3 Mi: 0.07 s, ~25 MB); at its longest, \u-escaped (6 bytes a character), it
# is still far under pyoxigraph's 16 MiB token buffer, so every format refuses it the same way.
MAX_LITERAL_CHARS = 1 << 20

# One line of a line-based file (N-Triples, N-Quads, Turtle, TriG, JSON Lines), and one JSON
# string in a JSON-LD file, in bytes as written: room for one literal at its limit even
# \u-escaped, and half of pyoxigraph's 16 MiB token buffer, past which it fails with MemoryError.
MAX_LINE_BYTES = 8 << 20

# How deeply JSON (a JSON Lines record, a JSON-LD document, a request body) may nest arrays and
# objects. Records nest 4 levels, Workbench's JSON-LD exports 6; pyoxigraph's JSON-LD parser
# segfaults near 3,500 levels on an 8 MiB stack (under 1,000 on a 2 MiB thread stack, under 256
# on 512 KiB) and Python's json raises RecursionError near 1,000. 128 (serde_json's default)
# takes ~300 KB of stack.
MAX_JSON_DEPTH = 128

# One RDF/XML entity's replacement text, in bytes. Ontology editors (Protégé) declare entities
# only for namespace IRIs (<!ENTITY owl "http://www.w3.org/2002/07/owl#">): 20 to 80 bytes.
MAX_ENTITY_BYTES = 4096

# All entity references of an RDF/XML file together, counted as the bytes their replacement
# texts add: at most this floor plus ENTITY_EXPANSION_RATIO times the file's own size. Namespace
# entities add about as much as the file holds (each "&owl;" becomes a 30-byte IRI); an entity
# used to multiply a file ("billion laughs", flat or nested) needs far more.
ENTITY_EXPANSION_FLOOR = 1 << 16
ENTITY_EXPANSION_RATIO = 4

# The largest count a listing takes (``records --limit``, ``GET /api/records?limit=``). More
# records than any store here holds; past 2**64 the SPARQL engine cannot even parse the LIMIT.
MAX_COUNT = 1_000_000_000

# The size of the pieces a file is scanned in: no line or string inside one can pass the limits
# above, so most checks need only look where pieces meet.
CHUNK = 1 << 20

# pyoxigraph's own bound on one token (see the module docstring); a MemoryError names it.
PARSER_BUFFER_BYTES = 16 << 20

_LINE_FORMATS = (ox.RdfFormat.TURTLE, ox.RdfFormat.TRIG, ox.RdfFormat.N_TRIPLES, ox.RdfFormat.N_QUADS)


def check_rdf(path: Path, fmt: ox.RdfFormat) -> None:
    """Refuse an RDF file that passes a limit, before pyoxigraph parses it: long lines in the
    line-based formats; deep nesting and long strings in JSON-LD; entity declarations that
    are not plain text, and too much entity expansion, in RDF/XML. Raises Invalid/ParseError
    naming the limit and ``file:line``."""
    if fmt in _LINE_FORMATS:
        check_lines(path)
    elif fmt == ox.RdfFormat.JSON_LD:
        check_json_file(path)
    elif fmt == ox.RdfFormat.RDF_XML:
        check_entities(path)


def check_literal(value: str, where: str) -> None:
    """Refuse a literal longer than MAX_LITERAL_CHARS."""
    if len(value) > MAX_LITERAL_CHARS:
        raise Invalid(f"a literal of {len(value)} characters is longer than the limit of {MAX_LITERAL_CHARS} "
                      "(limits.MAX_LITERAL_CHARS)", where=where, exceeds="MAX_LITERAL_CHARS")


def parser_buffer_error(fmt: ox.RdfFormat, where: str) -> ParseError:
    """The error for pyoxigraph's MemoryError: one token longer than its 16 MiB buffer."""
    return ParseError(
        f"malformed {fmt.name}: a single literal or IRI is longer than the parser's {PARSER_BUFFER_BYTES}-byte "
        f"buffer; literals may hold at most {MAX_LITERAL_CHARS} characters (limits.MAX_LITERAL_CHARS)",
        where=where, exceeds="MAX_LITERAL_CHARS")


def check_count(value: Any, name: str) -> int:
    """A count (a listing's ``limit``): an integer from 1 to MAX_COUNT. Raises Invalid naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"must be an integer, not {value!r}", where=name)
    if value < 1:
        raise Invalid(f"must be at least 1, not {value}", where=name)
    if value > MAX_COUNT:
        raise Invalid(f"must be at most {MAX_COUNT} (limits.MAX_COUNT)", where=name, exceeds="MAX_COUNT")
    return value


# ---------------------------------------------------------------------- lines


def _chunks(path: Path, size: int) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while data := f.read(size):
            yield data


def check_lines(path: Path, *, limit: int = MAX_LINE_BYTES, chunk: int = CHUNK) -> None:
    """Refuse a file with a line longer than ``limit`` bytes, naming the first such line."""
    line, run = 1, 0  # the current line's number, and its bytes so far
    for data in _chunks(path, chunk):
        first = data.find(b"\n")
        if first == -1:
            run += len(data)
            if run > limit:
                raise _long_line(path, line, limit)
            continue
        if run + first > limit:
            raise _long_line(path, line, limit)
        if len(data) > limit:  # a line wholly inside this piece may pass the limit too
            for i, part in enumerate(data[first + 1:].split(b"\n")[:-1], start=1):
                if len(part) > limit:
                    raise _long_line(path, line + i, limit)
        line += data.count(b"\n")
        run = len(data) - data.rfind(b"\n") - 1
    if run > limit:
        raise _long_line(path, line, limit)


def _long_line(path: Path | str, line: int, limit: int) -> ParseError:
    return ParseError(f"line {line} is longer than {limit} bytes (limits.MAX_LINE_BYTES)", where=f"{path}:{line}",
                      exceeds="MAX_LINE_BYTES")


def check_line(text: str, where: str) -> None:
    """Refuse one line of text (a JSON Lines record) longer than MAX_LINE_BYTES in UTF-8."""
    if len(text) > MAX_LINE_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
        raise ParseError(f"the line is longer than {MAX_LINE_BYTES} bytes (limits.MAX_LINE_BYTES)", where=where,
                         exceeds="MAX_LINE_BYTES")


# ---------------------------------------------------------------------- JSON nesting

# A JSON string or a bracket (possessive: an unterminated string fails at once, never backtracks).
_TOKEN_B = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.S)
_TOKEN_S = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_PARENS = bytes.maketrans(b"[{]}", b"(())")
_STEPS = bytes.maketrans(b"()", b"\x02\x00")  # with count(1) subtracted: +1 and -1


def json_depth(text: str | bytes) -> int:
    """How deeply JSON text nests arrays and objects (0 for a scalar), brackets inside strings
    not counted. Exact for valid JSON; any text gets an answer, never an error."""
    depth = deepest = 0
    tokens = _TOKEN_S.finditer(text) if isinstance(text, str) else _TOKEN_B.finditer(text)
    for m in tokens:
        c = m.group()[:1]
        if c in ("[", "{", b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif c in ("]", "}", b"]", b"}"):
            depth = max(0, depth - 1)
    return deepest


def _too_deep_at(text: str | bytes, depth: int, limit: int) -> int | None:
    """The offset of the first bracket that takes ``text`` past ``limit`` levels, starting at
    ``depth``; None if none does."""
    tokens = _TOKEN_S.finditer(text) if isinstance(text, str) else _TOKEN_B.finditer(text)
    for m in tokens:
        c = m.group()[:1]
        if c in ("[", "{", b"[", b"{"):
            depth += 1
            if depth > limit:
                return m.start()
        elif c in ("]", "}", b"]", b"}"):
            depth = max(0, depth - 1)
    return None


def _too_deep(where: str, column: int | None, limit: int) -> ParseError:
    at = f" at column {column}" if column is not None else ""
    return ParseError(f"JSON nested deeper than {limit} levels{at} (limits.MAX_JSON_DEPTH)", where=where,
                      exceeds="MAX_JSON_DEPTH")


def check_json_text(text: str, where: str, *, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON text (one line, a request body) nested deeper than ``limit``, before json.loads."""
    if text.count("[") + text.count("{") <= limit:  # too few brackets to nest that deep
        return
    at = _too_deep_at(text, 0, limit)
    if at is not None:
        raise _too_deep(where, at - (text.rfind("\n", 0, at) + 1) + 1, limit)


def check_json_file(path: Path, *, depth_limit: int = MAX_JSON_DEPTH, string_limit: int = MAX_LINE_BYTES,
                    chunk: int = CHUNK) -> None:
    """Refuse a JSON(-LD) file nested deeper than ``depth_limit`` or holding a string longer
    than ``string_limit`` bytes (its escapes not counted), naming the line. One pass, in pieces,
    at C speed: escapes are dropped, then the quotes alternate, so splitting at them parts
    strings from the rest; the brackets outside strings give the depth (a 70 MB export in 1 s)."""
    depth, line, run = 0, 1, 0  # run: the bytes so far of a string that goes on past a piece
    inside, held = False, b""  # inside: a piece starts within a string; held: a backslash cut off
    for data in _chunks(path, chunk):
        raw = held + data
        trailing = len(raw) - len(raw.rstrip(b"\\"))
        held = b"\\" if trailing % 2 else b""  # an escape that the next piece completes
        body = raw[:-1] if held else raw
        parts = body.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')
        strings, rest = (parts[0::2], parts[1::2]) if inside else (parts[1::2], parts[0::2])
        ends_inside = inside != (len(parts) % 2 == 0)
        first = run + len(strings[0]) if inside else 0
        if max(first, max(map(len, strings), default=0)) > string_limit:
            at = _locate(raw, depth, inside, string_limit=string_limit, length=run) or 0
            raise _long_string(path, line + raw.count(_NL, 0, at), string_limit)
        run = (first if inside and len(parts) == 1 else len(parts[-1])) if ends_inside else 0
        brackets = b"".join(rest).translate(_PARENS, _NOT_BRACKETS)
        if brackets:
            rise, fall, end = _rise(brackets, depth_limit - depth)
            if rise <= depth_limit - depth and depth + fall >= 0:
                depth += end
            else:  # too deep, or more closed than opened (not JSON): bracket by bracket
                start = depth
                for b in brackets:
                    depth = depth + 1 if b == 0x28 else max(0, depth - 1)
                    if depth > depth_limit:
                        at = _locate(raw, start, inside, depth_limit=depth_limit) or 0
                        where = f"{path}:{line + raw.count(_NL, 0, at)}"
                        raise _too_deep(where, at - (raw.rfind(_NL, 0, at) + 1) + 1, depth_limit)
        inside = ends_inside
        line += body.count(_NL)


def _rise(parens: bytes, room: int) -> tuple[int, int, int]:
    """For brackets written as ( and ): how far the nesting rises above where it starts (at most
    that, when within ``room``; else exact), how far it falls below, and where it ends. Each round
    of dropping "()" peels one level of the pairs closed here; what stays is ")" * a + "(" * b, so
    the rise is at most rounds + b and the fall is a."""
    peeled, rounds = parens, 0
    while rounds <= room:
        shorter = peeled.replace(b"()", b"")
        if len(shorter) == len(peeled):
            break
        peeled, rounds = shorter, rounds + 1
    opened = peeled.count(b"(")
    closed = len(peeled) - opened
    if rounds + opened <= room:  # fully peeled, and within room
        return rounds + opened, -closed, opened - closed
    steps = list(map(sub, accumulate(parens.translate(_STEPS)), count(1)))
    return max(steps), min(steps), steps[-1]


def _locate(data: bytes, depth: int, inside: bool, *, depth_limit: int | None = None,
            string_limit: int | None = None, length: int = 0) -> int | None:
    """The offset in ``data`` where a string passes ``string_limit`` bytes or the nesting passes
    ``depth_limit``, given the state it starts in (``length``: the bytes of a string it starts
    inside); None if neither does. A plain loop, for errors only."""
    escaped = False
    for i, c in enumerate(data):
        if inside:
            if escaped:  # \\ and \" are not counted, other escapes are, as written (as the fast pass)
                escaped = False
                length += 0 if c in (0x5C, 0x22) else 2
            elif c == 0x5C:
                escaped = True
                continue
            elif c == 0x22:
                inside = False
                continue
            else:
                length += 1
            if string_limit is not None and length > string_limit:
                return i
        elif c == 0x22:
            inside, length = True, 0
        elif c in _OPEN:
            depth += 1
            if depth_limit is not None and depth > depth_limit:
                return i
        elif c in _CLOSE:
            depth = max(0, depth - 1)
    return None


def _long_string(path: Path, line: int, limit: int) -> ParseError:
    return ParseError(f"a JSON string longer than {limit} bytes (limits.MAX_LINE_BYTES) starts on line {line}",
                      where=f"{path}:{line}", exceeds="MAX_LINE_BYTES")


# ---------------------------------------------------------------------- JSON values


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_json_value(value: Any, where: str, text: str, *, what: str = "field") -> None:
    """Refuse a parsed JSON value (from ``text``) holding a string that is not Unicode text (a
    lone surrogate, which a ``\\ud800`` escape can spell and no UTF-8 file or store holds) or
    longer than MAX_LITERAL_CHARS. Walks the value only when ``text`` could hold such a string."""
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if not surrogates and len(text) <= MAX_LITERAL_CHARS:
        return
    for path, s in _strings(value):
        named = f"{what} '{_printable(path)}'" if path else "the value"
        if surrogates and (m := _SURROGATE.search(s)):
            raise Invalid(f"{named} holds a lone surrogate \\u{ord(m.group()):04x}, which is not a Unicode "
                          "character", where=where)
        if len(s) > MAX_LITERAL_CHARS:
            raise Invalid(f"{named} is {len(s)} characters, longer than the limit of {MAX_LITERAL_CHARS} "
                          "(limits.MAX_LITERAL_CHARS)", where=where, exceeds="MAX_LITERAL_CHARS")


def _printable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape, so a message can be printed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """(path, string) for every key and string in a JSON value, in document order; no recursion."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, str):
            yield path, v
        elif isinstance(v, dict):
            items = []
            for k, x in v.items():
                child = f"{path}.{k}" if path else str(k)
                yield child, k
                items.append((child, x))
            stack.extend(reversed(items))
        elif isinstance(v, list):
            stack.extend(reversed([(f"{path}[{i}]", x) for i, x in enumerate(v)]))


# ---------------------------------------------------------------------- RDF/XML entities

_DECL = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.I)
_ENTITY = re.compile(rb'<!ENTITY[ \t\r\n]+([^\s"\'%&;<>]+)[ \t\r\n]+"([^"]*)"[ \t\r\n]*>')
_REFERENCE = re.compile(rb'&([^\s"\'%&;<>]+);')  # names as _ENTITY declares them
_DOCTYPE = re.compile(rb"<!DOCTYPE[ \t\r\n]+[^\s\[>]+(?:[ \t\r\n]*([\[>])|[ \t\r\n]+(SYSTEM|PUBLIC)\b)", re.I)
_PARAMETER = re.compile(rb"<!ENTITY[ \t\r\n]+%", re.I)
_EXTERNAL = re.compile(rb'<!ENTITY[ \t\r\n]+[^\s"]+[ \t\r\n]+(?:SYSTEM|PUBLIC)\b', re.I)
_OPEN_VALUE = re.compile(rb'<!ENTITY[ \t\r\n]+[^\s"]+[ \t\r\n]+"[^"]*\Z')
_WINDOW = MAX_ENTITY_BYTES + 4096  # enough to see a whole declaration: name, spaces, text
_NL = b"\n"


def check_entities(path: Path, *, chunk: int = CHUNK) -> None:
    """Refuse RDF/XML whose entities could expand it: pyoxigraph's parser expands every
    ``<!ENTITY name "text">`` it finds, anywhere in the file. Allowed: plain-text internal
    entities (no reference to another entity, at most MAX_ENTITY_BYTES), and references that
    add at most ENTITY_EXPANSION_FLOOR + ENTITY_EXPANSION_RATIO x the file's size. Refused:
    external (SYSTEM/PUBLIC) and parameter entities, an external DTD, anything else that
    declares an entity. Two streaming passes; the second only when entities are declared."""
    sizes = _declared(path, chunk)
    if sizes:
        _count_references(path, sizes, chunk)


def _declared(path: Path, chunk: int) -> dict[bytes, int]:
    sizes: dict[bytes, int] = {}
    line, carry = 1, b""
    pieces = _chunks(path, chunk)
    eof = False
    while not eof:
        data = next(pieces, None)
        eof = data is None
        buf = carry + (data or b"")
        carry = b""
        at, at_line = 0, line  # lines counted up to ``at``, as the matches go (not from 0 each time)
        for m in _DECL.finditer(buf):
            p = m.start()
            at, at_line = p, at_line + buf.count(_NL, at, p)
            where = f"{path}:{at_line}"
            if m.group().upper() == b"<!ENTITY":
                e = _ENTITY.match(buf, p)
                if e is None:
                    if not eof and len(buf) - p < _WINDOW:
                        carry = buf[p:]
                        break
                    raise _bad_entity(buf[p:p + _WINDOW], where)
                name, text = e.groups()
                if b"&" in text:
                    raise Invalid(f"the entity {name.decode(errors='replace')!r} refers to another entity or "
                                  "character (&...;): nested entities are how 'billion laughs' files expand; "
                                  "write its text out", where=where)
                if len(text) > MAX_ENTITY_BYTES:
                    raise Invalid(f"the entity {name.decode(errors='replace')!r} holds {len(text)} bytes, more "
                                  f"than the limit of {MAX_ENTITY_BYTES} (limits.MAX_ENTITY_BYTES)", where=where,
                                  exceeds="MAX_ENTITY_BYTES")
                sizes[name] = max(sizes.get(name, 0), len(text))
            else:
                d = _DOCTYPE.match(buf, p)
                if d is None and not eof and len(buf) - p < _WINDOW:
                    carry = buf[p:]
                    break
                if d is None or d.group(2):
                    what = "an external DTD (SYSTEM or PUBLIC) is not read" if d else "this DOCTYPE is not one"
                    raise Invalid(f"{what}: RDF/XML may have <!DOCTYPE name [ ... ]> with plain-text entities, "
                                  "or none", where=where)
        else:
            carry = buf[-8:] if not eof else b""  # "<!ENTITY" (8 bytes) may begin in this piece
        line += buf.count(b"\n", 0, len(buf) - len(carry))
    return sizes


def _bad_entity(decl: bytes, where: str) -> Invalid:
    if _PARAMETER.match(decl):
        why = "a parameter entity (<!ENTITY % ...>)"
    elif _EXTERNAL.match(decl):
        why = "an external entity (SYSTEM or PUBLIC): its text would come from outside the file"
    elif _OPEN_VALUE.match(decl):
        why = f"an entity whose text is longer than {MAX_ENTITY_BYTES} bytes (limits.MAX_ENTITY_BYTES)"
    else:
        why = 'not a plain-text entity <!ENTITY name "text">'
    return Invalid(f"RDF/XML entity declarations may only be plain text, <!ENTITY name \"text\">: this is {why}",
                   where=where)


def _count_references(path: Path, sizes: dict[bytes, int], chunk: int) -> None:
    size = path.stat().st_size
    allowed = ENTITY_EXPANSION_FLOOR + ENTITY_EXPANSION_RATIO * size
    longest = max(map(len, sizes)) + 2  # "&name;"
    total, line, carry = 0, 1, b""
    pieces = _chunks(path, chunk)
    eof = False
    while not eof:
        data = next(pieces, None)
        eof = data is None
        buf = carry + (data or b"")
        cut = buf.rfind(b"&", max(0, len(buf) - longest))
        if not eof and cut != -1 and b";" not in buf[cut:]:  # a reference may go on in the next piece
            buf, carry = buf[:cut], buf[cut:]
        else:
            carry = b""
        found = Counter(_REFERENCE.findall(buf))  # one pass, however many entities are declared
        added = sum(n * sizes[name] for name, n in found.items() if name in sizes)
        if total + added > allowed:
            for m in _REFERENCE.finditer(buf):
                total += sizes.get(m.group(1), 0)
                if total > allowed:
                    number = line + buf.count(_NL, 0, m.start())
                    raise Invalid(
                        f"the entity references up to here add more than {allowed} bytes, the most a file of "
                        f"{size} bytes may gain ({ENTITY_EXPANSION_FLOOR} + {ENTITY_EXPANSION_RATIO} x {size}: "
                        "limits.ENTITY_EXPANSION_FLOOR + limits.ENTITY_EXPANSION_RATIO x its size)",
                        where=f"{path}:{number}", exceeds="ENTITY_EXPANSION_RATIO")
        total += added
        line += buf.count(_NL)
