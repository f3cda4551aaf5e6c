"""The Ask page (workbench/ui/pages/ask.py) in Streamlit's AppTest, against a real `workbench
serve`: each kind of question, the tier as a badge, the proof tree drawn from proof_dot, each
leaf's source one click away, guesses apart from values, recall with "no memory" and
did-you-mean, errors in words, and what a viewer may not see."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from tests.uitest import UiServer, elements, errors, page, texts, ui_server


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory) as found:
        yield found


def ask(at: AppTest, subject: str, relation: str, obj: str = "", *, guess: bool = False) -> AppTest:
    at.text_input(key="ask.subject").input(subject)
    at.text_input(key="ask.relation").input(relation)
    at.text_input(key="ask.object").input(obj)
    at.toggle(key="ask.guess").set_value(guess)
    return at.button(key="FormSubmitter:ask.question-Ask").click().run()


def badges(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def dots(at: AppTest) -> list[str]:
    return [e.proto.spec for e in elements(at, "graphviz_chart")]


def test_a_derived_answer_with_its_proof_graph_and_sources(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "ask", "vic", monkeypatch)
    assert errors(at) == [] and dots(at) == []  # nothing asked yet
    ask(at, "my car", "needs", "gas")
    assert errors(at) == []
    assert badges(at) == [":blue-badge[derived]"]
    assert "Yes (derived: gasoline)." in texts(at)
    [dot] = dots(at)
    assert dot.startswith("digraph proof {") and "rule inherit-kind v1" in dot and "record m-car-1" in dot
    assert [e.label for e in at.expander][:2] == [
        "[1] my car is a petrol car — record m-car-1",
        "[2] petrol car needs gasoline — record common-sense-v1 · admitted common sense"]
    first = at.expander[0]
    assert "chat-2026-01-04#2" in first.table[0].value.to_string()  # the source at once, no call needed
    assert not at.info  # the source's own words only once asked for
    at.button(key="ask.question.src.1.open").click().run()
    assert errors(at) == []
    assert [i.value for i in at.info] == ["I drive a 2015 Corolla, the petrol one."]
    assert "My car is a petrol car, a 2015 Corolla." in texts(at)


def test_a_gap_shows_model_guesses_apart_from_values(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "ask", "vic", monkeypatch)
    ask(at, "Kettle One", "used for")
    assert errors(at) == [] and badges(at) == [":gray-badge[no evidence]"]
    assert "Model guesses" not in texts(at)  # only when asked for
    ask(at, "Kettle One", "used for", guess=True)
    assert errors(at) == []
    assert badges(at) == [":orange-badge[model guess]", ":orange-badge[model guess]"]  # the answer, the guess box
    assert [s.value for s in at.subheader] == ["Model guesses"]  # no "Values" section: a guess is not a value
    [table] = [d.value for d in at.dataframe]
    assert list(table["guess"]) == ["tea"] and list(table["because"]) == ["Kettle Two"] and table["chance"].isna().all()
    assert dots(at) == []  # nothing drawn as evidence


def test_counts_current_state_and_decisions(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "ask", "vic", monkeypatch)
    at.text_input(key="ask.event_type").input("wedding")
    at.text_input(key="ask.about").input("me")
    at.text_input(key="ask.year").input("2026")
    at.button(key="FormSubmitter:ask.count-Count").click().run()
    assert errors(at) == []
    assert [m.value for m in at.metric] == ["at least 3"]
    assert "1 undated one could not be placed" in texts(at)
    assert "Undated, could not be placed" in [s.value for s in at.subheader]

    at.text_input(key="ask.current.subject").input("me")
    at.text_input(key="ask.state").input("weight")
    at.button(key="FormSubmitter:ask.current-Show the current value").click().run()
    assert errors(at) == []
    assert "me weight: 71.2" in texts(at) and "History" in [s.value for s in at.subheader]

    at.text_input(key="ask.scope").input("Project Atlas")
    at.date_input(key="ask.decision.as_of").set_value("2026-03-01")
    at.button(key="FormSubmitter:ask.decision-Show the decision").click().run()
    assert errors(at) == []
    assert "d-atlas-region-1" in texts(at) and "as of 2026-03-01" in texts(at)
    decision = [d for d in dots(at) if "current-decision" in d]
    assert decision and "d-atlas-region-1" in decision[0]


def test_errors_are_said_in_words_and_keep_what_was_typed(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "ask", "vic", monkeypatch)
    ask(at, "my car", "flies to")
    [error] = errors(at)
    assert error.startswith("Please fix") and "needs" in error  # the known relations are named
    assert at.text_input(key="ask.relation").value == "flies to"
    ask(at, "", "needs")
    assert [w.value for w in at.warning] == ["Give a subject and a relation."]


def test_recall_no_memory_and_did_you_mean(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "ask", "vic", monkeypatch)
    at.text_area(key="ask.text").input("Did Dana approve it?")
    at.button(key="FormSubmitter:ask.recall-Recall").click().run()
    assert errors(at) == []
    assert badges(at) == [":gray-badge[no memory]"]
    assert any(i.value.startswith("No memory") for i in at.info)
    assert "Did you mean **Dana Okafor**?" in texts(at)
    at.button(key="ask.recall.suggest.Dana.0").click().run()  # the person picks the name; the page never does
    assert errors(at) == []
    assert at.text_area(key="ask.text").value == "Did Dana Okafor approve it?"
    assert badges(at) == [":green-badge[recorded]"]
    [table] = [d.value for d in at.dataframe]
    assert list(table["record"]) == ["d-atlas-region-2"] and list(table["tier"]) == ["recorded"]
    assert list(table["source"]) == ["issue-ATL-142"]


def test_recall_by_similarity_alone_is_labelled_a_guess(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "ask", "vic", monkeypatch)
    at.text_area(key="ask.text").input("what was the name of my friend who works on chips?")
    at.button(key="FormSubmitter:ask.recall-Recall").click().run()
    assert errors(at) == []
    assert ":orange-badge[model guess]" in badges(at)
    assert "Found by similarity alone" in [s.value for s in at.subheader]
    assert "Records" not in [s.value for s in at.subheader]
    [table] = [d.value for d in at.dataframe]
    assert list(table["record"]) == ["m-friend-1"] and list(table["tier"]) == ["model guess"]


def test_a_viewer_does_not_get_a_private_record(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """p-van-1 is visible to group:family only: the admin sees it, the viewer gets an unknown name."""
    at = page(ui, "ask", "ada", monkeypatch)
    ask(at, "Secret Van", "is a")
    assert badges(at) == [":blue-badge[derived]"] and "record p-van-1" in dots(at)[0]  # a petrol car is a car
    at = page(ui, "ask", "vic", monkeypatch)
    ask(at, "Secret Van", "is a")
    assert badges(at) == [":gray-badge[unknown name]"]
    assert "p-van-1" not in texts(at) and dots(at) == []
