"""Evaluating recall: a question set says which records should come back for each question (or
that nothing should); the harness runs it through :meth:`Workbench.recall` and the plain
vector-RAG recipe (:mod:`workbench.recall.baseline`) side by side, so that every change to recall
is measured on the same questions against the same naive peer. Besides the set on a store: the
set again with seeded **distractors** (other projects and people, some superseded) on a scratch
store, to see whether scoping and supersession hold under noise; and the **supersession
scenario** (recall a decision, import its correction, recall again). Scratch stores live in a
temporary directory; the store under evaluation is only read."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import Invalid
from workbench.recall.baseline import Found, PlainRecipe
from workbench.recall.bundles import PURPOSES
from workbench.records import jsonl
from workbench.resources import DATA_DIR
from workbench.values.records import Status
from workbench.vocab import PREFIXES

if TYPE_CHECKING:
    from workbench.service import Workbench

DEV_SET = DATA_DIR / "eval" / "dev.jsonl"
TEMPLATES = DATA_DIR / "eval" / "distractors.json"  # projects, people, decision and personal templates
CORRECTION = DATA_DIR / "eval" / "supersession.jsonl"  # the scenario's new decision, superseding an old one
FIELDS = {"id", "question", "expect", "no_memory", "purpose", "stale", "memory", "kind"}
REQUIRED = ("id", "question", "expect")
SEED = 20261130


@dataclass(frozen=True)
class Question:
    """One line of a set: a question, the records any one of which answers it, or none."""

    id: str
    question: str
    expect: tuple[str, ...]
    no_memory: bool = False
    purpose: str = "default"
    stale: tuple[str, ...] = ()
    where: str = ""  # file:line, for errors found later (an expected id missing from the store)
    memory: str = ""  # in a benchmark of many memories: which one it is asked of
    kind: str = ""  # what kind of question (single-hop, wrong-person...), for the totals per kind


def set_path(name: str | Path) -> Path:
    """``dev`` names the shipped dev set; anything else is a path."""
    return DEV_SET if str(name) == "dev" else Path(name)


def load_set(path: str | Path) -> tuple[Question, ...]:
    """Read and check a question set. Raises Invalid/ParseError naming file, line and field."""
    path = set_path(path)
    if not path.is_file():
        raise Invalid(f"no such question set: {path}")
    out: list[Question] = []
    seen: dict[str, int] = {}
    for where, number, raw in jsonl.json_lines(jsonl.read_text(path), str(path)):
        q = _question(raw, where)
        if q.id in seen:
            raise Invalid(f"field 'id': {q.id!r} is already used on line {seen[q.id]}", where=q.where)
        seen[q.id] = number
        out.append(q)
    if not out:
        raise Invalid("the set holds no questions", where=str(path))
    return tuple(out)


def _question(raw: Any, where: str) -> Question:
    if not isinstance(raw, dict):
        raise Invalid("a question must be a JSON object", where=where)
    if unknown := sorted(set(raw) - FIELDS):
        raise Invalid(f"unknown field {unknown[0]!r}; the fields are {', '.join(sorted(FIELDS))}", where=where)
    if missing := [k for k in REQUIRED if k not in raw]:
        raise Invalid(f"field {missing[0]!r} is missing", where=where)
    for key in ("id", "question"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise Invalid(f"field {key!r} must be non-empty text", where=where)
    expect, stale = _ids(raw, "expect", where), _ids(raw, "stale", where)
    no_memory = raw.get("no_memory", False)
    if not isinstance(no_memory, bool):
        raise Invalid("field 'no_memory' must be true or false", where=where)
    if no_memory and expect:
        raise Invalid("field 'expect' must be empty when no_memory is true", where=where)
    if not no_memory and not expect:
        raise Invalid("field 'expect' names no record; list one, or set \"no_memory\": true", where=where)
    purpose = raw.get("purpose", "default")
    if purpose not in PURPOSES:
        raise Invalid(f"field 'purpose' must be one of {', '.join(PURPOSES)}, not {purpose!r}", where=where)
    if both := sorted(set(expect) & set(stale)):
        raise Invalid(f"field 'stale' lists expected records: {', '.join(both)}", where=where)
    for key in ("memory", "kind"):
        if key in raw and (not isinstance(raw[key], str) or not raw[key].strip()):
            raise Invalid(f"field {key!r} must be non-empty text", where=where)
    return Question(raw["id"], raw["question"].strip(), expect, no_memory, purpose, stale, where,
                    raw.get("memory", ""), raw.get("kind", ""))


def _ids(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise Invalid(f"field {key!r} must be a list of record ids", where=where)
    if len(set(value)) != len(value):
        raise Invalid(f"field {key!r} lists a record twice", where=where)
    return tuple(value)


def check_records(wb: Workbench, questions: Sequence[Question]) -> None:
    """Every id a set names must be a record in the store, or its numbers would mean nothing."""
    rows = wb.store.select(PREFIXES + "SELECT ?id WHERE { GRAPH ?m { ?r a wb:Assertion ; dcterms:identifier ?id } }")
    have = {r["id"].value for r in rows}  # type: ignore[union-attr]
    for q, key, i in ((q_, k, i) for q_ in questions for k in ("expect", "stale") for i in getattr(q_, k)):
        if i not in have:
            raise Invalid(f"field {key!r}: no record {i!r} in the store (the dev set is written over the sample "
                          "data: `workbench init --sample`)", where=q.where)


# ---------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Outcome:
    """How one system did on one question."""

    id: str
    question: str
    no_memory: bool
    tier: str
    returned: tuple[str, ...]
    rank: int | None  # 1-based rank of the first expected record
    stale: tuple[str, ...]  # superseded (or listed as stale) and not expected
    unrelated: tuple[str, ...]  # returned but not expected
    distractors: tuple[str, ...]  # generated distractors returned though not expected (distractor mode)
    chars: int  # characters of the statements handed back

    @property
    def hit(self) -> bool:
        return self.rank is not None

    @property
    def abstained(self) -> bool:
        return self.tier == "no_memory"

    @property
    def ok(self) -> bool:
        """Right answer (or right silence) and nothing stale."""
        return (self.abstained if self.no_memory else self.hit) and not self.stale

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "hit": self.hit, "abstained": self.abstained, "ok": self.ok,
                "correct_abstention": self.no_memory and self.abstained,
                "false_abstention": not self.no_memory and self.abstained}


def score(q: Question, tier: str, found: Sequence[Found], distractors: frozenset[str] = frozenset()) -> Outcome:
    """Expected records are never stale, unrelated or leaked distractors, even when superseded
    (a question about the past may expect an old decision)."""
    ids = tuple(f.id for f in found)
    rank = next((n for n, i in enumerate(ids, start=1) if i in q.expect), None)
    other = tuple(i for i in ids if i not in q.expect)
    stale = tuple(f.id for f in found if f.id in other and (f.status is Status.SUPERSEDED or f.id in q.stale))
    return Outcome(q.id, q.question, q.no_memory, tier, ids, rank, stale, other,
                   tuple(i for i in other if i in distractors), sum(len(f.statement) for f in found))


def _rate(n: int, of: int) -> float | None:
    return round(n / of, 4) if of else None


@dataclass(frozen=True)
class Totals:
    """Rates over a run: hit@k over answerable questions, abstention over no-memory ones."""

    questions: int
    answerable: int
    no_memory: int
    hit_at_1: float | None
    hit_at_5: float | None
    hit_at_10: float | None
    abstention: float | None  # no-memory questions answered "no memory" (higher is better)
    false_abstention: float | None  # answerable questions answered "no memory" (goal: under 5%)
    stale_returned: int
    distractors_returned: int
    mean_unrelated: float
    mean_chars: float

    @classmethod
    def of(cls, outcomes: Sequence[Outcome]) -> Totals:
        ans = [o for o in outcomes if not o.no_memory]
        nom = [o for o in outcomes if o.no_memory]
        h1, h5, h10 = (_rate(sum(o.rank is not None and o.rank <= k for o in ans), len(ans)) for k in (1, 5, 10))
        n = len(outcomes) or 1
        return cls(len(outcomes), len(ans), len(nom), h1, h5, h10, _rate(sum(o.abstained for o in nom), len(nom)),
                   _rate(sum(o.abstained for o in ans), len(ans)), sum(len(o.stale) for o in outcomes),
                   sum(len(o.distractors) for o in outcomes), round(sum(len(o.unrelated) for o in outcomes) / n, 2),
                   round(sum(o.chars for o in outcomes) / n, 1))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Run:
    """One system over one set."""

    system: str
    outcomes: tuple[Outcome, ...]
    totals: Totals

    def to_json(self) -> dict[str, Any]:
        return {"system": self.system, "totals": self.totals.to_json(),
                "questions": [o.to_json() for o in self.outcomes]}


Ask = Callable[[Question], tuple[str, Sequence[Found]]]


def run(system: str, questions: Sequence[Question], ask: Ask, distractors: frozenset[str] = frozenset()) -> Run:
    """Score any system given as ``ask``: a question -> (tier, records best first)."""
    outcomes = tuple(score(q, *ask(q), distractors) for q in questions)
    return Run(system, outcomes, Totals.of(outcomes))


def _recall(wb: Workbench) -> Ask:
    def ask(q: Question) -> tuple[str, list[Found]]:
        b = wb.recall(q.question, purpose=q.purpose)
        return b.tier, [Found(m.record.id, m.record.statement, m.record.status, m.score) for m in b.memories]

    return ask


@dataclass(frozen=True)
class Report:
    """Workbench and the plain recipe on one set, on one store."""

    set: str
    encoder: str
    k: int
    workbench: Run
    plain: Run

    def to_json(self) -> dict[str, Any]:
        return {"set": self.set, "encoder": self.encoder, "k": self.k, "workbench": self.workbench.to_json(),
                "plain": self.plain.to_json()}


def evaluate(wb: Workbench, questions: Sequence[Question], *, set_name: str = "", k: int = 10,
             distractors: frozenset[str] = frozenset()) -> Report:
    """Both systems over the set, on ``wb``'s store (only read; recall's index is kept beside it)."""
    check_records(wb, questions)
    enc = wb._indexes.records().ready().encoder
    plain = PlainRecipe(wb.store, enc, k=k)
    return Report(set_name, enc.name, k, run("workbench", questions, _recall(wb), distractors),
                  run(plain.name, questions, lambda q: ("top-k", plain.search(q.question)), distractors))


# ---------------------------------------------------------------------- scratch stores


@contextmanager
def scratch(user: str, encoder_spec: str | None) -> Iterator[tuple[Workbench, Path]]:
    """A new embedded store with the sample data, in a temporary directory removed afterwards."""
    from workbench.service import Workbench

    with tempfile.TemporaryDirectory(prefix="workbench-eval-") as tmp:
        wb = Workbench.open(Path(tmp) / "memory", create=True, user=user, encoder=encoder_spec)
        try:
            wb.init(sample=True)
            yield wb, Path(tmp)
        finally:
            wb.close()


def distractors(seed: int = SEED) -> tuple[list[dict[str, Any]], tuple[Question, ...]]:
    """Memory records from other projects and people (data/eval/distractors.json), the same for
    the same seed: decisions (about half superseded by a newer one) and other people's facts;
    and one probe question per project decision (its ``where`` names the project asked about),
    whose superseded version is stale."""
    rng, t = random.Random(seed), json.loads(TEMPLATES.read_text(encoding="utf-8"))
    out: list[dict[str, Any]] = []
    probes: list[Question] = []

    def record(rid: str, statement: str, rtype: str, about: list[str], who: str, year: int, **more: Any) -> Any:
        day = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        return {"id": rid, "statement": statement, "type": rtype, "about": about, "effective_from": day,
                "source": {"id": f"{rid}-src", "said_by": who, "captured_at": f"{day}T09:00:00Z"}, **more}

    for p in t["projects"]:
        for topic, text, values, ask in rng.sample(t["decisions"], 2):
            old, new = rng.sample(values, 2)
            who, name = rng.choice(t["people"]), f"Project {p}"
            base = f"x-{p.lower()}-{topic}"
            scope = {"applies_to": [name], "decided_by": who}
            out.append(record(f"{base}-1", text.format(p=p, v=old), "decision", [name], who, 2025, **scope))
            now, stale = f"{base}-1", tuple[str, ...]()
            if rng.random() < 0.5:
                out.append(record(f"{base}-2", text.format(p=p, v=new), "decision", [name], who, 2026,
                                  supersedes=f"{base}-1", **scope))
                now, stale = f"{base}-2", (f"{base}-1",)
            probes.append(Question(f"x-q{len(probes) + 1:02d}", ask.format(p=p), (now,), False, "decision", stale,
                                   name))
    for n, person in enumerate(t["people"]):
        for rtype, text, values in rng.sample(t["personal"], 3):
            value = rng.choice(values)
            about = [person, value] if value.startswith("Professor") else [person]
            out.append(record(f"x-person{n}-{len(out)}", text.format(n=person, v=value), rtype, about, person, 2026))
    return out, tuple(probes)


@dataclass(frozen=True)
class DistractorReport:
    """The set and the probe questions rerun on the sample plus distractors; the verdicts are
    about Workbench."""

    seed: int
    records: int
    superseded: int
    probes: int
    report: Report
    leaks: tuple[tuple[str, str], ...]  # (question, distractor) in a scoped bundle, about none of its names

    @property
    def scoping_holds(self) -> bool:
        return not self.leaks

    @property
    def supersession_holds(self) -> bool:
        return self.report.workbench.totals.stale_returned == 0

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "records": self.records, "superseded": self.superseded, "probes": self.probes,
                "scoping_holds": self.scoping_holds, "leaks": [list(x) for x in self.leaks],
                "supersession_holds": self.supersession_holds, **self.report.to_json()}


def with_distractors(wb: Workbench, questions: Sequence[Question], *, set_name: str = "", k: int = 10,
                     seed: int = SEED) -> DistractorReport:
    """The set, then the probes, on a scratch store: the sample data plus :func:`distractors`."""
    rows, probes = distractors(seed)
    with scratch(wb.user, wb._indexes.records().ready().encoder.spec) as (s, tmp):
        (tmp / "distractors.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                               encoding="utf-8")
        s.import_files([tmp / "distractors.jsonl"])
        report = evaluate(s, [*questions, *probes], set_name=set_name, k=k,
                          distractors=frozenset(r["id"] for r in rows))
    about, home = {r["id"]: r["about"] for r in rows}, {q.id: q.where for q in probes}
    leaks = tuple((o.id, d) for o in report.workbench.outcomes if o.tier == "recorded" for d in o.distractors
                  if home.get(o.id) not in about[d])
    return DistractorReport(seed, len(rows), sum("supersedes" in r for r in rows), len(probes), report, leaks)


# ---------------------------------------------------------------------- the supersession scenario

NOW_Q = "Where does Project Atlas keep customer data?"
PAST_Q = "Where did Project Atlas keep customer data before the Swiss region was added?"


@dataclass(frozen=True)
class Step:
    name: str
    passed: bool
    expected: str
    got: tuple[str, ...]


@dataclass(frozen=True)
class Scenario:
    """Recall a decision, import the decision that supersedes it, recall again."""

    old: str
    new: str
    steps: tuple[Step, ...]

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "old": self.old, "new": self.new, "steps": [asdict(s) for s in self.steps]}


def encoder_spec(wb: Workbench) -> str:
    """The encoder that ranks ``wb``'s records (its index built first if need be)."""
    return wb._indexes.records().ready().encoder.spec


def supersession_scenario(user: str, encoder_spec: str | None = None) -> Scenario:
    """The scripted check on a scratch store (the correction is data/eval/supersession.jsonl);
    each step keeps what came back."""
    correction = json.loads(CORRECTION.read_text(encoding="utf-8"))
    old, new = correction["supersedes"], correction["id"]
    with scratch(user, encoder_spec) as (s, _):
        before = s.recall(NOW_Q, purpose="decision")
        src = {m.record.id: m.record.source.id for m in before.memories}
        s.import_files([CORRECTION])
        after = s.recall(NOW_Q, purpose="decision")
        links = {m.record.id: m.record.supersedes for m in after.memories}
        past = s.recall(PAST_Q)
    return Scenario(old, new, (
        Step("before: the decision comes back with its source", bool(src.get(old)), f"{old} with a source",
             tuple(f"{i} [{src[i]}]" for i in before.ids)),
        Step("after: the new decision comes back, superseding the old", links.get(new) == (old,),
             f"{new} supersedes {old}", tuple(f"{i} supersedes {','.join(v)}" if v else i for i, v in links.items())),
        Step("after: the superseded decision stays out", old not in after.ids, f"no {old}", tuple(after.ids)),
        Step("asked about the past, the old decision comes back", old in past.ids, old, tuple(past.ids)),
    ))
