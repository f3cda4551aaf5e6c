"""What the signed-off rules conclude, for SPARQL tools: computed for one query, never stored.

A SPARQL query with reasoning on (:meth:`workbench.service.Workbench.sparql`) sees, beside the
recorded facts, the conclusions the active rules draw for the relations its patterns could
match, all in one reserved graph, :data:`~workbench.ids.DERIVED_GRAPH`, whose name says they are
derived: a client that copies them with their graph cannot take them for records, and an import
may not write into it. Each conclusion is also described there, so a query can reach its proof:

    <urn:wb:conclusion:…> a wb:Conclusion ; rdf:subject s ; rdf:predicate p ; rdf:object o ;
        wb:byRule <the rule version> ; prov:wasDerivedFrom <each record a premise comes from> ;
        wb:proof <the JSON API's proof of it> .

The conclusions come from the same goal-directed engine as every answer
(:mod:`workbench.rules.engine`), over the reader's view of the store, so a conclusion rests only
on premises the reader may see. A triple already recorded is not repeated here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import urlencode

import pyoxigraph as ox

from workbench.access import rewrite
from workbench.errors import Unsupported
from workbench.ids import DERIVED_GRAPH
from workbench.rules.engine import Engine
from workbench.rules.proof import Fact, Step, Triple
from workbench.store import Store
from workbench.values.rules import RuleSet, Var
from workbench.vocab import PROV, RDF, WB

CONCLUSION_PREFIX = "urn:wb:conclusion:"
JOINED_CHARS = 1_000_000  # the longest query conclusions are written into (Workbench's own server's limit)
# What a conclusion's description says of it (see quads): a query reading only these reasons over
# every relation, since it names none.
DESCRIBING = frozenset(t.value for t in (RDF.subject, RDF.predicate, RDF.object, WB.byRule, WB.proof))
RDF_TYPE, CONCLUSION = RDF.type.value, WB.Conclusion.value


def concluded(rules: RuleSet) -> frozenset[ox.NamedNode]:
    """Every relation an active rule concludes: the named ones, and those a rule with a
    variable relation limits itself to (``FILTER(?p IN (...))``)."""
    out: set[ox.NamedNode] = set()
    for rule in rules.rules:
        for head in rule.head:
            if isinstance(head.p, ox.NamedNode):
                out.add(head.p)
            elif isinstance(head.p, Var):
                out |= {ox.NamedNode(p) for p in rule.domain(head.p.name) or ()}
    return frozenset(out)


Goals = dict[ox.NamedNode, frozenset[ox.NamedNode] | None]  # a relation -> the subjects asked (None: every one)


def goals_in(query: str, among: frozenset[ox.NamedNode]) -> Goals:
    """What a query's triple patterns could match of the relations in ``among``: those it names
    as a predicate or inside a property path, each with the subjects its patterns name (None
    when one has a variable subject or the relation is in a path); every relation, for every
    subject, when a predicate is a variable or a negated path, or when the query cannot be read
    here (rdflib reads less than pyoxigraph, whose parser has the last word).

    >>> from workbench.vocab import WB
    >>> goals_in("SELECT * WHERE { GRAPH ?g { <urn:a> <%s> ?o } }" % WB.needs.value, frozenset({WB.needs}))
    {<NamedNode value=https://w3id.org/workbench/ns#needs>: frozenset({<NamedNode value=urn:a>})}
    """
    from rdflib import URIRef, Variable
    from rdflib.paths import NegatedPath, Path
    from rdflib.plugins.sparql import prepareQuery

    everything: Goals = dict.fromkeys(among)
    try:
        algebra = prepareQuery(query).algebra
    except Exception:
        return everything
    asked: dict[str, set[str] | None] = {}
    describes: list[str] = []

    def visit(node: object) -> bool:  # False: a pattern could match any relation
        if isinstance(node, dict):
            # BGP: translated patterns; TriplesBlock: those rdflib leaves untranslated (NOT EXISTS)
            if getattr(node, "name", None) in ("BGP", "TriplesBlock") and not all(
                    pattern(t[0], t[1], t[2]) for t in node.get("triples") or ()):
                return False
            return all(visit(v) for v in node.values())
        if isinstance(node, list | tuple):
            return all(visit(v) for v in node)
        return True

    def pattern(s: object, p: object, o: object = None) -> bool:
        if isinstance(p, Variable | NegatedPath):
            return False
        if isinstance(p, URIRef) and (str(p) in DESCRIBING or (str(p) == RDF_TYPE and str(o) == CONCLUSION)):
            describes.append(str(p))  # reads the conclusions' descriptions, not a relation
            return True
        if isinstance(p, URIRef):
            known = asked.setdefault(str(p), set())
            if known is not None and isinstance(s, URIRef):
                known.add(str(s))
            else:
                asked[str(p)] = None
            return True
        if isinstance(p, Path):
            return all(pattern(None, x) for x in (getattr(p, "args", None) or [getattr(p, "path", None)])
                       if x is not None)
        return False  # a form not read here (an untranslated path): any relation

    if not visit(algebra) or (describes and not {p.value for p in among} & set(asked)):
        return everything  # any relation's conclusions, or their descriptions with no relation named
    out: Goals = {}
    for p in among:
        if p.value in asked:
            subjects = asked[p.value]
            out[p] = None if subjects is None else frozenset(ox.NamedNode(x) for x in subjects)
    return out


def conclusions(store: Store, rules: RuleSet, goals: Goals | Iterable[ox.NamedNode], *,
                deadline: float | None = None) -> list[tuple[Triple, Step]]:
    """Every conclusion the rules draw over ``store`` for these goals (relations: of every
    subject) that is not recorded, with its proof, in a fixed order. One engine for all: sub-goals
    are shared. Past ``deadline`` (``time.monotonic()``) it stops with StoreUnavailable."""
    wanted = goals if isinstance(goals, dict) else dict.fromkeys(goals)
    engine = Engine(store, rules, deadline=deadline)
    out: dict[Triple, Step] = {}
    for p in sorted(wanted, key=str):
        subjects = wanted[p]
        for s in [Var("s")] if subjects is None else sorted(subjects, key=str):
            for triple, support in engine.solve(s, p).found.items():
                if isinstance(support, Step):
                    out[triple] = support
    return sorted(out.items(), key=lambda item: " ".join(map(str, item[0])))


def conclusion_iri(triple: Triple) -> ox.NamedNode:
    """A conclusion's stable name: the same triple is the same conclusion in every query."""
    return ox.NamedNode(CONCLUSION_PREFIX + hashlib.sha256(" ".join(map(str, triple)).encode()).hexdigest()[:32])


def proof_link(base: str, triple: Triple) -> ox.NamedNode:
    """The JSON API's ``GET /api/proof`` of a conclusion (a literal object: every value's)."""
    s, p, o = triple
    args = {"subject": s.value, "relation": p.value}
    if isinstance(o, ox.NamedNode):
        args["object"] = o.value
    return ox.NamedNode(f"{base}?{urlencode(args)}")


def quads(found: Iterable[tuple[Triple, Step]], *, proof_base: str | None = None) -> Iterator[ox.Quad]:
    """The reserved graph's content: each conclusion, and its description (rule, records, proof)."""
    g = DERIVED_GRAPH
    for triple, step in found:
        s, p, o = triple
        node = conclusion_iri(triple)
        yield ox.Quad(s, p, o, g)  # type: ignore[arg-type]
        yield ox.Quad(node, RDF.type, WB.Conclusion, g)
        yield ox.Quad(node, RDF.subject, s, g)
        yield ox.Quad(node, RDF.predicate, p, g)
        yield ox.Quad(node, RDF.object, o, g)
        yield ox.Quad(node, WB.byRule, ox.NamedNode(step.rule.iri.strip("<>")), g)
        for record in sorted({f.record for f in _leaves(step)}, key=str):
            yield ox.Quad(node, PROV.wasDerivedFrom, record, g)
        if proof_base:
            yield ox.Quad(node, WB.proof, proof_link(proof_base, triple), g)


def _leaves(step: Step) -> Iterator[Fact]:
    for premise in step.premises:
        if isinstance(premise, Fact):
            yield premise
        else:
            yield from _leaves(premise)


def joined(query: str, quads: Iterable[ox.Quad], *, default_graph: Sequence[str] | None = None,
           named_graphs: Sequence[str] | None = None, limit: int | None = None) -> str | None:
    """``query`` with the reserved graph's ``quads`` written into it, so that any store answers it
    as if the graph were there, with nothing copied to the store or from it: each
    ``GRAPH term { P }`` that could read the reserved graph becomes
    ``{ GRAPH term { P } } UNION { SELECT * WHERE { VALUES (...) { ... } } }``, the rows being P's
    solutions over the quads alone, evaluated here in memory. Exact because the reserved graph is reached only
    through ``GRAPH`` (the default graph never holds it) and a GRAPH group is evaluated on its
    graph alone; so refused (Unsupported) are a GRAPH inside another (the inner one would read
    every graph from the reserved one) and the reserved graph as the default graph. The query's
    dataset (``FROM`` / ``FROM NAMED``, else the Protocol's ``default_graph`` / ``named_graphs``,
    which replace it) holds the reserved graph only if it names it. None when the rows would
    make the query longer than ``limit`` characters (default :data:`JOINED_CHARS`; a wide query:
    every subject's conclusions)."""
    limit = JOINED_CHARS if limit is None else limit
    reading = rewrite.read(query)
    derived = DERIVED_GRAPH.value
    if any(g.inner for g in reading.groups):
        raise Unsupported("with reasoning on, a GRAPH pattern may not hold another GRAPH pattern (nor EXISTS or a "
                          "subquery with one): write them side by side")
    given = [(query[s + 1:e - 1], named) for s, e, named in reading.dataset]
    protocol = default_graph is not None or named_graphs is not None
    if protocol:
        given = [(g, False) for g in default_graph or ()] + [(g, True) for g in named_graphs or ()]
    if (derived, False) in given:
        raise Unsupported(f"with reasoning on, <{derived}> is read through GRAPH, not as the default graph")
    if (protocol or reading.dataset) and (derived, True) not in given:
        return query  # a dataset without the reserved graph
    local = ox.Store()  # the query was read already (sparqlcheck.parses): so is each part of it
    local.extend(quads)
    if not len(local):
        return query
    prologue, out, last, size = query[:reading.form], [], 0, len(query)
    for g in reading.groups:
        solutions = local.query(f"{prologue} SELECT * WHERE {{ GRAPH {g.term} {query[g.brace:g.end]} }}")
        assert isinstance(solutions, ox.QuerySolutions)
        names = [v for v in solutions.variables]
        rows = []
        for row in solutions:
            rows.append(" ".join(_value(row[v]) for v in names))
            size += len(rows[-1]) + 3
            if size > limit:
                return None
        if not rows:
            continue
        group = query[g.start:g.end]
        if g.term.startswith(("?", "$")):  # every graph: the store's, and the reserved one
            # (a VALUES table in a subquery: Virtuoso 7 finds nothing in a UNION with a bare one)
            text = f"{{ {group} }} UNION {{ SELECT * WHERE {{ {_table(names, rows)} }} }}"
        elif names:  # the reserved graph, which the store never holds
            text = f"{{ SELECT * WHERE {{ {_table(names, rows)} }} }}"
        else:  # it binds nothing and holds here: what joins as one empty solution, on any engine
            text = f"OPTIONAL {{ {group} }}"
        out += [query[last:g.start], text]
        last = g.end
    return "".join(out) + query[last:]


def _table(names: list[ox.Variable], rows: list[str]) -> str:
    return f"VALUES ({' '.join(map(str, names))}) {{ {' '.join(f'({r})' for r in rows)} }}"


def _value(term: object) -> str:
    if term is None:
        return "UNDEF"
    if isinstance(term, ox.NamedNode | ox.Literal):
        return str(term)
    raise Unsupported(f"with reasoning on, a GRAPH pattern over the conclusions bound {term}, which a query "
                      "cannot name")
