"""``workbench bench audit``: the essay's experiment, reproduced with Workbench's own parts.

The essay learned common sense from 1,800 small worlds (about 1.27M relations), then met a new
thing X known only as "X is a K" and asked three questions:

a. is the right kind ranked first?
b. does X inherit the facts written down for K?
c. what of true facts deliberately left out of the system?

Here the worlds come from :mod:`benchmarks.synth` and are imported as admitted common sense, the
inheritance rule ``inherit-kind`` is proposed from ``rules/`` by a curator and signed off by a
reviewer, and each X arrives as a user's memory record ("new thing 3 is a <K>", with a source).
Then each question goes down both of the product's paths:

* **embedding** (the guesser, :class:`workbench.guesses.things.Guesser`, learned from the worlds
  with a tenth of the subjects held out to measure its stated chances): kinds ranked for X (a
  hit: one of X's kinds first); values of each relation (a hit: the fact's value ranked first);
  the held-out facts the same way. Beside it, the graph-vector guesser it replaced
  (:mod:`benchmarks.graph_vectors`: FAISS over hashed graph features).
* **rule** (``Workbench.ask``): each fact of K asked of X must come back *derived*, with a proof
  whose leaves name X's record and the world's common-sense assertion, both with sources; each
  held-out fact must come back *no evidence*.

Some X are of two kinds from different trees (an electric car is a car and an appliance). X's
vector is computed from X's own facts; the audit also scores the **shortcut** the essay warns
about, X's vector set equal to its first kind's, to show what it gives up for the second kind.
Nothing is written by the questions: the store's quads are counted before and after.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import progress, synth
from benchmarks.ask import Question, check_answer
from benchmarks.ask_results import RELATION_NAMES
from benchmarks.graph_vectors import GraphVectors
from benchmarks.load import _step, code_version, machine, measure, working_dir

SIZES = {"small": 30, "full": synth.ESSAY_WORLDS}  # worlds
DEFAULT_CASES = 16
DEFAULT_MULTI = 4
DEFAULT_HELD_OUT = 40
RULE_FILE = "inherit-kind.ttl"
CURATOR, REVIEWER = "audit-curator", "audit-reviewer"
#: Wider feature hashing than the guesser's own, for row a only: what hash collisions cost.
WIDTHS = (1024, 4096, 16384)


# ---------------------------------------------------------------- the plan: who X is, what is asked


@dataclass(frozen=True)
class Case:
    """A new thing X: its name, its kinds (one, or two from different trees) and the facts
    written for them, as (predicate, value) pairs."""

    number: int
    world: int
    name: str
    kinds: tuple[str, ...]
    kind_names: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]
    first_facts: tuple[tuple[str, str], ...]
    labels: dict[str, str] = field(compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        """The memory record that tells Workbench "X is a K" (and nothing else about X)."""
        kinds = " and ".join(self.kind_names)
        return {"id": f"audit-x{self.number}", "statement": f"{self.name} is a {kinds}.", "type": "observation",
                "about": [self.name],
                "source": {"id": f"audit-chat#{self.number}", "said_by": "me", "captured_at": "2026-11-30T09:00:00Z"},
                "triples": [[self.name, "is a", k] for k in self.kind_names]}


@dataclass(frozen=True)
class Held:
    """A true fact never written (``World.held_out``)."""

    subject: str
    predicate: str
    obj: str
    subject_name: str
    object_name: str


def plan(n_worlds: int, *, cases: int = DEFAULT_CASES, multi: int = DEFAULT_MULTI, held_out: int = DEFAULT_HELD_OUT,
         seed: int = 0) -> tuple[list[Case], list[Held]]:
    """Seeded: which worlds, kinds and held-out facts the audit asks about. The last ``multi``
    cases are of two kinds from different trees.

    >>> cs, hs = plan(5, cases=3, multi=1, held_out=4)
    >>> [len(c.kinds) for c in cs], len(hs), plan(5, cases=3, multi=1, held_out=4)[0] == cs
    ([1, 1, 2], 4, True)
    """
    if multi > cases:
        raise ValueError(f"{multi} multi-kind cases cannot be more than the {cases} cases")
    # the seed's text keeps the old module name (workbench.bench.audit): the same picks as before
    rng = random.Random(f"workbench.bench.audit/{seed}/{n_worlds}")
    case_worlds = [rng.randrange(n_worlds) for _ in range(cases)]
    held_worlds = [rng.randrange(n_worlds) for _ in range(held_out)]
    need = set(case_worlds) | set(held_worlds)
    worlds = {w.index: w for w in synth.generate(max(need) + 1, seed=seed) if w.index in need}
    out = []
    for i, w in enumerate(case_worlds):
        out.append(_case(worlds[w], i + 1, two=i >= cases - multi, rng=rng))
    held, seen = [], set()
    for w in held_worlds:
        choices = [h for h in worlds[w].held_out if h not in seen]
        s, p, o = rng.choice(choices)
        seen.add((s, p, o))
        held.append(Held(s, p, o, worlds[w].labels[s], worlds[w].labels[o]))
    return out, held


def _case(world: synth.World, number: int, *, two: bool, rng: random.Random) -> Case:
    parents = {p for ps in world.parents.values() for p in ps}
    leaves = [k for k in world.kinds if k not in parents]

    def root(k: str) -> str:
        return (world.ancestors(k) or (k,))[-1]

    first = rng.choice(leaves)
    kinds = [first]
    if two:
        others = [k for k in leaves if root(k) != root(first)]
        kinds.append(rng.choice(others))
    facts = tuple(dict.fromkeys(f for k in kinds for f in world.kind_facts[k]))
    return Case(number, world.index, f"new thing {number}", tuple(kinds), tuple(world.labels[k] for k in kinds),
                facts, world.kind_facts[first], labels=dict(world.labels))


# ---------------------------------------------------------------- results


@dataclass
class Row:
    """One of the essay's rows: how many questions, how many each path got right."""

    asked: int = 0
    embedding: int = 0  # the guesser (workbench.guesses): first
    embedding_top5: int = 0
    no_guess: int = 0
    chance: float = 0.0  # the sum of the stated chance of the guesser's first candidate
    old: int = 0  # the graph-vector guesser Workbench had before (benchmarks.graph_vectors): first
    old_top5: int = 0
    old_no_guess: int = 0
    rule: int = 0
    shortcut: int = 0
    wrong: list[str] = field(default_factory=list)


@dataclass
class AuditRun:
    size: str
    worlds: int
    relations: int
    seed: int
    cases: list[Case]
    held: list[Held]
    kinds_ranked: int = 0
    rows: dict[str, Row] = field(default_factory=lambda: {"kind": Row(), "inherit": Row(), "held": Row()})
    multi: dict[str, int] = field(default_factory=dict)
    cosines: list[float] = field(default_factory=list)
    widths: dict[int, int] = field(default_factory=dict)  # row a's hits with wider graph vectors
    rule_version: str = ""
    quads_before: int = 0
    quads_after: int = 0
    example: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    guesser: dict[str, Any] = field(default_factory=dict)  # model, training time and memory, query times

    @property
    def written_back(self) -> int:
        return self.quads_after - self.quads_before

    def to_json(self) -> dict[str, Any]:
        return {"size": self.size, "worlds": self.worlds, "relations": self.relations, "seed": self.seed,
                "cases": len(self.cases), "held_out": len(self.held), "kinds_ranked": self.kinds_ranked,
                "rows": {k: {**vars(r)} for k, r in self.rows.items()}, "multi": self.multi,
                "cosines": self.cosines, "widths": self.widths, "rule_version": self.rule_version,
                "written_back": self.written_back, "seconds": self.seconds, "guesser": self.guesser}


# ---------------------------------------------------------------- the run


def _rules_signed_off(wb: Any, rules_dir: Path) -> str:
    """The inheritance rule through its lifecycle: a curator proposes it, a reviewer signs it off."""
    from workbench.access.users import Role

    if not wb.users():
        wb.add_user(wb.user, [Role.ADMIN])  # the first user of a store is its admin
    wb.add_user(CURATOR, [Role.CURATOR])
    wb.add_user(REVIEWER, [Role.REVIEWER])
    proposed = wb.acting_as(CURATOR).propose_rules(rules_dir / RULE_FILE)
    version = proposed[0].version
    v = wb.acting_as(REVIEWER).signoff_rule("inherit-kind", version=version,
                                             comment="the essay's audit: kind inheritance, tests pass")
    return f"inherit-kind v{v.version}, proposed by {CURATOR}, signed off by {REVIEWER}"


def _quads(wb: Any) -> int:
    n = wb.store.select("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")[0]["n"]
    return int(n.value)


def _hit(guesses: Sequence[Any], value: str) -> tuple[bool, bool]:
    """(ranked first, in the top five) for ``value`` among ranked guesses."""
    ranked = [g.value for g in guesses]
    target = f"<{value}>"
    return bool(ranked) and ranked[0] == target, target in ranked[:5]


def ask_cases(wb: Any, run: AuditRun, bar: Any, old: Any) -> None:
    """Rows a and b for every X, by both paths: the guesser, the graph vectors it replaced (and
    their shortcut), and the rule."""
    from workbench.values.words import render

    guesser = wb._indexes.things()
    model = guesser.ready()[0]
    kinds = old.kinds()
    run.kinds_ranked = len(model.kinds)
    vectors = old.kind_vectors(kinds)
    at = {k: i for i, k in enumerate(kinds)}
    kind_row, inherit = run.rows["kind"], run.rows["inherit"]
    both = {"new": 0, "old": 0, "shortcut": 0}
    ranks = {"new": 0, "old": 0, "shortcut": 0}
    second_facts = [0, 0, 0, 0, 0]  # the second kind's own facts: asked, guesser, old, shortcut, rule
    query = {"kinds": 0.0, "values": 0.0, "n_values": 0}
    for case in run.cases:
        x = wb.resolve(case.name).entities[0]
        v = old.vector(x)
        if v is None:
            raise RuntimeError(f"{case.name} has no graph vector: its record did not land")
        clock = time.perf_counter()
        ranked = [k for k, _ in model.rank_kinds(guesser.features(x), top=None)]
        query["kinds"] += time.perf_counter() - clock
        short = vectors[at[case.kinds[0]]]  # the shortcut: X's vector := its first kind's
        old_ranked = [k for k, _ in old.rank_kinds_near(v, kinds, vectors, top=None)]
        short_ranked = [k for k, _ in old.rank_kinds_near(short, kinds, vectors, top=None)]
        kind_row.asked += 1
        kind_row.embedding += ranked[0] in case.kinds
        kind_row.embedding_top5 += bool(set(ranked[:5]) & set(case.kinds))
        first_kind = guesser.rank_kinds(x, top=1)
        kind_row.chance += (first_kind[0].chance or 0.0) if first_kind else 0.0
        kind_row.old += old_ranked[0] in case.kinds
        kind_row.old_top5 += bool(set(old_ranked[:5]) & set(case.kinds))
        kind_row.shortcut += short_ranked[0] in case.kinds
        run.cosines += [float(vectors[at[k]] @ v) for k in case.kinds]
        if len(case.kinds) == 2:
            for name, r in (("new", ranked), ("old", old_ranked), ("shortcut", short_ranked)):
                both[name] += set(r[:2]) == set(case.kinds)
                ranks[name] += r.index(case.kinds[1]) + 1
        clock = time.perf_counter()
        guesses = {p: wb.guess(x, p, top=5) for p in {p for p, _ in case.facts}}
        query["values"] += time.perf_counter() - clock
        query["n_values"] += len(guesses)
        old_guesses = {p: old.guess(x, p, top=5) for p in guesses}
        short_guesses = {p: old.guess_near(short, p, exclude=x, top=5) for p in guesses}
        second = set(case.facts) - set(case.first_facts) if len(case.kinds) == 2 else set()
        for p, f in case.facts:
            inherit.asked += 1
            first, top5 = _hit(guesses[p], f)
            old_first, old_top5 = _hit(old_guesses[p], f)
            short_first = _hit(short_guesses[p], f)[0]
            inherit.embedding += first
            inherit.embedding_top5 += top5
            inherit.no_guess += not guesses[p]
            inherit.chance += (guesses[p][0].chance or 0.0) if guesses[p] else 0.0
            inherit.old += old_first
            inherit.old_top5 += old_top5
            inherit.old_no_guess += not old_guesses[p]
            inherit.shortcut += short_first
            if (p, f) in second:
                second_facts[0] += 1
                second_facts[1] += first
                second_facts[2] += old_first
                second_facts[3] += short_first
            q = Question("derived", x, p, f, case.name, RELATION_NAMES[p], case.labels[f], frozenset({f}))
            answer = wb.ask(q.subject_name, q.relation_name, q.object_name)
            why = check_answer(q, answer)
            if not why:
                why = _leaves_name(answer, f"audit-x{case.number}")
            if why:
                inherit.wrong.append(f"{q.text} {why}")
            else:
                inherit.rule += 1
                second_facts[4] += (p, f) in second
                if not run.example:
                    run.example = render(answer)
        bar.update(1)
    run.guesser["kinds_ms"] = round(1000 * query["kinds"] / max(1, len(run.cases)), 2)
    run.guesser["values_ms"] = round(1000 * query["values"] / max(1, query["n_values"]), 2)
    _wider(old, kinds, [wb.resolve(c.name).entities[0] for c in run.cases], run)
    multi = [c for c in run.cases if len(c.kinds) == 2]
    if multi:
        run.multi = {"cases": len(multi), "both_top2": both["new"], "second_rank_sum": ranks["new"],
                     "old_both_top2": both["old"], "old_second_rank_sum": ranks["old"],
                     "shortcut_second_top2": both["shortcut"], "shortcut_second_rank_sum": ranks["shortcut"],
                     "second_facts": second_facts[0], "second_facts_embedding": second_facts[1],
                     "second_facts_old": second_facts[2], "second_facts_shortcut": second_facts[3],
                     "second_facts_rule": second_facts[4]}


def _wider(things: Any, kinds: list[str], xs: list[str], run: AuditRun) -> None:
    """Row a again with the old graph vectors' features hashed into more dimensions: fewer
    collisions among many kinds. A diagnosis of why the old guesser ranked as it did."""
    from benchmarks.graph_vectors import FeatureEncoder

    texts = things.kind_texts(kinds)
    for width in WIDTHS:
        enc = FeatureEncoder(width)
        vectors, found = enc.encode(texts), enc.encode([things.text(x) for x in xs])
        firsts = [kinds[int((vectors @ v).argmax())] for v in found]
        run.widths[width] = sum(k in c.kinds for c, k in zip(run.cases, firsts, strict=True))


def _leaves_name(answer: Any, record: str) -> str:
    """'' if every derived proof rests on X's own record and on admitted common sense."""
    from workbench.values.answers import Derived

    for f in answer.findings:
        for proof in f.proofs:
            if isinstance(proof, Derived):
                ids = {leaf.record for leaf in proof.leaves()}
                kinds = {leaf.record_type for leaf in proof.leaves()}
                if record not in ids or "common_sense" not in kinds:
                    return f"the proof of {f.value} does not rest on {record} and common sense"
    return ""


def ask_held(wb: Any, run: AuditRun, bar: Any, old: Any) -> None:
    """Row c: held-out facts, by both paths (and the old guesser)."""
    row = run.rows["held"]
    for h in run.held:
        row.asked += 1
        guesses = wb.guess(h.subject, h.predicate, top=5)
        first, top5 = _hit(guesses, h.obj)
        row.embedding += first
        row.embedding_top5 += top5
        row.no_guess += not guesses
        row.chance += (guesses[0].chance or 0.0) if guesses else 0.0
        old_guesses = old.guess(h.subject, h.predicate, top=5)
        old_first, old_top5 = _hit(old_guesses, h.obj)
        row.old += old_first
        row.old_top5 += old_top5
        row.old_no_guess += not old_guesses
        q = Question("no-evidence", h.subject, h.predicate, h.obj, h.subject_name, RELATION_NAMES[h.predicate],
                     h.object_name, frozenset())
        why = check_answer(q, wb.ask(q.subject_name, q.relation_name, q.object_name))
        if why:
            row.wrong.append(f"{q.text} {why}")
        else:
            row.rule += 1
        bar.update(1)


def root_vectors(workdir: Path) -> Path:
    return workdir / "old-graph-vectors"


def _guesser_figures(meta: dict[str, Any], maxrss_before: int) -> dict[str, Any]:
    """What training cost and what its calibration measured, for the report."""
    cal = meta["calibration"]
    return {"model": meta["version"], "subjects": meta["subjects"], "features": meta["features"],
            "train_seconds": meta["seconds"], "peak_rss_growth_mib":
            round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - maxrss_before) / 1024, 1),
            "tasks": cal["tasks"], "ece": {f: v.get("ece") for f, v in cal["families"].items()},
            "cases": {f: v.get("cases") for f, v in cal["families"].items()},
            "reliability": {f: v.get("reliability") for f, v in cal["families"].items()}}


def run_audit(size: str, *, seed: int, workdir: Path, cases: int, multi: int, held_out: int,
              rules_dir: Path) -> AuditRun:
    """Write the worlds, import them and the X records, sign off the rule, ask, count."""
    from workbench.service import Workbench

    n_worlds = SIZES[size]
    workdir.mkdir(parents=True, exist_ok=True)
    nq, store_dir, xs = workdir / "synth.nq", workdir / "workbench", workdir / "new-things.jsonl"
    with progress(total=6 + cases + held_out, unit="step") as bar:
        counts = _step(bar, f"writing {n_worlds:,} worlds", partial(synth.write, nq, n_worlds=n_worlds, seed=seed))
        cs, hs = _step(bar, "choosing X and the held-out facts",
                       partial(plan, n_worlds, cases=cases, multi=multi, held_out=held_out, seed=seed))
        run = AuditRun(size, n_worlds, counts.relations, seed, cs, hs)
        clock = time.perf_counter()
        loaded = _step(bar, "importing the worlds as common sense", partial(measure, "workbench", nq, store_dir, seed))
        run.seconds["import"] = float(loaded["seconds"])
        xs.write_text("".join(json.dumps(c.record()) + "\n" for c in cs), encoding="utf-8")
        with Workbench.open(store_dir, user="audit") as wb:
            run.rule_version = _step(bar, "signing off inherit-kind", partial(_rules_signed_off, wb, rules_dir))
            _step(bar, "recording each X", partial(wb.import_files, [xs]))
            run.quads_before = _quads(wb)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            clock = time.perf_counter()
            meta = _step(bar, "training the guesser", wb.train_guesses)
            run.seconds["train guesser"] = time.perf_counter() - clock
            run.guesser.update(_guesser_figures(meta, before))
            old = GraphVectors(wb.store, root_vectors(workdir))
            clock = time.perf_counter()
            _step(bar, "building the old graph-vector index", old.ready)
            run.seconds["old index"] = time.perf_counter() - clock
            clock = time.perf_counter()
            bar.set_description("rows a and b: kinds and inheritance")
            ask_cases(wb, run, bar, old)
            run.seconds["cases"] = time.perf_counter() - clock
            clock = time.perf_counter()
            bar.set_description("row c: facts left out")
            ask_held(wb, run, bar, old)
            run.seconds["held"] = time.perf_counter() - clock
            run.quads_after = _quads(wb)
            bar.update(1)
    return run


def main(size: str, *, seed: int = 0, cases: int = DEFAULT_CASES, multi: int = DEFAULT_MULTI,
         held_out: int = DEFAULT_HELD_OUT, workdir: Path | None = None, rules_dir: Path | None = None,
         markdown: Path | None = None, out: Path | None = None,
         echo: Callable[[str], object] = print) -> AuditRun:
    """The whole audit: run it, print the table, write the report and the JSON if asked."""
    from benchmarks.audit_report import render_report, write_markdown
    from workbench.resources import RULES_DIR

    command = (f"workbench bench audit --size {size} --seed {seed}"
               + (f" --cases {cases}" if cases != DEFAULT_CASES else "")
               + (f" --multi {multi}" if multi != DEFAULT_MULTI else "")
               + (f" --held-out {held_out}" if held_out != DEFAULT_HELD_OUT else ""))
    machine_line, code = machine(), code_version()
    echo(f"Machine: {machine_line}\nCode: {code}\nCommand: {command}")
    with working_dir(workdir, "audit") as root:
        run = run_audit(size, seed=seed, workdir=root, cases=cases, multi=multi, held_out=held_out,
                        rules_dir=rules_dir or RULES_DIR)
    date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = render_report(run, command=command, machine_line=machine_line, code=code, date=date)
    echo(block)
    if out is not None:
        out.write_text(json.dumps(run.to_json(), indent=1) + "\n", encoding="utf-8")
        echo(f"Wrote {out}")
    if markdown is not None:
        write_markdown(markdown, block)
        echo(f"Wrote the audit into {markdown}")
    return run
