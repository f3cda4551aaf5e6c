"""``workbench bench all`` at a tiny size: every part runs, every contender is in the report, the
chart is a log-log SVG, owlrl's answers are checked against the worlds' ground truth, and a peer
past its budget is reported as "gave up at SIZE". No timing assertions."""

from __future__ import annotations

import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks import synth
from benchmarks.ask_peers import measure
from benchmarks.limits import run_limited
from workbench.cli import main

SVG = "{http://www.w3.org/2000/svg}"
CONTENDERS = ("Workbench import (provenance)", "floor (N-Triples)", "floor (N-Quads)", "rdflib (in memory)",
              "Workbench `ask`", "floor (bare SPARQL)", "pySHACL (SHACL-AF rules)", "owlrl (RDFS closure)",
              "workbench serve (access control on)", "oxigraph serve (bare)", "Workbench's index: exact (flat)",
              "| IVF |", "HNSW (the peer)", "Workbench `recall`", "plain vector RAG (top 10)")


def _powers_of_ten(labels: list[str]) -> bool:
    """Tick labels one decade apart ("0.1 ms", "1 ms", ...; "100", "1k", "10k")."""
    def number(text: str) -> float:
        n = text.split()[0]
        return float(n[:-1]) * {"k": 1e3, "M": 1e6}[n[-1]] if n[-1] in "kM" else float(n)

    values = [number(t) for t in labels]
    return len(values) >= 2 and all(abs(b / a - 10) < 1e-9 for a, b in zip(values, values[1:], strict=False))


def _check_chart(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    panels = root.findall(f"{SVG}g") or [root]
    for panel in panels:
        texts = [t.text or "" for t in panel.iter(f"{SVG}text")]
        y_ticks = [t for t in texts if re.fullmatch(r"[\d.e+-]+ (ms|s|MiB)", t)]
        x_ticks = [t for t in texts if re.fullmatch(r"\d+[kM]?", t)]
        assert _powers_of_ten(y_ticks) and _powers_of_ten(x_ticks), texts  # both axes logarithmic


def test_bench_all_tiny(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "all.json"
    args = ["bench", "all", "--sizes", "2w,1w", "--questions", "3", "--repeat", "1", "--requests", "20",
            "--queries", "20", "--peer-timeout", "10", "--workdir", str(tmp_path / "work"),
            "--markdown-dir", str(docs), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = result.stdout
    assert ("Command: `workbench bench all --sizes 1w,2w --seed 0 --questions 3 --repeat 1 --peer-timeout 10 "
            "--peer-memory 8 --requests 20 --queries 20`") in text
    assert "== bench all: summary ==" in text and "Workbench ÷ its peers, at a glance:" in text
    assert re.search(r"^- \*\*2w\*\*: load [\d.]+× the bare bulk load's time .*; serve [\d.]+× oxigraph", text, re.M)

    report = (docs / "bench-all.md").read_text()
    assert re.search(r"Machine: \d+ cores \(.+\), [\d.]+ GiB RAM, .*Python \d.*owlrl \d.*oxigraph \d", report)
    assert re.search(r"Code: workbench at commit \w+", report) and re.search(r"Date: \d{4}-\d\d-\d\d", report)
    summary = report.split("## Details")[0]
    for name in CONTENDERS:
        assert name in summary, name
    for size in ("1w", "2w"):
        assert f"| load: seconds | {size} | Workbench import (provenance) |" in summary
        assert re.search(rf"\| ask p50: derived \| {size} \| floor \(bare SPARQL\) \| [\d.]+ ms \| 3/3 \| +\| [\d.,]+×",
                         summary)
    assert re.search(r"\| serve p50: point query, 1 client \| 2w \| oxigraph serve \(bare\) \| [\d.]+ ms \| "
                     r"20/20 answered \| \d+ \| [\d.,]+× \| [\d.,]+× \|", summary)
    assert "![latency and peak RSS against size, log-log](bench-all.svg)" in report
    for part in ("load", "ask", "recall", "serve"):
        assert f"<summary>what bench {part} printed</summary>" in report
    _check_chart(docs / "bench-all.svg")

    data = json.loads(out.read_text())
    assert [s["label"] for s in data["sizes"]] == ["1w", "2w"]
    owlrl, pyshacl = data["peers"]["owlrl"], data["peers"]["pyshacl"]
    for run in owlrl:
        if run["status"] != "ok":  # a busy machine may stop it; then it says so
            assert run["status"] in ("time", "skipped"), run
            continue
        tiers = run["tiers"]
        assert run["triples_after"] > run["triples_before"] and run["peak_rss_mib"] > 0
        for tier in ("recorded", "no-evidence", "kind"):
            assert tiers[tier]["right"] == tiers[tier]["questions"] == 3, (tier, tiers[tier])
        for tier in ("derived", "derived-all"):
            assert tiers[tier]["right"] == 0, (tier, tiers[tier])  # RDFS cannot inherit has / used for
    for run in pyshacl:  # pySHACL takes about 15 s a world: it may give up within 10 s
        if run["status"] == "ok":
            assert all(t["right"] == t["questions"] for t in run["tiers"].values()), run
        elif run["status"] == "time":
            assert (f"| ask: before the first answer | {run['size']} | pySHACL (SHACL-AF rules) | gave up at "
                    f"{run['size']} (over 10 s) |") in summary
        else:
            assert run["status"] == "skipped" and run["gave_up_at"] == "1w", run


def test_a_peer_past_its_budget_gave_up(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "all.json"
    args = ["bench", "all", "--sizes", "1w,2w", "--skip", "load,ask,recall,serve", "--peer-timeout", "0.01",
            "--workdir", str(tmp_path / "work"), "--markdown-dir", str(docs), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    report = (docs / "bench-all.md").read_text()
    for peer in ("pySHACL (SHACL-AF rules)", "owlrl (RDFS closure)"):
        assert f"| ask: before the first answer | 1w | {peer} | gave up at 1w (over 0.01 s) |" in report
        assert f"| ask: before the first answer | 2w | {peer} | gave up at 1w |" in report
        assert f"  - {peer}: answered at no size; gave up at 1w (over 0.01 s)." in report
    data = json.loads(out.read_text())
    for runs in data["peers"].values():
        assert [r["status"] for r in runs] == ["time", "skipped"]
        assert runs[1]["gave_up_at"] == "1w"
    _check_chart(docs / "bench-all.svg")


def test_owlrl_answers_what_rdfs_entails(tmp_path: Path) -> None:
    nt = tmp_path / "two.nt"
    synth.write(nt, n_worlds=2, seed=1, fmt="nt")
    got = measure("owlrl", nt, 2, 5, 1, 1)
    right = {tier: (r["right"], r["questions"]) for tier, r in got["tiers"].items()}
    assert right == {"recorded": (5, 5), "kind": (5, 5), "no-evidence": (5, 5), "derived": (0, 5),
                     "derived-all": (0, 5)}
    assert got["triples_after"] > got["triples_before"] and got["materialise_s"] > 0


def test_run_limited_stops_a_child_over_its_memory_cap(tmp_path: Path) -> None:
    grow = "import time\nx = bytearray(400 * 2**20)\ntime.sleep(30)"
    done = run_limited([sys.executable, "-c", grow], stdout=tmp_path / "out", memory_mib=200, timeout=60)
    assert done.stopped == "memory" and done.returncode is None and not done.ok
    assert done.peak_rss_mib > 200 and done.seconds < 30
    fine = run_limited([sys.executable, "-c", "print('hi')"], stdout=tmp_path / "out")
    assert fine.ok and (tmp_path / "out").read_text() == "hi\n" and fine.peak_rss_mib > 0


def test_unknown_parts_are_refused() -> None:
    result = CliRunner().invoke(main, ["bench", "all", "--skip", "load,nothing"])
    assert result.exit_code == 2 and "no part called nothing" in result.output
    result = CliRunner().invoke(main, ["bench", "all", "--skip", "load,ask,peers,recall,serve"])
    assert result.exit_code == 2 and "every part is skipped" in result.output


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [False, True])
def test_progress_is_drawn_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> None:
    """Every benchmark's bar: drawn on a terminal, silent in a log or a pipe (a 10M run redrawn
    every second filled its log with megabytes of bars)."""
    from benchmarks import progress

    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress(total=3, desc="writing worlds", unit="step") as bar:
        bar.update(3)
    assert ("writing worlds" in err.getvalue()) is terminal
