"""The Entities page (streamlit.testing.v1.AppTest) against a real `workbench serve`: names bind
exactly, aliases with their language, merge and split by a curator, possible duplicates for a
person to decide, and a viewer who cannot merge."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ui_server import UiServer, open_page, ran, start, texts
from workbench.ui.pages.entities import DUPLICATE_NOTE, possible_duplicates
from workbench.values.records import Entity


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    server = start(tmp_path_factory.mktemp("ui"))
    yield server
    server.stop()


def test_search_binds_a_name_exactly_and_never_a_look_alike(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "entities", "vic", monkeypatch)
    ran(at.text_input(key="ent_find").input("巴黎"))
    assert "binds to `urn:wb:entity:paris`." in texts(at)
    names = at.dataframe[0].value
    assert {"name": "巴黎", "kind": "alias", "language": "zh"} in names.to_dict("records")
    ran(at.text_input(key="ent_find").input("Paris Hiltn"))
    said = texts(at)
    assert "binds to no entity" in said
    assert "Spelled alike (a suggestion, never a binding): Paris Hilton" in said
    ran(at.text_input(key="ent_find").input("Paris Hilton"))
    assert "binds to `urn:wb:entity:paris-hilton`." in texts(at)


def test_the_list_filters_and_opens_an_entity(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "entities", "vic", monkeypatch)
    ran(at.text_input(key="ent_filter").input("wedding"))
    table = at.dataframe[0].value
    assert len(table) == 5 and all("wedding" in n for n in table["names"])
    ran(at.selectbox(key="ent_pick").select("urn:wb:entity:lea-s-wedding"))
    assert "**Lea's wedding** · `urn:wb:entity:lea-s-wedding`" in texts(at)


def test_a_curator_registers_an_alias_with_its_language(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "entities", "cora", monkeypatch)
    ran(at.text_input(key="ent_find").input("Paris"))
    at.text_input(key="alias_find").input("Lutèce")
    at.text_input(key="alias_lang_find").input("fr")
    ran(at.button[[b.label for b in at.button].index("Register alias")].click())
    assert "“Lutèce” (fr) is now an alias of `urn:wb:entity:paris`." in texts(at)
    assert at.text_input(key="alias_find").value == ""  # cleared once registered
    rows = at.dataframe[0].value.to_dict("records")
    assert {"name": "Lutèce", "kind": "alias", "language": "fr"} in rows
    client = ui.client("vic")
    assert client.resolve("lutèce").entities == ("urn:wb:entity:paris",)
    assert ("Lutèce", "fr") in client.entity("Paris").aliases


def test_a_taken_alias_is_refused_and_what_was_typed_is_kept(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "entities", "cora", monkeypatch)
    ran(at.text_input(key="ent_find").input("Paris"))
    at.text_input(key="alias_find").input("Paris Hilton")
    ran(at.button[[b.label for b in at.button].index("Register alias")].click())
    assert any("Paris Hilton" in e.value for e in at.error)
    assert at.text_input(key="alias_find").value == "Paris Hilton"
    assert ui.client("vic").resolve("Paris Hilton").entities == ("urn:wb:entity:paris-hilton",)


def test_duplicates_are_suggested_and_a_curator_merges_then_splits(ui: UiServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cora = ui.client("cora")
    twin = cora.add_entity("Dana Okafour").value
    at = open_page(ui, "entities", "cora", monkeypatch)
    said = texts(at)
    assert DUPLICATE_NOTE in said
    assert "**Dana Okafor** and **Dana Okafour**: 96% alike" in said
    ran(at.button(key=f"dup_urn:wb:entity:dana-okafor_{twin}").click())
    assert at.text_input(key="merge_keep").value == "urn:wb:entity:dana-okafor"
    assert at.text_input(key="merge_other").value == twin
    assert "Filled in from possible duplicates" in texts(at)
    assert cora.entity(twin).merged_into is None  # a suggestion never acts

    ran(at.button[[b.label for b in at.button].index("Merge")].click())  # no reason yet
    assert any("say why they are the same" in e.value for e in at.error)
    assert at.text_input(key="merge_other").value == twin
    at.text_input(key="merge_reason").input("a typo in the meeting notes")
    ran(at.button[[b.label for b in at.button].index("Merge")].click())
    assert any(f"Merged: `{twin}` is now the same as `urn:wb:entity:dana-okafor`" in s.value for s in at.success)
    assert cora.resolve("Dana Okafour").entities == ("urn:wb:entity:dana-okafor",)
    assert cora.entity(twin).merged_into == "urn:wb:entity:dana-okafor"
    assert "**Dana Okafor** and **Dana Okafour**" not in texts(at)  # merged ones are no longer suggested

    at.selectbox(key="split_entity").select(twin)
    at.text_input(key="split_reason").input("two people after all")
    ran(at.button[[b.label for b in at.button].index("Split")].click())
    assert any(f"Split: `{twin}` is its own entity again" in s.value for s in at.success)
    assert cora.resolve("Dana Okafour").entities == (twin,)
    assert cora.entity(twin).merged_into is None


def test_merging_an_unknown_entity_says_so(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(ui, "entities", "cora", monkeypatch)
    at.text_input(key="merge_keep").input("Paris")
    at.text_input(key="merge_other").input("Atlantis")
    at.text_input(key="merge_reason").input("same place")
    ran(at.button[[b.label for b in at.button].index("Merge")].click())
    assert any("Atlantis" in e.value for e in at.error)
    assert at.text_input(key="merge_other").value == "Atlantis"


def test_a_viewer_sees_duplicates_but_cannot_merge_split_or_alias(ui: UiServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ui.client("cora").add_entity("Tsinghua Universty")
    at = open_page(ui, "entities", "vic", monkeypatch)
    ran(at.text_input(key="ent_find").input("Paris"))
    said = texts(at)
    assert "**Tsinghua University** and **Tsinghua Universty**" in said
    assert "Merging and splitting entities needs the curator role. You are signed in as vic (viewer)." in said
    labels = [b.label for b in at.button]
    assert not {"Merge", "Merge…", "Split", "Register alias"} & set(labels)
    assert not [t for t in at.text_input if t.key in ("merge_keep", "merge_other", "alias_find")]


def test_possible_duplicates_are_by_spelling_and_skip_merged_entities() -> None:
    paris = Entity("urn:wb:entity:paris", ("Paris",), (("巴黎", "zh"),))
    hilton = Entity("urn:wb:entity:paris-hilton", ("Paris Hilton",))
    twin = Entity("urn:wb:entity:pariss", ("Pariss",))
    gone = Entity("urn:wb:entity:paris-2", ("Paris",), merged_into="urn:wb:entity:paris")
    same = Entity("urn:wb:entity:paris-3", ("paris",))
    pairs = possible_duplicates([paris, hilton, twin, gone, same], 0.85)
    assert [(p.keep.iri, p.other.iri, round(p.score, 2)) for p in pairs] == [
        ("urn:wb:entity:paris", "urn:wb:entity:paris-3", 1.0),  # the same name: it binds to neither
        ("urn:wb:entity:paris", "urn:wb:entity:pariss", 0.91),
        ("urn:wb:entity:paris-3", "urn:wb:entity:pariss", 0.91),
    ]
    assert possible_duplicates([paris, hilton], 0.5)[0].score == pytest.approx(10 / 17)
