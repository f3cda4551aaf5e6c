"""The Review page with the guesser's proposals (issue 18, part 3), with ``AppTest`` against a real
`workbench serve`: a proposed kind and a proposed merge show the model and version, the stated
chance (here "not measured": the sample's common sense is too small to measure one) and the
nearest things; approving the merge on the page merges the two entities, nothing before."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ui_server import UiServer, start


def _said(rid: str, name: str) -> dict[str, object]:
    return {"id": rid, "statement": f"{name} works on chip design and is a friend of mine.", "type": "observation",
            "about": [name], "source": {"id": f"chat-{rid}", "said_by": "me"},
            "triples": [[name, "works on", "chip design"], [name, "friend of", "me"]]}


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    # one colleague recorded twice, under two spellings of her name: the merge to propose; and a
    # colleague recorded as a person, whom the guesser learns "person" from
    mei = {**_said("m-mei", "Mei Lin"), "triples": [*_said("m-mei", "Mei Lin")["triples"], ["Mei Lin", "is a", "person"]]}
    server = start(tmp_path_factory.mktemp("ui-guesses"), guesses=True,
                   extra=[_said("m-dana-1", "Dana Whitfield"), _said("m-dana-2", "Dana Whitfeld"), mei])
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _server_url(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_URL", ui.url)


def _open(ui: UiServer, cid: str):  # type: ignore[no-untyped-def]
    at = ui.page("review", "cora")
    at.selectbox(key="review.pick").select(cid).run()
    assert not at.exception, at.exception
    return at


def test_a_proposed_kind_shows_the_model_its_chance_and_the_nearest_things(ui: UiServer) -> None:
    kinds = [c for c in ui.client("cora").candidates() if c.id.startswith("g-kind-") and c.guess
             and c.guess["evidence"]]
    assert kinds, "the sample has entities with no kind and things like them"
    cand = kinds[0]
    at = _open(ui, cand.id)
    info = "\n".join(str(e.value) for e in at.info)
    assert "Model proposal" in info and cand.guess and cand.guess["model"] in info
    assert "Chance not measured" in info and "nothing is typed or merged before" in info
    queue = at.dataframe[0].value
    assert "chance" in queue.columns and "not measured" in set(queue["chance"])
    nearest = [d.value for d in at.dataframe if "facts it shares" in d.value.columns]
    assert nearest and len(nearest[0]) == len(cand.guess["evidence"])


def test_approving_a_proposed_merge_on_the_page_merges_the_two(ui: UiServer) -> None:
    client = ui.client("cora")
    (merge,) = [c for c in client.candidates() if c.id.startswith("g-merge-")]
    assert {client.resolve("Dana Whitfield").entities, client.resolve("Dana Whitfeld").entities} == {
        (merge.record["merge"]["keep"],), (merge.record["merge"]["other"],)}
    at = _open(ui, merge.id)
    assert "a merge of two entities" in "\n".join(str(e.value) for e in at.info)
    assert not [e for e in at.expander if "Edit, then approve" in str(e.label)]  # a merge is approved or rejected
    at.button(key=f"review.{merge.id}.approve_go").click().run()
    assert not at.exception, at.exception
    assert client.candidate(merge.id).status == "approved"
    assert client.resolve("Dana Whitfield").entities == client.resolve("Dana Whitfeld").entities
