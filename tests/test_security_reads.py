"""What rests on what a reader may not see follows it, over HTTP and the CLI (invariant 8).

The same requests go to a real `workbench serve` over store A (with the family's private
records, a summary and a summary candidate resting on them, a public record a private one
corrected, a retracted and an erased private record) and over store B (the same without any of
it), with each store's own tokens. An outsider's answers must be the same from both; the
family's must differ (so each request can fail).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.test_server import Server
from tests.test_visibility import _RANDOM
from tests.test_write_oracle import _make


def regression(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.regression(reason)


@dataclass
class Served:
    server: Server
    path: Path
    tokens: dict[str, str]

    def call(self, who: str, method: str, route: str, body: Any = None) -> tuple[int, Any]:
        root = self.server.url.removesuffix("/sparql")
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        if route.startswith("/sparql"):
            r = httpx.post(root + "/sparql", data={"query": body}, headers={**headers, "Accept": "text/csv"}, timeout=30)
            return r.status_code, sorted(r.text.splitlines())
        r = httpx.request(method, root + route, json=body, headers=headers, timeout=30)
        return r.status_code, json.loads(_RANDOM.sub("…", r.text)) if r.text else None


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Served]]:
    root = tmp_path_factory.mktemp("reads")
    tokens = {name: _make(root / name, private=name == "a") for name in ("a", "b")}
    a, b = Server(root / "a"), Server(root / "b")
    yield Served(a, root / "a", tokens["a"]), Served(b, root / "b", tokens["b"])
    a.stop()
    b.stop()


SUMMARIES_GRAPH = "SELECT ?s ?p ?o WHERE { GRAPH ?s { ?s a <https://w3id.org/workbench/ns#Summary> ; ?p ?o } }"
REASONS = "SELECT ?r WHERE { GRAPH ?g { ?a <https://w3id.org/workbench/ns#reason> ?r } }"
READS: dict[str, tuple[str, str, Any]] = {
    "summaries, stale too": ("GET", "/api/summaries?include_stale=true", None),
    "the summaries' graphs": ("POST", "/sparql", SUMMARIES_GRAPH),
    "every reason given": ("POST", "/sparql", REASONS),
    "the queue": ("GET", "/api/candidates?status=all", None),
    "a summary candidate": ("GET", "/api/candidates/s-zelda", None),
    "stats": ("GET", "/api/stats", None),
    "a public record a private one corrected": ("GET", "/api/records/pub-van-colour", None),
    "its history": ("GET", "/api/records/pub-van-colour/history", None),
    "its current value": ("POST", "/api/current", {"subject": "old van", "state": "setting"}),
    "an erased private record's history": ("GET", "/api/records/p-secret-4/history", None),
    "an erased private record's audit": ("GET", "/api/records/p-secret-4/audit", None),
    "a retracted private record's audit": ("GET", "/api/records/p-secret-3/audit", None),
}
# In order: each write lands on both stores, so later requests see its effect on both.
WRITES: dict[str, tuple[str, str, Any]] = {
    "approve a summary candidate resting on a private record": ("POST", "/api/review/approve", {"ids": ["s-zelda"]}),
    "split a private entity": ("POST", "/api/entities/split", {"entity": "Secret Van", "reason": "two"}),
    "a private name as an alias": ("POST", "/api/entities/alias", {"entity": "Paris", "alias": "Zelda"}),
    "an entity under a private name": ("POST", "/api/entities", {"name": "Secret Van"}),
    "a record about a private name": ("POST", "/api/import/records", {"records": [
        {"id": "cur-1", "statement": "Zelda's bike is red.", "type": "observation", "about": ["Zelda's bike"],
         "source": {"id": "cur-src", "said_by": "cur"}, "triples": [["Zelda's bike", "is a", "bicycle"]]}]}),
    "entities afterwards": ("GET", "/api/entities", None),
}


@pytest.mark.parametrize("name", list(READS))
@regression("summaries, summary candidates, acts and tombstones of hidden records were visible to everyone")
def test_an_outsider_reads_the_same_from_both(both: tuple[Served, Served], name: str) -> None:
    a, b = both
    method, route, body = READS[name]
    for who in ("bob", "cur"):
        assert a.call(who, method, route, body) == b.call(who, method, route, body), who


def test_the_family_reads_what_the_outsider_cannot(both: tuple[Served, Served]) -> None:
    a, b = both
    differ = [name for name, (m, r, body) in READS.items() if a.call("fam", m, r, body) != b.call("fam", m, r, body)]
    assert set(differ) >= {"summaries, stale too", "the summaries' graphs", "every reason given", "the queue",
                           "a summary candidate", "a public record a private one corrected", "its current value",
                           "an erased private record's history", "a retracted private record's audit"}


@regression("aliasing a hidden name answered 409 naming the entity; a new 'Mia' was minted mia-2")
def test_an_outsider_writes_the_same_on_both(both: tuple[Served, Served]) -> None:
    a, b = both
    for name, (method, route, body) in WRITES.items():
        assert a.call("cur", method, route, body) == b.call("cur", method, route, body), name
    status, made = a.call("cur", "POST", "/api/entities", {"name": "Mia"})
    assert (status, made) == (200, {"iri": "urn:wb:entity:mia"})  # the family's Mia holds no readable IRI


@pytest.mark.parametrize("args", [("summaries", "--all", "--json"), ("export", "OUT.trig")])
def test_on_the_command_line_too(both: tuple[Served, Served], tmp_path: Path, args: tuple[str, ...]) -> None:
    """The CLI reads a copy of each store (the servers own them) as the viewer."""
    outputs = []
    for served in both:
        copy = tmp_path / served.path.name
        subprocess.run(["cp", "-r", str(served.path), str(copy)], check=True)
        for lock in copy.rglob("LOCK"):
            lock.unlink()
        out = tmp_path / f"{served.path.name}.trig"
        done = subprocess.run([sys.executable, "-m", "workbench.cli", "--store", str(copy), "--as", "bob",
                               *[str(out) if a == "OUT.trig" else a for a in args]],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        text = out.read_text(encoding="utf-8") if args[0] == "export" else done.stdout
        outputs.append(text)
        assert "Zanzibar" not in text and "pineapple" not in text and "code word" not in text
    if args[0] == "summaries":
        assert outputs[0] == outputs[1]
    else:
        assert re.sub(r"urn:wb:activity:\S+", "", outputs[0]).count("<urn:wb:summary:") == re.sub(
            r"urn:wb:activity:\S+", "", outputs[1]).count("<urn:wb:summary:")
