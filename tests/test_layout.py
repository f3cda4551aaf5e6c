"""Where a source's description and its records' metadata live: in the source's own graph, so
that what a reader may not see of a source is one named graph an engine can withhold (issue 20,
part 1); and stores and exports written before that are brought to it."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXED_NOW, dump
from workbench.ids import (
    ACTIVITY_PREFIX,
    AUDIT_GRAPH,
    ENTITIES_GRAPH,
    META_GRAPH,
    SOURCE_PREFIX,
    SUMMARIES_GRAPH,
    TOMBSTONE_PREFIX,
    agent_iri,
    record_iri,
    source_iri,
    summary_iri,
    tombstone_graph,
)
from workbench.records import layout
from workbench.review.queue import Proposal
from workbench.service import Workbench
from workbench.store import EmbeddedStore, MemoryStore, Store
from workbench.vocab import PREFIXES, WB

SECRET = "the combination is 4-8-15"


def _private(record_id: str, source_id: str, audience: list[str], text: str) -> dict[str, object]:
    return {"id": record_id, "statement": f"Record {record_id}.", "type": "observation", "visible_to": audience,
            "source": {"id": source_id, "said_by": "carol", "captured_at": "2026-05-01T10:00:00Z", "text": text},
            "triples": [[f"Thing {record_id}", "is a", "petrol car"]]}


def _import(wb: Workbench, tmp_path: Path, records: list[dict[str, object]], name: str = "more.jsonl") -> None:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    wb.import_files([path])


def _graphs_holding(store: Store, literal: str) -> set[str]:
    rows = store.select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p {ox.Literal(literal)} }} }}")
    return {r["g"].value for r in rows}  # type: ignore[union-attr]


def test_a_sources_description_is_in_its_own_graph(sample: Workbench, tmp_path: Path) -> None:
    _import(sample, tmp_path, [_private("p-1", "vault-note", ["group:family"], SECRET)])
    store = sample.store
    node = source_iri("vault-note")
    # its text and its audience are in its graph and nowhere else: withholding that one graph
    # (and the records taken from it) hides them
    assert _graphs_holding(store, SECRET) == {node.value}
    audience = store.select(PREFIXES + f"SELECT ?g ?a WHERE {{ GRAPH ?g {{ {node} wb:visibleTo ?a }} }}")
    assert [(r["g"].value, r["a"].value) for r in audience] == [(node.value, agent_iri("group:family").value)]
    # so is the metadata of the record taken from it: its statement, status and provenance
    assert _graphs_holding(store, "Record p-1.") == {node.value}
    homes = store.select(PREFIXES + "SELECT DISTINCT ?g WHERE { GRAPH ?g { <urn:wb:record:p-1> ?p ?o } }")
    assert [r["g"].value for r in homes] == [node.value]  # type: ignore[union-attr]
    # the metadata graph describes no source or record any more; every source of the sample has a graph
    assert not layout.outdated(store)
    assert not store.ask(PREFIXES + f"ASK {{ GRAPH {META_GRAPH} {{ ?r a wb:Assertion }} }}")
    sources = store.select(PREFIXES + "SELECT ?s ?g WHERE { GRAPH ?g { ?s a wb:Source } }")
    assert len(sources) == 22 + 1 and all(r["s"] == r["g"] for r in sources)  # the sample's and this one
    # and a record still reads its source whole
    record = sample.record("p-1")
    assert (record.source.id, record.source.text, record.source.visible_to) == ("vault-note", SECRET,
                                                                               ("group:family",))


_MOVED = f'FILTER(STRSTARTS(STR(?g), "{SOURCE_PREFIX}") || STRSTARTS(STR(?g), "{ACTIVITY_PREFIX}"))'


def _old_layout(store: Store) -> None:
    """Put every source's description, every record's metadata and every act on records back
    where stores kept them before: the metadata graph (and the names records gave, with their
    links to those records, in the entities graph)."""
    names = f"""{{ GRAPH ?g {{ ?e wb:namedIn ?o }} BIND(wb:namedIn AS ?p) {_MOVED} }}
        UNION {{ GRAPH ?g {{ ?e a wb:Entity ; ?p ?o }} {_MOVED}
                 VALUES ?p {{ rdf:type skos:prefLabel wb:nameKey prov:wasGeneratedBy }} }}"""
    store.update(PREFIXES + f"INSERT {{ GRAPH {ENTITIES_GRAPH} {{ ?e ?p ?o }} }} WHERE {{ {names} }}")
    store.update(PREFIXES + f"DELETE {{ GRAPH ?g {{ ?e ?p ?o }} }} WHERE {{ {names} }}")
    store.update(PREFIXES + f"INSERT {{ GRAPH {META_GRAPH} {{ ?s ?p ?o }} }} WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {_MOVED} }}")
    for row in store.select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{}} {_MOVED} }}"):
        store.update(f"DROP GRAPH {row['g']}")


def _outside_meta(store: Store) -> bytes:
    return b"".join(line + b"\n" for line in dump(store).splitlines() if META_GRAPH.value.encode() not in line)


def test_an_act_on_records_is_a_graph_of_its_own(sample: Workbench) -> None:
    sample.supersede("m-car-1", "m-stove-1", reason="a test of where acts go")
    sample.retract("m-pref-1", reason="no longer true")
    store = sample.store
    acts = store.select(PREFIXES + """SELECT ?g ?a ?r WHERE { GRAPH ?g { ?a prov:used ?r ; wb:reason ?why } }""")
    used = {(r["r"].value, r["g"] == r["a"]) for r in acts}  # type: ignore[union-attr]
    assert used == {(record_iri(i).value, True) for i in ("m-car-1", "m-stove-1", "m-pref-1")}
    assert not store.ask(PREFIXES + f"ASK {{ GRAPH {META_GRAPH} {{ ?a prov:used ?r ; wb:reason ?why }} }}")
    # read back as before: the audit trail, the status
    assert [e.what for e in sample.audit("m-pref-1")][-1] == "retraction"
    assert sample.record("m-car-1").status.value == "superseded"


def test_a_store_of_the_earlier_layout_is_brought_to_it_when_opened(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "s", create=True, user="tester", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        wb.retract("m-pref-1", reason="no longer true")
        wb.supersede("m-car-1", "m-stove-1", reason="an act to move")
        _import(wb, tmp_path, [_private("p-1", "vault-note", ["group:family"], SECRET)])
        before, answer = _outside_meta(wb.store), wb.ask("my car", "needs", "gasoline")
        record = wb.record("p-1")
        _old_layout(wb.store)
        assert layout.outdated(wb.store) and _graphs_holding(wb.store, SECRET) == {META_GRAPH.value}
    with Workbench.open(tmp_path / "s", user="tester", clock=lambda: FIXED_NOW) as wb:
        assert not layout.outdated(wb.store)
        assert _outside_meta(wb.store) == before
        assert _graphs_holding(wb.store, SECRET) == {source_iri("vault-note").value}
        assert wb.ask("my car", "needs", "gasoline") == answer
        assert wb.record("p-1") == record
        assert [e.what for e in wb.audit("m-pref-1")][-1] == "retraction"
        assert not layout.migrate(wb.store)  # nothing left to move


def test_an_export_of_the_earlier_layout_is_restored_into_it(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "s", create=True, user="tester", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        before = _outside_meta(wb.store)
        _old_layout(wb.store)
        wb.export(tmp_path / "old.nq")
    with Workbench.open(tmp_path / "copy", create=True, user="tester", clock=lambda: FIXED_NOW) as copy:
        copy.restore(tmp_path / "old.nq")
        assert not layout.outdated(copy.store)
        assert _outside_meta(copy.store) == before


def test_a_move_cut_short_is_finished_by_the_next(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "s", create=True)
    wb = Workbench(store, user="tester", clock=lambda: FIXED_NOW)
    wb.init(sample=True)
    before = _outside_meta(store)
    _old_layout(store)
    real = store.update
    calls: list[str] = []

    def first_step_only(update: str) -> None:
        calls.append(update)
        if len(calls) > 1:
            raise OSError("the disk is full")
        real(update)

    store.update = first_step_only  # type: ignore[method-assign]
    with pytest.raises(OSError):
        layout.migrate(store)
    store.update = real  # type: ignore[method-assign]
    assert layout.outdated(store)  # copied, not yet deleted: still seen as to move
    assert layout.migrate(store)
    assert _outside_meta(store) == before
    store.close()


def _shared_again(store: Store) -> None:
    """Put summaries and tombstones back where stores kept them before 2026-12-06: in shared
    graphs, a tombstone's audience as ``wb:erasedFor``."""
    stones = f'FILTER(STRSTARTS(STR(?g), "{TOMBSTONE_PREFIX}"))'
    store.update(PREFIXES + f"""
        INSERT {{ GRAPH {SUMMARIES_GRAPH} {{ ?s ?p ?o }} }} WHERE {{ GRAPH ?s {{ ?s a wb:Summary ; ?p ?o }} }} ;
        INSERT {{ GRAPH {AUDIT_GRAPH} {{ ?s ?p ?o }} }} WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {stones} FILTER(?s != ?g) }} ;
        INSERT {{ GRAPH {AUDIT_GRAPH} {{ ?t wb:erasedFor ?w }} }} WHERE {{ GRAPH ?g {{ ?t a wb:Tombstone . ?g wb:visibleTo ?w }} }}""")
    for row in store.select(PREFIXES + f"""SELECT DISTINCT ?g WHERE {{ {{ GRAPH ?g {{ ?g a wb:Summary }} }}
                                          UNION {{ GRAPH ?g {{ ?t a wb:Tombstone }} {stones} }} }}"""):
        store.update(f"DROP GRAPH {row['g']}")


def test_summaries_and_tombstones_are_graphs_of_their_own_and_old_stores_are_moved(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "s", create=True, user="tester", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        wb.add_user("tester", ["admin"])
        _import(wb, tmp_path, [_private("p-1", "vault-note", ["group:family"], SECRET),
                               _private("p-2", "vault-note", ["group:family"], SECRET)])
        wb.propose([{"id": "s-1", "summary": "The vault's two things.", "of": ["p-1", "p-2"]}], Proposal("import", "s.jsonl"))
        wb.approve(["s-1"])
        wb.erase("p-2", reason="asked to forget")
        wb.erase("m-pref-1", reason="asked to forget")
        store = wb.store
        # each in its own graph: the summary's named by it, the tombstone's carrying its audience
        rows = store.select(PREFIXES + "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s a wb:Summary } }")
        assert [r["g"] for r in rows] == [summary_iri("s-1")]
        stones = store.select(PREFIXES + "SELECT ?g ?t ?w WHERE { GRAPH ?g { ?t a wb:Tombstone OPTIONAL { ?g wb:visibleTo ?w } } }")
        assert {(r["g"], r["t"], r["w"]) for r in stones} == {
            (tombstone_graph(record_iri("p-2")), record_iri("p-2"), agent_iri("group:family")),
            (tombstone_graph(record_iri("m-pref-1")), record_iri("m-pref-1"), None)}
        before = dump(store)
        summaries, history = wb.summaries(include_stale=True), wb.audit("p-2")
        _shared_again(store)
        assert layout.outdated(store) and dump(store) != before
    with Workbench.open(tmp_path / "s", user="tester", clock=lambda: FIXED_NOW) as wb:
        assert not layout.outdated(wb.store)
        assert dump(wb.store) == before
        assert wb.summaries(include_stale=True) == summaries and wb.audit("p-2") == history


def test_an_import_run_is_described_beside_each_source_it_took_records_from(tmp_path: Path) -> None:
    wb = Workbench(MemoryStore(), user="tester", clock=lambda: FIXED_NOW)
    wb.init()
    public, private = tmp_path / "public-notes.jsonl", tmp_path / "family-secrets.jsonl"
    public.write_text(json.dumps(_private("pub-1", "notes", [], "a note")) + "\n")
    private.write_text(json.dumps(_private("fam-1", "vault", ["group:family"], SECRET)) + "\n")
    wb.import_files([public, private])  # one run, two files
    runs = wb.store.select(PREFIXES + """SELECT ?g ?run ?file WHERE { GRAPH ?g { ?run a wb:Import ; prov:used ?file } }""")
    assert {(r["g"], r["file"].value) for r in runs} == {  # type: ignore[union-attr]
        (source_iri("notes"), str(public)), (source_iri("vault"), str(private))}
    assert len({r["run"] for r in runs}) == 1
    assert _graphs_holding(wb.store, str(private)) == {source_iri("vault").value}  # nowhere else
    assert not wb.store.ask(PREFIXES + f"ASK {{ GRAPH {META_GRAPH} {{ ?run a wb:Import }} }}")
    assert [e.detail for e in wb.audit("fam-1") if e.what == "import"] == [f"input {private}"]
    # an old store's runs (in the metadata graph, every file on each) are moved beside their sources
    before = dump(wb.store)
    wb.store.update(PREFIXES + f"""INSERT {{ GRAPH {META_GRAPH} {{ ?run ?p ?o . ?w ?q ?b }} }} WHERE {{
        GRAPH ?g {{ ?run a wb:Import ; ?p ?o ; prov:wasAssociatedWith ?w . ?w ?q ?b }} }}""")
    wb.store.update(PREFIXES + "DELETE { GRAPH ?g { ?run ?p ?o } } WHERE { GRAPH ?g { ?run a wb:Import ; ?p ?o } "
                    f"FILTER(?g != {META_GRAPH}) }}")
    assert layout.migrate(wb.store) and not layout.outdated(wb.store)
    moved = wb.store.select(PREFIXES + """SELECT ?g ?file WHERE { GRAPH ?g { ?run a wb:Import ; prov:used ?file } }""")
    assert {(r["g"], r["file"].value) for r in moved} == {  # type: ignore[union-attr]
        (g, str(f)) for g in (source_iri("notes"), source_iri("vault")) for f in (public, private)}
    assert not wb.store.ask(PREFIXES + f"ASK {{ GRAPH {META_GRAPH} {{ ?s ?p ?o FILTER(?s != <urn:wb:store>) }} }}")
    assert before != dump(wb.store)  # which file a record came from was not kept: every file is named


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(audiences=st.lists(st.sampled_from([[], ["alice"], ["group:family"], ["alice", "bob"]]),
                          min_size=1, max_size=5))
def test_every_source_text_is_in_its_graph_alone(tmp_path_factory: pytest.TempPathFactory,
                                                  audiences: list[list[str]]) -> None:
    tmp = tmp_path_factory.mktemp("layout")
    wb = Workbench(MemoryStore(), user="tester", clock=lambda: FIXED_NOW)
    wb.init()
    records = [_private(f"r-{i}", f"src-{i}", audience, f"text number {i}") for i, audience in enumerate(audiences)]
    _import(wb, tmp, records)
    for i, audience in enumerate(audiences):
        node = source_iri(f"src-{i}")
        assert _graphs_holding(wb.store, f"text number {i}") == {node.value}
        seen = wb.store.select(f"SELECT ?a WHERE {{ GRAPH ?g {{ {node} {WB.visibleTo} ?a }} }}")
        assert sorted(r["a"].value for r in seen) == sorted(agent_iri(a).value for a in audience)  # type: ignore[union-attr]
