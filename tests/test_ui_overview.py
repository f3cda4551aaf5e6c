"""The Overview page (workbench/ui/pages/overview.py) in AppTest against a real `workbench serve`:
store statistics, queue sizes, rules by status, and the evaluation behind a button, as charts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

import workbench
from tests.uitest import CANDIDATES, UiServer, elements, errors, page, texts, ui_server
from workbench.ui.pages.overview import EVAL


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory) as found:
        yield found


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def charts(at: AppTest) -> list[dict[str, object]]:
    """The Vega-Lite specs of the page's charts (st.bar_chart)."""
    return [json.loads(e.proto.spec) for e in elements(at, "vega_lite_chart")]


def test_store_queue_and_rules_at_a_glance(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "overview", "ada", monkeypatch)
    assert errors(at) == []
    shown = metrics(at)
    stats = workbench.connect(ui.url, ui.tokens["ada"]).stats()
    assert shown["Records"] == f"{stats['records']:,}" and shown["Sources"] == f"{stats['sources']:,}"
    assert shown["Waiting for a curator"] == str(len(CANDIDATES))
    assert shown["Waiting for sign-off"] == "0"
    assert len(charts(at)) == 4  # records by type, by status; candidates by status; rules by status
    assert "Counted over the whole store" in texts(at)
    [rules] = [d.value for d in at.dataframe]
    assert set(rules["rule"]) >= {"inherit-kind", "current-decision"} and set(rules["status"]) == {"active"}
    assert EVAL not in at.session_state  # the slow evaluation runs only when asked


def test_a_viewer_counts_what_they_may_see(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    admin = page(ui, "overview", "ada", monkeypatch)
    viewer = page(ui, "overview", "vic", monkeypatch)
    assert errors(viewer) == []
    assert int(metrics(viewer)["Records"]) < int(metrics(admin)["Records"])  # p-van-1 and the family's
    assert "the part of the store you may see" in texts(viewer)


def test_the_evaluation_compares_recall_with_the_plain_recipe(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(ui, "overview", "ada", monkeypatch, timeout=120)
    before = len(charts(at))
    at.button(key="overview.run").click().run()
    assert errors(at) == []
    report = at.session_state[EVAL]
    assert report["set"] and report["workbench"]["totals"]["questions"] > 0
    assert len(charts(at)) == before + 1
    table = next(d.value for d in at.dataframe if "better" in getattr(d.value, "columns", []))
    assert list(table.columns) == ["Workbench recall", "plain top-10", "better"]
    assert table.loc["found first (hit@1)", "Workbench recall"] == report["workbench"]["totals"]["hit_at_1"]
    no_memory = table.loc["says 'no memory' when there is none"]
    assert no_memory["Workbench recall"] == report["workbench"]["totals"]["abstention"] > no_memory["plain top-10"]
    assert metrics(at)["Questions"] == str(report["workbench"]["totals"]["questions"])
    at.run()  # kept for the session: a rerun does not evaluate again
    assert at.session_state[EVAL] is report
