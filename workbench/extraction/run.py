"""Extraction: transcripts in, candidate memory records out, into the review queue and nowhere else.

A model reads each piece of a transcript with a versioned prompt (:mod:`workbench.extraction.prompts`)
and answers JSON. Its answer is checked strictly, because a model's output is bad input like any
other (design invariant 10): the JSON must parse and match the prompt's schema; every fact must
quote the text it came from (``span``), and that text must be in the piece the model was shown
(whitespace aside), so nothing is proposed that nobody said; every fact must be a valid memory
record (the queue's own checks) whose relations the store knows. One failure anywhere rejects the
whole run, with every reason found, and nothing is queued: a curator never sees half an answer.

Accepted facts become pending candidates (with their span, the model, the prompt version and the
transcript's SHA-256 in PROV-O) through ``propose``, one proposal per transcript, until a curator
approves them. Each rule in an answer (Turtle) gets the model as its only author, must load like a
rule file, and becomes a proposed version (:func:`workbench.review.rulebook.propose`) whose
proposer is the person running the extraction: a third person signs it off.

Transcripts are read and cut into pieces by :mod:`workbench.extraction.transcripts`.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench import limits
from workbench.errors import Invalid, ModelUnavailable, ParseError, WorkbenchError
from workbench.extraction import prompts
from workbench.extraction.llm import Chat, OpenAIChat, Reply
from workbench.extraction.transcripts import Transcript, Turn, chunks, locate, normalise, read, render
from workbench.names.relations import Relations, negated
from workbench.review import queue, rulebook
from workbench.review.queue import Proposal
from workbench.store import Store
from workbench.values.records import RecordType
from workbench.values.rules import Rule, RuleSet
from workbench.vocab import DCTERMS, SH

_VALUE = r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
# Strings, IRIs and comments are skipped whole; outside them, each author's value is replaced.
_AUTHOR = re.compile(rf"({_VALUE}|<[^>\s]*>|#[^\n]*)|(dcterms:creator\s+)(?:{_VALUE})")

Propose = Callable[[Sequence[dict[str, Any]], Proposal], list[str]]


# ---------------------------------------------------------------------- the model's answer


class _Rejected(Exception):
    """An answer, or a fact in it, that cannot be used; the message says why."""


def _source(transcript: Transcript, turns: Sequence[Turn]) -> dict[str, Any]:
    """The source of a fact: the turn (or turns) its span lies in. Every fact from one turn
    describes the same source, so approving several of them never conflicts on it."""
    numbers = sorted({t.number for t in turns})
    texts = list({t.number: t.whole or t.text for t in turns}.values())
    speakers = {t.speaker for t in turns}
    return {"id": f"{transcript.name}#{numbers[0]}" + (f"-{numbers[-1]}" if len(numbers) > 1 else ""),
            "said_by": speakers.pop() if len(speakers) == 1 and None not in speakers else "unknown",
            "text": "\n\n".join(texts), "locator": f"{transcript.name}:{turns[0].line}",
            **({"captured_at": turns[0].time} if turns[0].time else {})}


def _parse(reply: Reply, prompt: prompts.PromptVersion) -> tuple[list[Any], list[Any]]:
    """The facts and rules of an answer, checked against the prompt's output schema."""
    try:
        limits.check_json_text(reply.content, "the answer")
        data = json.loads(reply.content)
    except ParseError as exc:
        raise _Rejected(exc.message) from None
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
    facts, rules = data["facts"], [] if data.get("rules") is None else data["rules"]
    for key, value in (("facts", facts), ("rules", rules)):
        if not isinstance(value, list):
            raise _Rejected(f"{key!r} must be a list")
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
    """What a run did. With any reason in ``rejected`` (and ``rules_rejected``), nothing was written."""

    files: tuple[str, ...]
    chunks: int
    model: str
    prompt_version: str
    facts: tuple[str, ...] = ()  # candidate ids the answers gave, in order
    queued: tuple[str, ...] = ()  # newly queued (a candidate queued before is left as it was)
    rejected: tuple[str, ...] = ()
    rules: tuple[dict[str, Any], ...] = ()  # the rules the answers gave
    rules_proposed: tuple[tuple[str, int], ...] = ()  # (rule id, version) newly proposed
    rules_rejected: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.rejected

    def summary(self) -> str:
        head = f"{len(self.files)} transcripts, {self.chunks} chunks, model {self.model}, prompt {self.prompt_version}"
        if self.rejected:
            return "\n".join([f"{head}: rejected, nothing was queued:", *(f"  {r}" for r in self.rejected)])
        before = f", {len(self.facts) - len(self.queued)} already queued" if len(self.facts) > len(self.queued) else ""
        return "\n".join([f"{head}: {len(self.queued)} candidates queued{before}", *(f"  {i}" for i in self.queued),
                          f"{len(self.rules_proposed)} rule versions proposed, pending a reviewer's sign-off "
                          f"({len(self.rules)} rules returned)", *(f"  {r} v{n}" for r, n in self.rules_proposed)])

    def to_json(self) -> dict[str, Any]:
        return {"files": list(self.files), "chunks": self.chunks, "model": self.model,
                "prompt_version": self.prompt_version, "ok": self.ok, "facts": list(self.facts),
                "queued": list(self.queued), "rejected": list(self.rejected), "rules": list(self.rules),
                "rules_proposed": [{"id": i, "version": n} for i, n in self.rules_proposed],
                "rules_rejected": list(self.rules_rejected)}


def connect(url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0) -> Chat:
    """The chat client extraction uses by default (see :class:`workbench.extraction.llm.OpenAIChat`)."""
    return OpenAIChat(url, model, api_key=api_key, timeout=timeout)


def run(
    store: Store, paths: Sequence[Path], *, chat: Chat, prompt: str, propose: Propose, actor: str, now: str,
    rule_relations: frozenset[str], rule_files: RuleSet,
) -> ExtractReport:
    """Extract candidates from transcripts with ``chat``, queue them through ``propose`` and propose
    their rules as ``actor``, all or nothing. Raises Invalid (a transcript, an unknown or edited prompt)
    before the model is asked anything, ModelUnavailable when the model server fails, Forbidden when the
    answers hold rules ``actor`` may not propose; in each case nothing is queued or proposed."""
    if not paths:
        raise Invalid("name at least one transcript")
    version = prompts.load(prompt)
    transcripts = [read(Path(p)) for p in paths]
    relations = Relations.load(store)
    types = ", ".join(t.value for t in RecordType)
    found: dict[str, tuple[int, dict[str, Any]]] = {}  # candidate id -> (transcript index, record)
    rejected: list[str] = []
    said: list[tuple[int, str, dict[str, Any]]] = []  # (transcript index, where, rule)
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
            said += [(index, f"{here}: rules[{i}]", r) for i, r in enumerate(said_rules)]
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
    texts, bad_rules = _rule_texts(store, said, f"model:{chat.model}", actor, rule_relations, rule_files)
    rejected += bad_rules
    rules = tuple({"from": where.rsplit(": rules[", 1)[0], **r} for _, where, r in said)
    report = ExtractReport(tuple(str(p) for p in paths), total, chat.model, version.id, tuple(found),
                           rejected=tuple(rejected), rules=rules, rules_rejected=tuple(bad_rules))
    if rejected:
        return report
    vias = [Proposal("extraction", str(p), model=chat.model, prompt_version=version.id, input_digest=tr.digest)
            for p, tr in zip(paths, transcripts, strict=True)]
    queued: list[str] = []
    for index, via in enumerate(vias):
        mine = [rec for i, rec in found.values() if i == index]
        queued += propose(mine, via) if mine else []
    proposed: list[tuple[str, int]] = []
    with tempfile.TemporaryDirectory(prefix="workbench-extract-") as tmp:
        for n, (index, text) in enumerate(texts, 1):
            (path := Path(tmp) / f"rule-{n}.ttl").write_text(text, encoding="utf-8")
            done = rulebook.propose(store, path, actor=actor, now=now, relations=rule_relations, files=rule_files,
                                    via=vias[index])
            proposed += [(p.id, p.version) for p in done if p.outcome == "proposed"]
    return replace(report, queued=tuple(queued), rules_proposed=tuple(proposed))


def _without_span(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "span"}


def _taken(store: Store, records: Sequence[dict[str, Any]]) -> list[str]:
    """Candidates queued before under the same id with other content (checked before any is proposed)."""
    if not records:
        return []
    old = {c.id: c for c in queue.list_candidates(store, ids=[r["id"] for r in records])}
    out = []
    for rec in records:
        was = old.get(rec["id"])
        if was is not None and was.record != _without_span(rec):
            out.append(f"candidate {rec['id']} is already queued ({was.status}) with other content")
    return out


def _rule_texts(store: Store, said: Sequence[tuple[int, str, dict[str, Any]]], author: str, actor: str,
                relations: frozenset[str], files: RuleSet) -> tuple[list[tuple[int, str]], list[str]]:
    """Each rule's Turtle with ``author`` as its author, checked as ``rules propose`` would: (transcript
    index, text) to propose, and why others cannot be. Raises Forbidden unless ``actor`` may propose."""
    if not said:
        return [], []
    rulebook.may_propose(store, actor)
    out: list[tuple[int, str]] = []
    problems: list[str] = []
    seen: dict[tuple[str, int], Rule] = {}
    stored = rulebook.versions(store)
    for index, where, said_rule in said:
        text = authored(said_rule["turtle"], author)
        try:
            loaded = rulebook.parse_text(text, where, relations)
            for r in loaded:  # its author, a rule given twice, and versions as `rules propose` checks them
                if r.author != author:
                    raise Invalid(f"rule {r.id}: its author must be {author} (a dcterms:creator string)", where=where)
                if not rulebook.same_rule(seen.setdefault((r.id, r.version), r), r):
                    raise Invalid(f"rule {r.id} version {r.version} is given twice with different content", where=where)
                rulebook.placed(r, [v for v in stored if v.id == r.id], files, relations)
        except WorkbenchError as exc:
            problems.append(f"{exc.where or where}: {exc.message}")
            continue
        if any(seen[(r.id, r.version)] is r for r in loaded):  # not only rules given before
            out.append((index, text))
    return out, problems


def authored(text: str, author: str) -> str:
    """Rules' Turtle with ``author`` as the author of each, whatever it claimed: every
    dcterms:creator value replaced, one added for a rule without. A text that does not parse is
    left for the loader to name the error."""
    value = str(ox.Literal(author))  # quoted and escaped
    edited = _AUTHOR.sub(lambda m: m.group(0) if m.group(1) else m.group(2) + value, text)
    try:
        triples = [q.triple for q in ox.parse(edited, format=ox.RdfFormat.TURTLE)]
    except SyntaxError:
        return text
    named = {t.object for t in triples if t.predicate == SH.rule and isinstance(t.object, ox.NamedNode)}
    missing = sorted(str(n) for n in named - {t.subject for t in triples if t.predicate == DCTERMS.creator})
    return edited + "".join(f"\n{n} {DCTERMS.creator} {value} .\n" for n in missing)
