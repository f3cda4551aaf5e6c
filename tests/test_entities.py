"""Names bind exactly; aliases, merges and splits are explicit, attributed and reversible."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import dump
from workbench.errors import Ambiguous, Conflict, NotFound
from workbench.names.keys import name_key
from workbench.service import Workbench


def test_paris_is_not_paris_hilton(sample: Workbench) -> None:
    paris = sample.resolve("Paris")
    hilton = sample.resolve("Paris Hilton")
    assert paris.outcome == hilton.outcome == "bound"
    assert paris.entities != hilton.entities
    assert sample.resolve("Pari").outcome == "unknown"
    assert sample.resolve("Paris H").outcome == "unknown"


def test_alias_binds_only_once_registered(wb: Workbench) -> None:
    paris = wb.add_entity("Paris")
    assert wb.resolve("巴黎").outcome == "unknown"
    wb.add_alias("Paris", "巴黎", lang="zh")
    assert wb.resolve("巴黎").entities == (paris.value,)
    entity = wb.entity("paris")
    assert ("巴黎", "zh") in entity.aliases


def test_normalisation_nfc_case_and_whitespace(wb: Workbench) -> None:
    cafe = wb.add_entity("Café Central")
    for spelling in ("café central", "CAFÉ   CENTRAL", "Cafe\u0301 Central", "\tcafé\u00a0central "):
        assert wb.resolve(spelling).entities == (cafe.value,), spelling


def test_alias_taken_by_another_entity_is_refused(wb: Workbench) -> None:
    wb.add_entity("Paris")
    wb.add_entity("Paris Hilton")
    wb.add_alias("Paris", "City of Light")
    before = dump(wb.store)
    with pytest.raises(Conflict, match="already a name of"):
        wb.add_alias("Paris Hilton", "city of light")
    assert dump(wb.store) == before


def test_same_name_twice_is_ambiguous_and_never_guessed(wb: Workbench) -> None:
    a = wb.add_entity("Alex")
    b = wb.add_entity("Alex")
    res = wb.resolve("alex")
    assert res.outcome == "ambiguous"
    assert set(res.entities) == {a.value, b.value}
    with pytest.raises(Ambiguous) as err:
        wb.entity("Alex")
    assert a.value in str(err.value) and b.value in str(err.value)


def test_merge_then_split_is_reversible_and_attributed(wb: Workbench) -> None:
    nyc = wb.add_entity("New York City")
    big_apple = wb.add_entity("The Big Apple")
    before_merge = wb.resolve("the big apple").entities
    wb.merge("New York City", "The Big Apple", reason="same city")
    assert wb.resolve("the big apple").entities == (nyc.value,)
    assert wb.entity(big_apple.value).merged_into == nyc.value
    with pytest.raises(Conflict):
        wb.merge("New York City", "The Big Apple", reason="again")
    wb.split(big_apple.value, reason="a nickname is not a city record")
    assert wb.resolve("the big apple").entities == before_merge
    # The history keeps both acts, with who and why.
    acts = wb.store.select(
        "PREFIX wb: <https://w3id.org/workbench/ns#> PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT ?kind ?who ?why WHERE { GRAPH <urn:wb:graph:entities> { ?a a ?kind ; "
        "prov:wasAssociatedWith ?who ; wb:reason ?why FILTER(?kind IN (wb:Merge, wb:Split)) } } ORDER BY ?why"
    )
    assert [(r["why"].value, r["who"].value) for r in acts] == [  # type: ignore[union-attr]
        ("a nickname is not a city record", "urn:wb:agent:tester"),
        ("same city", "urn:wb:agent:tester"),
    ]


def test_a_name_binds_where_a_chain_of_merges_ends(wb: Workbench) -> None:
    """Merges are followed to their end, a level a query (no property path: Virtuoso 7 drops every
    row of one inside OPTIONAL), on every backend."""
    nyc = wb.add_entity("New York City")
    wb.add_entity("The Big Apple")
    wb.add_entity("Gotham")
    wb.merge("The Big Apple", "Gotham", reason="a nickname of a nickname")
    wb.merge("New York City", "The Big Apple", reason="same city")
    assert wb.resolve("gotham").entities == (nyc.value,)
    assert wb.resolve("the big apple").entities == (nyc.value,)


def test_split_without_merge_is_a_conflict(wb: Workbench) -> None:
    wb.add_entity("Lone")
    with pytest.raises(Conflict):
        wb.split("urn:wb:entity:lone", reason="nothing to split")


def test_unknown_entity_reference(wb: Workbench) -> None:
    with pytest.raises(NotFound):
        wb.entity("Nobody")


names = st.text(alphabet=string.ascii_letters + " éÉßçÇ巴黎", min_size=1, max_size=12).filter(lambda s: s.strip())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=names, other=names)
def test_binding_is_exact_over_many_names(tmp_path_factory: pytest.TempPathFactory, name: str, other: str) -> None:
    """A name binds iff its key equals the registered key: never by similarity."""
    with Workbench.open(tmp_path_factory.mktemp("names") / "s", create=True, user="t") as wb:
        wb.init()
        iri = wb.add_entity(name)
        assert wb.resolve(name).entities == (iri.value,)
        assert wb.resolve(name.upper() if name.upper().casefold() == name.casefold() else name).outcome == "bound"
        expected = "bound" if name_key(other) == name_key(name) else "unknown"
        assert wb.resolve(other).outcome == expected


def test_split_by_the_merged_entitys_name(wb: Workbench) -> None:
    wb.add_entity("Bombay")
    mumbai = wb.add_entity("Mumbai")
    wb.merge("Mumbai", "Bombay", reason="renamed city")
    assert wb.resolve("bombay").entities == (mumbai.value,)
    wb.split("Bombay", reason="keep the historical name apart")
    assert wb.resolve("bombay").entities == ("urn:wb:entity:bombay",)
    with pytest.raises(NotFound):
        wb.split("Nowhere", reason="no such name")
