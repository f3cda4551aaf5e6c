"""The materialising peers of ``bench ask``, each in a child process with a time budget and a
memory cap, size after size until it gives up.

* **pySHACL**: ``pyshacl.shacl_rules`` with rules/inherit-kind.ttl and rules/kind-of.ttl (the
  SHACL-AF forms of Workbench's own rules) materialises every conclusion on an in-memory rdflib
  copy of the worlds (:mod:`benchmarks.ask_pyshacl`);
* **owlrl**: ``owlrl.DeductiveClosure(owlrl.RDFS_Semantics).expand(g)`` on the same copy
  (:mod:`benchmarks.ask_owlrl`; it answers less, and says so).

Then each question of ``bench ask``'s tiers (the same seeded questions), and one more tier only
they are asked, **kind membership** ("is T a J?", J a kind above T's own), is a lookup, checked
against the worlds' ground truth. A peer that passes its budget at a size is stopped there and
not run at larger ones: the report says "gave up at SIZE".

Child (internal): ``python -m benchmarks.ask_peers PEER NT WORLDS PER_TIER SEED REPEAT``
prints one JSON line.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import child_env, synth
from benchmarks.ask_results import TIERS, pct
from benchmarks.limits import Finished, peak_rss_mib, run_limited
from benchmarks.load import Size

PEERS = {"pyshacl": "pySHACL (SHACL-AF rules)", "owlrl": "owlrl (RDFS closure)"}
PEER_TIERS = {**TIERS, "kind": "kind membership"}
DEFAULT_TIMEOUT = 300.0
DEFAULT_MEMORY_GIB = 8.0
MISMATCH_SAMPLES = 3


# ---------------------------------------------------------------- the child: one peer at one size


def kind_questions(n_worlds: int, n: int, *, seed: int) -> list[Any]:
    """``n`` questions "is T a J?" with J a kind above one of T's own kinds (its direct kind where
    it has none above), each from a world drawn uniformly; seeded.

    >>> qs = kind_questions(2, 3, seed=0)
    >>> len(qs), all(q.expected == {q.obj} for q in qs), qs[0].predicate == synth.RDF_TYPE
    (3, True, True)
    """
    from benchmarks.ask import Question

    # the seed's text keeps the old module name (workbench.bench.ask_peers): the same picks as before
    rng = random.Random(f"workbench.bench.ask_peers/{seed}/{n_worlds}")
    picks = sorted((rng.randrange(n_worlds), i) for i in range(n))
    out: dict[int, Question] = {}
    wanted = {w for w, _ in picks}
    for world in synth.generate(max(wanted) + 1, seed=seed):
        for w, i in picks:
            if w != world.index:
                continue
            thing = rng.choice(world.things)
            kinds = world.members[thing]
            above = sorted({a for k in kinds for a in world.ancestors(k)} - set(kinds))
            kind = rng.choice(above or sorted(kinds))
            out[i] = Question("kind", thing, synth.RDF_TYPE, kind, world.labels[thing], "is a", world.labels[kind],
                              frozenset({kind}))
    return [out[i] for i in range(n)]


def materialise(peer: str, nt: Path) -> tuple[Any, dict[str, float]]:
    """The peer's graph with every conclusion it draws, and its figures."""
    if peer == "owlrl":
        from benchmarks.ask_owlrl import closure

        return closure(nt)
    if peer == "pyshacl":
        import pyshacl

        from benchmarks.ask_pyshacl import _rdflib_graph, _rules_graph

        start = time.perf_counter()
        g = _rdflib_graph(nt)
        parse_s = time.perf_counter() - start
        before = len(g)
        start = time.perf_counter()
        pyshacl.shacl_rules(g, shacl_graph=_rules_graph(), inplace=True)
        return g, {"parse_s": parse_s, "materialise_s": time.perf_counter() - start, "triples_before": before,
                   "triples_after": len(g)}
    raise ValueError(f"unknown peer {peer!r}: use one of {', '.join(PEERS)}")


def measure(peer: str, nt: Path, n_worlds: int, per_tier: int, seed: int, repeat: int) -> dict[str, Any]:
    """Materialise, then every question once to check it and ``repeat`` times to time it (the
    median kept); milliseconds per question per tier, right answers, and this process's peak RSS."""
    from benchmarks.ask import pick_questions
    from benchmarks.ask_pyshacl import _lookup

    questions = {**pick_questions(n_worlds, per_tier, seed=seed), "kind": kind_questions(n_worlds, per_tier, seed=seed)}
    g, out = materialise(peer, nt)
    tiers: dict[str, Any] = {}
    for tier, qs in questions.items():
        right, wrong = 0, []
        for q in qs:
            if _lookup(g, q) == q.expected:
                right += 1
            else:
                wrong.append(q.text)
        ms = []
        for q in qs:
            tries = []
            for _ in range(repeat):
                start = time.perf_counter_ns()
                _lookup(g, q)
                tries.append((time.perf_counter_ns() - start) / 1e6)
            ms.append(statistics.median(tries))
        tiers[tier] = {"ms": ms, "right": right, "questions": len(qs), "wrong": wrong[:MISMATCH_SAMPLES]}
    return {**out, "tiers": tiers, "peak_rss_mib": peak_rss_mib()}


# ---------------------------------------------------------------- the parent: sizes until it gives up


@dataclass
class PeerRun:
    """One peer at one size. ``status``: ok, time (over its budget), memory (over its cap), error,
    or skipped (it gave up at a smaller size: ``gave_up_at``)."""

    peer: str
    size: Size
    status: str
    seconds: float = float("nan")  # wall time of the child, start-up and imports included
    peak_rss_mib: float = float("nan")
    figures: dict[str, float] = field(default_factory=dict)  # parse_s, materialise_s, triples_before/after
    tiers: dict[str, dict[str, Any]] = field(default_factory=dict)  # tier -> ms, right, questions, wrong
    gave_up_at: str = ""
    error: str = ""

    def p50(self, tier: str) -> float:
        return pct(self.tiers[tier]["ms"], 50) if tier in self.tiers else float("nan")

    @property
    def gave_up(self) -> bool:
        return self.status in ("time", "memory")

    def why(self, timeout: float, memory_gib: float) -> str:
        """What happened, in words ('' when it answered)."""
        if self.status == "time":
            return f"gave up at {self.size.label} (over {timeout:g} s)"
        if self.status == "memory":
            return f"gave up at {self.size.label} (over {memory_gib:g} GiB)"
        if self.status == "skipped":
            return f"gave up at {self.gave_up_at}"
        if self.status == "error":
            return f"failed at {self.size.label}: {self.error}"
        return ""

    def to_json(self) -> dict[str, Any]:
        tiers = {t: {"p50_ms": self.p50(t), "p99_ms": pct(r["ms"], 99), "right": r["right"],
                     "questions": r["questions"], "wrong": r["wrong"]} for t, r in self.tiers.items()}
        return {"peer": self.peer, "size": self.size.label, "status": self.status, "seconds": self.seconds,
                "peak_rss_mib": self.peak_rss_mib, **self.figures, "tiers": tiers, "gave_up_at": self.gave_up_at,
                "error": self.error}


def run_one(peer: str, nt: Path, size: Size, *, per_tier: int, seed: int, repeat: int, timeout: float,
            memory_gib: float, workdir: Path) -> PeerRun:
    """One peer at one size in a child process under its budget."""
    workdir.mkdir(parents=True, exist_ok=True)
    out, err = workdir / f"{peer}-{size.label}.json", workdir / f"{peer}-{size.label}.log"
    done: Finished = run_limited(
        [sys.executable, "-m", "benchmarks.ask_peers", peer, str(nt), str(size.worlds), str(per_tier), str(seed),
         str(repeat)], stdout=out, stderr=err, timeout=timeout, memory_mib=memory_gib * 1024, env=child_env())
    run = PeerRun(peer, size, done.stopped or "ok", done.seconds, done.peak_rss_mib)
    if done.stopped:
        return run
    if done.returncode != 0:
        tail = err.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        run.status, run.error = "error", f"exit {done.returncode}: {tail[-1] if tail else 'no message'}"
        return run
    data = json.loads(out.read_text(encoding="utf-8").strip().splitlines()[-1])
    run.tiers, run.peak_rss_mib = data.pop("tiers"), float(data.pop("peak_rss_mib"))  # its own, not a poll's
    run.figures = {k: float(v) for k, v in data.items()}
    return run


def run_peers(sizes: Sequence[Size], nt_for: Callable[[Size], Path], *, per_tier: int, seed: int, repeat: int,
              timeout: float, memory_gib: float, workdir: Path, bar: Any = None,
              peers: Sequence[str] = tuple(PEERS)) -> dict[str, list[PeerRun]]:
    """Every peer at every size, smallest first; after a peer gives up, the larger sizes are
    skipped for it (``gave_up_at`` the size where it did)."""
    from benchmarks.load import _step

    runs: dict[str, list[PeerRun]] = {p: [] for p in peers}
    for size in sorted(sizes, key=lambda s: s.worlds):
        for peer in peers:
            before = next((r for r in runs[peer] if r.gave_up or r.status == "skipped"), None)
            if before is not None:
                runs[peer].append(PeerRun(peer, size, "skipped", gave_up_at=before.gave_up_at or before.size.label))
                if bar is not None:
                    bar.update(1)
                continue
            one = partial(run_one, peer, nt_for(size), size, per_tier=per_tier, seed=seed, repeat=repeat,
                          timeout=timeout, memory_gib=memory_gib, workdir=workdir)
            label = f"{size.label}: {PEERS[peer]} (budget {timeout:g} s)"
            runs[peer].append(_step(bar, label, one) if bar is not None else one())
    return runs


if __name__ == "__main__":
    peer_arg, nt_arg, worlds_arg, per_tier_arg, seed_arg, repeat_arg = sys.argv[1:7]
    print(json.dumps(measure(peer_arg, Path(nt_arg), int(worlds_arg), int(per_tier_arg), int(seed_arg),
                             int(repeat_arg))))
