"""``workbench bench ask --backends remote`` at a tiny size, against a real ``oxigraph serve``: every
contender answers every tier as the worlds' ground truth says, the remote Workbench's round trips
are counted (more than zero), the JSON and the Markdown section are written. No timing assertions."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from click.testing import CliRunner

from benchmarks.ask import TIERS
from workbench.cli import main

NUMBER = r"\d[\d,]*(?:\.\d+)?"
PAIR = rf"{NUMBER} / {NUMBER}"


def test_bench_ask_remote_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Ask\n\nThe embedded figures.\n")
    out = tmp_path / "ask.json"
    args = ["bench", "ask", "--backends", "remote", "--sizes", "2w", "--questions", "2", "--repeat", "1",
            "--workdir", str(tmp_path / "work"), "--out", str(out), "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = result.stdout

    assert "Command: `workbench bench ask --backends remote --sizes 2w --questions 2 --repeat 1 --seed 0`" in text
    assert re.search(r"Machine: .*oxigraph \d", text)
    for tier in TIERS.values():
        # size | tier | embedded | remote | ratio | round trips | ms per round trip | share | floor x 2 | ratio
        assert re.search(rf"^\| 2w \| {tier} \| {PAIR} \| {PAIR} \| {NUMBER}× \| {NUMBER} \| {NUMBER} \| {NUMBER}% "
                         rf"\| {PAIR} \| {PAIR} \| {NUMBER}× \|$", text, re.M), tier
    assert "Answers: all 8 questions answered as the worlds' ground truth says by every contender" in text
    assert not (out.parent / "ask.json").exists()  # the embedded half did not run

    data = json.loads((tmp_path / "ask-remote.json").read_text())
    (size,) = data["sizes"]
    assert size["size"] == "2w" and size["quads"] > 0
    for tier in size["tiers"].values():
        assert tier["mismatches"] == [] and all(n == 2 for n in tier["agree"].values()), tier["agree"]
        b = tier["breakdown"]
        # one request per store call, but name binding's, which rides with the version check
        assert b["round_trips"] > 0 and b["round_trips"] == b["store_calls"] - 1
        assert 0 < b["http_share"] <= 1 and b["ms_per_round_trip"] > 0
        assert math.isfinite(tier["remote_over_embedded_p50"]) and tier["remote_over_embedded_p50"] > 0
        for name in ("embedded", "remote", "floor", "floor-remote"):
            assert len(tier["contenders"][name]["samples_ms"]) == 2, name
    assert size["derived_ask_trace"] and all(call["ms"] > 0 for call in size["derived_ask_trace"])

    doc = md.read_text()
    assert doc.count("## Remote backend") == 1 and "## Ask\n\nThe embedded figures." in doc
    assert doc.index("## Ask") < doc.index("## Remote backend")
    assert "| 2w | derived |" in doc.split("## Remote backend")[1]
