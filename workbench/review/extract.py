"""Extraction: transcripts in, candidate memory records out, into the review queue and nowhere else.

A model reads each piece of a transcript with a versioned prompt (:mod:`workbench.review.prompts`)
and answers JSON. Its answer is checked strictly, because a model's output is bad input like any
other (design invariant 10): the JSON must parse and match the prompt's schema; every fact must
quote the text it came from (``span``), and that text must be in the piece the model was shown
(whitespace aside), so nothing is proposed that nobody said; every fact must be a valid memory
record (the queue's own checks) whose relations the store knows. One failure anywhere rejects the
whole run, with every reason found, and nothing is queued: a curator never sees half an answer.

Accepted facts become candidates (pending, with their span, the model, the prompt version and
the transcript's SHA-256 in PROV-O) through the ``propose`` callback, one proposal per transcript.
They are not facts until a curator approves them. Candidate rules in an answer are reported, not
queued: proposing rules from extraction comes with the rule lifecycle.

Transcripts: plain text (``.txt``) and Markdown (``.md``), whose turns are paragraphs, and JSON
Lines (``.jsonl``), one turn a line: ``{"speaker": ..., "time": ..., "text": ...}``. Long ones are
cut into pieces of about :data:`CHUNK_CHARS` characters at turn boundaries.

>>> [[t.number for t in c] for c in chunks([Turn(i, i, "x" * 40) for i in (1, 2, 3)], limit=90)]
[[1, 2], [3]]
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from workbench.errors import Invalid, ModelUnavailable
from workbench.jsonl import instant
from workbench.model import RecordType
from workbench.relations import Relations, negated
from workbench.review import prompts, queue
from workbench.review.llm import Chat, OpenAIChat, Reply
from workbench.review.queue import Proposal
from workbench.store import Store

CHUNK_CHARS = 6000
SUFFIXES = {".txt": "text", ".md": "text", ".markdown": "text", ".jsonl": "turns"}
TURN_KEYS = ("speaker", "time", "text")
RULES_NOTE = "proposing rules from extraction comes with the rule lifecycle"
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)?")

Propose = Callable[[Sequence[dict[str, Any]], Proposal], list[str]]


# ---------------------------------------------------------------------- transcripts


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
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise Invalid(f"not JSON: {exc.msg} (column {exc.colno})", where=where) from None
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
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        return False
    try:
        instant(value)
    except ValueError:
        return False
    return True


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


# ---------------------------------------------------------------------- the model's answer


class _Rejected(Exception):
    """An answer, or a fact in it, that cannot be used; the message says why."""


def _source(transcript: Transcript, turns: Sequence[Turn]) -> dict[str, Any]:
    """The source of a fact: the turn (or turns) its span lies in. Every fact from one turn
    describes the same source, so approving several of them never conflicts on it."""
    numbers = sorted({t.number for t in turns})
    texts = list({t.number: t.whole or t.text for t in turns}.values())
    speakers = {t.speaker for t in turns}
    source: dict[str, Any] = {
        "id": f"{transcript.name}#{numbers[0]}" + (f"-{numbers[-1]}" if len(numbers) > 1 else ""),
        "said_by": speakers.pop() if len(speakers) == 1 and None not in speakers else "unknown",
        "text": "\n\n".join(texts),
        "locator": f"{transcript.name}:{turns[0].line}",
    }
    if turns[0].time:
        source["captured_at"] = turns[0].time
    return source


def _parse(reply: Reply, prompt: prompts.PromptVersion) -> tuple[list[Any], list[Any]]:
    """The facts and rules of an answer, checked against the prompt's output schema."""
    try:
        data = json.loads(reply.content)
    except json.JSONDecodeError as exc:
        cut = "; the model stopped at its length limit" if reply.finish_reason == "length" else ""
        raise _Rejected(f"the answer is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}{cut})") from None
    required, optional = prompts.keys(prompt.output)
    if not isinstance(data, dict):
        raise _Rejected(f"the answer must be a JSON object with {', '.join(map(repr, required))}")
    missing = [k for k in required if k not in data]
    if missing:
        raise _Rejected(f"the answer has no {missing[0]!r} (it has: {', '.join(map(repr, data)) or 'nothing'})")
    extra = sorted(set(data) - set(required) - set(optional))
    if extra:
        raise _Rejected(f"the answer has unknown field {extra[0]!r} (allowed: {', '.join(required + optional)})")
    facts, rules = data["facts"], data.get("rules")
    rules = [] if rules is None else rules
    if not isinstance(facts, list):
        raise _Rejected("'facts' must be a list")
    if not isinstance(rules, list):
        raise _Rejected("'rules' must be a list")
    r_required, r_optional = prompts.keys(prompt.rule)
    for i, rule in enumerate(rules):
        _check_fields(rule, r_required, r_optional, f"rules[{i}]")
        if not isinstance(rule.get("tests", []), list):
            raise _Rejected(f"rules[{i}]: 'tests' must be a list")
    return facts, rules


def _check_fields(obj: Any, required: Sequence[str], optional: Sequence[str], what: str) -> None:
    if not isinstance(obj, dict):
        raise _Rejected(f"{what} must be a JSON object")
    for k in required:
        if not isinstance(obj.get(k), str) or not obj[k].strip():
            raise _Rejected(f"{what} has no {k!r} (a non-empty string is required)")
    extra = sorted(set(obj) - set(required) - set(optional))
    if extra:
        raise _Rejected(f"{what} has unknown field {extra[0]!r} (allowed: {', '.join([*required, *optional])})")


def _relations(record: dict[str, Any], relations: Relations) -> None:
    for i, t in enumerate(record.get("triples") or []):
        label = t[1] if isinstance(t, list) and len(t) == 3 and isinstance(t[1], str) else None
        if label is None or (label.startswith("<") and label.endswith(">")):
            continue  # malformed triples are the record checks' to name; IRIs are checked on approval
        if relations.get(negated(label) or label) is None:
            raise _Rejected(f"triples[{i}]: unknown relation {label!r}; the store knows: {relations.labels()}")


def candidate(
    fact: Any, transcript: Transcript, chunk: Sequence[Turn], *, where: str, prompt: prompts.PromptVersion,
    relations: Relations,
) -> dict[str, Any]:
    """One fact of an answer as a checked candidate record. Raises _Rejected saying why not."""
    required, optional = prompts.keys(prompt.fact)
    _check_fields(fact, required, optional, where)
    span = fact["span"].strip()
    turns = locate(span, chunk)
    if turns is None:
        raise _Rejected(f"{where}: its span is not in the transcript it was shown: {span[:120]!r}")
    statement = fact["statement"].strip()
    seed = "\n".join((transcript.digest, transcript.name, normalise(span), statement))
    record: dict[str, Any] = {
        "id": "x-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:12],
        "statement": statement,
        "type": fact["type"],
        "source": _source(transcript, turns),
    }
    for key in ("about", "triples", "effective_from", "effective_to", "scope"):
        if fact.get(key) is not None:  # null means left out
            record["applies_to" if key == "scope" else key] = fact[key]
    try:
        checked = queue.parse([(where, {**record, "span": span})])[0]
    except Invalid as exc:
        raise _Rejected(f"{where}: {exc.message}") from None
    try:
        _relations(checked, relations)
    except _Rejected as exc:
        raise _Rejected(f"{where}: {exc}") from None
    return checked


# ---------------------------------------------------------------------- a run


@dataclass(frozen=True)
class ExtractReport:
    """What a run did. ``rejected`` lists every reason an answer could not be used; when it is
    not empty nothing was queued. Candidate rules are reported, never dropped unseen."""

    files: tuple[str, ...]
    chunks: int
    model: str
    prompt_version: str
    facts: tuple[str, ...] = ()  # candidate ids the answers gave, in order
    queued: tuple[str, ...] = ()  # newly queued (a candidate queued before is left as it was)
    rejected: tuple[str, ...] = ()
    rules: tuple[dict[str, Any], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.rejected

    @property
    def rules_note(self) -> str:
        return f"{len(self.rules)} candidate rules returned; {RULES_NOTE}"

    def summary(self) -> str:
        head = f"{len(self.files)} transcripts, {self.chunks} chunks, model {self.model}, prompt {self.prompt_version}"
        if self.rejected:
            lines = [f"{head}: rejected, nothing was queued:", *(f"  {r}" for r in self.rejected)]
        else:
            before = len(self.facts) - len(self.queued)
            lines = [f"{head}: {len(self.queued)} candidates queued" + (f", {before} already queued" if before else "")]
            lines += [f"  {i}" for i in self.queued]
        return "\n".join([*lines, self.rules_note])

    def to_json(self) -> dict[str, Any]:
        return {"files": list(self.files), "chunks": self.chunks, "model": self.model,
                "prompt_version": self.prompt_version, "ok": self.ok, "facts": list(self.facts),
                "queued": list(self.queued), "rejected": list(self.rejected), "rules": list(self.rules),
                "rules_note": self.rules_note}


def connect(url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0) -> Chat:
    """The chat client extraction uses by default (see :class:`workbench.review.llm.OpenAIChat`)."""
    return OpenAIChat(url, model, api_key=api_key, timeout=timeout)


def run(store: Store, paths: Sequence[Path], *, chat: Chat, prompt: str, propose: Propose) -> ExtractReport:
    """Extract candidates from transcripts with ``chat`` and queue them through ``propose``, all
    or nothing. Raises Invalid (a transcript, an unknown or edited prompt) before the model is
    asked anything, ModelUnavailable when the model server fails; in both cases nothing is queued."""
    if not paths:
        raise Invalid("name at least one transcript")
    version = prompts.load(prompt)
    transcripts = [read(Path(p)) for p in paths]
    relations = Relations.load(store)
    types = ", ".join(t.value for t in RecordType)
    found: dict[str, tuple[int, dict[str, Any]]] = {}  # candidate id -> (transcript index, record)
    rejected: list[str] = []
    rules: list[dict[str, Any]] = []
    total = 0
    for index, tr in enumerate(transcripts):
        pieces = chunks(tr.turns)
        total += len(pieces)
        for n, chunk in enumerate(pieces, 1):
            messages = version.messages(transcript=render(chunk, spoken=tr.spoken), relations=relations.labels(),
                                        types=types)
            try:
                reply = chat.complete(messages)
            except ModelUnavailable as exc:
                raise ModelUnavailable(f"{exc.message} (extracting {tr.path}, chunk {n} of {len(pieces)}; "
                                       "nothing was queued)", where=exc.where, **exc.data) from None
            here = f"{tr.path} chunk {n}"
            try:
                facts, said_rules = _parse(reply, version)
            except _Rejected as exc:
                rejected.append(f"{here}: {exc}")
                continue
            rules += [{"from": here, **r} for r in said_rules]
            for i, fact in enumerate(facts):
                try:
                    rec = candidate(fact, tr, chunk, where=f"facts[{i}]", prompt=version, relations=relations)
                except _Rejected as exc:
                    rejected.append(f"{here}: {exc}")
                    continue
                seen = found.get(rec["id"])
                if seen is not None and _without_span(seen[1]) != _without_span(rec):
                    rejected.append(f"{here}: facts[{i}]: the same statement and span as an earlier fact, "
                                    "but a different record")
                found.setdefault(rec["id"], (index, rec))
    rejected += _taken(store, [rec for _, rec in found.values()])
    report = ExtractReport(tuple(str(p) for p in paths), total, chat.model, version.id, tuple(found),
                           rejected=tuple(rejected), rules=tuple(rules))
    if rejected:
        return report
    queued: list[str] = []
    for index, tr in enumerate(transcripts):
        mine = [rec for i, rec in found.values() if i == index]
        if mine:
            via = Proposal("extraction", str(paths[index]), model=chat.model, prompt_version=version.id,
                           input_digest=tr.digest)
            queued += propose(mine, via)
    return replace(report, queued=tuple(queued))


def _without_span(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "span"}


def _taken(store: Store, records: Sequence[dict[str, Any]]) -> list[str]:
    """Candidates already queued under the same id with other content: checked for every
    transcript before any is proposed, so the run stays all or nothing."""
    if not records:
        return []
    old = {c.id: c for c in queue.list_candidates(store, ids=[r["id"] for r in records])}
    out = []
    for rec in records:
        was = old.get(rec["id"])
        if was is not None and was.record != _without_span(rec):
            out.append(f"candidate {rec['id']} is already queued ({was.status}) with other content")
    return out
