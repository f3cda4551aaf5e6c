"""``workbench bench ask``: questions answered at question time, with proofs, beside the bare query.

For each size the seeded synthetic worlds (:mod:`benchmarks.synth`) are written as N-Quads and
imported into a fresh embedded store the way ``workbench bench load`` does it (the ontology, then
one admitted common-sense assertion per world, with provenance). Then questions in four tiers,
drawn from the worlds' ground truth:

* **recorded**: a fact written on a thing (``does T have F?``);
* **derived**: a fact a thing inherits from one of its kinds or a kind above it;
* **derived, every value**: ``what does T have?`` for a relation with inherited values (every
  value comes with its own proof);
* **no evidence**: a held-out fact (``World.held_out``), true in the world but never written.

Each question is put to:

* **Workbench**: ``Workbench.ask(subject, relation, object)`` with the names as people write
  them (name binding, the engine, proofs, labels and sources: the Answer object);
* **answer layer**: :func:`workbench.answers.ask.ask` with the subject and relation already
  resolved (the engine, proofs, labels and sources, no name binding);
* **engine alone**: ``Engine(store, rules).solve(s, p, o)``: conclusions and proof trees, no
  labels or sources; it counts its SPARQL queries;
* **one query**: the question written by hand as the one SPARQL query part 1's compiler would aim
  at (:mod:`benchmarks.ask_one_query`: names bound, the kinds' edges with each record's status and
  source) and its values read from the rows: how near any compiled answer can come to the floor;
* **floor**: the bare store's own SPARQL for the same question over the same pyoxigraph store
  (the union of its graphs), no proof, no provenance, no record status::

      ASK { { <t> <p> <f> } UNION { <t> a ?k . ?k rdfs:subClassOf* ?kind . ?kind <p> <f> } }

  (``SELECT DISTINCT ?o`` for the every-value tier);
* **pySHACL** (up to ``--pyshacl-max``): the usual alternative, every conclusion of
  rules/inherit-kind.ttl and rules/kind-of.ttl materialised by ``pyshacl.shacl_rules`` on an
  in-memory rdflib copy of the same triples, then looked up; and pySHACL run for the question's
  focus node only, on an unexpanded copy.

Each question is first asked once untimed by every contender: the answers are checked against
the worlds' ground truth, store calls are counted and timed, caches warm up. Then each question is
asked ``--repeat`` more times per contender, the contenders interleaved (their order rotating), and
timed; a question's time is its median over those repeats.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import io
import json
import pstats
import random
import re
import shutil
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from benchmarks import progress, synth
from benchmarks.ask_one_query import one_query, values_from_rows
from benchmarks.ask_pyshacl import run_pyshacl
from benchmarks.ask_results import (
    CONTENDERS,
    EXPECTED_TIER,
    FOCUS_QUESTIONS,
    RELATION_NAMES,
    TIERS,
    SizeRun,
    TierRun,
    goals,
    render,
    write_markdown,
)
from benchmarks.load import Size, _run_child, _step, code_version, machine, working_dir

DEFAULT_QUESTIONS = 200
DEFAULT_REPEAT = 3
DEFAULT_PYSHACL_MAX = "10k"


# ---------------------------------------------------------------- questions


@dataclass(frozen=True)
class Question:
    """One question, its names as people write them, and the values a right answer holds."""

    tier: str
    subject: str
    predicate: str
    obj: str | None
    subject_name: str
    relation_name: str
    object_name: str | None
    expected: frozenset[str]

    @property
    def text(self) -> str:
        return f"{self.subject_name} {self.relation_name}" + (f" {self.object_name}" if self.object_name else "") + "?"


def question_options(parser: argparse.ArgumentParser, *, repeat: int, repeat_help: str) -> None:
    """The options of the scripts that ask ``bench ask``'s questions of a store it built."""
    parser.add_argument("--worlds", type=int, required=True, help="the worlds it holds (bench ask prints them)")
    parser.add_argument("--questions", type=int, default=100, help="questions per tier (default 100)")
    parser.add_argument("--repeat", type=int, default=repeat, help=f"{repeat_help} (default {repeat})")
    parser.add_argument("--seed", type=int, default=0)


def pick_questions(n_worlds: int, per_tier: int, *, seed: int) -> dict[str, list[Question]]:
    """``per_tier`` questions per tier, each from a world drawn uniformly among ``n_worlds``.

    Seeded: the same sizes, count and seed give the same questions.

    >>> qs = pick_questions(3, 2, seed=0)
    >>> [len(qs[t]) for t in TIERS], qs["derived"][0].obj in qs["derived"][0].expected
    ([2, 2, 2, 2], True)
    >>> qs["no-evidence"][0].expected
    frozenset()
    """
    # the seed's text keeps the old module name (workbench.bench.ask): the same picks as before
    rng = random.Random(f"workbench.bench.ask/{seed}/{n_worlds}")
    plan = {tier: [rng.randrange(n_worlds) for _ in range(per_tier)] for tier in TIERS}
    slots: dict[int, list[tuple[str, int]]] = {}
    for tier, worlds in plan.items():
        for i, w in enumerate(worlds):
            slots.setdefault(w, []).append((tier, i))
    picked: dict[str, dict[int, Question]] = {tier: {} for tier in TIERS}
    for world in synth.generate(max(slots) + 1, seed=seed):
        for tier, i in slots.get(world.index, ()):
            picked[tier][i] = _question(world, tier, random.Random(f"workbench.bench.ask/{seed}/{tier}/{i}"))
    return {tier: [picked[tier][i] for i in range(per_tier)] for tier in TIERS}


def _question(world: synth.World, tier: str, rng: random.Random) -> Question:
    labels = world.labels
    if tier == "recorded":
        thing = rng.choice(sorted(world.thing_facts))
        p, o = rng.choice(world.thing_facts[thing])
        return Question(tier, thing, p, o, labels[thing], RELATION_NAMES[p], labels[o], frozenset({o}))
    if tier == "no-evidence":
        s, p, o = rng.choice(world.held_out)
        return Question(tier, s, p, o, labels[s], RELATION_NAMES[p], labels[o], frozenset())
    thing = rng.choice(world.things)
    entailed = world.entailed_facts(thing)
    inherited = sorted(entailed - set(world.thing_facts.get(thing, ())))
    p, o = rng.choice(inherited)
    if tier == "derived":
        return Question(tier, thing, p, o, labels[thing], RELATION_NAMES[p], labels[o], frozenset({o}))
    values = frozenset(v for q, v in entailed if q == p)
    return Question(tier, thing, p, None, labels[thing], RELATION_NAMES[p], None, values)


def floor_query(q: Question) -> str:
    """The bare store's own query for ``q``: recorded or inherited through the kinds, over the
    union of all graphs (no record status, no provenance, no proof)."""
    s, p = f"<{q.subject}>", f"<{q.predicate}>"
    o = f"<{q.obj}>" if q.obj else "?o"
    where = (f"{{ {s} {p} {o} }} UNION {{ {s} <{synth.RDF_TYPE}> ?k . ?k <{synth.SUBCLASS_OF}>* ?kind . "
             f"?kind {p} {o} }}")
    return f"ASK {{ {where} }}" if q.obj else f"SELECT DISTINCT ?o WHERE {{ {where} }}"


# ---------------------------------------------------------------- the contenders


def _values(answer: Any) -> frozenset[str]:
    return frozenset(f.value.strip("<>") for f in answer.findings)


def check_answer(q: Question, answer: Any) -> str:
    """Why the Answer is wrong for ``q`` ('' if right): its tier, its values, and for a derived
    answer a rule proof on every derived value whose leaves all name a record and a source."""
    from workbench.values.answers import Derived

    if answer.tier.value != EXPECTED_TIER[q.tier]:
        return f"tier {answer.tier.value}, expected {EXPECTED_TIER[q.tier]}"
    if _values(answer) != q.expected:
        return f"values differ: {len(_values(answer) ^ q.expected)} not in both"
    for f in answer.findings:
        for proof in f.proofs:
            leaves = proof.leaves() if isinstance(proof, Derived) else [proof]
            if not leaves or any(not leaf.record or not leaf.source.id for leaf in leaves):
                return f"a proof of {f.value} lacks its records or sources"
            if isinstance(proof, Derived) and proof.rule != "inherit-kind":
                return f"{f.value} derived by {proof.rule}"
    if q.tier.startswith("derived") and not any(isinstance(p, Derived) for f in answer.findings for p in f.proofs):
        return "no derived proof"
    return ""


class Contenders:
    """The ways to put a question to one open Workbench store."""

    def __init__(self, wb: Any) -> None:
        from workbench.store.pyox import PyoxStore

        self.wb = wb
        self.rules = wb.rules  # loaded and tested once, outside any clock
        if not isinstance(wb.store, PyoxStore):
            raise TypeError("bench ask runs on an embedded store")
        self.db: ox.Store = wb.store._db

    def workbench(self, q: Question) -> Any:
        return self.wb.ask(q.subject_name, q.relation_name, q.object_name)

    def answer(self, q: Question) -> Any:
        from workbench.answers import ask

        params = (("subject", q.subject_name), ("relation", q.relation_name),
                  *((("object", q.object_name),) if q.object_name else ()))
        return ask.ask(self.wb.store, self.rules, subject=ox.NamedNode(q.subject), relation=ox.NamedNode(q.predicate),
                       obj=ox.NamedNode(q.obj) if q.obj else None, as_of=None, question=q.text, params=params)

    def engine(self, q: Question) -> Any:
        from workbench.rules.engine import Engine

        return Engine(self.wb.store, self.rules).solve(ox.NamedNode(q.subject), ox.NamedNode(q.predicate),
                                                       ox.NamedNode(q.obj) if q.obj else None)

    def one_query(self, q: Question, query: str) -> frozenset[str]:
        return values_from_rows(self.db.query(query, use_default_graph_as_union=True), q.subject)

    def floor(self, query: str) -> frozenset[str]:
        result = self.db.query(query, use_default_graph_as_union=True)
        if isinstance(result, ox.QueryBoolean):
            return frozenset({"yes"}) if bool(result) else frozenset()
        assert isinstance(result, ox.QuerySolutions)
        return frozenset(sol["o"].value for sol in result)


def _floor_values(q: Question, got: frozenset[str]) -> frozenset[str]:
    return frozenset({q.obj}) if q.obj and got else (frozenset() if q.obj else got)


PATTERN = "pattern: "  # how metered() names a quad pattern read


@contextmanager
def metered(store: Any) -> Iterator[list[tuple[float, int, str]]]:
    """Count and time every store call on ``store`` while inside: SPARQL (select, ask, construct)
    and quad patterns (matching: their text starts with :data:`PATTERN`)."""
    calls: list[tuple[float, int, str]] = []
    names = ("select", "ask", "construct", "matching")
    originals = {n: getattr(store, n) for n in names}

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            start = time.perf_counter()
            out = fn(*args)
            text = args[0] if isinstance(args[0], str) else PATTERN + " ".join(str(a) if a else "?" for a in args)
            calls.append(((time.perf_counter() - start) * 1e3, len(out) if isinstance(out, list) else int(out), text))
            return out

        return timed

    for n, fn in originals.items():
        setattr(store, n, wrap(fn))
    try:
        yield calls
    finally:
        for n in names:
            delattr(store, n)


def forget_kept() -> None:
    """Empty what Workbench keeps per store version (the kinds walked, the words and sources of
    proofs, the readers): a question then reads as if first asked. The check pass counts store
    calls this way, so that the count at one size does not hang on how many earlier questions
    shared its world (at 10k, 14 worlds; at 1.27M, 1,800)."""
    from workbench.store.caches import PerStore

    for keeper in PerStore.keepers():
        keeper._kept.clear()


def _short(query: str) -> str:
    """A query without its prefixes, on one line, cut to 160 characters."""
    body = re.sub(r"(?im)^\s*PREFIX\s+[^\n]*$", " ", query)
    body = " ".join(body.split())
    return body if len(body) <= 160 else body[:157] + "..."


def ask_tier(c: Contenders, tier: str, questions: Sequence[Question], bar: Any, *, repeat: int = 1) -> TierRun:
    """Check pass (untimed, metered), then ``repeat`` timed passes, contenders interleaved; each
    question's time is its median over the passes."""
    run = TierRun(tier, len(questions), agree=dict.fromkeys(CONTENDERS, 0))
    floors = [floor_query(q) for q in questions]
    ones = [one_query(q.subject_name, q.predicate, q.object_name) for q in questions]
    for q, fq, oq in zip(questions, floors, ones, strict=True):
        forget_kept()  # each question's first asking: its count does not hang on the questions before it
        with metered(c.wb.store) as calls:
            start = time.perf_counter()
            answer = c.workbench(q)
            run.instrumented_ms.append((time.perf_counter() - start) * 1e3)
        run.queries_all.append(sum(not text.startswith(PATTERN) for _, _, text in calls))
        run.patterns_all.append(sum(text.startswith(PATTERN) for _, _, text in calls))
        run.sparql_ms.append(sum(ms for ms, _, _ in calls))
        for name, why in (("workbench", check_answer(q, answer)), ("answer", check_answer(q, c.answer(q)))):
            if why:
                run.mismatches.append(f"{CONTENDERS[name]}: {q.text} {why}")
            else:
                run.agree[name] += 1
        result = c.engine(q)
        run.queries_engine.append(result.queries)
        if frozenset(t[2].value for t in result.found) == q.expected:
            run.agree["engine"] += 1
        else:
            run.mismatches.append(f"engine: {q.text} found {len(result.found)} values, expected {len(q.expected)}")
        if _floor_values(q, c.floor(fq)) == q.expected:
            run.agree["floor"] += 1
        else:
            run.mismatches.append(f"floor: {q.text} differs from the truth")
        if c.one_query(q, oq) == q.expected:
            run.agree["one-query"] += 1
        else:
            run.mismatches.append(f"one query: {q.text} differs from the truth")
        bar.update(1)
    calls_by_name: dict[str, Callable[[int], Any]] = {
        "workbench": lambda i: c.workbench(questions[i]),
        "answer": lambda i: c.answer(questions[i]),
        "engine": lambda i: c.engine(questions[i]),
        "one-query": lambda i: c.one_query(questions[i], ones[i]),
        "floor": lambda i: c.floor(floors[i]),
    }
    order = list(CONTENDERS)
    tries: dict[str, list[list[float]]] = {name: [[] for _ in questions] for name in CONTENDERS}
    for r in range(repeat):
        gc.collect()
        for i in range(len(questions)):
            turn = (i + r) % len(order)  # who goes first rotates with the question and the repeat
            for name in order[turn:] + order[:turn]:
                fn = calls_by_name[name]
                start = time.perf_counter_ns()
                fn(i)
                tries[name][i].append((time.perf_counter_ns() - start) / 1e6)
            bar.update(1)
    run.ms = {name: [statistics.median(xs) for xs in per_q] for name, per_q in tries.items()}
    # The floor again, back to back: its best case, caches not stirred by the other contenders.
    gc.collect()
    alone: list[list[float]] = [[] for _ in questions]
    for _ in range(repeat):
        for i, fq in enumerate(floors):
            start = time.perf_counter_ns()
            c.floor(fq)
            alone[i].append((time.perf_counter_ns() - start) / 1e6)
    run.ms["floor-alone"] = [statistics.median(xs) for xs in alone]
    return run


def trace_one(c: Contenders, q: Question) -> list[tuple[float, int, str]]:
    """Every store call one Workbench.ask makes: (ms, rows or boolean, the query, shortened)."""
    with metered(c.wb.store) as calls:
        c.workbench(q)
    return [(ms, rows, _short(text)) for ms, rows, text in calls]


def profile(c: Contenders, questions: Sequence[Question], path: Path) -> str:
    """cProfile of ``Workbench.ask`` over ``questions``; stats to ``path``, top functions returned."""
    prof = cProfile.Profile()
    prof.enable()
    for q in questions:
        c.workbench(q)
    prof.disable()
    prof.dump_stats(str(path))
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(20)
    stats.sort_stats("cumulative").print_stats(25)
    return out.getvalue()


# ---------------------------------------------------------------- one size, all sizes


def run_size(size: Size, *, per_tier: int, seed: int, workdir: Path, pyshacl_on: bool, profile_to: Path | None,
             bar: Any, repeat: int = 1) -> tuple[SizeRun, str]:
    """Write, load, ask; returns the run and the profile text (when ``profile_to``)."""
    from workbench.service import Workbench

    here = workdir / size.label
    here.mkdir(parents=True, exist_ok=True)
    nq, store_dir = here / "synth.nq", here / "workbench"
    if store_dir.exists():
        shutil.rmtree(store_dir)
    counts = _step(bar, f"{size.label}: writing {nq.name}", partial(synth.write, nq, n_worlds=size.worlds, seed=seed,
                                                                    fmt="nq"))
    # In a child, as bench load does it: this process's peak RSS is then the asking's alone.
    loaded = _step(bar, f"{size.label}: Workbench import (bench load's path)",
                   partial(_run_child, "workbench", nq, store_dir, seed))
    if loaded.count != counts.worlds:
        raise RuntimeError(f"the store at {size.label} holds {loaded.count} assertions, expected {counts.worlds}")
    questions = _step(bar, f"{size.label}: picking questions",
                      partial(pick_questions, size.worlds, per_tier, seed=seed))
    n_focus = sum(min(len(qs), FOCUS_QUESTIONS) for qs in questions.values()) if pyshacl_on else 0
    text = ""
    with progress(total=(1 + repeat) * per_tier * len(TIERS) + n_focus, unit="q", leave=False, position=1) as qbar:
        wb = Workbench.open(store_dir, user="bench")
        try:
            bar.set_description(f"{size.label}: loading and testing the rules")
            c = Contenders(wb)
            tiers = {}
            for tier in TIERS:
                qbar.set_description(f"{size.label}: {TIERS[tier]}")
                tiers[tier] = ask_tier(c, tier, questions[tier], qbar, repeat=repeat)
            trace = trace_one(c, questions["derived"][0])
            if profile_to is not None:
                bar.set_description(f"{size.label}: profiling the derived tier")
                text = profile(c, questions["derived"], profile_to)
        finally:
            wb.close()
        bar.update(1)
        run = SizeRun(size, counts, loaded.seconds, tiers, trace=trace)
        if pyshacl_on:
            nt = here / "synth.nt"
            _step(bar, f"{size.label}: writing {nt.name}",
                  partial(synth.write, nt, n_worlds=size.worlds, seed=seed, fmt="nt"))
            bar.set_description(f"{size.label}: pySHACL")
            run.pyshacl = run_pyshacl(nt, questions, tiers, qbar)
            bar.update(1)
    return run, text


def run(sizes: Sequence[Size], *, per_tier: int, seed: int, workdir: Path, pyshacl_max: Size | None,
        repeat: int = 1, profile_to: Path | None = None, echo: Callable[[str], object] = print) -> list[SizeRun]:
    runs = []
    on = {s.label: pyshacl_max is not None and s.worlds <= pyshacl_max.worlds for s in sizes}
    steps = sum(4 + 2 * on[s.label] for s in sizes)
    with progress(total=steps, unit="step", position=0) as bar:
        for i, size in enumerate(sizes):
            last = i == len(sizes) - 1
            r, text = run_size(size, per_tier=per_tier, seed=seed, workdir=workdir, pyshacl_on=on[size.label],
                               profile_to=profile_to if last else None, bar=bar, repeat=repeat)
            if not on[size.label]:
                r.pyshacl_skipped = (f"skipped: above --pyshacl-max {pyshacl_max.label}" if pyshacl_max
                                     else "skipped: --no-pyshacl")
            runs.append(r)
            if text:
                bar.clear()
                echo(f"Profile of Workbench.ask over the derived tier at {size.label} "
                     f"(stats in {profile_to}):\n{text}")
    return runs


# ---------------------------------------------------------------- reporting


def main(
    sizes: Sequence[Size],
    *,
    questions: int = DEFAULT_QUESTIONS,
    repeat: int = DEFAULT_REPEAT,
    seed: int = 0,
    workdir: Path | None = None,
    pyshacl_max: Size | None = None,
    out: Path | None = Path("bench-ask.json"),
    markdown: Path | None = None,
    profile_to: Path | None = None,
    echo: Callable[[str], object] = print,
) -> list[SizeRun]:
    """The whole benchmark: machine line and command, runs, table (printed, into ``out`` as JSON
    and into ``markdown``). ``pyshacl_max`` None means no pySHACL."""
    command = (f"workbench bench ask --sizes {','.join(s.label for s in sizes)} --questions {questions} "
               f"--repeat {repeat} --seed {seed} "
               + (f"--pyshacl-max {pyshacl_max.label}" if pyshacl_max else "--no-pyshacl"))
    machine_line, code = machine(), code_version()
    echo(f"Machine: {machine_line}\nCode: {code}\nCommand: {command}")
    with working_dir(workdir, "ask") as root:
        runs = run(sizes, per_tier=questions, seed=seed, workdir=root, pyshacl_max=pyshacl_max, repeat=repeat,
                   profile_to=profile_to, echo=echo)
    date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = render(runs, command=command, machine_line=machine_line, date=date, code=code, repeat=repeat)
    echo(block)
    if runs[-1].trace:
        echo(f"\nStore calls of one derived `Workbench.ask` at {runs[-1].size.label} (ms, rows, query):")
        for ms, rows, text in runs[-1].trace:
            echo(f"  {ms:8.3f}  {rows:5d}  {text}")
    if out is not None:
        payload = {"command": command, "machine": machine_line, "code": code, "date": date, "repeat": repeat,
                   "goals": goals(runs), "sizes": [r.to_json() for r in runs]}
        out.write_text(json.dumps(payload, indent=1, allow_nan=True) + "\n", encoding="utf-8")
        echo(f"Wrote {out}")
    if markdown is not None:
        write_markdown(markdown, block)
        echo(f"Wrote the Ask section of {markdown}")
    return runs
