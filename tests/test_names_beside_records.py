"""Where the names an import gave live (issue 20, part 1): in the shared entities graph once a
record anyone may see names the entity, else beside each restricted record that names it, with
every ``wb:namedIn`` link beside its record; and what erasing a naming record does to them. The
shared graph must never hold a name only restricted records gave, or an engine could not
withhold it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXED_NOW, dump
from workbench.errors import Conflict
from workbench.ids import ENTITIES_GRAPH, source_iri
from workbench.records import layout
from workbench.service import Workbench
from workbench.store import MemoryStore, Store
from workbench.vocab import PREFIXES

AUDIENCES = [[], ["alice"], ["group:family"]]


def _line(rid: str, source: str, audience: list[str], *names: str) -> dict[str, object]:
    return {"id": rid, "statement": f"Record {rid}.", "type": "observation", "visible_to": audience,
            "source": {"id": source, "said_by": "carol"}, "about": list(names),
            "triples": [[names[0], "is a", "person"]]}


def _import(wb: Workbench, tmp: Path, *lines: dict[str, object]) -> None:
    path = tmp / f"{lines[0]['id']}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    wb.import_files([path])


def _described_in(store: Store, name: str) -> set[str]:
    rows = store.select(PREFIXES + f"""SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?e a wb:Entity ; skos:prefLabel ?n }}
        FILTER(LCASE(STR(?n)) = {json.dumps(name.lower())}) }}""")
    return {r["g"].value for r in rows}  # type: ignore[union-attr]


def _links(store: Store) -> set[tuple[str, str]]:
    rows = store.select(PREFIXES + "SELECT ?g ?r WHERE { GRAPH ?g { ?e wb:namedIn ?r } }")
    return {(r["g"].value, r["r"].value.rsplit(":", 1)[1]) for r in rows}  # type: ignore[union-attr]


def test_names_live_where_their_records_are_seen(tmp_path: Path) -> None:
    wb = Workbench(MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    ents, fam, vault, notes = ENTITIES_GRAPH.value, *(source_iri(s).value for s in ("fam", "vault", "notes"))
    _import(wb, tmp_path, _line("p1", "fam", ["group:family"], "Mia"), _line("pub1", "notes", [], "Ravi"))
    assert _described_in(wb.store, "Mia") == {fam} and _described_in(wb.store, "Ravi") == {ents}
    assert _links(wb.store) == {(fam, "p1"), (notes, "pub1")}  # each link beside its record
    # another restricted record from another source names her: her names are beside it too
    _import(wb, tmp_path, _line("p2", "vault", ["alice"], "Mia"))
    assert _described_in(wb.store, "Mia") == {fam, vault}
    # a public record names her: now everyone may see her names, in the shared graph
    _import(wb, tmp_path, _line("pub2", "notes", [], "Mia"))
    assert _described_in(wb.store, "Mia") == {fam, vault, ents}
    # erasing it: only restricted records name her again, so out of the shared graph
    wb.erase("pub2", reason="a test")
    assert _described_in(wb.store, "Mia") == {fam, vault}
    # erasing one of those: her copy beside it goes (no other record of that source names her)
    wb.erase("p2", reason="a test")
    assert _described_in(wb.store, "Mia") == {fam}
    # erasing the last: no names are left, anywhere; the public Ravi is untouched
    wb.erase("p1", reason="a test")
    assert _described_in(wb.store, "Mia") == set() and _described_in(wb.store, "Ravi") == {ents}
    assert wb.resolve("Mia").outcome == "unknown" and wb.resolve("Ravi").outcome == "bound"
    assert _links(wb.store) == {(notes, "pub1")}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.tuples(st.integers(0, 2), st.integers(0, len(AUDIENCES) - 1), st.booleans()),
                        min_size=1, max_size=5),
       erase=st.lists(st.integers(0, 4), max_size=3))
def test_the_shared_graph_holds_only_names_a_public_record_gave(tmp_path_factory, records, erase) -> None:  # type: ignore[no-untyped-def]
    """Over random imports (a record from source s, of an audience, naming Mia or not) and
    erasures: Mia is described in the shared graph exactly when a public record names her, and
    beside exactly the restricted sources whose records name her otherwise."""
    tmp = tmp_path_factory.mktemp("names")
    wb = Workbench(MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    audience_of: dict[int, int] = {}
    kept: list[tuple[str, int, bool]] = []
    for i, (source, audience, mia) in enumerate(records):
        audience = audience_of.setdefault(source, audience)  # a source has one audience
        _import(wb, tmp, _line(f"r{i}", f"s{source}", AUDIENCES[audience], "Mia" if mia else "Ravi", "Ravi"))
        kept.append((f"r{i}", source, mia))
    for n in erase:
        if n < len(kept):
            wb.erase(kept.pop(n)[0], reason="a test")
    naming = [(s, AUDIENCES[audience_of[s]]) for _, s, mia in kept if mia]
    public = any(not a for _, a in naming)
    # Mia's IRI is minted once; later imports bind her by name (the writer, root, sees them all)
    where = _described_in(wb.store, "Mia")
    expected = ({ENTITIES_GRAPH.value} if public else set()) | (
        set() if public else {source_iri(f"s{s}").value for s, a in naming if a})
    assert where >= expected and (ENTITIES_GRAPH.value in where) == public
    assert where <= expected | {source_iri(f"s{s}").value for s, a in naming if a}


def _graphs_of(store: Store, pattern: str) -> set[str]:
    rows = store.select(PREFIXES + f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ {pattern} }} }}")
    return {r["g"].value for r in rows}  # type: ignore[union-attr]


def test_a_persons_acts_on_a_private_entity_are_beside_it(tmp_path: Path) -> None:
    wb = Workbench(MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    wb.add_user("root", ["admin"])
    wb.add_user("fay", ["viewer"], groups=["group:family"])
    wb.add_user("olga", ["viewer"])
    ents, fam = ENTITIES_GRAPH.value, source_iri("fam").value
    _import(wb, tmp_path, _line("p1", "fam", ["group:family"], "Mia", "Granny"), _line("pub1", "notes", [], "Ravi"),
            _line("v1", "vault", ["alice"], "Zed"))
    wb.add_alias("Mia", "Mimi")
    wb.add_alias("Ravi", "Rav")
    assert _graphs_of(wb.store, '?a wb:alias "Mimi"') == {fam} and _graphs_of(wb.store, '?a wb:alias "Rav"') == {ents}
    assert wb.seen_by("fay").resolve("Mimi").outcome == "bound"
    assert wb.seen_by("olga").resolve("Mimi").outcome == "unknown"
    wb.merge("Ravi", "Granny", reason="the same person")  # a private entity into a public one: beside the private
    assert _graphs_of(wb.store, "?x owl:sameAs ?y") == {fam}
    with pytest.raises(Conflict, match="different sources"):
        wb.merge("Mia", "Zed", reason="no reader is sure to see both")
    wb.split("Granny", reason="not the same after all")
    assert _graphs_of(wb.store, "?x owl:sameAs ?y") == set() and _graphs_of(wb.store, "?s a wb:Split") == {fam}
    # erasing the last record naming Mia takes her alias too
    wb.erase("p1", reason="a test")
    assert _graphs_of(wb.store, '?a wb:alias "Mimi"') == set() and wb.resolve("Mimi").outcome == "unknown"
    assert wb.resolve("Rav").outcome == "bound"


def test_an_older_stores_acts_on_a_private_entity_are_moved_beside_it(tmp_path: Path) -> None:
    wb = Workbench(MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    _import(wb, tmp_path, _line("p1", "fam", ["group:family"], "Mia"))
    wb.add_alias("Mia", "Mimi")
    before = dump(wb.store)
    fam, ents = source_iri("fam"), ENTITIES_GRAPH
    alias = f"""{{ GRAPH {fam} {{ ?s wb:aliasOf ?e ; ?p ?o }} }} UNION {{ GRAPH {fam} {{ ?s ?p ?o }}
        FILTER(?p IN (skos:altLabel) || (?p = wb:nameKey && ?o = "mimi")) }}"""
    agent = f"GRAPH {fam} {{ ?a wb:aliasOf ?e ; prov:wasAssociatedWith ?s . ?s ?p ?o }}"  # also the run's
    wb.store.update(PREFIXES + f"INSERT {{ GRAPH {ents} {{ ?s ?p ?o }} }} WHERE {{ {{ {alias} }} UNION {{ {agent} }} }}")
    wb.store.update(PREFIXES + f"DELETE {{ GRAPH {fam} {{ ?s ?p ?o }} }} WHERE {{ {alias} }}")
    assert layout.outdated(wb.store) and dump(wb.store) != before
    assert layout.migrate(wb.store) and not layout.outdated(wb.store)
    assert dump(wb.store) == before
