"""``bench ask``'s "one query" contender: the whole question in one hand-written SPARQL query.

What the issue's part 1 asks the compiler to produce, written by hand for the benchmark's one rule
(a thing inherits a fact from its kinds, through ``rdfs:subClassOf``), so that its cost can be
measured before any compiler is built: the names bound by their labels, every ``subClassOf`` edge on a
path from the thing's kinds to a kind that holds the fact, each premise's record graph with that
record's status (active) and source. That is the least a proof with its sources can be rebuilt from;
Workbench's own answer also checks negatives, merges, rule versions and visibility, and gives labels.
The contender's time is the query and the Python that reads the values from its rows.

Each branch binds the names itself: written once before the ``UNION``, Oxigraph evaluated the union
first (about 300 ms a question at 100k).
"""

from __future__ import annotations

from typing import Any

from benchmarks import synth
from workbench.names.entities import literal
from workbench.vocab import PROV, WB


def one_query(subject_name: str, predicate: str, object_name: str | None) -> str:
    """The question as one SELECT; rows: (?part, ?a, ?b, ?o, ?g, ?src)."""
    t, sc, p = f"<{synth.RDF_TYPE}>", f"<{synth.SUBCLASS_OF}>", f"<{predicate}>"
    names = f"GRAPH ?gs {{ ?s <{synth.PREF_LABEL}> {literal(subject_name)} }}"
    if object_name is not None:
        names += f" GRAPH ?go {{ ?o <{synth.PREF_LABEL}> {literal(object_name)} }}"
    record = f"GRAPH ?m {{ ?g {WB.status} {WB.Active} ; {PROV.wasDerivedFrom} ?src }}"
    kinds = f"?s {t} ?k0 . ?k0 {sc}* ?a ."
    return f"""SELECT ?part ?a ?b ?o ?g ?src WHERE {{
  {{ {names} GRAPH ?g {{ ?s {p} ?o }} {record} BIND("fact" AS ?part) BIND(?s AS ?a) }}
  UNION {{ {names} GRAPH ?g {{ ?s {t} ?a }} {record} BIND("type" AS ?part) }}
  UNION {{ {names} {kinds} GRAPH ?g {{ ?a {sc} ?b }} ?b {sc}* ?kind . ?kind {p} ?o . {record} BIND("edge" AS ?part) }}
  UNION {{ {names} {kinds} GRAPH ?g {{ ?a {p} ?o }} {record} BIND("fact" AS ?part) }}
}}"""


def values_from_rows(rows: Any, subject: str) -> frozenset[str]:
    """The values the rows prove: a fact held by the thing, or by a kind the thing reaches through
    its types and the edges (the proof's chain, walked in Python from the rows)."""
    reached: set[str] = {subject}
    edges: dict[str, set[str]] = {}
    facts: list[tuple[str, str]] = []
    for row in rows:
        part, a = row["part"].value, row["a"].value
        if part == "type":
            reached.add(a)
        elif part == "edge":
            edges.setdefault(a, set()).add(row["b"].value)
        else:
            facts.append((a, row["o"].value))
    todo = list(reached)
    while todo:
        for b in edges.get(todo.pop(), ()):
            if b not in reached:
                reached.add(b)
                todo.append(b)
    return frozenset(o for a, o in facts if a in reached)
