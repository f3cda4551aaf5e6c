"""Recall: the records that bear on a question in natural language, as a small bundle, or "no
memory". (The whole procedure, and how its floors were tuned: docs/recall.md.)

1. **Names bind first, exactly** (:func:`workbench.recall.scope.spot_names`): every run of up to
   six words is looked up as a name or registered alias; the longest matches win and never overlap.
2. **Scope** (:func:`workbench.recall.scope.scope_records`): the records that mention a bound
   entity (about, applies to, decided by, or in their triples), merged entities included. A name
   nothing is recorded about is just a word.
3. **Unknown names**: a capitalised run that binds nothing gets "did you mean" suggestions, never
   a binding; if it resembles a known name or no record has its words, the question is about
   someone the memory does not know: no memory.
4. **Rank inside the scope**, hybrid: content coverage (:mod:`workbench.recall.coverage`) and the
   cosine of the question (less its scoped names) to the record. Active records only; superseded
   ones when the question asks about the past. Someone named who speaks in the memory is asked
   about their own records (:mod:`workbench.records.owners`); mentions rank lower.
5. **Abstain** when nothing in scope matches, or the calibrated gate (:mod:`workbench.recall.gate`)
   puts the chance that the bundle holds the answer under its threshold.
6. **No name bound**: fuzzy recall over every record, labelled a guess.

The bundle is cut to a budget in records and characters, set by purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from workbench.errors import Invalid
from workbench.ids import record_iri
from workbench.names import entities
from workbench.names.suggestions import NameIndex
from workbench.recall import gate as gates
from workbench.recall import whose
from workbench.recall.coverage import MIN_COVERAGE, Lexicon, slip
from workbench.recall.memory import Memory as Memory  # re-exported: a bundle holds them
from workbench.recall.scope import CJK_ONLY, scope_records, spot_names
from workbench.records.cache import RecordCache
from workbench.store import Store
from workbench.values.records import Record, RecordType, Source, Status
from workbench.vectors.encoders import stem, term, terms, tokens, words
from workbench.vectors.index import VectorIndex

MAX_CHARS = 10_000


def _words(text: str) -> frozenset[str]:
    """Cue words as :func:`words` sees them (stemmed)."""
    return frozenset(stem(w) for w in text.split())


HISTORY = _words("previous previously earlier originally old older change changed history why")
# "before" asks about the past only in the past tense: "where did it keep data before the change?",
# not "how many reviews does it need before a merge?".
BEFORE, PAST_TENSE = _words("before"), _words("did was were had used")
CUES = {
    RecordType.DECISION: "decide decided decision decisions chose choose chosen agreed approve approved rule",
    RecordType.PREFERENCE: "prefer preference preferred like style spelling writing write",
    RecordType.EVENT: "attend attended happen happened event",
    RecordType.STATE: "current currently weight weigh level",
}
TYPE_CUES = {t: _words(cues) for t, cues in CUES.items()}  # in the question, as words
CUE_TERMS = {t: frozenset(terms(cues)) for t, cues in CUES.items()}  # held by a record of the type, as terms


@dataclass(frozen=True)
class Purpose:
    """How much a bundle may hold, per use."""

    name: str
    limit: int
    chars: int


PURPOSES = {
    "default": Purpose("default", 5, 1500),
    "writing": Purpose("writing", 8, 3000),  # style and preferences: more, shorter context is fine
    "decision": Purpose("decision", 3, 1200),  # what governs now: few, exact
}


@dataclass(frozen=True)
class Thresholds:
    """The cosine a record needs in scope when it shares no content word, and the cosine a fuzzy
    (unscoped) match needs: tuned on data/eval/dev.jsonl, and for ``minilm-onnx`` (the default)
    on the conversations benchmark with the gate refit at each floor (docs/recall.md)."""

    scoped: float
    fuzzy: float


THRESHOLDS = {"hashing": Thresholds(0.30, 0.40), "sentence-transformers": Thresholds(0.40, 0.40),
              "minilm-onnx": Thresholds(0.20, 0.40)}


def thresholds(encoder_name: str) -> Thresholds:
    return THRESHOLDS.get(encoder_name.split("-v1")[0].split("/")[0], THRESHOLDS["hashing"])


@dataclass(frozen=True)
class Bundle:
    """What recall returns: a tier (``recorded``, ``guessed`` or ``no_memory``), the records,
    the names that bound (the scope), suggestions for names that did not, and the budget."""

    question: str
    tier: str
    summary: str
    memories: tuple[Memory, ...] = ()
    scope: tuple[tuple[str, str], ...] = ()  # (name as written, entity IRI)
    suggestions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (unbound name, did you mean ...)
    purpose: Purpose = PURPOSES["default"]
    chars: int = 0
    notes: tuple[str, ...] = field(default=())
    probability: float | None = None  # that the bundle holds the answer (the gate's; None: no gate)

    @property
    def ids(self) -> list[str]:
        return [m.record.id for m in self.memories]

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "question": self.question,
            "summary": self.summary,
            "records": [m.to_json() for m in self.memories],
            "scope": [{"name": n, "entity": e} for n, e in self.scope],
            "suggestions": [{"name": n, "did_you_mean": list(c)} for n, c in self.suggestions],
            "budget": {"purpose": self.purpose.name, "records": self.purpose.limit, "chars": self.purpose.chars,
                       "used_chars": self.chars},
            "notes": list(self.notes),
            "probability": None if self.probability is None else round(self.probability, 4),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Bundle:
        """A bundle back from :meth:`to_json` (as the JSON API sends it). Each record holds what the
        bundle showed of it (id, statement, type, status, dates, links, source), not all of it."""
        budget = data["budget"]
        memories = []
        for m in data["records"]:
            src = m["source"]
            source = Source(src["id"], src["said_by"], src["captured_at"], src["locator"])
            record = Record(id=m["id"], iri=record_iri(m["id"]).value, statement=m["statement"],
                            type=RecordType(m["type"]), status=Status(m["status"]), source=source, created_at="",
                            said_by=src["said_by"], effective_from=m["effective_from"],
                            supersedes=tuple(m["supersedes"]), superseded_by=tuple(m["superseded_by"]))
            memories.append(Memory(record, m["score"], m["tier"], m["why"]))
        return cls(
            question=data["question"], tier=data["tier"], summary=data["summary"], memories=tuple(memories),
            scope=tuple((s["name"], s["entity"]) for s in data["scope"]),
            suggestions=tuple((s["name"], tuple(s["did_you_mean"])) for s in data["suggestions"]),
            purpose=Purpose(budget["purpose"], budget["records"], budget["chars"]), chars=budget["used_chars"],
            notes=tuple(data["notes"]), probability=data.get("probability"),
        )

    def text(self) -> str:
        lines = [f"[{self.tier}] {self.summary}"]
        if self.probability is not None and self.memories:
            lines.append(f"  chance that these records hold the answer: {self.probability:.0%} (the calibrated gate)")
        for m in self.memories:
            label = "model guess: " if m.tier == "guessed" else ""
            src = m.record.source
            lines.append(f"  {m.record.id} ({m.score:.2f}) {label}{m.record.statement}  "
                         f"[{src.id}, said by {src.said_by or '?'}{', ' + src.captured_at if src.captured_at else ''}]")
        for n, cands in self.suggestions:
            lines.append(f"  '{n}' binds no name" + (f"; did you mean {', '.join(cands)}?" if cands else ""))
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: each record with its source, guesses labelled
        (:mod:`workbench.presentation.notebook`)."""
        from workbench.presentation.notebook import bundle_html

        return bundle_html(self)


def check_question(question: str, *, limit: int | None, chars: int | None) -> str:
    if not isinstance(question, str):
        raise Invalid("the question must be text")
    text = question.strip()
    if not text:
        raise Invalid("the question is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8 arrive as lone surrogates
        raise Invalid("the question is not valid UTF-8 text") from None
    if len(text) > MAX_CHARS:
        raise Invalid(f"the question is {len(text):,} characters long; recall takes at most {MAX_CHARS:,}")
    if limit is not None and limit < 1:
        raise Invalid(f"--limit must be at least 1, not {limit}")
    if chars is not None and chars < 1:
        raise Invalid(f"--budget-chars must be at least 1, not {chars}")
    return text


def recall(
    store: Store,
    index: VectorIndex,
    names: NameIndex,
    question: str,
    *,
    purpose: str = "default",
    limit: int | None = None,
    chars: int | None = None,
    gate: bool = True,
    cache: RecordCache | None = None,
) -> Bundle:
    """See the module docstring. ``gate`` False keeps a bundle the gate would stop (with its
    probability), for evaluating the gate; ``cache`` keeps the records read back between
    questions (one per readable store). Raises Invalid for an empty or oversized question, a
    budget below one, or an unknown purpose."""
    text = check_question(question, limit=limit, chars=chars)
    cache = cache or RecordCache(store)
    cache.check()
    if purpose not in PURPOSES:
        raise Invalid(f"unknown purpose {purpose!r}; use one of {', '.join(PURPOSES)}")
    p = PURPOSES[purpose]
    budget = Purpose(p.name, limit or p.limit, chars or p.chars)
    bound, left = spot_names(store, text, cache)
    all_words = set(words(text))
    want_history = bool(all_words & HISTORY) or bool(all_words & BEFORE and all_words & PAST_TENSE)
    cue_types = {t for t, cues in TYPE_CUES.items() if all_words & cues}
    limits = thresholds(index.encoder.name)
    notes = [f"'{g}' is ambiguous ({', '.join(iris)}); it was left out of the scope" for g, iris, _, _ in bound
             if len(iris) > 1]
    # A bound name scopes the search only if something is recorded about it; a kind that only
    # common sense mentions ("car") is a word of the question like any other.
    asked = tuple(sorted({iris[0] for _, iris, _, _ in bound if len(iris) == 1}))
    by_entity = cache.remember(("scope", asked), lambda: scope_records(store, asked))
    scope = [(g, iris[0]) for g, iris, _, _ in bound if len(iris) == 1 and by_entity.get(iris[0])]
    unscoped = [(s0, e0) for g, iris, s0, e0 in bound if len(iris) != 1 or not by_entity.get(iris[0])]
    spans = sorted(left + unscoped)
    content = [w for s0, e0 in spans for w in terms(text[s0:e0]) if not CJK_ONLY.match(w)]
    shown: dict[str, str] = {}  # each term as the question wrote it ("studi" -> "studying"), for what users read
    for s0, e0 in spans:
        for t in tokens(text[s0:e0]):
            shown.setdefault(term(t), t)
    runs = names.unbound_runs(text, left)
    suggestions = tuple((run, names.similar(run)) for run in runs)
    unknown = [run for run, similar in suggestions if similar or not _mentioned(cache, index, run)]

    def none(why: str) -> Bundle:
        return Bundle(text, "no_memory", f"no memory: {why}", (), tuple(scope), suggestions, budget, 0, tuple(notes))

    if unknown:
        # The question is about someone or something the memory does not know by that name:
        # whatever matches the rest of it is about someone else.
        return none(f"{', '.join(repr(u) for u in unknown)} names nothing recorded"
                    + (" (see the suggestions)" if any(s for _, s in suggestions) else ""))
    # The vector side sees the question as written, less the names that bound a scope.
    masked = text
    for _, iris, a, b in sorted(bound, key=lambda h: -h[2]):
        if len(iris) == 1 and by_entity.get(iris[0]):
            masked = masked[:a] + masked[b:]
    cvec = index.encoder.encode([masked if content else text])[0]
    rival: Memory | None = None  # the best match owned by someone else, when someone named speaks here
    whom = {e for _, e in scope}
    if scope:
        ids = set().union(*(by_entity[e] for _, e in scope))
        coverage = {i: sum(i in by_entity[e] for _, e in scope) for i in ids}
        ranked, anywhere, weight = _rank(cache, index, cvec, ids, content, cue_types, want_history, limits.scoped,
                                         coverage, shown)
        tier = "recorded"
        owned = whose.own(cache, ids, whom, ranked)
        ranked, elsewhere_note, contrast, mention_first = owned.ranked, owned.note, owned.contrast, owned.mention_first
        if owned.speaks and ranked and content:
            rival = whose.rival(cache, index, cvec, whom, weight, cue_types, want_history, ids,
                                lambda r: _bag(cache, r))
        if elsewhere_note:
            notes.append(elsewhere_note)
            return none(f"nothing {_names(scope)} said or did matches the question")
        if not ranked:
            elsewhere = _rank(cache, index, cvec, None, content, cue_types, want_history, limits.fuzzy, {}, shown)[0]
            if elsewhere:
                notes.append(f"the closest record elsewhere, {elsewhere[0].record.id}, is not about {_names(scope)}")
            return none(f"nothing recorded about {_names(scope)} matches the question")
    else:
        ranked, anywhere, _ = _rank(cache, index, cvec, None, content, cue_types, want_history, limits.fuzzy, {},
                                    shown)
        ranked, contrast, mention_first = _first_person(store, all_words, ranked), 0.0, False
        tier = "guessed"
        if not ranked:
            return none("no name in the question binds and no record matches it")
    # The gate judges what it was fit on: a scope, and words to match besides the names ("Where
    # is Paris?" asks for what is recorded about Paris, whatever it says).
    model = gates.for_encoder(index.encoder.name) if scope and content else None
    lead = (rival.score - ranked[0].score) if rival is not None else 0.0
    chance = (model.probability(gates.features(ranked, contrast, anywhere, len(set(content)), True, lead,
                                               mention_first))
              if model else None)
    if gate and model and not model.holds(chance):
        top = _bag(cache, ranked[0].record)
        missing = [shown.get(w, w) for w in dict.fromkeys(content) if w not in top and not slip(w, top)]
        if rival is not None and lead > 0:
            theirs = rival.record.source.said_by or rival.record.said_by or "someone else"
            notes.append(f"{theirs}'s record {rival.record.id} matches the question better, but it is not "
                         f"{whose.asked_names(store, whom)}'s own")
        return replace(none(f"the best match is too thin to hold the answer (chance {chance:.0%})"
                            + (f"; nothing matched {', '.join(repr(w) for w in missing[:4])}" if missing else "")),
                       probability=chance)
    kept, used = _cut(ranked, budget)
    if not kept:
        notes.append(f"{len(ranked)} matching records, none short enough for a budget of {budget.chars} characters")
    memories = tuple(Memory(m.record, m.score, tier, m.why) for m in kept)
    what = f"about {_names(scope)}" if scope else "found by similarity alone (model guess: no name bound)"
    summary = f"{len(memories)} record{'s' if len(memories) != 1 else ''} {what}"
    return Bundle(text, tier, summary, memories, tuple(scope), suggestions, budget, used, tuple(notes), chance)


FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "our", "us"})


def _first_person(store: Store, asked: set[str], ranked: list[Memory]) -> list[Memory]:
    """A question in the first person ("my friend who works on chips") is about the speaker's
    own memories: when an entity is named "me", the records about it rank ahead of the rest
    (which are kept, lower: it is a ranking, not a binding)."""
    if not ranked or not asked & FIRST_PERSON:
        return ranked
    me = entities.resolve_keys(store, ["me"]).get("me", ())
    if len(me) != 1:
        return ranked
    mine = scope_records(store, [me[0]])[me[0]]
    out = [m if m.record.id in mine else replace(m, score=m.score * 0.6, why=m.why + "; not about me")
           for m in ranked]
    return sorted(out, key=lambda m: (-m.score, m.record.id))


def _mentioned(cache: RecordCache, index: VectorIndex, phrase: str) -> bool:
    """Does any recallable record contain a word of ``phrase``? (Its nearest records by
    vector are the ones that would; their text is checked word by word.)"""
    want = set(terms(phrase))
    hits = index.search(index.encoder.encode([phrase])[0], 10)
    return any(want & cache.words(r) for r in cache.load(i for i, _ in hits).values())


def _bag(cache: RecordCache, record: Record) -> frozenset[str]:
    """A record's terms; a record of a type the question asks for ("what did Dana decide?") holds its cue words."""
    return cache.words(record) | CUE_TERMS.get(record.type, frozenset())


def _names(scope: Sequence[tuple[str, str]]) -> str:
    return " and ".join(repr(n) for n, _ in scope)


def _rank(
    cache: RecordCache,
    index: VectorIndex,
    qvec: np.ndarray,
    ids: set[str] | None,
    content: list[str],
    cue_types: set[RecordType],
    want_history: bool,
    floor: float,
    coverage: dict[str, int],
    shown: dict[str, str],
) -> tuple[list[Memory], float, dict[str, float]]:
    """Candidates scored and sorted best first, those that do not match the content dropped;
    the share of the question's salience any candidate holds; and that salience, term by term.
    ``shown`` gives each term as the question wrote it, for the reasons users read."""
    hits = index.search(qvec, len(ids) if ids is not None else 50, within=ids)
    if not hits:
        return [], 0.0, {}
    found = cache.load(i for i, _ in hits)

    def lexicon() -> Lexicon:
        return Lexicon({rid: _bag(cache, r) for rid, r in found.items()})

    # A scope's words are indexed once per store version; the nearest records of a question
    # without a scope differ every time.
    lex = cache.remember(("lexicon", frozenset(ids)), lexicon) if ids is not None else lexicon()
    weight = lex.salience(content)
    held = lex.coverage(weight)
    top_cover = max(coverage.values(), default=0)
    out = []
    for rid, cos in hits:
        shared = held.terms.get(rid, [])
        kw = held.shares.get(rid, 0.0)
        if content and (kw < MIN_COVERAGE if shared else cos < floor):
            continue  # too little of what was asked is in it
        if not content and ids is None:
            continue  # nothing to match on and no scope: no guess
        rec = found.get(rid)
        if rec is None or (rec.status is Status.SUPERSEDED and not want_history):
            continue
        if rec.status is Status.RETRACTED:
            continue
        score = 0.5 * kw + 0.5 * max(cos, 0.0)
        if rec.type in cue_types:
            score += 0.1
        if coverage and top_cover > 1:
            score *= 0.6 + 0.4 * coverage.get(rid, 0) / top_cover
        if rec.status is Status.SUPERSEDED:
            score *= 0.8
        held_words = ", ".join(shown.get(t, t) for t in shared)
        why = f"shares {held_words}" if shared else f"similar wording (cosine {cos:.2f})"
        out.append(Memory(rec, score, "recorded", why, kw, cos))
    out.sort(key=lambda m: (-m.score, m.record.id))
    return out, held.anywhere if found else 0.0, weight


def _cut(ranked: list[Memory], budget: Purpose) -> tuple[list[Memory], int]:
    """The best records within the budget, dropping those far below the best."""
    if not ranked:
        return [], 0
    best = ranked[0].score
    kept: list[Memory] = []
    used = 0
    for m in ranked:
        if len(kept) >= budget.limit or m.score < 0.5 * best:
            break
        size = len(m.record.statement)
        if used + size > budget.chars:
            continue  # a shorter one further down may still fit
        kept.append(m)
        used += size
    return kept, used
