"""kill -9 during an import: the embedded store opens afterwards as it was before, or complete.

A child process imports a large synthetic N-Quads file (bulk loading, which writes as it goes)
into a store that already holds the sample data; the test kills it with SIGKILL at several
moments, then opens the store here. Opening runs recovery from the undo journal; the store must
then hold exactly what it held before the import (byte-identical ``dump``) or, if the kill came
after the import finished, exactly what a complete import gives.

"Killed mid-write" is proven, not assumed: ``DIR/journal.json`` is written just before the first
write and removed right after the last one, so a journal still on disk after the child is dead
means the import was cut off while writing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks import synth
from tests.conftest import FIXED_NOW, dump
from workbench.service import Workbench

# 300 worlds: ~212k relations, ~350k quads, 40 MB. Measured here: the journal appears ~1.3 s
# after start and the write phase (bulk load) lasts ~3 s, so kills 0-500 ms after the journal
# land mid-write with a wide margin; one more kill aims near the end of the write.
N_WORLDS = 300
DELAYS_MS = (0, 50, 200, 500)

CHILD = """
import datetime as dt, sys
from workbench.service import Workbench
now = dt.datetime.fromisoformat(sys.argv[3])
wb = Workbench.open(sys.argv[1], user="tester", clock=lambda: now)
kind = sys.argv[4]
wb.import_files([sys.argv[2]], record_type=kind or None)
wb.close()
print("import complete", flush=True)
"""

# The one thing that differs between two identical imports: the random part of the activity IRI.
_ACTIVITY = re.compile(rb"(<urn:wb:activity:[a-z]+:[^>]*?%2F)[0-9a-f]{8}>")


_REVISION = re.compile(rb'(<urn:wb:store> <https://w3id.org/workbench/ns#revision> ")[0-9a-f]+(")')


def normalised(data: bytes) -> bytes:
    """Random ids made anew by each run (activities, the store's revision token) blanked."""
    lines = (_REVISION.sub(rb"\1XXXXXXXX\2", _ACTIVITY.sub(rb"\1XXXXXXXX>", line))
             for line in data.splitlines(keepends=True))
    return b"".join(sorted(lines))


def raw_quads(location: Path) -> int:
    """Named-graph quads on disk, read without Workbench (so without recovery), in a child process."""
    code = ("import sys, pyoxigraph as ox; s = ox.Store(sys.argv[1]); "
            "print(sum(1 for q in s if not isinstance(q.graph_name, ox.DefaultGraph)))")
    done = subprocess.run([sys.executable, "-c", code, str(location / "oxigraph")], capture_output=True, text=True,
                          timeout=120, check=True)
    return int(done.stdout)


def store_dump(location: Path) -> tuple[bytes, bool]:
    """Open the store (recovery runs), return its dump and whether recovery undid an import."""
    with Workbench.open(location) as wb:
        return dump(wb.store), bool(wb.store.recovered)  # type: ignore[attr-defined]


@dataclass
class Scenario:
    """A store with the sample data, a file to import into it, and both possible end states."""

    root: Path
    base: Path  # the store before the import; copied for every run, never opened for writing
    data: Path
    record_type: str
    before: bytes
    after: bytes  # normalised
    journal_after_s: float  # when the journal appeared in the complete run
    complete_s: float

    def copy(self, name: str) -> Path:
        target = self.root / name
        shutil.copytree(self.base, target)
        return target

    def start(self, store: Path) -> tuple[subprocess.Popen[bytes], Path]:
        log = store.parent / (store.name + ".log")
        with open(log, "wb") as out:
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(store), str(self.data), FIXED_NOW.isoformat(), self.record_type],
                stdout=out, stderr=out)
        return child, log


def _wait_for_journal(child: subprocess.Popen[bytes], journal: Path, limit: float = 120) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if journal.exists():
            return True
        if child.poll() is not None:
            return False
        time.sleep(0.001)
    child.kill()
    child.wait()
    raise AssertionError("the import neither wrote its journal nor finished")


def _complete_run(sc: Scenario, name: str) -> tuple[bytes, float, float]:
    store = sc.copy(name)
    start = time.monotonic()
    child, log = sc.start(store)
    assert _wait_for_journal(child, store / "journal.json"), "the journal never appeared"
    journal_at = time.monotonic() - start
    child.wait(timeout=300)
    took = time.monotonic() - start
    assert child.returncode == 0, log.read_text()
    assert "import complete" in log.read_text()
    assert not (store / "journal.json").exists()
    data, recovered = store_dump(store)
    assert not recovered
    return normalised(data), journal_at, took


def _scenario(root: Path, data: Path, record_type: str) -> Scenario:
    base = root / "base"
    with Workbench.open(base, create=True, user="tester", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
    before, _ = store_dump(base)
    sc = Scenario(root, base, data, record_type, before, b"", 0.0, 0.0)
    sc.after, sc.journal_after_s, sc.complete_s = _complete_run(sc, "complete")
    assert normalised(before) != sc.after, "the import changed nothing: nothing to test"
    return sc


@pytest.fixture(scope="module")
def bulk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    root = tmp_path_factory.mktemp("crash-bulk")
    data = root / "worlds.nq"
    synth.write(data, n_worlds=N_WORLDS, seed=1, fmt="nq")
    yield _scenario(root, data, "common_sense")
    shutil.rmtree(root, ignore_errors=True)


@dataclass
class Outcome:
    delay_ms: int
    mid_write: bool  # the journal outlived the child: it died while writing
    disk_delta: int  # quads on disk (read before recovery) minus quads before: nonzero = partial import
    state: str  # "before" or "after"
    recovered: bool


def kill_after_journal(sc: Scenario, name: str, delay_ms: int) -> Outcome:
    store = sc.copy(name)
    journal = store / "journal.json"
    child, log = sc.start(store)
    try:
        appeared = _wait_for_journal(child, journal)
        if appeared:
            time.sleep(delay_ms / 1000)
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    finished = child.returncode == 0
    assert finished or child.returncode == -signal.SIGKILL, log.read_text()
    mid_write = journal.exists()
    assert not (mid_write and finished), "a finished import left its journal behind"
    delta = raw_quads(store) - sc.before.count(b"\n") if mid_write else 0
    data, recovered = store_dump(store)
    assert not journal.exists(), "opening the store did not clear the journal"
    assert recovered == mid_write
    if data == sc.before:
        state = "before"
    else:
        assert normalised(data) == sc.after, (
            f"after a kill {delay_ms} ms into the write the store is neither as before nor complete "
            f"(mid_write={mid_write}, recovered={recovered})")
        state = "after"
    if mid_write:
        assert state == "before", "an import cut off mid-write was not undone"
    return Outcome(delay_ms, mid_write, delta, state, recovered)


def test_kill_during_bulk_import_leaves_store_before_or_complete(
        bulk: Scenario, record_property: Callable[[str, object], None]) -> None:
    window = (bulk.complete_s - bulk.journal_after_s) * 1000
    # Late kills too: a bulk write lands its data near the end, then the metadata follows.
    late = [int(f * window) for f in (0.7, 0.85, 0.95)]
    outcomes = [kill_after_journal(bulk, f"kill-{d}ms", d) for d in (*DELAYS_MS, *late)]
    summary = [o.__dict__ for o in outcomes]
    record_property("outcomes", json.dumps(summary))
    print(f"\nbulk import: journal after {bulk.journal_after_s:.2f} s, complete after {bulk.complete_s:.2f} s; "
          f"kills: {summary}")
    assert any(o.mid_write for o in outcomes), f"no kill landed mid-write; make the import bigger: {summary}"


@pytest.mark.parametrize("point", ["after-content", "after-metadata"])
def test_kill_at_known_points_of_the_write_is_undone(bulk: Scenario, point: str) -> None:
    """Timed kills mostly land before the bulk writer flushes; these land where the import's data
    is already on disk (WORKBENCH_CRASH_AT, the writer's fault-injection hook), so recovery has
    real work to do."""
    store = bulk.copy(f"crash-{point}")
    log = store.parent / f"crash-{point}.log"
    with open(log, "wb") as out:
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(store), str(bulk.data), FIXED_NOW.isoformat(), bulk.record_type],
            stdout=out, stderr=out, env={**os.environ, "WORKBENCH_CRASH_AT": point}, timeout=300)
    assert child.returncode == -signal.SIGKILL, log.read_text()
    assert (store / "journal.json").exists()
    assert raw_quads(store) > bulk.before.count(b"\n"), "the import's data should be on disk before recovery"
    data, recovered = store_dump(store)
    assert recovered
    assert data == bulk.before


def test_kill_before_the_journal_leaves_store_unchanged(bulk: Scenario) -> None:
    for name, wait in (("kill-at-start", 0.05), ("kill-while-checking", bulk.journal_after_s / 2)):
        store = bulk.copy(name)
        child, log = bulk.start(store)
        try:
            time.sleep(wait)
            assert child.poll() is None, log.read_text()
            assert not (store / "journal.json").exists(), "the journal came sooner than measured"
            os.kill(child.pid, signal.SIGKILL)
        finally:
            if child.poll() is None:
                child.kill()
            child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL
        assert not (store / "journal.json").exists()
        data, recovered = store_dump(store)
        assert not recovered
        assert data == bulk.before, f"a kill {wait:.2f} s after start changed the store"


def test_killed_store_takes_the_import_again(bulk: Scenario) -> None:
    """After recovery the same import runs to completion and gives the complete store."""
    outcome = kill_after_journal(bulk, "kill-then-retry", 0)
    store = bulk.root / "kill-then-retry"
    child, log = bulk.start(store)
    child.wait(timeout=300)
    assert child.returncode == 0, log.read_text()
    data, recovered = store_dump(store)
    assert not recovered
    assert normalised(data) == bulk.after, f"retry after {outcome} did not give the complete store"


# ---------------------------------------------------------------------- JSON Lines

N_RECORDS = 600


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    root = tmp_path_factory.mktemp("crash-jsonl")
    data = root / "many.jsonl"
    with open(data, "w", encoding="utf-8") as out:
        for i in range(N_RECORDS):
            out.write(json.dumps({
                "id": f"bulk-{i}", "statement": f"Thing {i} is my stove.", "type": "observation",
                "about": [f"thing {i}"], "source": {"id": f"chat-{i // 10}", "said_by": "me"},
                "triples": [[f"thing {i}", "is a", "stove"], ["me", "owns", f"thing {i}"]],
                **({"supersedes": "m-car-1"} if i == 0 else {}),
            }) + "\n")
    yield _scenario(root, data, "")
    shutil.rmtree(root, ignore_errors=True)


def test_kill_during_jsonl_import_leaves_store_before_or_complete(
        records: Scenario, record_property: Callable[[str, object], None]) -> None:
    outcomes = [kill_after_journal(records, f"kill-{d}ms", d) for d in (0, 2, 10)]
    store = records.copy("kill-while-planning")
    child, _ = records.start(store)
    time.sleep(records.journal_after_s / 2)
    if child.poll() is None:
        os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    data, _ = store_dump(store)
    assert data == records.before or normalised(data) == records.after
    summary = [o.__dict__ for o in outcomes]
    record_property("outcomes", json.dumps(summary))
    print(f"\njsonl import: journal after {records.journal_after_s:.2f} s, complete after "
          f"{records.complete_s:.2f} s; kills: {summary}")
