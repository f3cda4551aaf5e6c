"""``bench ask``'s usual alternative: pySHACL materialises every conclusion of the rules on an
in-memory rdflib copy, then each question is a lookup; and pySHACL for one focus node."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.ask_results import FOCUS_QUESTIONS, RULE_FILES, PyshaclRun, TierRun

if TYPE_CHECKING:
    from benchmarks.ask import Question


def _rdflib_graph(path: Path) -> Any:
    import rdflib

    return rdflib.Graph().parse(str(path), format="nt")


def _rules_graph() -> Any:
    import rdflib

    from workbench.resources import RULES_DIR

    g = rdflib.Graph()
    for name in RULE_FILES:
        g.parse(str(RULES_DIR / name), format="turtle")
    return g


def _lookup(g: Any, q: Question) -> frozenset[str]:
    from rdflib import URIRef

    s, p = URIRef(q.subject), URIRef(q.predicate)
    if q.obj:
        return frozenset({q.obj}) if (s, p, URIRef(q.obj)) in g else frozenset()
    return frozenset(str(o) for o in g.objects(s, p))


def run_pyshacl(nt: Path, questions: dict[str, list[Question]], tiers: dict[str, TierRun], bar: Any) -> PyshaclRun:
    """Materialise every conclusion, look every question up; then focus-node runs on a fresh copy."""
    import pyshacl

    shapes = _rules_graph()
    start = time.perf_counter()
    g = _rdflib_graph(nt)
    parse_s = time.perf_counter() - start
    before = len(g)
    bar.set_description(f"pySHACL: materialising {before:,} triples")
    start = time.perf_counter()
    pyshacl.shacl_rules(g, shacl_graph=shapes, inplace=True)
    materialise_s = time.perf_counter() - start
    _timed(questions, tiers, "pyshacl", "pySHACL", partial(_lookup, g))
    after = len(g)
    del g
    fresh = _rdflib_graph(nt)
    bar.set_description("pySHACL: one focus node at a time")

    def focus(q: Question) -> frozenset[str]:
        pyshacl.shacl_rules(fresh, shacl_graph=shapes, inplace=True, focus_nodes=[q.subject])
        bar.update(1)
        return _lookup(fresh, q)

    _timed(questions, tiers, "pyshacl-focus", "pySHACL (focus node)", focus, limit=FOCUS_QUESTIONS)
    return PyshaclRun(parse_s, materialise_s, before, after)


def _timed(
    questions: dict[str, list[Question]],
    tiers: dict[str, TierRun],
    contender: str,
    name: str,
    answer: Callable[[Question], frozenset[str]],
    *,
    limit: int | None = None,
) -> None:
    """Time ``answer`` on each tier's questions (the first ``limit``), checking it against the truth."""
    for tier, qs in questions.items():
        run = tiers[tier]
        run.ms[contender], run.agree[contender] = [], 0
        for q in qs[:limit]:
            start = time.perf_counter_ns()
            got = answer(q)
            run.ms[contender].append((time.perf_counter_ns() - start) / 1e6)
            if got == q.expected:
                run.agree[contender] += 1
            else:
                run.mismatches.append(f"{name}: {q.text} differs from the truth")


