"""Quad patterns in place of queries (issue 19, part 2): on a store where one quad pattern costs a
few microseconds (pyoxigraph in process, ``Store.cheap_patterns``), a question's names, its lone
lookups, a level of a closure's walk and its negative facts are read by patterns, not by SPARQL. Nothing else may change: on
random stores (records active, superseded, retracted or without a status, supersession cycles,
names in registered and unregistered graphs, merges, negative facts), each read gives what its
query gives, and every rule's conclusions and proofs are the same with patterns and without."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_oracle import FAST, RULE_FILES, concludable, content_graphs, shipped, subjects
from workbench import records
from workbench.answers import ask as asking
from workbench.ids import ENTITIES_GRAPH, source_iri
from workbench.names import entities
from workbench.rules.engine import Engine
from workbench.service import Workbench
from workbench.store import Batch, Store
from workbench.store.base import Store as BaseStore
from workbench.store.pyox import MemoryStore
from workbench.vocab import OWL, PREFIXES, RDF, SKOS, WB

RECORDS = [ox.NamedNode(f"urn:wb:record:c{i}") for i in range(1, 5)]
SOURCES = [source_iri(f"s{i}") for i in range(1, 3)]
STATUSES = [WB.Active, WB.Active, WB.Superseded, WB.Retracted, None]
KEYS = ["a", "b", "my car", "car"]
NAMING = [WB.nameKey, SKOS.prefLabel, SKOS.altLabel, ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")]
E = "urn:wb:entity:"

pytestmark = pytest.mark.usefixtures("walks_read_afresh")  # each way walks the kinds itself


@st.composite
def stores(draw: st.DrawFn) -> list[ox.Quad]:
    """Content spread over four records, each with a drawn status in a source's graph and
    random supersession; names and merges in the entities graph, a source's graph or a content
    graph (where they do not count); negative facts as blank nodes in content graphs."""
    content = sorted(draw(content_graphs()), key=str)
    nodes = sorted({t.subject for t in content} | {ox.NamedNode(E + "a")}, key=str)
    quads = [ox.Quad(t.subject, t.predicate, t.object, draw(st.sampled_from(RECORDS))) for t in content]
    anywhere = st.sampled_from([ENTITIES_GRAPH, *SOURCES, RECORDS[0]])
    for r in RECORDS:
        status = draw(st.sampled_from(STATUSES))
        if status is not None:
            quads.append(ox.Quad(r, WB.status, status, draw(st.sampled_from(SOURCES))))
    for a, b in draw(st.lists(st.tuples(st.sampled_from(RECORDS), st.sampled_from(RECORDS)), max_size=3)):
        quads.append(ox.Quad(a, WB.supersedes, b, draw(st.sampled_from(SOURCES))))
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        quads.append(ox.Quad(draw(st.sampled_from(nodes)), draw(st.sampled_from(NAMING)),
                             ox.Literal(draw(st.sampled_from(KEYS))), draw(anywhere)))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        quads.append(ox.Quad(draw(st.sampled_from(nodes)), OWL.sameAs, draw(st.sampled_from(nodes)), draw(anywhere)))
    for i in range(draw(st.integers(min_value=0, max_value=3))):
        n, g = ox.BlankNode(f"n{i}"), draw(st.sampled_from(RECORDS))
        target = draw(st.sampled_from([OWL.targetIndividual, OWL.targetValue]))
        quads += [ox.Quad(n, OWL.sourceIndividual, draw(st.sampled_from(nodes)), g),
                  ox.Quad(n, OWL.assertionProperty, draw(st.sampled_from([WB.needs, WB.has])), g),
                  ox.Quad(n, target, draw(st.sampled_from([*nodes, ox.Literal("spare")])), g)]
    if draw(st.booleans()):
        quads.append(ox.Quad(WB.needs, RDF.type, OWL.FunctionalProperty, ENTITIES_GRAPH))
    return quads


def _store(quads: list[ox.Quad]) -> MemoryStore:
    store = MemoryStore()
    store._db.extend(quads)
    return store


class _Queries:
    """The same store read only by SPARQL: what every read gave before patterns."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def __enter__(self) -> MemoryStore:
        self.store.cheap_patterns = False  # type: ignore[misc]
        return self.store

    def __exit__(self, *exc: object) -> None:
        del self.store.cheap_patterns


def _matches(store: Store) -> Iterator[tuple[object, object, object]]:
    terms = [None, ox.NamedNode(E + "a"), WB.needs, RDF.type, ox.Literal("spare"), WB.status, WB.Active]
    for s in terms[:2]:
        for p in (None, WB.needs, RDF.type, WB.status):
            for o in terms:
                yield s, p, o


@FAST
@given(quads=stores())
def test_a_pattern_reads_what_its_query_reads(quads: list[ox.Quad]) -> None:
    store = _store(quads)
    for s, p, o in _matches(store):
        for g in (None, RECORDS[0], SOURCES[0]):
            native = store.matching(s, p, o, g)  # type: ignore[arg-type]
            queried = BaseStore.matching(store, s, p, o, g)  # type: ignore[arg-type]
            assert sorted(map(str, native)) == sorted(map(str, queried)), (s, p, o, g)


@FAST
@given(quads=stores())
def test_a_record_is_active_as_a_normal_read_sees_it(quads: list[ox.Quad]) -> None:
    store = _store(quads)
    seen = {r["g"] for r in store.select(PREFIXES + f"SELECT ?g WHERE {{ VALUES ?g {{ {' '.join(map(str, RECORDS))} }} "
                                                   f"{records.effective('?g')} }}")}
    assert {r for r in RECORDS if records.active(store, r)} == seen


@FAST
@given(quads=stores())
def test_names_bind_as_their_query_binds_them(quads: list[ox.Quad]) -> None:
    store = _store(quads)
    native = entities.resolve_keys(store, KEYS)
    with _Queries(store):
        assert entities.resolve_keys(store, KEYS) == native


@FAST
@given(quads=stores())
def test_negative_facts_read_as_their_query_reads_them(quads: list[ox.Quad]) -> None:
    store = _store(quads)
    for s in subjects(q.triple for q in quads if q.predicate == OWL.sourceIndividual) or [ox.NamedNode(E + "a")]:
        for p in (WB.needs, WB.has):
            for o in (None, ox.NamedNode(E + "a"), ox.NamedNode(E + "b")):
                native = asking._negatives_by_patterns(store, s, p, o)
                queried = store.select(PREFIXES + f"SELECT * WHERE {{ {asking._negatives_pattern(s, p, o, None)} }}")
                def rows(found: list[dict[str, object]]) -> list[tuple[str, ...]]:
                    return sorted(tuple(str(r.get(k)) for k in "ogf") for r in found)
                assert rows(native) == rows(queried), (s, p, o)  # type: ignore[arg-type]



def test_a_relation_declared_functional_is_seen_at_the_next_question() -> None:
    # whether a relation is functional is kept per store version: a write declaring it moves that
    store = _store([])
    s = ox.NamedNode(E + "a")
    assert not any(r["f"] for r in asking._negatives_by_patterns(store, s, WB.needs, None))
    store.write(Batch(quads=[ox.Quad(WB.needs, RDF.type, OWL.FunctionalProperty, ENTITIES_GRAPH)]))
    assert [r["f"] for r in asking._negatives_by_patterns(store, s, WB.needs, None)] == [ox.Literal(True)]
    assert not any(r["f"] for r in asking._negatives_by_patterns(store, s, WB.has, None))

def _solve_all(store: Store) -> str:
    _, ruleset = shipped(*RULE_FILES)
    nodes = sorted({n for q in store.matching(None, None, None) for n in (q.subject, q.object)
                    if isinstance(n, ox.NamedNode) and n.value.startswith(E)}, key=str)
    out = {}
    for node in nodes:
        for p in concludable(ruleset):
            for o in (None, ox.NamedNode(E + "a")):
                result = Engine(store, ruleset).solve(node, p, o)
                out[f"{node} {p} {o}"] = (sorted((str(t), s.key) for t, s in result.found.items()), result.incomplete)
    return json.dumps(out, sort_keys=True, default=str)


@FAST
@given(quads=stores())
def test_every_rule_concludes_the_same_with_patterns_and_with_queries(quads: list[ox.Quad]) -> None:
    store = _store(quads)
    native = _solve_all(store)
    with _Queries(store):
        assert _solve_all(store) == native


QUESTIONS = [("my car", "needs", "gas"), ("my car", "needs", None), ("Sparky", "needs", None),
             ("Sparky", "is a", None), ("me", "owns", None), ("my car", "needs", "charging"),
             ("Paris", "located in", None), ("nobody at all", "needs", None)]


def test_the_sample_answers_the_same_with_patterns_and_with_queries(tmp_path: object) -> None:
    """The sample's answers (tier, values, proofs, sources) alike both ways, on the embedded store."""
    wb = Workbench.open(tmp_path, create=True)  # type: ignore[arg-type]
    wb.init(sample=True)
    try:
        def run() -> list[str]:
            return [json.dumps(wb.ask(s, r, o).to_json(), sort_keys=True) for s, r, o in QUESTIONS]

        assert wb.store.cheap_patterns
        native = run()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(type(wb.store), "cheap_patterns", False)
            assert run() == native
    finally:
        wb.close()


def test_a_question_asked_again_reads_no_pattern_until_a_write(tmp_path: object) -> None:
    """The recorded facts a question reads by quad patterns (its lookups, its negative facts) are
    kept while the store's version stays: asked again, the same answer from no pattern read at
    all; after a write (the record a proof rests on retracted) the next answer sees it."""
    wb = Workbench.open(tmp_path, create=True)  # type: ignore[arg-type]
    wb.init(sample=True)
    try:
        def asked() -> tuple[dict[str, object], list[object]]:
            calls: list[object] = []
            real = type(wb.store).matching
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(type(wb.store), "matching", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
                return wb.ask("my car", "needs", "gasoline").to_json(), calls

        first, read = asked()
        assert first["tier"] == "derived" and read  # the first time, read from the store
        again, read = asked()
        assert again == first and read == []
        leaves = {p["record"] for f in first["findings"] for p in _leaves(f["proofs"][0])}
        kind = next(r for r in leaves if wb.record(r).statement.startswith("My car is"))
        wb.retract(kind, reason="tested: a write moves what is kept")
        after, read = asked()
        assert read and after["tier"] == "no_evidence", after["summary"]
    finally:
        wb.close()


def test_a_pattern_with_many_matches_is_read_again_not_kept() -> None:
    """What a quad pattern finds is kept for the version only while it is small: a pattern over a
    whole class is read from the store each time rather than held."""
    things = [ox.NamedNode(f"{E}t{i}") for i in range(3)]
    store = _store([ox.Quad(t, RDF.type, ox.NamedNode(E + "car"), RECORDS[0]) for t in things]
                   + [ox.Quad(RECORDS[0], WB.status, WB.Active, SOURCES[0])])
    calls: list[object] = []
    real = MemoryStore.matching
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MemoryStore, "matching", lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
        for bound, reads in ((2, 2), (3, 1)):
            mp.setattr(records, "SEEN_KEPT", bound)
            records._Seen._kept.clear()
            calls.clear()
            for _ in range(2):
                found = records.seen(store, None, RDF.type, ox.NamedNode(E + "car"))
                assert sorted(q.subject.value for q in found) == sorted(t.value for t in things)
            assert len([c for c in calls if c[1] == RDF.type]) == reads, bound


def _leaves(proof: dict[str, object]) -> Iterator[dict[str, object]]:
    premises = proof.get("premises") or []
    if not premises:
        yield proof
    for p in premises:  # type: ignore[attr-defined]
        yield from _leaves(p)


def test_what_is_kept_per_version_stays_bounded_and_answers_the_same(tmp_path: object) -> None:
    """Past its bound each keeper starts again (a server that runs for weeks without a write keeps
    at most that much); the answers are the same as with room for everything."""
    from workbench.answers.evidence import Described

    wb = Workbench.open(tmp_path, create=True)  # type: ignore[arg-type]
    wb.init(sample=True)
    try:
        def run() -> list[str]:
            return [json.dumps(wb.ask(s, r, o).to_json(), sort_keys=True) for s, r, o in QUESTIONS * 2]

        def sizes() -> tuple[int, ...]:
            described = Described.of(wb.store)
            return (len(described._leaves), len(described._words) + len(described._rows),
                    len(entities._Bound.of(wb.store)._values),
                    len(records._Active.of(wb.store)._values), len(records._Seen.of(wb.store)._values),
                    len(asking._Negated.of(wb.store)._values))

        roomy = run()
        full = sizes()
        assert min(full) > 3
        with pytest.MonkeyPatch.context() as mp:
            for keeper in (Described, entities._Bound, records._Active, records._Seen, asking._Negated):
                mp.setattr(keeper, "LIMIT", 3)
                keeper._kept.clear()  # kept so far: forgotten, so the run fills the keepers again
            assert run() == roomy
            bounded = sizes()
        # each started again (what one question adds may pass the bound until the next)
        assert all(b < f for b, f in zip(bounded, full, strict=True)), (bounded, full)
        assert all(b <= 3 for b in bounded[2:])
    finally:
        wb.close()


def test_proofs_leaves_kept_start_again_past_the_bound() -> None:
    """The leaves built for proofs are bounded on their own: many facts of few records (one
    common-sense assertion holds a world's 700) would grow them while the rows stay few."""
    from workbench.answers.evidence import Described, Labels
    from workbench.vocab import DCTERMS

    store = MemoryStore()
    kept = Described.of(store)
    kept.kept([])  # this version
    record = RECORDS[0]
    rows = [{"r": record, "p": p, "o": o, "sp": None, "so": None}
            for p, o in ((DCTERMS.identifier, ox.Literal("c1")), (WB.recordType, WB.CommonSense), (WB.status, WB.Active))]
    pairs = [((ox.NamedNode(f"{E}t{i}"), WB.has, ox.NamedNode(E + "a")), record) for i in range(6)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Described, "LIMIT", 2)
        for start in (0, 2, 4):
            assert len(kept.leaves(pairs[start:start + 2], Labels(), rows)) == 2  # type: ignore[arg-type]
            assert len(kept._leaves) <= 2
