"""The review queue laid out for an engine to withhold (issue 20, part 1): each candidate a graph
of its own carrying who may see it, the runs and decisions on it beside it; merges that make a
candidate rest on what it was merged into; and stores of the shared queue graph moved."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox

from tests.conftest import FIXED_NOW, dump
from workbench.access.audience import withheld
from workbench.access.views import viewer
from workbench.ids import CANDIDATE_PREFIX, QUEUE_GRAPH, agent_iri, candidate_iri, record_iri, source_iri
from workbench.records import layout
from workbench.review.queue import Proposal
from workbench.service import Workbench
from workbench.store import Store
from workbench.vocab import PREFIXES, WB

FAMILY = {"source": {"id": "vault-note", "said_by": "carol", "text": "The vault code is 4-8-15."},
          "visible_to": ["group:family"]}


def _cand(cid: str, statement: str, **more: object) -> dict[str, object]:
    return {"id": cid, "statement": statement, "type": "observation",
            "source": {"id": f"chat-{cid}", "said_by": "me"}, "triples": [["my car", "is a", "petrol car"]], **more}


def _world(tmp_path: Path) -> Workbench:
    wb = Workbench.open(tmp_path / "s", create=True, user="cora", clock=lambda: FIXED_NOW)
    wb.init(sample=True)
    wb.add_user("cora", ["admin", "curator"], groups=["group:family"])
    wb.add_user("bob", ["viewer"])
    wb.add_user("fay", ["viewer"], groups=["group:family"])
    wb.propose([_cand("c-pub", "My car is a petrol car."), _cand("c-dup", "My car runs on petrol."),
                _cand("c-fam", "The family car is a petrol car.", **FAMILY),
                _cand("c-mine", "Only I know this.", visible_to=["cora"]),
                _cand("c-other", "Another public one.")], Proposal("import", "queue.jsonl"))
    return wb


def _candidate_graphs(store: Store, extra: str = "") -> set[str]:
    rows = store.select(f"""SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }}
        FILTER(STRSTARTS(STR(?g), "{CANDIDATE_PREFIX}")) {extra} }}""")
    return {r["g"].value for r in rows}  # type: ignore[union-attr]


def test_each_candidate_is_a_graph_of_its_own_with_its_runs_and_decisions(tmp_path: Path) -> None:
    with _world(tmp_path) as wb:
        wb.reject(["c-pub", "c-fam"], reason="not needed")
        store = wb.store
        # the queue graph holds nothing (a claim only while a decision is written)
        assert not store.ask(f"ASK {{ GRAPH {QUEUE_GRAPH} {{ ?s ?p ?o }} }}")
        # the rejection is described beside each candidate it decided, naming only that one
        used = store.select(PREFIXES + """SELECT ?g ?c ?why WHERE { GRAPH ?g { ?a a wb:Rejection ; prov:used ?c ;
            wb:reason ?why } }""")
        assert {(r["g"], r["c"]) for r in used} == {(candidate_iri(c), candidate_iri(c)) for c in ("c-pub", "c-fam")}
        # the proposal run beside every candidate it queued
        runs = store.select(PREFIXES + "SELECT ?g WHERE { GRAPH ?g { ?c prov:wasGeneratedBy ?a . ?a a wb:Proposal } }")
        assert len({r["g"] for r in runs}) == 5
        # who may see it: its own audience, and what it rests on
        fam = candidate_iri("c-fam")
        assert store.ask(PREFIXES + f"ASK {{ GRAPH {fam} {{ {fam} wb:visibleTo {agent_iri('group:family')} ; "
                                    f"wb:restsOn {source_iri('vault-note')} }} }}")
        assert [c.reason for c in wb.candidates(status="rejected")] == ["not needed", "not needed"]


def test_who_sees_a_candidate_by_view_and_by_filter(tmp_path: Path) -> None:
    with _world(tmp_path) as wb:
        # a public candidate merged into one only its proposer may see
        wb.merge_candidates("c-mine", ["c-dup"])
        expected = {"bob": {"c-pub", "c-other"}, "fay": {"c-pub", "c-other", "c-fam"},
                    "cora": {"c-pub", "c-other", "c-fam", "c-mine", "c-dup"}}
        for name, ids in expected.items():
            assert {c.id for c in wb.seen_by(name).candidates(status=None)} == ids, name
            if name == "cora":
                continue  # an admin reads the store itself
            # the engine's filter withholds exactly the graphs the view drops
            kept = _candidate_graphs(wb.store, withheld("?g", viewer(wb.store, name).agents))
            assert kept == {candidate_iri(i).value for i in ids} == _candidate_graphs(wb.seen_by(name).store), name


def _private_record(wb: Workbench, tmp_path: Path) -> None:
    """Record p-1, from the family's vault note."""
    path = tmp_path / "private.jsonl"
    path.write_text(json.dumps({"id": "p-1", "statement": "The vault holds the deeds.", "type": "observation",
                                "triples": [["my car", "is a", "petrol car"]], **FAMILY}) + "\n")
    wb.import_files([path])


def test_a_candidate_merged_into_a_private_record_is_seen_with_it(tmp_path: Path) -> None:
    with _world(tmp_path) as wb:
        _private_record(wb, tmp_path)
        wb.merge_candidates("p-1", ["c-other"])
        assert wb.store.ask(PREFIXES + f"ASK {{ GRAPH ?g {{ ?g wb:restsOn {record_iri('p-1')} }} }}")
        assert "c-other" not in {c.id for c in wb.seen_by("bob").candidates(status=None)}
        assert "c-other" in {c.id for c in wb.seen_by("fay").candidates(status=None)}
        # erased (and its copy in the candidate with it): the candidate rests on the tombstone,
        # seen by whoever could see the record
        wb.erase("p-1", reason="asked to forget")
        other = candidate_iri("c-other").value
        for name, sees in (("bob", False), ("fay", True)):
            agents = viewer(wb.store, name).agents
            assert (other in _candidate_graphs(wb.store, withheld("?g", agents))) is sees
            assert (other in _candidate_graphs(wb.seen_by(name).store)) is sees


def _shared_queue(store: Store) -> None:
    """The queue as stores kept it before 2026-12-06: every candidate, run and decision in the one
    queue graph, with no audience of its own."""
    ours = f'FILTER(STRSTARTS(STR(?g), "{CANDIDATE_PREFIX}"))'
    store.update(PREFIXES + f"""INSERT {{ GRAPH {QUEUE_GRAPH} {{ ?s ?p ?o }} }} WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {ours}
        FILTER(?s != ?g || ?p NOT IN (wb:restsOn, wb:visibleTo)) }}""")
    for row in store.select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{}} {ours} }}"):
        store.update(f"DROP GRAPH {row['g']}")


def test_a_store_of_the_shared_queue_is_moved_when_opened(tmp_path: Path) -> None:
    with _world(tmp_path) as wb:
        _private_record(wb, tmp_path)
        wb.reject(["c-pub", "c-fam"], reason="not needed")
        wb.merge_candidates("c-mine", ["c-dup"])
        wb.merge_candidates("p-1", ["c-other"])
        wb.erase("p-1", reason="asked to forget")
        before = dump(wb.store)
        seen = {n: wb.seen_by(n).candidates(status=None) for n in ("bob", "fay", "cora")}
        _shared_queue(wb.store)
        assert layout.outdated(wb.store) and dump(wb.store) != before
        # an act that decided two names both, in the one graph
        assert len(wb.store.select(PREFIXES + f"""SELECT ?c WHERE {{ GRAPH {QUEUE_GRAPH} {{
            ?a a wb:Rejection ; prov:used ?c }} }}""")) == 2
    with Workbench.open(tmp_path / "s", user="cora", clock=lambda: FIXED_NOW) as wb:
        assert not layout.outdated(wb.store)
        # all as it was, but that the candidate whose content the erasure took no longer says its
        # source (kept nowhere else): it rests on the erased record's tombstone
        lost = f"{candidate_iri('c-other')} {WB.restsOn} <urn:wb:source:chat-c-other> {candidate_iri('c-other')} ."
        assert set(dump(wb.store).splitlines()) == set(before.splitlines()) - {lost.encode()}
        assert {n: wb.seen_by(n).candidates(status=None) for n in seen} == seen
        assert not wb.store.ask(f"ASK {{ GRAPH {QUEUE_GRAPH} {{ ?s ?p ?o }} }}")


def test_a_claim_on_the_queue_stays_where_it_is(tmp_path: Path) -> None:
    with _world(tmp_path) as wb:
        claim = ox.Quad(QUEUE_GRAPH, ox.NamedNode("https://w3id.org/workbench/ns#claim"), ox.Literal("t 1.0"),
                        QUEUE_GRAPH)
        wb.store.apply(insert=[claim])
        _shared_queue(wb.store)
        layout.migrate(wb.store)
        assert wb.store.ask(f"ASK {{ GRAPH {QUEUE_GRAPH} {{ {QUEUE_GRAPH} ?p ?o }} }}")
        assert len(_candidate_graphs(wb.store)) == 5
