"""The command line, as a person types it: each command runs one service call and prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import OxigraphServer
from workbench.cli import main


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = tmp_path / "memory"
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True) -> Result:
        result = runner.invoke(main, ["--store", str(store), "--as", "tester", *args], catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output + result.stderr
        return result

    return invoke


def test_every_command_has_help() -> None:
    runner = CliRunner()
    top = runner.invoke(main, ["--help"])
    assert top.exit_code == 0
    commands = [
        "init",
        "import",
        "export",
        "records",
        "show",
        "history",
        "supersede",
        "retract",
        "erase",
        "sparql",
        "stats",
        "entities",
        "ask",
        "count",
        "current",
        "decision",
        "rules",
    ]
    for name in commands:
        assert name in top.output
        sub = runner.invoke(main, [name, "--help"])
        assert sub.exit_code == 0 and "Usage:" in sub.output, name
    for name in ["list", "add", "alias", "merge", "split", "resolve"]:
        assert runner.invoke(main, ["entities", name, "--help"]).exit_code == 0
    for name in ["list", "check"]:
        assert runner.invoke(main, ["rules", name, "--help"]).exit_code == 0


def test_the_question_commands(run) -> None:  # type: ignore[no-untyped-def]
    run("init", "--sample")
    text = run("ask", "my car", "needs", "gas").output
    assert text.startswith("[derived] Yes") and "[rule inherit-kind v1]" in text and "chat-2026-01-04#2" in text
    answer = json.loads(run("ask", "my car", "needs", "gas", "--json").output)
    assert answer["tier"] == "derived" and answer["values"] == ["gasoline"]
    assert answer["findings"][0]["proofs"][0]["rule"] == "inherit-kind"
    assert json.loads(run("ask", "Paris Hilton", "located in", "--json").output)["tier"] == "no_evidence"
    assert json.loads(run("ask", "Nobody", "needs", "--json").output)["tier"] == "unknown_entity"
    count = json.loads(run("count", "wedding", "--about", "me", "--year", "2026", "--json").output)
    assert (count["tier"], count["count"], count["at_least"], len(count["undated"])) == ("recorded", 3, True, 1)
    assert "71.2" in run("current", "me", "weight").output
    assert json.loads(run("current", "me", "weight", "--as-of", "2026-04-15", "--json").output)["values"] == ["71.8"]
    then = json.loads(run("decision", "Project Atlas", "--as-of", "2026-03-01", "--json").output)
    assert then["tier"] == "derived" and then["findings"][0]["note"] == "d-atlas-region-1"
    assert "ok   inherit-kind v1" in run("rules", "check").output
    assert "current-decision v1 [active, answers]" in run("rules", "list").output


def test_a_mistake_in_a_question_is_one_line_and_exit_1(run) -> None:  # type: ignore[no-untyped-def]
    run("init", "--sample")
    bad = run("ask", "my car", "frobs", ok=False)
    assert bad.exit_code == 1 and bad.stderr.startswith("error: relation: unknown relation 'frobs'; known relations:")
    period = run("count", "wedding", "--from", "2026-05-01", "--to", "2026-01-01", ok=False)
    assert period.exit_code == 1 and "the period is impossible" in period.stderr
    when = run("ask", "me", "weight", "--as-of", "last tuesday", ok=False)
    assert when.exit_code == 1 and "--as-of must be an ISO date" in when.stderr


def test_a_session_from_init_to_erase(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = run("init", "--sample").output
    assert "memories.jsonl: 20 records added" in out
    stats = json.loads(run("stats", "--json").output)
    assert stats["records"] == 21 and stats["by_status"]["superseded"] == 1
    assert json.loads(run("entities", "resolve", "巴黎", "--json").output)["entities"] == ["urn:wb:entity:paris"]
    assert "names no entity" in run("entities", "resolve", "Pariss").output
    decisions = json.loads(run("records", "--type", "decision", "--as-of", "2026-03-01", "--json").output)
    assert [d["id"] for d in decisions] == ["d-atlas-region-1"]
    assert "supersedes d-atlas-region-1" in run("history", "d-atlas-region-2").output
    csv = run(
        "sparql",
        "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?m { ?r a <https://w3id.org/workbench/ns#Assertion> } }",
        "--format",
        "csv",
    ).output
    assert csv.split() == ["n", "21"]
    backup = tmp_path / "b.trig"
    assert "quads" in run("export", str(backup)).output and backup.stat().st_size > 0
    assert "erased m-friend-1" in run("erase", "m-friend-1", "--reason", "asked").output
    assert "[erased]" in run("history", "m-friend-1").output


def test_errors_are_one_plain_line_and_exit_1(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("init")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "x", "statement": "s", "type": "gossip", "source": {"id": "s", "said_by": "me"}, "about": ["me"]}\n'
    )
    result = run("import", str(bad), ok=False)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {bad}:1: field 'type': unknown record type 'gossip'")
    assert result.stderr.count("\n") == 1
    missing = run("show", "nope", ok=False)
    assert missing.exit_code == 1 and missing.stderr == "error: no record 'nope'\n"


def test_a_store_that_is_not_there(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--store", str(tmp_path / "none"), "stats"])
    assert result.exit_code == 1
    assert "no Workbench store at" in result.stderr and "init" in result.stderr


def test_store_and_endpoint_together_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--store", str(tmp_path), "--endpoint", "http://127.0.0.1:9", "stats"])
    assert result.exit_code == 2


def test_an_update_endpoint_without_an_endpoint_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--store", str(tmp_path), "--update-endpoint", "http://127.0.0.1:9/u", "stats"])
    assert result.exit_code == 2
    assert "--update-endpoint goes with --endpoint" in result.output


def test_the_update_endpoint_is_where_writes_go(oxigraph_server: OxigraphServer) -> None:
    """A query URL whose updates are elsewhere (here: /query, named as its own update URL, which
    Oxigraph refuses), then the right one named."""
    oxigraph_server.clear()
    query = f"{oxigraph_server.url}/query"
    wrong = CliRunner().invoke(main, ["--endpoint", query, "--update-endpoint", query, "init"])
    assert wrong.exit_code == 1 and f"{query} answered" in wrong.stderr
    right = CliRunner().invoke(main, ["--endpoint", query, "--update-endpoint", f"{oxigraph_server.url}/update",
                                      "init", "--sample"])
    assert right.exit_code == 0, right.stderr
    asked = CliRunner().invoke(main, ["--endpoint", query, "ask", "my car", "needs", "gas"])
    assert asked.output.startswith("[derived] Yes (derived: gasoline).")
