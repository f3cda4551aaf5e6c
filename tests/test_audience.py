"""The audience filter an engine can evaluate (access.audience) keeps exactly the record, source,
act, summary and tombstone graphs that a reader's view keeps: the view (a redacted copy) is the
oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXED_NOW
from workbench.access.audience import covers, withheld
from workbench.access.views import viewer
from workbench.errors import Conflict
from workbench.ids import (
    ACTIVITY_PREFIX,
    CANDIDATE_PREFIX,
    RECORD_PREFIX,
    SOURCE_PREFIX,
    SUMMARY_PREFIX,
    TOMBSTONE_PREFIX,
)
from workbench.review.queue import Proposal
from workbench.service import Workbench
from workbench.store import EmbeddedStore, MemoryStore, RemoteStore, Store
from workbench.vocab import PREFIXES

AUDIENCES = [[], ["alice"], ["group:x"], ["bob", "group:x"], ["carol"]]
READERS = {"alice": [], "bob": [], "xavier": ["group:x"], "carol": ["group:x"], "nobody": []}
KINDS = (RECORD_PREFIX, SOURCE_PREFIX, ACTIVITY_PREFIX, CANDIDATE_PREFIX, SUMMARY_PREFIX, TOMBSTONE_PREFIX)
OURS = "FILTER(" + " || ".join(f'STRSTARTS(STR(?g), "{p}")' for p in KINDS) + ")"
SUPERSEDE, RETRACT, ERASE, SUMMARISE, PROPOSE, MERGE = range(6)


def _graphs(store: Store, extra: str = "") -> set[str]:
    rows = store.select(PREFIXES + f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {OURS} {extra} }}")
    return {r["g"].value for r in rows}  # type: ignore[union-attr]


def _world(tmp: Path, sources: list[int], records: list[int], acts: list[tuple[int, int, int]],
           store: Store | None = None) -> Workbench:
    """Records from sources of the given audiences, then acts on them: (a, b, what) supersedes
    record a by b, retracts a, erases a, summarises a and b, proposes a candidate from record a's
    source with audience b, or merges the last candidate proposed into an earlier one or record b."""
    wb = Workbench(store or MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    wb.add_user("root", ["admin"])
    lines = []
    for i, source in enumerate(records):
        lines.append({"id": f"r{i}", "statement": f"Record {i}.", "type": "observation",
                      "visible_to": AUDIENCES[sources[source % len(sources)]],
                      "source": {"id": f"s{source % len(sources)}", "said_by": "me"},
                      "triples": [[f"thing {i}", "is a", "car"]]})
    path = tmp / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    wb.import_files([path])
    done: set[int] = set()
    erased: set[int] = set()
    queued: list[str] = []
    for n, (a, b, what) in enumerate(acts):
        a, b = a % len(records), b % len(records)
        if what in (RETRACT, ERASE) and a not in done:
            if what == RETRACT:
                wb.retract(f"r{a}", reason="gone")
            else:
                wb.erase(f"r{a}", reason="asked to forget")
                erased.add(a)
            done.add(a)
        elif what == SUPERSEDE and a != b and not {a, b} & done:
            old, new = (AUDIENCES[sources[records[i] % len(sources)]] for i in (a, b))
            if covers(old, new):
                wb.supersede(f"r{a}", f"r{b}", reason="newer")
                done.add(a)
            else:  # it would tell the newer record's readers that the older exists
                with pytest.raises(Conflict, match="would learn it exists"):
                    wb.supersede(f"r{a}", f"r{b}", reason="newer")
        elif what == SUMMARISE and not {a, b} & done:
            wb.propose([{"id": f"sum{n}", "summary": f"Summary {n}.", "of": sorted({f"r{a}", f"r{b}"})}],
                       Proposal("import", "summaries.jsonl"))
            wb.approve([f"sum{n}"])
        elif what == PROPOSE:
            wb.propose([{"id": f"c{n}", "statement": f"Candidate {n}.", "type": "observation",
                         "visible_to": AUDIENCES[b % len(AUDIENCES)],
                         "source": {"id": f"s{records[a] % len(sources)}", "said_by": "me"},
                         "triples": [[f"thing {a}", "is a", "car"]]}], Proposal("import", "candidates.jsonl"))
            queued.append(f"c{n}")
        elif what == MERGE and queued and (len(queued) > 1 or b not in erased):
            other = queued.pop()
            wb.merge_candidates(queued[b % len(queued)] if queued and (b % 2 or b in erased) else f"r{b}", [other])
    for name, groups in READERS.items():
        wb.add_user(name, ["viewer"], groups=groups)
    return wb


# random worlds for :func:`_world`: source audiences, records' sources, acts
WORLDS = {"sources": st.lists(st.integers(0, len(AUDIENCES) - 1), min_size=1, max_size=4),
          "records": st.lists(st.integers(0, 3), min_size=1, max_size=6),
          "acts": st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)), max_size=5)}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**WORLDS)
def test_the_filter_keeps_what_the_view_keeps(tmp_path_factory: pytest.TempPathFactory, sources: list[int],
                                              records: list[int], acts: list[tuple[int, int, int]]) -> None:
    wb = _world(tmp_path_factory.mktemp("audience"), sources, records, acts)
    everything = _graphs(wb.store)
    for name in READERS:
        reader = viewer(wb.store, name)
        seen = _graphs(wb.seen_by(name).store)
        kept = _graphs(wb.store, withheld("?g", reader.agents))
        assert kept == seen, name
    # and it withholds something whenever someone may not see everything (so the check can fail)
    hidden = {name: everything - _graphs(wb.store, withheld("?g", viewer(wb.store, name).agents)) for name in READERS}
    assert bool(hidden["nobody"]) == (any(AUDIENCES[sources[r % len(sources)]] for r in records)
                                      or any(AUDIENCES[b % len(records) % len(AUDIENCES)] for _, b, what in acts
                                              if what == PROPOSE))


def test_one_audience_check_a_filter() -> None:
    """What decides (the graph, its source, what it names, what it rests on) is found first and
    its audience checked once: an engine plans the filter for every GRAPH group of a query, and
    one check a kind cost twice as much to plan (docs/decisions/20261205-visibility-the-engine-enforces.md)."""
    f = withheld("?g", ["bob", "group:x"], fresh="_v")
    assert f.count("VALUES ?_vwho") == 1 and f.count("<urn:wb:agent:bob>") == 1
    assert "BIND(" not in f  # Virtuoso 7 binds nothing from outside a BIND in there


ENGINES = ["embedded", "oxigraph", "virtuoso"]
# every kind of act, on records of every audience (record i is from source i % 5, of AUDIENCES[i % 5])
ENGINE_ACTS = [(0, 5, SUPERSEDE), (1, 1, RETRACT), (2, 7, SUPERSEDE), (3, 3, ERASE), (9, 4, ERASE),
               (8, 6, SUMMARISE), (4, 4, SUMMARISE), (0, 1, PROPOSE), (5, 0, PROPOSE), (6, 3, PROPOSE),
               (0, 1, MERGE), (2, 0, PROPOSE), (0, 2, MERGE)]


def engine_world(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Workbench:
    """:func:`_world` with ENGINE_ACTS on a new store of ``backend`` (the caller closes it)."""
    if backend == "embedded":
        store: Store = EmbeddedStore(tmp_path / "store", create=True)
    else:
        server = request.getfixturevalue(f"{backend}_server")
        server.clear()
        store = RemoteStore(server.url)
    wb = _world(tmp_path, [0, 1, 2, 3, 4], list(range(5)) * 2, ENGINE_ACTS, store)
    wb.add_alias("thing 1", "the first thing")  # only alice's record names it: beside it
    wb.merge("thing 0", "thing 5", reason="the same thing")  # the public source's: shared
    wb._shared.rewriting = False  # readers read views, the oracle (on a server they would read the rewrite)
    return wb


@pytest.mark.parametrize("backend", ENGINES)
def test_on_every_engine(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """The same filter, evaluated by each engine, against the view."""
    wb = engine_world(backend, request, tmp_path)
    store = wb.store
    try:
        assert (store.capabilities.engine == "virtuoso") == (backend == "virtuoso")
        for name in READERS:
            assert _graphs(wb.store, withheld("?g", viewer(wb.store, name).agents)) == _graphs(wb.seen_by(name).store)
        # something of every kind is withheld from someone who may see no private source
        kinds = KINDS
        gone = _graphs(wb.store) - _graphs(wb.store, withheld("?g", viewer(wb.store, "nobody").agents))
        assert {k for k in kinds for g in gone if g.startswith(k)} == set(kinds)
    finally:
        store.close()
