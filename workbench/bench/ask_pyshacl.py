"""``bench ask``'s usual alternative: pySHACL materialises every conclusion of the rules on an
in-memory rdflib copy, then each question is a lookup; and pySHACL for one focus node."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.bench.ask_results import FOCUS_QUESTIONS, RULE_FILES, PyshaclRun, TierRun

if TYPE_CHECKING:
    from workbench.bench.ask import Question


def _rdflib_graph(path: Path) -> Any:
    import rdflib

    return rdflib.Graph().parse(str(path), format="nt")


def _rules_graph() -> Any:
    import rdflib

    from workbench.layout import RULES_DIR

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
    for tier, qs in questions.items():
        run = tiers[tier]
        run.ms["pyshacl"], run.agree["pyshacl"] = [], 0
        for q in qs:
            start = time.perf_counter_ns()
            got = _lookup(g, q)
            run.ms["pyshacl"].append((time.perf_counter_ns() - start) / 1e6)
            if got == q.expected:
                run.agree["pyshacl"] += 1
            else:
                run.mismatches.append(f"pySHACL: {q.text} differs from the truth")
    after = len(g)
    del g
    fresh = _rdflib_graph(nt)
    bar.set_description("pySHACL: one focus node at a time")
    for tier, qs in questions.items():
        run = tiers[tier]
        run.ms["pyshacl-focus"], run.agree["pyshacl-focus"] = [], 0
        for q in qs[:FOCUS_QUESTIONS]:
            start = time.perf_counter_ns()
            pyshacl.shacl_rules(fresh, shacl_graph=shapes, inplace=True, focus_nodes=[q.subject])
            got = _lookup(fresh, q)
            run.ms["pyshacl-focus"].append((time.perf_counter_ns() - start) / 1e6)
            if got == q.expected:
                run.agree["pyshacl-focus"] += 1
            else:
                run.mismatches.append(f"pySHACL (focus node): {q.text} differs from the truth")
            bar.update(1)
    return PyshaclRun(parse_s, materialise_s, before, after)


