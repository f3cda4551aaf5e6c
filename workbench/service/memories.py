"""Evaluating recall over a benchmark of many memories: each memory (a conversation's records)
in a scratch store of its own, with the records of a distractor memory about other people
beside it, and its questions asked there through :meth:`Workbench.recall` and the plain
vector-RAG recipe, with and without a similarity floor, side by side in one run. The shipped
benchmark is data/eval/conversations (``benchmarks/conversations.py`` writes it).

A benchmark directory holds ``questions.jsonl`` (the question-set format, each question naming
its ``memory`` and ``kind``), one ``MEMORY.jsonl`` of memory records per memory, and
``memories.json`` (``{"distractors": {"c01": "c02", ...}}``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import Invalid
from workbench.recall import bundles
from workbench.recall import gate as gates
from workbench.recall.baseline import Found, PlainRecipe
from workbench.resources import DATA_DIR
from workbench.service.evaluation import Outcome, Question, Totals, load_set, score

if TYPE_CHECKING:
    pass

BENCHMARK = DATA_DIR / "eval" / "conversations"
FLOORS = tuple(round(0.05 * i, 2) for i in range(1, 19))  # cosine floors tried for the plain recipe


def benchmark_path(name: str | Path) -> Path | None:
    """``conversations`` names the shipped benchmark; a directory holding questions.jsonl is one too."""
    path = BENCHMARK if str(name) == "conversations" else Path(name)
    return path if (path / "questions.jsonl").is_file() else None


@dataclass(frozen=True)
class System:
    """One system over the whole benchmark."""

    name: str
    outcomes: tuple[Outcome, ...]
    kinds: tuple[str, ...]  # each outcome's question kind
    p50_ms: float
    others_in_top5: int  # records said by someone other than whom an answerable question asks about

    @property
    def totals(self) -> Totals:
        return Totals.of(self.outcomes)

    def by_kind(self) -> dict[str, dict[str, Any]]:
        """Per kind: how many, and the hit@5 (answerable kinds) or the "no memory" rate."""
        out: dict[str, dict[str, Any]] = {}
        for kind in sorted(set(self.kinds)):
            mine = [o for o, k in zip(self.outcomes, self.kinds, strict=True) if k == kind]
            if mine[0].no_memory:
                out[kind] = {"questions": len(mine), "no_memory": round(sum(o.abstained for o in mine) / len(mine), 4)}
            else:
                hits = sum(o.rank is not None and o.rank <= 5 for o in mine)
                out[kind] = {"questions": len(mine), "hit_at_5": round(hits / len(mine), 4)}
        return out

    def to_json(self) -> dict[str, Any]:
        return {"system": self.name, "totals": self.totals.to_json(), "kinds": self.by_kind(),
                "p50_ms": self.p50_ms, "others_in_top5": self.others_in_top5}


@dataclass(frozen=True)
class MemoriesReport:
    benchmark: str
    encoder: str
    memories: int
    records: int
    k: int
    floor: float  # the plain recipe's floor, tuned on this run (its best balanced accuracy)
    systems: tuple[System, ...]
    reliability: list[dict[str, float]]  # the gate's stated probabilities against what the bundles held
    ece: float

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "encoder": self.encoder, "memories": self.memories,
                "records": self.records, "k": self.k, "floor": self.floor,
                "systems": [s.to_json() for s in self.systems],
                "calibration": {"reliability": self.reliability, "ece": self.ece}}


def evaluate(user: str, encoder_spec: str | None, directory: Path = BENCHMARK, *, k: int = 10,
             only: Sequence[str] = ()) -> MemoriesReport:
    """Run the benchmark in ``directory`` (every memory, or those in ``only``). Raises Invalid
    for a benchmark that is not one, naming the file."""
    from workbench.service import Workbench

    questions = load_set(directory / "questions.jsonl")
    plan = _plan(directory)
    mems = sorted({q.memory for q in questions})
    if only:
        mems = [m for m in mems if m in only]
    rows: dict[str, list[tuple[Question, str, list[Found], float]]] = {"workbench": [], "plain": []}
    plain_scores: list[tuple[Question, list[Found]]] = []
    owners: dict[str, str] = {}
    stated: list[tuple[float, int]] = []  # (the gate's probability, whether the bundle held the answer)
    records = 0
    enc_name = ""
    for mem in mems:
        files = [directory / f"{mem}.jsonl"] + ([directory / f"{plan[mem]}.jsonl"] if mem in plan else [])
        for f in files:
            if not f.is_file():
                raise Invalid(f"the benchmark names memory {f.stem!r} but has no {f.name}", where=str(directory))
        owners.update(_owners(files))
        asked = [q for q in questions if q.memory == mem]
        with tempfile.TemporaryDirectory(prefix="workbench-eval-") as tmp:
            wb = Workbench.open(Path(tmp) / "memory", create=True, user=user, encoder=encoder_spec)
            try:
                wb.init()
                for f in files:
                    records += wb.import_files([f]).records_added
                enc = wb._indexes.records().ready().encoder
                enc_name = enc.name
                plain = PlainRecipe(wb.store, enc, k=k)
                index, names = wb._indexes.records().ready(), wb._indexes.names()
                model = gates.for_encoder(enc.name)
                for q in asked:
                    start = time.perf_counter()
                    # Ungated, then the gate's own decision: the same answer as Workbench.recall,
                    # and what the gate stopped, to see whether its probabilities are true.
                    b = bundles.recall(wb.store, index, names, q.question, purpose=q.purpose, limit=k, gate=False,
                                       cache=wb._indexes.record_cache())
                    took = time.perf_counter() - start
                    got = [Found(m.record.id, m.record.statement, m.record.status, m.score) for m in b.memories]
                    if b.probability is not None:
                        stated.append((b.probability, int(any(f.id in q.expect for f in got))))
                    if model and not model.holds(b.probability):
                        b, got = replace(b, tier="no_memory", memories=()), []
                    rows["workbench"].append((q, b.tier, got, took))
                    start = time.perf_counter()
                    found = plain.search(q.question)
                    rows["plain"].append((q, "top-k", found, time.perf_counter() - start))
                    plain_scores.append((q, found))
            finally:
                wb.close()
    floor = _tune_floor(plain_scores)
    floored = [(q, "top-k" if found and found[0].score >= floor else "no_memory",
                [f for f in found if f.score >= floor], took)
               for (q, _, found, took) in rows["plain"]]
    systems = (
        _system("workbench", rows["workbench"], owners),
        _system(f"plain top-{k}", rows["plain"], owners),
        _system(f"plain top-{k}, floor {floor:.2f}", floored, owners),
    )
    table, ece = gates.reliability([p for p, _ in stated], [y for _, y in stated])
    return MemoriesReport(str(directory), enc_name, len(mems), records, k, floor, systems, table, ece)


def _plan(directory: Path) -> dict[str, str]:
    path = directory / "memories.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise Invalid(f"not JSON: {exc}", where=str(path)) from None
    found = data.get("distractors", {}) if isinstance(data, dict) else None
    if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
        raise Invalid('expected {"distractors": {"MEMORY": "OTHER MEMORY", ...}}', where=str(path))
    return found


def _owners(files: Sequence[Path]) -> dict[str, str]:
    """Record id -> who said it, from the benchmark's files."""
    out = {}
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out[r["id"]] = r["source"]["said_by"]
    return out


def _tune_floor(scored: Sequence[tuple[Question, list[Found]]]) -> float:
    """The cosine floor that gives the plain recipe its best balanced accuracy on this run: the
    mean of answerable questions kept (top record above the floor) and no-memory ones dropped."""
    def accuracy(floor: float) -> float:
        ans = [bool(f) and f[0].score >= floor for q, f in scored if not q.no_memory]
        nom = [not f or f[0].score < floor for q, f in scored if q.no_memory]
        return (sum(ans) / max(len(ans), 1) + sum(nom) / max(len(nom), 1)) / 2
    return max(FLOORS, key=lambda f: (accuracy(f), -f))


def _system(name: str, rows: Sequence[tuple[Question, str, list[Found], float]], owners: dict[str, str]) -> System:
    outcomes = tuple(score(q, tier, found) for q, tier, found, _ in rows)
    others = 0
    for q, _, found, _ in rows:
        if q.no_memory:
            continue
        whose = {owners.get(i) for i in q.expect}
        others += sum(owners.get(f.id) not in whose for f in found[:5])
    p50 = statistics.median(t for *_, t in rows) * 1000 if rows else 0.0
    return System(name, outcomes, tuple(q.kind for q, *_ in rows), round(p50, 2), others)
