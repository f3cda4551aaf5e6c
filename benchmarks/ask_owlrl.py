"""Another usual alternative for ``bench ask``: owlrl's RDFS closure, materialised on an in-memory
rdflib copy of the worlds, then each question is a lookup.

What it can answer, and what it cannot: RDFS entails ``rdf:type`` through ``rdfs:subClassOf``
(rdfs9, with rdfs11 for the chain), so "is T a J?" for a kind J above T's own is answered; and a
fact written on a thing is there to be looked up. RDFS has no rule that carries ``wb:has``,
``wb:usedFor`` or ``wb:dependsOn`` from a kind down to its things (that is Workbench's
inherit-kind rule), so on the derived tiers it finds only what was written on the thing itself:
those answers are wrong, and the bench counts them against the ground truth rather than hiding
them. "No evidence" comes out right because nothing is concluded for those facts at all.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.ask_pyshacl import _rdflib_graph

#: What RDFS closure can and cannot answer among the tiers, in words for the report.
CAN_ANSWER = ("the recorded tier (a lookup of what is written) and kind membership (rdf:type through "
              "rdfs:subClassOf); not the derived tiers: RDFS has no rule carrying has / used for / depends on "
              "from a kind to its things")


def closure(nt: Path) -> tuple[Any, dict[str, float]]:
    """The worlds in ``nt`` parsed into rdflib and expanded with ``owlrl.RDFS_Semantics``; and
    the figures: parse and closure seconds, triples before and after."""
    import owlrl

    start = time.perf_counter()
    g = _rdflib_graph(nt)
    parse_s = time.perf_counter() - start
    before = len(g)
    start = time.perf_counter()
    owlrl.DeductiveClosure(owlrl.RDFS_Semantics).expand(g)
    expand_s = time.perf_counter() - start
    return g, {"parse_s": parse_s, "materialise_s": expand_s, "triples_before": before, "triples_after": len(g)}
