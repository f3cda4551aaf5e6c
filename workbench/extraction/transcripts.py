"""Transcripts for extraction: plain text (``.txt``) and Markdown (``.md``), whose turns are
paragraphs, and JSON Lines (``.jsonl``), one turn a line: ``{"speaker": ..., "time": ..., "text":
...}``. Long ones are cut into pieces of about :data:`CHUNK_CHARS` characters at turn boundaries,
and a model's quoted span is found back in the piece it was shown.

>>> [[t.number for t in c] for c in chunks([Turn(i, i, "x" * 40) for i in (1, 2, 3)], limit=90)]
[[1, 2], [3]]
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench.errors import Invalid
from workbench.records.jsonl import instant, json_lines

CHUNK_CHARS = 6000
SUFFIXES = {".txt": "text", ".md": "text", ".markdown": "text", ".jsonl": "turns"}
TURN_KEYS = ("speaker", "time", "text")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)?")



@dataclass(frozen=True)
class Turn:
    """A turn of a transcript: a JSON Lines line, or a paragraph of text. ``whole`` is the
    turn's full text when ``text`` is one piece of a turn too long for one chunk."""

    number: int  # 1-based, in the file; the source locator "<file>#<number>"
    line: int  # the line it starts on
    text: str
    speaker: str | None = None
    time: str | None = None
    whole: str | None = None


@dataclass(frozen=True)
class Transcript:
    path: Path
    digest: str  # SHA-256 of the file's bytes
    turns: tuple[Turn, ...]
    spoken: bool  # turns with speakers (JSON Lines), not paragraphs

    @property
    def name(self) -> str:
        return self.path.name


def read(path: Path) -> Transcript:
    """A transcript file. Raises Invalid naming the file (and line) for a missing file, an
    unknown kind, text that is not UTF-8, a malformed turn, or no text at all."""
    if not path.is_file():
        raise Invalid("no such transcript file", where=str(path))
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise Invalid(f"not a transcript: use {', '.join(SUFFIXES)} files", where=str(path))
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise Invalid(f"not UTF-8 text ({exc.reason} at byte {exc.start})", where=str(path)) from None
    turns = _turns(text, path) if kind == "turns" else _paragraphs(text)
    if not turns:
        raise Invalid("the transcript has no text", where=str(path))
    return Transcript(path, hashlib.sha256(data).hexdigest(), tuple(turns), kind == "turns")


def _paragraphs(text: str) -> list[Turn]:
    out: list[Turn] = []
    lines: list[str] = []
    start = 0
    for n, line in enumerate([*text.splitlines(), ""], 1):
        if line.strip():
            start = start or n
            lines.append(line.rstrip())
        elif lines:
            out.append(Turn(len(out) + 1, start, "\n".join(lines)))
            lines, start = [], 0
    return out


def _turns(text: str, path: Path) -> list[Turn]:
    out: list[Turn] = []
    for where, n, raw in json_lines(text, str(path)):
        if not isinstance(raw, dict):
            raise Invalid('a turn must be a JSON object: {"speaker": ..., "time": ..., "text": ...}', where=where)
        extra = sorted(set(raw) - set(TURN_KEYS))
        if extra:
            raise Invalid(f"a turn has unknown field {extra[0]!r} (allowed: {', '.join(TURN_KEYS)})", where=where)
        said, speaker, time = raw.get("text"), raw.get("speaker"), raw.get("time")
        if not isinstance(said, str) or not said.strip():
            raise Invalid("field 'text' must be a non-empty string", where=where)
        if speaker is not None and (not isinstance(speaker, str) or not speaker.strip()):
            raise Invalid("field 'speaker' must be a non-empty string (or left out)", where=where)
        if time is not None and not _is_time(time):
            raise Invalid(f"field 'time' must be an ISO 8601 date or date-time (or left out), not {time!r}",
                          where=where)
        out.append(Turn(len(out) + 1, n, said.strip(), speaker.strip() if speaker else None, time))
    return out


def _is_time(value: Any) -> bool:
    try:
        return isinstance(value, str) and bool(_TIME.fullmatch(value)) and instant(value) is not None
    except ValueError:
        return False


def _pieces(turn: Turn, limit: int) -> Iterator[Turn]:
    """A turn, or the pieces of a turn longer than ``limit``: cut at a line break, else a
    sentence end, else a space, else wherever the limit falls."""
    rest = turn.text
    if len(rest) <= limit:
        yield turn
        return
    while rest:
        if len(rest) <= limit:
            cut = len(rest)
        else:
            window = rest[:limit]
            cut = next((i + len(sep) for sep in ("\n", ". ", " ") if (i := window.rfind(sep)) > limit // 2), limit)
        piece, rest = rest[:cut].strip(), rest[cut:].lstrip()
        if piece:
            yield replace(turn, text=piece, whole=turn.text)


def chunks(turns: Sequence[Turn], *, limit: int = CHUNK_CHARS) -> list[list[Turn]]:
    """Consecutive turns in pieces of at most about ``limit`` characters, never cutting a turn
    that fits in one piece."""
    out: list[list[Turn]] = []
    current: list[Turn] = []
    size = 0
    for turn in turns:
        for piece in _pieces(turn, limit):
            if current and size + len(piece.text) + 2 > limit:
                out.append(current)
                current, size = [], 0
            current.append(piece)
            size += len(piece.text) + 2
    if current:
        out.append(current)
    return out


def render(chunk: Sequence[Turn], *, spoken: bool) -> str:
    """The text the model is shown: turns as ``[N] speaker (time): text``, or paragraphs."""
    if not spoken:
        return "\n\n".join(t.text for t in chunk)
    return "\n".join(f"[{t.number}] {t.speaker or 'unknown'}{f' ({t.time})' if t.time else ''}: {t.text}"
                     for t in chunk)


def normalise(text: str) -> str:
    """Text compared for spans: Unicode NFC, runs of whitespace as one space."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def locate(span: str, chunk: Sequence[Turn]) -> list[Turn] | None:
    """The turns of ``chunk`` the span's text lies in (one, or several in a row), else None.

    >>> [t.number for t in locate("b  c", [Turn(1, 1, "a b"), Turn(2, 2, "c d")]) or []]
    [1, 2]
    """
    want = normalise(span)
    if not want:
        return None
    joined, starts = "", []
    for t in chunk:
        joined += " " if joined else ""
        starts.append(len(joined))
        joined += normalise(t.text)
    at = joined.find(want)
    if at < 0:
        return None
    end = at + len(want)
    return [t for t, s in zip(chunk, starts, strict=True) if s < end and s + len(normalise(t.text)) > at]


