"""``workbench bench access`` at a tiny size, on the embedded store and a real ``oxigraph serve``:
every reader's answers as the worlds' ground truth says, each group's private thing recorded for
the admin and its group's reader and not for the other, the remote admin's round trips counted,
the JSON and the Markdown section written. No timing assertions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from workbench.cli import main


def test_bench_access_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Load\n\nLoad figures.\n")
    out = tmp_path / "access.json"
    args = ["bench", "access", "--relations", "2w", "--questions", "2", "--writes", "2",
            "--backends", "embedded,embedded-rewrite,remote",
            "--workdir", str(tmp_path / "work"), "--out", str(out), "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = result.stdout
    assert "Command: `workbench bench access --relations 2w --backends embedded,embedded-rewrite,remote --questions 2 --writes 2`" in text
    assert "Answers: every answer of every reader as the worlds' ground truth says." in text

    data = json.loads(out.read_text())
    assert set(data["backends"]) == {"embedded", "embedded-rewrite", "remote"}
    for name, backend in data["backends"].items():
        assert len(backend["write_s"]) == 2 and backend["rss_mib"] > 0 and backend["peak_rss_mib"] >= backend["rss_mib"]
        readers = backend["readers"]
        assert readers["admin"]["access"] == {"group:a": "recorded", "group:b": "recorded"}, name
        assert readers["reader-a"]["access"]["group:a"] == "recorded" != readers["reader-a"]["access"]["group:b"]
        assert readers["reader-b"]["access"]["group:b"] == "recorded" != readers["reader-b"]["access"]["group:a"]
        for who, reader in readers.items():
            assert reader["wrong"] == [] and len(reader["after_write_s"]) == 2, (name, who)
            assert all(len(ms) == 2 for ms in reader["ms"].values())
    # every reader of the server reads it (restricted ones through the rewrite), none a local copy
    assert all(n > 0 for who in ("admin", "reader-a", "reader-b")
               for n in data["backends"]["remote"]["readers"][who]["round_trips"].values())
    assert all(n == 0 for n in data["backends"]["embedded"]["readers"]["admin"]["round_trips"].values())

    probe = data["backends"]["remote"]["restrictions"]
    assert probe["hidden_graphs"] == 1 and probe["visible_graphs"] > 1  # group:a's record, for reader-b
    assert all(probe[q][way]["p50_ms"] > 0 for q in ("point", "kinds") for way in ("as is", "rewritten", "dataset"))

    assert data["disk_mib"]["workbench"] > 0 and data["disk_mib"]["oxigraph"] > 0
    _carried_to_paper(data, md)

    doc = md.read_text()
    assert doc.count("## Restricted readers at scale") == 1 and "## Load\n\nLoad figures." in doc
    assert re.search(r"^\| remote \| reader-a \| [\d,.]+ m?s \| [\d,.]+ m?s, [\d,.]+ m?s \| [\d,.]+× "
                     r"\| recorded / \w+ \|$", doc, re.M)
    assert re.search(r"^\| point \| [\d.]+ / [\d.]+ \| [\d.]+ / [\d.]+ \| [\d.]+× \| [\d.]+ / [\d.]+ \| [\d.]+× \|$", doc, re.M)
    _both_ways(tmp_path / "work" / "2w", tmp_path / "ab.json")


def _both_ways(here: Path, out: Path) -> None:
    """``python -m benchmarks.access_ab`` on the run's server folder: the remote readers with the
    metadata beside its record unfiltered and filtered, every answer right both ways; the switch
    is made in the measuring process only."""
    from benchmarks.access_ab import main as ab
    from workbench.access import rewrite

    kept = rewrite.seen_with
    ab([str(here), "--worlds", "2", "--order", "on,off", "--questions", "2", "--writes", "1", "--out", str(out)])
    rows = json.loads(out.read_text())
    assert [r["way"] for r in rows] == ["on", "off"] and rewrite.seen_with is kept
    for row in rows:
        for who in ("admin", "reader-a", "reader-b"):
            assert row[who]["wrong"] == 0 and len(row[who]["after_write_ms"]) == 1 and row[who]["ratio"] > 0, row


def _carried_to_paper(data: dict[str, Any], md: Path) -> None:
    """The paper (benchmarks.access_paper) reads every figure from a real run's JSON: the run and
    a copy of it at ten times the size with each figure multiplied by ten (exponent 1) carry each
    figure to ten times more again (a ratio of two figures stays where it was: exponent 0)."""
    from benchmarks.access_paper import FIGURES, main, table

    def scaled(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: scaled(v) for k, v in x.items()}
        if isinstance(x, list):
            return [scaled(v) for v in x]
        return x * 10 if isinstance(x, float) else x

    large = {**scaled(data), "relations": data["relations"] * 10, "size": "ten times"}
    rows = table(data, large, data["relations"] * 100, "a hundred times")
    assert [r["what"] for r in rows] == [f[0] for f in FIGURES]
    for r in rows:
        power = 0.0 if r["unit"] == "x" else 1.0
        assert r["small"] > 0 and r["exponent"] == pytest.approx(power, abs=1e-9), r["what"]
        assert r["target"] == pytest.approx(r["large"] * 10**power), r["what"]
    with pytest.raises(ValueError, match="the first run must be the smaller"):
        table(large, data, 1e9, "1G")
    small_json, large_json = md.parent / "small.json", md.parent / "large.json"
    small_json.write_text(json.dumps(data))
    large_json.write_text(json.dumps(large))
    assert main([str(small_json), str(large_json), "--to", "1G", "--markdown", str(md)], echo=lambda _: None) == 0
    assert re.search(r"^\| restricted reader's first answer after a write, remote \| .+ \| 1\.00 \| .+ \|", md.read_text(), re.M)


def test_bench_access_finds_the_admin_by_name_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--admin-by-name``: the admin found by name at each question, as each reader is; on a store
    another process may write, that reads the users from the store each time."""
    from benchmarks.access import measure_backend
    from benchmarks.ask_remote import served
    from tests.test_one_directory import _directory_reads

    out = tmp_path / "access.json"
    args = ["bench", "access", "--relations", "2w", "--questions", "2", "--writes", "1", "--backends", "remote",
            "--admin-by-name", "--workdir", str(tmp_path / "work"), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "--writes 1 --admin-by-name`" in result.stdout
    assert "Readers: the admin (sees everything; found by name at each question" in result.stdout
    data = json.loads(out.read_text())
    assert data["admin_by_name"] is True
    admin = data["backends"]["remote"]["readers"]["admin"]
    assert admin["access"] == {"group:a": "recorded", "group:b": "recorded"} and admin["wrong"] == []

    reads = _directory_reads(monkeypatch)
    here, counted = tmp_path / "work" / "2w", {}
    with served(here / "oxigraph", here / "again.log") as url:
        for by_name in (False, True):
            before = len(reads)
            measure_backend("remote", url, str(here), 2, 2, 1, 0, by_name)  # in this process: counted
            counted[by_name] = len(reads) - before
    # the admin looked up for the cold answer, the warming questions, the answer after the one
    # write, and the steady questions
    assert counted[True] - counted[False] == 4, counted
