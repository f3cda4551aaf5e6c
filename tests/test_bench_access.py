"""``workbench bench access`` at a tiny size, on the embedded store and a real ``oxigraph serve``:
every reader's answers as the worlds' ground truth says, each group's private thing recorded for
the admin and its group's reader and not for the other, the remote admin's round trips counted,
the JSON and the Markdown section written. No timing assertions."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from workbench.cli import main


def test_bench_access_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Load\n\nLoad figures.\n")
    out = tmp_path / "access.json"
    args = ["bench", "access", "--relations", "2w", "--questions", "2", "--writes", "2",
            "--workdir", str(tmp_path / "work"), "--out", str(out), "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = result.stdout
    assert "Command: `workbench bench access --relations 2w --backends embedded,remote --questions 2 --writes 2`" in text
    assert "Answers: every answer of every reader as the worlds' ground truth says." in text

    data = json.loads(out.read_text())
    assert set(data["backends"]) == {"embedded", "remote"}
    for name, backend in data["backends"].items():
        assert len(backend["write_s"]) == 2 and backend["rss_mib"] > 0 and backend["peak_rss_mib"] >= backend["rss_mib"]
        readers = backend["readers"]
        assert readers["admin"]["access"] == {"group:a": "recorded", "group:b": "recorded"}, name
        assert readers["reader-a"]["access"]["group:a"] == "recorded" != readers["reader-a"]["access"]["group:b"]
        assert readers["reader-b"]["access"]["group:b"] == "recorded" != readers["reader-b"]["access"]["group:a"]
        for who, reader in readers.items():
            assert reader["wrong"] == [] and len(reader["after_write_s"]) == 2, (name, who)
            assert all(len(ms) == 2 for ms in reader["ms"].values())
    assert all(n > 0 for n in data["backends"]["remote"]["readers"]["admin"]["round_trips"].values())
    assert all(n == 0 for n in data["backends"]["embedded"]["readers"]["admin"]["round_trips"].values())

    probe = data["backends"]["remote"]["restrictions"]
    assert probe["hidden_graphs"] == 1 and probe["visible_graphs"] > 1  # group:a's record, for reader-b
    assert all(probe[q][way]["p50_ms"] > 0 for q in ("point", "kinds") for way in ("as is", "rewritten", "dataset"))

    doc = md.read_text()
    assert doc.count("## Restricted readers at scale") == 1 and "## Load\n\nLoad figures." in doc
    assert re.search(r"^\| remote \| reader-a \| [\d,.]+ m?s \| [\d,.]+ m?s, [\d,.]+ m?s \| [\d,.]+× "
                     r"\| recorded / \w+ \|$", doc, re.M)
    assert re.search(r"^\| point \| [\d.]+ / [\d.]+ \| [\d.]+ / [\d.]+ \| [\d.]+× \| [\d.]+ / [\d.]+ \| [\d.]+× \|$", doc, re.M)
