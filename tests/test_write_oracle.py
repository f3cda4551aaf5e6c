"""Writes as if the hidden did not exist (invariant 11): the A/B oracle of tests/test_visibility.py,
for writes.

Store A holds the sample data and the family's private records (their sources visible to
``group:family`` only): a van and a wedding, a record that corrects a public one, a summary of a
private record and a summary candidate resting on one, a private record retracted with a reason
and one erased. Store B holds the same without any of it. An outsider curator makes the same
write on a fresh copy of each: the answer must be the same, and afterwards the outsider (and a
viewer) still cannot tell the copies apart through any read probe; the family still sees their
records. A write that creates something under an id a private thing holds is refused with one
answer whatever its content: ids are not secret, content is.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXED_NOW
from tests.test_visibility import _RANDOM, PRIVATE, PROBES, _outcome
from workbench.errors import Conflict
from workbench.service import Workbench


def regression(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.regression(reason)


PUBLIC = {"id": "pub-van-colour", "statement": "The old van is red.", "type": "state", "about": ["old van"],
          "source": {"id": "garage-note-1", "said_by": "me"}, "effective_from": "2026-01-01",
          "triples": [["old van", "setting", {"value": "red"}]]}
PRIVATE_MORE = [
    {"id": "p-van-colour-2", "statement": "The old van is green now.", "type": "state", "about": ["old van"],
     "visible_to": ["group:family"], "supersedes": "pub-van-colour", "effective_from": "2026-06-01",
     "source": {"id": "fam-chat-3", "said_by": "me", "text": "we painted the van green"},
     "triples": [["old van", "setting", {"value": "green"}]]},
    {"id": "p-secret-3", "statement": "Zelda's code word is pineapple.", "type": "observation", "about": ["Zelda"],
     "visible_to": ["group:family"], "source": {"id": "fam-chat-4", "said_by": "me"}},
    {"id": "p-secret-4", "statement": "Zelda hid the key under the mat.", "type": "observation", "about": ["Zelda"],
     "visible_to": ["group:family"], "source": {"id": "fam-chat-5", "said_by": "me"}},
]
# What only the private records say (the probes themselves name the van and Zanzibar).
SECRETS = ("pineapple", "green", "p-van-colour", "fam-chat", "under the mat", "c-van-2", "s-van")


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _make(path: Path, private: bool) -> dict[str, str]:
    """Store A (``private``) or B; returns the users' tokens."""
    with Workbench.open(path, create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        inputs = path.parent / f"{path.name}-in"
        inputs.mkdir()
        wb.import_files([_jsonl(inputs / "public.jsonl", [PUBLIC])])
        tokens = {name: wb.add_user(name, [role]) for name, role in
                  (("root", "admin"), ("bob", "viewer"), ("cur", "curator"), ("fam", "curator"))}
        wb.set_groups("fam", join=["group:family"])
        if private:
            fam = wb.acting_as("fam")
            fam.import_files([_jsonl(inputs / "private.jsonl", [*PRIVATE, *PRIVATE_MORE])])
            fam.import_candidates(_jsonl(inputs / "cands.jsonl", [
                {**PRIVATE[0], "id": "c-van-2", "statement": "The Secret Van is blue."},
                {"id": "s-van", "summary": "The family's van, in Zanzibar.", "of": ["p-van-1"]},
                {"id": "s-zelda", "summary": "Zelda's code word.", "of": ["p-secret-3"]},
            ]))
            fam.approve(["s-van"])
            fam.retract("p-secret-3", reason="Zelda changed the pineapple code")
            wb.erase("p-secret-4", reason="Zelda asked us to forget the mat")
    return tokens


@dataclass
class Pair:
    a: Path
    b: Path

    def copies(self, root: Path) -> tuple[Path, Path]:
        out = []
        for name, src in (("a", self.a), ("b", self.b)):
            target = root / name / "store"
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("LOCK", "workbench.lock", "views"))
            out.append(target)
        return out[0], out[1]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    root = tmp_path_factory.mktemp("write-oracle")
    _make(root / "a", private=True)
    _make(root / "b", private=False)
    return Pair(root / "a", root / "b")


@pytest.fixture(scope="module")
def van_iri(pair: Pair) -> str:
    with Workbench.open(pair.a, user="root") as wb:
        return wb.resolve("Secret Van").entities[0]


Write = Callable[[Workbench, Path], Any]


def _record(path: Path, **fields: Any) -> Path:
    rec = {"id": "cur-1", "statement": "A note.", "type": "observation", "source": {"id": "cur-note", "said_by": "cur"},
           **fields}
    return _jsonl(path / "cur.jsonl", [rec])


WRITES: dict[str, Write] = {
    "supersede a hidden record by import": lambda wb, d: wb.import_files([_record(d, supersedes="p-van-1")]),
    "cite a hidden source": lambda wb, d: wb.import_files([_record(d, supported_by=["fam-chat-1"])]),
    "a record about a name only hidden records use": lambda wb, d: wb.import_files(
        [_record(d, about=["Secret Van"], triples=[["Secret Van", "is a", "petrol car"]])]),
    "a new entity under a hidden name": lambda wb, d: wb.add_entity("Secret Van"),
    "an alias that a hidden entity has as a name": lambda wb, d: wb.add_alias("Paris", "Secret Van"),
    "an alias for a hidden entity": lambda wb, d: wb.add_alias("Secret Van", "SV"),
    "split a hidden entity": lambda wb, d: wb.split("Secret Van", reason="two vans"),
    "merge into a hidden entity": lambda wb, d: wb.merge("Paris", "Secret Van", reason="same"),
    "supersede a hidden record": lambda wb, d: wb.supersede("p-van-1", "pub-van-colour", reason="x"),
    "retract a hidden record": lambda wb, d: wb.retract("p-wedding-1", reason="x"),
    "approve a hidden candidate": lambda wb, d: wb.approve(["c-van-2"]),
    "reject a hidden candidate": lambda wb, d: wb.reject(["c-van-2"], reason="x"),
    "merge into a hidden candidate": lambda wb, d: wb.merge_candidates("c-van-2", ["c-none"]),
    "approve a summary candidate resting on a hidden record": lambda wb, d: wb.approve(["s-zelda"]),
    "propose and approve a summary of a hidden record": lambda wb, d: (
        wb.import_candidates(_jsonl(d / "s.jsonl", [{"id": "s-cur", "summary": "About the van.", "of": ["p-van-1"]}])),
        wb.approve(["s-cur"])),
    "supersede a public record a hidden one superseded": lambda wb, d: wb.import_files(
        [_record(d, supersedes="pub-van-colour", about=["old van"], type="state")]),
    "supersede it by the act": lambda wb, d: (wb.import_files([_record(d)]),
                                              wb.supersede("pub-van-colour", "cur-1", reason="x")),
}


def _outcome_of(write: Write, wb: Workbench, work: Path) -> str:
    return _outcome(lambda w: write(w, work), wb)


def _probes(wb: Workbench, who: str) -> dict[str, str]:
    seen = wb.seen_by(who)
    found = {name: _outcome(probe, seen) for name, probe in PROBES.items()}
    found["entities"] = _outcome(lambda w: w.entities(), seen)
    found["summaries"] = _outcome(lambda w: w.summaries(include_stale=True), seen)
    found["history of the public record"] = _outcome(lambda w: w.history("pub-van-colour"), seen)
    found["current colour"] = _outcome(lambda w: w.current("old van", "setting"), seen)
    found["the old van"] = _outcome(lambda w: w.record("pub-van-colour"), seen)
    for rid in ("p-secret-3", "p-secret-4"):  # retracted, erased: as missing as a record never held
        found[f"history of {rid}"] = _outcome(lambda w, rid=rid: w.history(rid), seen)
        found[f"audit of {rid}"] = _outcome(lambda w, rid=rid: w.audit(rid), seen)
    found["every quad"] = _everything(seen)
    return found


_PATHS = re.compile(r"/tmp/[^\"'\s<>]*?/(?:a|b)-in/")


def _everything(wb: Workbench) -> str:
    """Every quad the reader may read over SPARQL, sorted, import runs and file paths masked."""
    rows = wb.sparql("SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }", format="tsv").decode().splitlines()[1:]
    return json.dumps(sorted(_RANDOM.sub("…", _PATHS.sub("IN/", row)) for row in rows), ensure_ascii=False)


@pytest.fixture
def copies(pair: Pair, tmp_path: Path) -> Iterator[tuple[Workbench, Workbench, Path]]:
    a, b = pair.copies(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    wa = Workbench.open(a, user="root", clock=lambda: FIXED_NOW)
    wb = Workbench.open(b, user="root", clock=lambda: FIXED_NOW)
    yield wa, wb, work
    wa.close()
    wb.close()


@pytest.mark.parametrize("name", sorted(WRITES))
@regression("writes reached, confirmed or named records, sources and entities the writer may not see")
def test_a_write_answers_as_if_the_hidden_did_not_exist(copies: tuple[Workbench, Workbench, Path], name: str) -> None:
    a, b, work = copies
    answer_a = _outcome_of(WRITES[name], a.acting_as("cur"), work)
    answer_b = _outcome_of(WRITES[name], b.acting_as("cur"), work)
    assert answer_a == answer_b
    for who in ("cur", "bob"):
        seen_a, seen_b = _probes(a, who), _probes(b, who)
        assert seen_a == seen_b, who
        text = json.dumps(seen_a, ensure_ascii=False).casefold()
        assert not [s for s in SECRETS if s in text], who
    # The family's records are as they were.
    fam = a.seen_by("fam")
    assert fam.record("p-van-1").status.value == "active"
    assert fam.record("p-van-colour-2").status.value == "active"


def test_before_any_write_an_outsider_cannot_tell_them_apart(copies: tuple[Workbench, Workbench, Path]) -> None:
    a, b, _ = copies
    for who in ("cur", "bob"):
        assert _probes(a, who) == _probes(b, who)
    # and the family sees what the outsider cannot: so each probe above can fail
    fam = _probes(a, "fam")
    assert "green" in fam["current colour"] and "Zanzibar" in fam["summaries"]
    assert "pineapple" in json.dumps(_outcome(lambda w: w.history("p-secret-3"), a.seen_by("fam")))


@pytest.mark.parametrize("what", ["record", "source", "graph", "rdf source"])
@regression("re-importing a hidden record answered 'unchanged', one changed word 409: a hidden text confirmed")
def test_an_id_a_hidden_thing_holds_is_taken_whatever_the_write_says(
    copies: tuple[Workbench, Workbench, Path], what: str
) -> None:
    a, _, work = copies
    cur = a.acting_as("cur")
    exact, changed = dict(PRIVATE[0]), {**PRIVATE[0], "statement": "The Secret Van is a diesel car."}
    if what == "source":  # a new record citing the hidden source, with its exact text, or another
        exact = {**_new(), "visible_to": ["group:family"], "source": PRIVATE[0]["source"]}
        changed = {**exact, "source": {**PRIVATE[0]["source"], "text": "something else"}}
    answers = []
    for n, rec in enumerate((exact, changed)):
        source = None
        if what in ("graph", "rdf source"):  # a hidden record's graph; a new graph from a hidden source
            graph, source = ("urn:wb:record:p-van-1", None) if what == "graph" else ("urn:x:new", "fam-chat-1")
            path = work / f"graph{n}.nq"
            path.write_text(f'<urn:x:van> <urn:x:is> "{rec["statement"]}" <{graph}> .\n')
        else:
            path = _jsonl(work / f"r{n}.jsonl", [rec])
        with pytest.raises(Conflict) as caught:
            cur.import_files([path], source=source)
        answers.append(str(caught.value).replace(str(path), "FILE"))
    assert answers[0] == answers[1]
    assert "is taken; choose another id" in answers[0]


def test_a_restricted_writers_import_asks_only_about_its_own_graphs(
    copies: tuple[Workbench, Workbench, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a restricted writer may not see is checked for the graphs the file names, never by
    listing every graph of the store and of the writer's view (which grows with the store)."""
    a, _, work = copies
    path = work / "new.nq"
    path.write_text('<urn:x:van> <urn:x:is> "fast" <urn:x:mine> .\n')

    def listed(self: object) -> frozenset[object]:
        raise AssertionError("the import listed every graph")

    monkeypatch.setattr(type(a.store), "graph_names", listed)
    report = a.acting_as("cur").import_files([path])
    assert report.records_added == 1


def test_a_restricted_writers_large_import_is_checked_the_same(copies: tuple[Workbench, Workbench, Path]) -> None:
    """A large import is planned in another process, which cannot ask the store: it gets what the
    writer may not see listed whole, and refuses a hidden record's graph the same way."""
    from benchmarks import synth
    from tests.conftest import dump
    from workbench.imports.landing import STAGE_BYTES

    a, _, work = copies
    path = work / "worlds.nq"
    synth.write(path, n_worlds=45, seed=3, fmt="nq")
    path.write_bytes(path.read_bytes() + b'<urn:x:van> <urn:x:is> "x" <urn:wb:record:p-van-1> .\n')
    assert path.stat().st_size >= STAGE_BYTES and a.store.capabilities.staged_writes
    before = dump(a.store)
    with pytest.raises(Conflict, match="the record id 'p-van-1' is taken"):
        a.acting_as("cur").import_files([path], record_type="common_sense")
    assert dump(a.store) == before


def _new() -> dict[str, Any]:
    return {"id": "cur-2", "statement": "My note.", "type": "observation", "about": ["me"]}


def test_the_revision_a_reader_sees_moves_only_with_what_they_see(copies: tuple[Workbench, Workbench, Path]) -> None:
    a, _, work = copies
    query = "SELECT ?r WHERE { GRAPH <urn:wb:graph:meta> { <urn:wb:store> <https://w3id.org/workbench/ns#revision> ?r } }"

    def revision(who: str) -> bytes:
        return a.seen_by(who).sparql(query, format="csv")

    before = revision("bob"), revision("fam")
    a.acting_as("fam").import_files([_jsonl(work / "more.jsonl", [
        {**PRIVATE_MORE[1], "id": "p-secret-9", "source": {"id": "fam-chat-9", "said_by": "me"}}])])
    assert revision("bob") == before[0]  # a write bob may not see does not move what bob reads
    assert revision("fam") != before[1]
