"""``workbench bench load`` at a tiny size: every contender runs, ratios are numbers, and the
Workbench store it leaves holds one common-sense assertion, with provenance, per world.
No timing assertions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.load import count_assertions, parse_size, write_markdown
from workbench.cli import main

NUMBER = r"\d[\d,]*(?:\.\d+)?"


def test_bench_load_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Load\n\nA hand-written reading.\n\n## Query\n\nOther section.\n")
    args = ["bench", "load", "--sizes", "2w,3w", "--rdflib-max", "2w", "--workdir", str(tmp_path / "work"),
            "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    out = result.output

    assert re.search(r"Machine: \d+ cores .* GiB RAM", out)
    assert "Command: `workbench bench load --sizes 2w,3w --seed 0 --rdflib-max 2w`" in out
    for label in ("rdflib (in memory)", "floor (N-Triples)", "floor (N-Quads)", "Workbench"):
        assert re.search(rf"^\| {re.escape(label)} \| {NUMBER} \| {NUMBER} \|", out, re.M), label
    for ratio in ("Workbench ÷ floor \\(N-Triples\\)", "Workbench ÷ floor \\(N-Quads\\)", "rdflib ÷ Workbench"):
        assert re.search(rf"{ratio}: {NUMBER}× time", out), ratio
    assert "| rdflib (in memory) | skipped: above --rdflib-max 2w |" in out  # at 3w
    assert re.search(r"Workbench peak RSS [\d,]+ MiB — goal < 2,048 MiB: \*\*(met|missed)\*\*", out)

    for size, worlds in (("2w", 2), ("3w", 3)):
        assert count_assertions(tmp_path / "work" / size / "workbench") == worlds

    text = md.read_text()
    assert text.count("## Load") == 1 and "A hand-written reading." in text and "## Query\n\nOther section." in text
    assert "| floor (N-Quads) |" in text.split("## Query")[0]


def test_markdown_section_is_replaced_not_duplicated(tmp_path: Path) -> None:
    md = tmp_path / "b.md"
    write_markdown(md, "first")
    write_markdown(md, "second")
    text = md.read_text()
    assert text.startswith("# Benchmarks\n") and text.count("## Load") == 1
    assert "second" in text and "first" not in text


@pytest.mark.parametrize(("text", "worlds"), [("10k", 14), ("100k", 142), ("1.27M", 1800), ("2500", 4), ("3w", 3)])
def test_parse_size(text: str, worlds: int) -> None:
    assert parse_size(text).worlds == worlds


@pytest.mark.parametrize("text", ["", "ten", "0w", "1G", "200M"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)
