"""``workbench bench serve`` at a tiny size: the three real servers start, answer every request of
every cell, agree on the checked answers, and are stopped afterwards; the table and the Markdown
section are written. No timing assertions."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from benchmarks.serve_report import SERVERS
from workbench.cli import main

NUMBER = r"\d[\d,]*(?:\.\d+)?"


def test_bench_serve_tiny(tmp_path: Path) -> None:
    md = tmp_path / "benchmarks.md"
    md.write_text("# Benchmarks\n\n## Load\n\nLoad figures.\n\n## Serving\n\nA hand-written reading.\n")
    out = tmp_path / "serve.json"
    args = ["bench", "serve", "--relations", "2000", "--requests", "20", "--warmup", "8",
            "--workdir", str(tmp_path / "work"), "--out", str(out), "--markdown", str(md)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output + repr(result.exception)
    text = result.stdout

    assert re.search(r"Machine: \d+ cores .* GiB RAM, .*oxigraph \d", text)
    assert "Command: `workbench bench serve --relations 2000 --requests 20 --clients 1,8 --warmup 8 --seed 0`" in text
    assert "ERRORS" not in text
    for server in SERVERS.values():
        for query in ("point", "inheritance"):
            for clients in (1, 8):
                assert re.search(rf"^\| {re.escape(server)} \| {query} \| {clients} \| {NUMBER} \| {NUMBER} \| "
                                 rf"{NUMBER} \| 0 \| ({NUMBER}|n/a) \| {NUMBER} \|$", text, re.M), (server, query, clients)
    for query in ("point", "inheritance"):
        for clients in (1, 8):
            assert re.search(rf"^\| {query} \| {clients} \| {NUMBER}× \| {NUMBER}× \| {NUMBER}× \| {NUMBER}× \|$",
                             text, re.M)
    assert re.search(r"- Errors at 8 clients — goal none: 0 \*\*met\*\*", text)
    assert "- Checked before timing: the same rows from every server for 20 of 20" in text

    data = json.loads(out.read_text())
    assert len(data["cells"]) == 12  # 3 servers, 2 queries, 2 numbers of clients
    assert all(c["errors"] == 0 and len(c["samples_ms"]) == 20 for c in data["cells"])
    assert data["warmup_errors"] == 0
    for described in data["pids"].values():  # the servers are stopped: their PIDs are gone
        pid = int(described.split()[1])
        assert not Path(f"/proc/{pid}").exists(), described

    written = md.read_text()
    assert re.match(r"# Benchmarks\n\n## Load\n\nLoad figures.\n\n## Serving\n+<!-- bench serve 2000: begin", written)
    assert "A hand-written reading." in written and "| Workbench (access control on) | point | 1 |" in written
