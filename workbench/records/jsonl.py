"""Memory records in JSON Lines: one record per line, checked field by field.

The format (README, "Memory records") in short::

    {"id": "r1", "statement": "I attended Anna and Ben's wedding.", "type": "event",
     "about": ["me", "Anna and Ben's wedding"],
     "source": {"id": "chat-7#3", "said_by": "me", "captured_at": "2026-05-02", "text": "..."},
     "effective_from": "2026-05-01", "triples": [["me", "attended", "Anna and Ben's wedding"]]}

Every error names the file, the line and the field; nothing is imported from a file with an error.

>>> recs = parse_text('{"id": "r1", "statement": "s", "type": "event", '
...                   '"source": {"id": "c1", "said_by": "me"}, "about": ["me"]}', "x.jsonl")
>>> recs[0].id, recs[0].type.value, recs[0].line
('r1', 'event', 1)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from workbench import limits
from workbench.errors import Invalid, ParseError
from workbench.values.records import RecordType

REQUIRED = ("id", "statement", "type", "source")
OPTIONAL = (
    "about",
    "triples",
    "effective_from",
    "effective_to",
    "extracted_by",
    "confirmed_by",
    "visible_to",
    "applies_to",
    "decided_by",
    "supported_by",
    "supersedes",
)
SOURCE_REQUIRED = ("id", "said_by")
SOURCE_OPTIONAL = ("captured_at", "text", "locator")

# A triple's parts in the compact form: a name or "<iri>" for subject and object, a relation
# label or "<iri>" for the predicate, and JSON values or {"value", "lang"|"datatype"} for literals.
# A relation written "not LABEL" says the fact is not so: a negative fact (imports/records.py).
Part = Any


@dataclass(frozen=True)
class SourceIn:
    id: str
    said_by: str
    captured_at: str | None
    text: str | None
    locator: str | None


@dataclass(frozen=True)
class RecordIn:
    """A memory record as read from a file, not yet bound to entities."""

    file: str
    line: int
    id: str
    statement: str
    type: RecordType
    source: SourceIn
    about: tuple[str, ...]
    triples: tuple[tuple[Part, Part, Part], ...]
    effective_from: str | None
    effective_to: str | None
    extracted_by: str | None
    prompt_version: str | None
    confirmed_by: str | None
    visible_to: tuple[str, ...]
    applies_to: tuple[str, ...]
    decided_by: str | None
    supported_by: tuple[SourceIn | str, ...]
    supersedes: str | None
    digest: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def read_text(path: Path) -> str:
    """A file's text, which must be UTF-8. Raises ParseError naming the line and column."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError(f"not UTF-8 text (byte {exc.start}, column {column})", where=f"{path}:{line}") from exc


def json_lines(text: str, name: str, **loads: Any) -> Iterator[tuple[str, int, Any]]:
    """(``name:line``, line number, value) for each line that is not blank, parsed as JSON
    (``loads`` go to json.loads). Raises ParseError naming the line and column, and Invalid
    naming the line and field, for a line past :mod:`workbench.limits` (longer than
    MAX_LINE_BYTES, nested deeper than MAX_JSON_DEPTH, a string longer than MAX_LITERAL_CHARS)
    or a string that is not Unicode text (a lone surrogate, ``"\\ud800"``).

    >>> next(json_lines('[' * 200 + ']' * 200, "deep.jsonl"))
    Traceback (most recent call last):
    ...
    workbench.errors.ParseError: deep.jsonl:1: JSON nested deeper than 128 levels at column 129 (limits.MAX_JSON_DEPTH)
    """
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        limits.check_line(line, where)
        limits.check_json_text(line, where)
        try:
            value = json.loads(line, **loads)
        except json.JSONDecodeError as exc:
            raise ParseError(f"not JSON: {exc.msg} at column {exc.colno}", where=where) from None
        limits.check_json_value(value, where, line)
        yield where, number, value


def parse_file(path: Path) -> list[RecordIn]:
    return parse_text(read_text(path), str(path))


def parse_text(text: str, name: str) -> list[RecordIn]:
    records: list[RecordIn] = []
    seen: dict[str, int] = {}
    for where, number, raw in json_lines(text, name, parse_float=Decimal, parse_constant=_no_constant):
        record = _record(raw, name, number)
        if record.id in seen:
            raise Invalid(f"record id {record.id!r} already used on line {seen[record.id]}", where=where)
        seen[record.id] = number
        records.append(record)
    return records


def _no_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not a number JSON allows", name, 0)


def _record(raw: Any, name: str, number: int) -> RecordIn:
    where = f"{name}:{number}"
    if not isinstance(raw, dict):
        raise Invalid("a record must be a JSON object", where=where)
    _check_keys(raw, REQUIRED, OPTIONAL, where, "record")
    source = raw["source"]
    try:
        rtype = RecordType.parse(_text(raw, "type", where))
    except ValueError as exc:
        raise Invalid(f"field 'type': {exc}", where=where) from None
    extracted_by, prompt_version = _extractor(raw.get("extracted_by"), where)
    effective_from = _date(raw.get("effective_from"), "effective_from", where)
    effective_to = _date(raw.get("effective_to"), "effective_to", where)
    if effective_from and effective_to and instant(effective_to) < instant(effective_from):
        raise Invalid(f"effective_to {effective_to} is before effective_from {effective_from}", where=where)
    about = _names(raw.get("about", []), "about", where)
    triples = _triples(raw.get("triples", []), where)
    if not about and not triples:
        raise Invalid("a record needs 'about' (names it is about) or 'triples'", where=where)
    canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)
    return RecordIn(
        file=name,
        line=number,
        id=_text(raw, "id", where),
        statement=_text(raw, "statement", where),
        type=rtype,
        source=_source(source, where, "source"),
        about=about,
        triples=triples,
        effective_from=effective_from,
        effective_to=effective_to,
        extracted_by=extracted_by,
        prompt_version=prompt_version,
        confirmed_by=_opt_text(raw, "confirmed_by", where),
        visible_to=_names(raw.get("visible_to", []), "visible_to", where),
        applies_to=_names(raw.get("applies_to", []), "applies_to", where),
        decided_by=_opt_text(raw, "decided_by", where),
        supported_by=_supports(raw.get("supported_by", []), where),
        supersedes=_opt_text(raw, "supersedes", where),
        digest=hashlib.sha256(canonical.encode()).hexdigest(),
    )


def _source(obj: Any, where: str, what: str) -> SourceIn:
    if not isinstance(obj, dict):
        raise Invalid(f"field '{what}' must be an object with 'id' and 'said_by'", where=where)
    _check_keys(obj, SOURCE_REQUIRED, SOURCE_OPTIONAL, where, what)
    prefix = what + "."
    return SourceIn(
        id=_text(obj, "id", where, prefix),
        said_by=_text(obj, "said_by", where, prefix),
        captured_at=_date(obj.get("captured_at"), prefix + "captured_at", where),
        text=_opt_text(obj, "text", where, prefix),
        locator=_opt_text(obj, "locator", where, prefix),
    )


def _supports(value: Any, where: str) -> tuple[SourceIn | str, ...]:
    """Further sources that support a record: ids of recorded sources, or sources described here."""
    if not isinstance(value, list):
        raise Invalid("field 'supported_by' must be a list of source ids or source objects", where=where)
    out: list[SourceIn | str] = []
    for i, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            out.append(item)
        else:
            out.append(_source(item, where, f"supported_by[{i}]"))
    return tuple(out)


def _check_keys(
    obj: dict[str, Any], required: tuple[str, ...], optional: tuple[str, ...], where: str, what: str
) -> None:
    missing = [k for k in required if k not in obj]
    if missing:
        raise Invalid(f"{what} is missing field {missing[0]!r} (required: {', '.join(required)})", where=where)
    extra = sorted(set(obj) - set(required) - set(optional))
    if extra:
        allowed = ", ".join(required + optional)
        raise Invalid(f"{what} has unknown field {extra[0]!r} (allowed: {allowed})", where=where)


def _text(obj: dict[str, Any], key: str, where: str, prefix: str = "") -> str:
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"field '{prefix}{key}' must be a non-empty string", where=where)
    return value


def _opt_text(obj: dict[str, Any], key: str, where: str, prefix: str = "") -> str | None:
    return None if obj.get(key) is None else _text(obj, key, where, prefix)


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise Invalid(f"field '{key}' must be a list of non-empty strings", where=where)
    return tuple(value)


# The lexical forms of xsd:date and xsd:dateTime that people write (Python accepts more).
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")


def instant(value: str) -> dt.datetime:
    """A date or date-time as an aware instant (a date is its midnight, UTC; so is a naive time)."""
    if "T" not in value:
        day = dt.date.fromisoformat(value)
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _date(value: Any, key: str, where: str) -> str | None:
    """An ISO 8601 date (2026-05-01) or date-time (2026-05-01T10:00:00Z), as written."""
    if value is None:
        return None
    if isinstance(value, str) and (_DATE.fullmatch(value) or _DATETIME.fullmatch(value)):
        try:
            instant(value)
            return value
        except ValueError:
            pass
    raise Invalid(
        f"field '{key}' must be an ISO 8601 date (2026-05-01) or date-time (2026-05-01T10:00:00Z), not {value!r}",
        where=where,
    )


def _extractor(value: Any, where: str) -> tuple[str | None, str | None]:
    """``"alice"`` (a person) or ``{"model": "...", "prompt_version": "..."}``."""
    if value is None:
        return None, None
    if isinstance(value, str) and value.strip():
        return value, None
    if isinstance(value, dict) and set(value) <= {"model", "prompt_version"} and isinstance(value.get("model"), str):
        version = value.get("prompt_version")
        if version is not None and not isinstance(version, str):
            raise Invalid("field 'extracted_by.prompt_version' must be a string", where=where)
        return "model:" + value["model"], version
    raise Invalid(
        'field \'extracted_by\' must be a person\'s name or {"model": ..., "prompt_version": ...}', where=where
    )


def _triples(value: Any, where: str) -> tuple[tuple[Part, Part, Part], ...]:
    if not isinstance(value, list):
        raise Invalid("field 'triples' must be a list of [subject, relation, object]", where=where)
    out = []
    for i, t in enumerate(value):
        if not (isinstance(t, list) and len(t) == 3):
            raise Invalid(f"triples[{i}] must be [subject, relation, object]", where=where)
        s, p, o = t
        if not isinstance(s, str) or not s.strip():
            raise Invalid(f"triples[{i}] subject must be a name or <IRI>", where=where)
        if not isinstance(p, str) or not p.strip():
            raise Invalid(f"triples[{i}] relation must be a relation label or <IRI>", where=where)
        if isinstance(o, dict):
            if "value" not in o or not set(o) <= {"value", "lang", "datatype"} or ("lang" in o and "datatype" in o):
                raise Invalid(
                    f'triples[{i}] object must be {{"value": ...}} with an optional "lang" or "datatype"',
                    where=where,
                )
        elif o is None or isinstance(o, list) or (isinstance(o, str) and not o.strip()):
            raise Invalid(
                f'triples[{i}] object must be a name, <IRI>, number, boolean or {{"value": ...}}', where=where
            )
        out.append((s, p, o))
    return tuple(out)
