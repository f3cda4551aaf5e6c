"""Negative facts: "not needs" in a JSON Lines triple records an OWL 2 negative property assertion.

Stored in the record's graph as a blank node::

    _:n a owl:NegativePropertyAssertion ; owl:sourceIndividual <s> ; owl:assertionProperty <p> ;
        owl:targetIndividual <o> .        # or owl:targetValue "literal" for a literal object

Every test runs on both backends (``wb``): the embedded store and a real oxigraph server.
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from rdflib.compare import isomorphic

from tests.conftest import FIXED_NOW, dump
from tests.test_bad_input import record, refused, write_jsonl
from workbench.errors import Invalid
from workbench.ids import record_iri
from workbench.service import Workbench

OWL = "http://www.w3.org/2002/07/owl#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
NPA = ox.NamedNode(OWL + "NegativePropertyAssertion")
SOURCE = ox.NamedNode(OWL + "sourceIndividual")
PROPERTY = ox.NamedNode(OWL + "assertionProperty")
TARGET = ox.NamedNode(OWL + "targetIndividual")
VALUE = ox.NamedNode(OWL + "targetValue")
WB = "https://w3id.org/workbench/ns#"
NEEDS = ox.NamedNode(WB + "needs")
IS_A = RDF_TYPE  # "is a" is rdf:type (ontology/relations.ttl)


Obj = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple  # a quad's object


def entity(slug: str) -> ox.NamedNode:
    return ox.NamedNode(f"urn:wb:entity:{slug}")


def negatives(wb: Workbench, rid: str) -> list[dict[ox.NamedNode, Obj]]:
    """The negative property assertions in a record's graph, each as {owl property: value}.
    Also checks that each is a blank node that is only that: four triples, nothing else about it."""
    quads = list(wb.store.quads(record_iri(rid)))
    nodes = {q.subject for q in quads if q.predicate == RDF_TYPE and q.object == NPA}
    out = []
    for node in nodes:
        assert isinstance(node, ox.BlankNode), node
        about = [q for q in quads if q.subject == node]
        assert len(about) == 4, about
        assert not [q for q in quads if q.object == node], "nothing points at a negative assertion"
        out.append({q.predicate: q.object for q in about})
    return out


Negative = frozenset[tuple[ox.NamedNode, Obj]]


def each(found: list[dict[ox.NamedNode, Obj]]) -> list[Negative]:
    """Negative assertions in a comparable form, order aside (a multiset: duplicates would show)."""
    return sorted((frozenset(d.items()) for d in found), key=lambda n: sorted(map(str, n)))


def positives(wb: Workbench, rid: str) -> set[ox.Triple]:
    return {q.triple for q in wb.store.quads(record_iri(rid)) if not isinstance(q.subject, ox.BlankNode)}


def test_a_negative_triple_is_stored_as_a_negative_property_assertion(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("car-1", statement="My car does not need charging.", about=["my car"],
               triples=[["my car", "not needs", "charging"]]),
    ])
    report = wb.import_files([path])
    assert report.records_added == 1
    assert negatives(wb, "car-1") == [
        {RDF_TYPE: NPA, SOURCE: entity("my-car"), PROPERTY: NEEDS, TARGET: entity("charging")},
    ]
    assert positives(wb, "car-1") == set()  # the positive fact is not stored
    assert not wb.store.ask(f"ASK {{ GRAPH ?g {{ {entity('my-car')} {NEEDS} ?o }} }}")


def test_a_literal_object_is_an_owl_target_value(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("w-1", triples=[["me", "not weight", 80], ["me", "not setting", {"value": "dark mode", "lang": "en"}]]),
    ])
    wb.import_files([path])
    found = negatives(wb, "w-1")
    weight = ox.NamedNode(WB + "weight")
    setting = ox.NamedNode(WB + "setting")
    integer = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
    assert each(found) == each([
        {RDF_TYPE: NPA, SOURCE: entity("me"), PROPERTY: weight, VALUE: ox.Literal("80", datatype=integer)},
        {RDF_TYPE: NPA, SOURCE: entity("me"), PROPERTY: setting, VALUE: ox.Literal("dark mode", language="en")},
    ])


def test_a_record_may_mix_positive_and_negative_triples(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("s-1", statement="Sparky is an electric car, not a petrol car.", about=["Sparky"],
               triples=[["Sparky", "is a", "electric car"], ["Sparky", "NOT  is a", "petrol car"],
                        ["Sparky", "not <https://w3id.org/workbench/ns#needs>", "petrol"],
                        ["Sparky", "not wb:needs", "petrol"]]),  # the same negative twice: stored once
    ])
    wb.import_files([path])
    sparky = entity("sparky")
    assert positives(wb, "s-1") == {ox.Triple(sparky, IS_A, entity("electric-car"))}
    assert each(negatives(wb, "s-1")) == each([
        {RDF_TYPE: NPA, SOURCE: sparky, PROPERTY: IS_A, TARGET: entity("petrol-car")},
        {RDF_TYPE: NPA, SOURCE: sparky, PROPERTY: NEEDS, TARGET: entity("petrol")},
    ])


def test_names_in_a_negative_triple_bind_like_any_other(wb: Workbench, tmp_path: Path) -> None:
    sparky = wb.add_entity("Sparky")
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("s-1", about=["SPARKY"], triples=[["  sparky ", "not is a", "Petrol Car"]]),
        record("s-2", about=["Sparky"], triples=[["Sparky", "owns", "petrol car"]]),
    ])
    report = wb.import_files([path])
    petrol = wb.resolve("petrol car")
    assert petrol.outcome == "bound"
    assert report.new_entities == petrol.entities  # created once, by this import; Sparky was bound
    [negative] = negatives(wb, "s-1")
    assert negative[SOURCE] == sparky
    assert negative[TARGET] == ox.NamedNode(petrol.entities[0])
    assert positives(wb, "s-2") == {ox.Triple(sparky, ox.NamedNode(WB + "owns"), negative[TARGET])}
    assert wb.record("s-1").about == (sparky.value,)


def test_reimporting_a_record_with_a_negative_changes_nothing(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [record("car-1", triples=[["my car", "not needs", "charging"]])])
    wb.import_files([path])
    before = dump(wb.store)
    report = wb.import_files([path])
    assert (report.records_added, report.records_unchanged, report.quads_added) == (0, 1, 0)
    assert dump(wb.store) == before


@pytest.mark.parametrize(("relation", "says"), [
    ("not frobnicates", "unknown relation 'frobnicates'"),
    ("NOT  Frobnicates ", "unknown relation 'Frobnicates'"),
    ("not <not an iri>", "<not an iri> is not a valid IRI"),
])
def test_unknown_relation_after_not_names_file_line_and_field(
        wb: Workbench, tmp_path: Path, relation: str, says: str) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("t-1"),
        record("t-2", triples=[["me", "owns", "a car"], ["my car", relation, "charging"]]),
    ])
    exc = refused(wb, [path], Invalid, f"{path}:2", "triples[1]", says)
    assert getattr(exc, "where", None) == f"{path}:2"
    assert not wb.store.has_graph(record_iri("t-1"))


def test_unknown_relation_after_not_reads_like_any_unknown_relation(wb: Workbench, tmp_path: Path) -> None:
    plain = write_jsonl(tmp_path / "plain.jsonl", [record("t-1", triples=[["me", "frobnicates", "x"]])])
    negative = write_jsonl(tmp_path / "negative.jsonl", [record("t-1", triples=[["me", "not frobnicates", "x"]])])
    refused(wb, [plain], Invalid, f"{plain}:1", "triples[0]: unknown relation 'frobnicates'", "known relations: ")
    refused(wb, [negative], Invalid, f"{negative}:1", "triples[0]: unknown relation 'frobnicates'",
            "'not frobnicates'", "known relations: ")


def test_not_alone_is_an_unknown_relation(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [record("t-1", triples=[["me", "not ", "x"]])])
    refused(wb, [path], Invalid, f"{path}:1", "triples[0]", "unknown relation 'not '")


@pytest.mark.parametrize("triples", [
    [["my car", "needs", "charging"], ["My Car", "not needs", "CHARGING"]],
    [["my car", "not needs", "charging"], ["my car", "<https://w3id.org/workbench/ns#needs>", "charging"]],
    [["me", "weight", 80], ["me", "owns", "x"], ["me", "not weight", 80]],
], ids=["names", "iri", "literal"])
def test_a_fact_and_its_negative_in_one_record_are_refused(
        wb: Workbench, tmp_path: Path, triples: list[list[object]]) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [record("t-1"), record("t-2", triples=triples)])
    exc = refused(wb, [path], Invalid, f"{path}:2", f"triples[{len(triples) - 1}] contradicts triples[0]")
    assert getattr(exc, "where", None) == f"{path}:2"
    assert not wb.store.has_graph(record_iri("t-1"))


def test_a_fact_and_its_negative_in_two_records_both_land(wb: Workbench, tmp_path: Path) -> None:
    """Only a record that contradicts itself is refused; two sources may disagree."""
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("t-1", triples=[["my car", "needs", "charging"]]),
        record("t-2", triples=[["my car", "not needs", "charging"]], source={"id": "other", "said_by": "Sam"}),
    ])
    assert wb.import_files([path]).records_added == 2
    assert positives(wb, "t-1") == {ox.Triple(entity("my-car"), NEEDS, entity("charging"))}
    assert len(negatives(wb, "t-2")) == 1


NEGATIVE_TURTLE = """\
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix wb: <https://w3id.org/workbench/ns#> .
@prefix e: <urn:wb:entity:> .
e:my-car wb:isA e:electric-car .
[] a owl:NegativePropertyAssertion ;
   owl:sourceIndividual e:my-car ; owl:assertionProperty wb:needs ; owl:targetIndividual e:petrol .
_:w a owl:NegativePropertyAssertion ;
   owl:sourceIndividual e:my-car ; owl:assertionProperty wb:setting ; owl:targetValue "eco mode" .
"""


def test_turtle_with_negative_property_assertions_imports_as_it_is(wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "car.ttl"
    path.write_text(NEGATIVE_TURTLE, encoding="utf-8")
    report = wb.import_files([path], source="car-notes")
    assert report.records_added == 1
    wanted = rdflib.Graph().parse(data=NEGATIVE_TURTLE, format="turtle")
    got = rdflib.Graph().parse(
        data=ox.serialize([q.triple for q in wb.store.quads(record_iri("car-notes"))], format=ox.RdfFormat.N_TRIPLES),
        format="nt",
    )
    assert isomorphic(wanted, got)
    assert each(negatives(wb, "car-notes")) == each([
        {RDF_TYPE: NPA, SOURCE: entity("my-car"), PROPERTY: NEEDS, TARGET: entity("petrol")},
        {RDF_TYPE: NPA, SOURCE: entity("my-car"), PROPERTY: ox.NamedNode(WB + "setting"),
         VALUE: ox.Literal("eco mode")},
    ])


def test_reimporting_turtle_with_negative_property_assertions_changes_nothing(
        wb: Workbench, tmp_path: Path) -> None:
    path = tmp_path / "car.ttl"
    path.write_text(NEGATIVE_TURTLE, encoding="utf-8")
    wb.import_files([path], source="car-notes")
    before = dump(wb.store)
    assert wb.import_files([path], source="car-notes").records_unchanged == 1
    assert dump(wb.store) == before


def _graphs(path: Path) -> dict[str, rdflib.Graph]:
    """Each named graph of an N-Quads file as an rdflib graph (blank nodes compare by isomorphism)."""
    triples: dict[str, list[ox.Triple]] = {}
    for q in ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS):
        triples.setdefault(str(q.graph_name), []).append(q.triple)
    return {name: rdflib.Graph().parse(data=ox.serialize(ts, format=ox.RdfFormat.N_TRIPLES), format="nt")
            for name, ts in triples.items()}


@pytest.mark.parametrize("suffix", [".trig", ".nq", ".jsonld"])
def test_export_restore_round_trip_keeps_negative_facts(wb: Workbench, tmp_path: Path, suffix: str) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [
        record("car-1", about=["my car"], triples=[["my car", "is a", "electric car"],
                                                   ["my car", "not needs", "charging"],
                                                   ["my car", "not setting", {"value": "eco mode"}]]),
    ])
    wb.import_files([path])
    first = tmp_path / f"first{suffix}"
    wb.export(first)
    with Workbench.open(tmp_path / "copy", create=True, user="other", clock=lambda: FIXED_NOW) as copy:
        assert copy.restore(first).records_added == 1
        assert each(negatives(copy, "car-1")) == each(negatives(wb, "car-1"))
        copy.export(tmp_path / "second.nq")
    wb.export(tmp_path / "first.nq")
    a, b = _graphs(tmp_path / "first.nq"), _graphs(tmp_path / "second.nq")
    assert a.keys() == b.keys()
    for name in a:
        assert isomorphic(a[name], b[name]), name
    assert len(negatives(wb, "car-1")) == 2


def test_reimporting_a_record_with_negative_facts_changes_nothing(wb: Workbench, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [record("car-1", triples=[["my car", "not needs", "charging"]])])
    wb.import_files([path])
    out = tmp_path / "car.trig"
    wb.export(out)
    content = tmp_path / "content.trig"  # the record's own graph, as plain data: its blank nodes compared by shape
    content.write_bytes(ox.serialize([q for q in ox.parse(path=str(out), format=ox.RdfFormat.TRIG)
                                      if q.graph_name == record_iri("car-1")], format=ox.RdfFormat.TRIG) or b"")
    before = dump(wb.store)
    report = wb.import_files([content])
    assert (report.records_added, report.records_unchanged) == (0, 1)
    assert dump(wb.store) == before
