"""``workbench bench serve``: ``workbench serve`` under load, beside a bare ``oxigraph serve``.

The data: the seeded synthetic worlds of :mod:`benchmarks.synth` (100k relations by default,
1.27M with ``--full``) imported into a fresh Workbench store the way ``bench load`` does it (one
admitted common-sense assertion per world, with provenance); then one restricted record, whose
source is ``visible_to: [group:private]``, and two users, an admin and a viewer. The store is
dumped to N-Quads and the dump loaded with ``oxigraph load`` into a store of its own, so both
servers hold the same quads.

The servers: ``workbench --store DIR serve`` (access control on: every request carries the
viewer's bearer token) and ``oxigraph serve --location DIR``, each a child process (no shell in
between), stopped at the end whatever happens (error, Ctrl-C, SIGTERM).

The load: two queries, each on a different subject every request, so that no answer cache can
help: the **point** query (one subject's facts) and the **inheritance** query (a thing's kinds
through ``rdf:type/rdfs:subClassOf*``), at 1 and 8 concurrent clients. Each cell (server, query,
clients) sends ``--requests`` requests from client threads with a keep-alive connection each;
before the clock, both servers' answers are compared on a few subjects, and each server is warmed
up on subjects the cells do not use. Printed: p50 / p99 latency, throughput and errors per cell,
the server's CPU per request, and Workbench ÷ oxigraph ratios.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from importlib import metadata
from itertools import cycle, islice
from pathlib import Path
from typing import Any

from benchmarks import progress, synth
from benchmarks.load import Size, _step, code_version, machine, measure, parse_size, working_dir
from benchmarks.serve_http import Server, Target, free_port, oxigraph_binary, profile_server, run_cell
from benchmarks.serve_report import (
    SERVERS,
    Cell,
    Checks,
    ServeRun,
    error_banner,
    render,
    write_markdown,
)

DEFAULT_RELATIONS = "100k"
FULL_RELATIONS = "1.27M"
DEFAULT_REQUESTS = 5000
DEFAULT_WARMUP = 200
DEFAULT_CLIENTS = (1, 8)
CHECK_SUBJECTS = 10
PRIVATE_GROUP = "group:private"
PRIVATE_SUBJECT = "urn:wb:synth:private/t0"
ADMIN, VIEWER = "admin", "viewer"
#: query key -> its text, ``<T>`` standing for the subject
QUERIES = {
    "point": "SELECT ?p ?o WHERE { GRAPH ?g { <T> ?p ?o } }",
    "kinds": f"SELECT DISTINCT ?kind WHERE {{ GRAPH ?g {{ <T> <{synth.RDF_TYPE}>/<{synth.SUBCLASS_OF}>* ?kind }} }}",
}
COUNT_QUERY = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


def query_for(key: str, subject: str) -> str:
    """The query ``key`` about ``subject``.

    >>> query_for("point", "urn:x")
    'SELECT ?p ?o WHERE { GRAPH ?g { <urn:x> ?p ?o } }'
    """
    return QUERIES[key].replace("<T>", f"<{subject}>")


# ---------------------------------------------------------------- the data, in both stores


def _private_file(path: Path) -> Path:
    """A few facts about a thing only ``group:private`` may see (typed into world 0's first kind,
    so that the inheritance query reaches it too)."""
    path.write_text(
        f"<{PRIVATE_SUBJECT}> <{synth.RDF_TYPE}> <urn:wb:synth:w0/k0> ;\n"
        f'    <{synth.PREF_LABEL}> "private thing" ;\n'
        f"    <{synth.HAS}> <urn:wb:synth:w0/f0> .\n",
        encoding="utf-8",
    )
    return path


def restrict_and_add_users(store_dir: Path, private: Path) -> dict[str, str]:
    """Import the restricted record, add an admin and a viewer; returns their tokens."""
    from workbench.service import Workbench

    with Workbench.open(store_dir, user=ADMIN) as wb:
        wb.import_files([private], source="private-notes", said_by=ADMIN, visible_to=[PRIVATE_GROUP],
                        statement="Notes only group:private may see (workbench bench serve).")
        return {ADMIN: wb.add_user(ADMIN, ["admin"]), VIEWER: wb.add_user(VIEWER, ["viewer"])}


def dump(store_dir: Path, target: Path) -> int:
    """Every quad of the Workbench store (its export) as N-Quads; returns the count."""
    from workbench.service import Workbench

    with Workbench.open(store_dir, user=ADMIN) as wb:
        return wb.export(target)


def oxigraph_load(data: Path, location: Path, expected: int) -> None:
    """``oxigraph load`` the dump into a fresh store; checks it holds ``expected`` quads."""
    import pyoxigraph as ox

    proc = subprocess.run([oxigraph_binary(), "load", "--location", str(location), "--file", str(data)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"oxigraph load failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    store = ox.Store(str(location))
    try:
        if len(store) != expected:
            raise RuntimeError(f"oxigraph load gave {len(store)} quads, expected {expected}")
    finally:
        del store


def things(n_worlds: int, seed: int) -> list[str]:
    """Every synthetic thing of the worlds, shuffled (seeded)."""
    found = [t for world in synth.generate(n_worlds, seed=seed) for t in world.things]
    # the seed's text keeps the old module name (workbench.bench.serve): the same picks as before
    random.Random(f"workbench.bench.serve/{seed}/{n_worlds}").shuffle(found)
    return found


# ---------------------------------------------------------------- servers, checks, cells


def _rows(body: bytes) -> list[tuple[tuple[str, str, str, str, str], ...]]:
    """A SPARQL JSON result's rows, each as sorted (variable, type, value, datatype, language)."""
    data = json.loads(body)
    return sorted(tuple(sorted((var, t.get("type", ""), t.get("value", ""), t.get("datatype", ""),
                                t.get("xml:lang", "")) for var, t in b.items()))
                  for b in data["results"]["bindings"])


def check(targets: dict[str, Target], admin: Target, subjects: Sequence[str]) -> Checks:
    """Both servers' answers on ``subjects``, the restricted subject as each sees it, and the
    quads each shows in named graphs."""
    checks = Checks(subjects=len(subjects))
    for subject in subjects:
        for key in QUERIES:
            q = query_for(key, subject)
            answers = {name: t.get(q) for name, t in targets.items()}
            checks.compared += 1
            bad = {name: status for name, (status, _) in answers.items() if status != 200}
            if bad:
                checks.mismatches.append(f"{key} on <{subject}>: answered {bad}")
                continue
            rows = {name: _rows(body) for name, (_, body) in answers.items()}
            if all(r == rows["oxigraph"] for r in rows.values()):
                checks.agree += 1
            else:
                checks.mismatches.append(f"{key} on <{subject}>: " + ", ".join(f"{n} {len(r)} rows"
                                                                               for n, r in rows.items()))
    for who, target in (("oxigraph", targets["oxigraph"]), (ADMIN, admin), (VIEWER, targets["workbench"])):
        status, body = target.get(query_for("point", PRIVATE_SUBJECT))
        checks.private_rows[who] = len(_rows(body)) if status == 200 else -status
    for who, target in (("oxigraph", targets["oxigraph"]), ("Workbench as viewer", targets["workbench"])):
        status, body = target.get(COUNT_QUERY)
        if status == 200:
            checks.total_quads[who] = int(json.loads(body)["results"]["bindings"][0]["n"]["value"])
    return checks


@contextmanager
def servers(store_dir: Path, oxigraph_dir: Path, workdir: Path, token: str) -> Iterator[dict[str, Server]]:
    """The servers started (from this thread), answering; all stopped on the way out."""
    wb_port, ox_port, floor_port = free_port(), free_port(), free_port()
    accept = {"Accept": "application/sparql-results+json"}
    started = {
        "workbench": Server(
            "workbench serve",
            [sys.executable, "-m", "workbench.cli", "--store", str(store_dir), "serve", "--port", str(wb_port)],
            Target("127.0.0.1", wb_port, "/sparql", {**accept, "Authorization": f"Bearer {token}"}),
            workdir / "workbench-serve.log"),
        "oxigraph": Server(
            "oxigraph serve",
            [oxigraph_binary(), "serve", "--location", str(oxigraph_dir), "--bind", f"127.0.0.1:{ox_port}"],
            Target("127.0.0.1", ox_port, "/query", accept),
            workdir / "oxigraph-serve.log"),
        "floor": Server(
            "Python floor",
            [sys.executable, str(Path(__file__).with_name("serve_floor.py")), "--location", str(oxigraph_dir),
             "--port", str(floor_port)],
            Target("127.0.0.1", floor_port, "/query", accept),
            workdir / "floor-serve.log"),
    }
    try:
        for server in started.values():
            server.start()
        yield started
    finally:
        for server in started.values():
            server.stop()


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM stops the bench as Ctrl-C does (so the servers are stopped too)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def prepare(size: Size, here: Path, seed: int, bar: Any, setup: dict[str, float],
            before_dump: tuple[str, Callable[[Path], Any]] | None = None) -> tuple[synth.Counts, int, Any]:
    """The same data in both stores, each step timed into ``setup``: the size's worlds written,
    imported into Workbench at ``here/workbench`` (bench load's path), ``before_dump`` run on
    that store (a labelled step), the store dumped and loaded into a bare Oxigraph at
    ``here/oxigraph``. Returns the counts, the quads served and what ``before_dump`` gave."""
    here.mkdir(parents=True, exist_ok=True)
    nq, store_dir, oxi_dir, dumped = here / "synth.nq", here / "workbench", here / "oxigraph", here / "dump.nq"
    for old in (store_dir, oxi_dir):
        if old.exists():
            shutil.rmtree(old)

    def timed(label: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        out = _step(bar, f"{size.label}: {label}", fn)
        setup[label] = time.perf_counter() - start
        return out

    counts: synth.Counts = timed("writing synth.nq", partial(synth.write, nq, n_worlds=size.worlds, seed=seed))
    loaded = timed("Workbench import", partial(measure, "workbench", nq, store_dir, seed))
    if loaded["count"] != counts.worlds:
        raise RuntimeError(f"the store at {size.label} holds {loaded['count']} assertions, expected {counts.worlds}")
    extra = timed(before_dump[0], partial(before_dump[1], store_dir)) if before_dump else None
    quads: int = timed("dump to N-Quads", partial(dump, store_dir, dumped))
    timed("oxigraph load", partial(oxigraph_load, dumped, oxi_dir, quads))
    return counts, quads, extra


def _measure_cell(name: str, server: Server, key: str, subjects: Sequence[str], clients: int, qbar: Any) -> Cell:
    paths = [server.target.request_path(query_for(key, s)) for s in subjects]
    qbar.reset(total=len(paths))
    before, own = server.cpu_seconds(), time.process_time()
    times = run_cell(server.target, paths, clients, qbar)
    after, own = server.cpu_seconds(), time.process_time() - own
    cpu = after - before if after is not None and before is not None else None
    return Cell(name, key, clients, times.ms, times.seconds, times.errors, times.error_samples, times.statuses, cpu,
                own)


def run(size: Size, *, requests: int, clients: Sequence[int], warmup: int, seed: int, workdir: Path,
        profile_to: Path | None = None) -> ServeRun:
    """Prepare both stores, start both servers, check, warm up, measure every cell, stop."""
    here = workdir / size.label
    store_dir, oxi_dir = here / "workbench", here / "oxigraph"
    n_cells = len(QUERIES) * len(clients) * len(SERVERS)
    steps = 6 + 2 + len(QUERIES) * len(SERVERS) + n_cells + (profile_to is not None)
    setup: dict[str, float] = {}

    with progress(total=steps, unit="step", position=0) as bar, \
            progress(total=requests, unit="req", leave=False, position=1) as qbar:
        users = ("restricted record and users",
                 lambda store_dir: restrict_and_add_users(store_dir, _private_file(here / "private.ttl")))
        counts, quads, tokens = prepare(size, here, seed, bar, setup, before_dump=users)
        pool: list[str] = _step(bar, f"{size.label}: picking subjects", partial(things, size.worlds, seed))
        needed = CHECK_SUBJECTS + warmup + requests * len(QUERIES) * len(clients)
        subjects = iter(islice(cycle(pool), needed))

        def take(n: int) -> list[str]:
            return list(islice(subjects, n))

        check_subjects, warm_subjects = take(CHECK_SUBJECTS), take(warmup)

        bar.set_description(f"{size.label}: starting both servers")
        load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        with servers(store_dir, oxi_dir, here, tokens[VIEWER]) as started:
            bar.update(1)
            for server in started.values():
                setup[f"{server.name} start to first answer"] = server.ready_seconds
            pids = {name: f"pid {s.pid} ({s.executable()})" for name, s in started.items()}
            targets = {name: s.target for name, s in started.items()}
            wb_target = started["workbench"].target
            admin = Target(wb_target.host, wb_target.port, wb_target.path,
                           {**wb_target.headers, "Authorization": f"Bearer {tokens[ADMIN]}"})
            checks = _step(bar, f"{size.label}: checking answers", partial(check, targets, admin, check_subjects))
            cells: list[Cell] = []
            warmup_errors = 0
            turn = 0
            for key in QUERIES:
                for server in started.values():
                    bar.set_description(f"{size.label}: warming up {server.name}, {key}")
                    qbar.reset(total=max(warmup, 1))
                    if warm_subjects:
                        paths = [server.target.request_path(query_for(key, s)) for s in warm_subjects]
                        warmup_errors += run_cell(server.target, paths, max(clients), qbar).errors
                    bar.update(1)
                for n in clients:
                    cell_subjects = take(requests)
                    order = list(started) if turn % 2 == 0 else list(reversed(started))
                    turn += 1
                    for name in order:
                        server = started[name]
                        bar.set_description(f"{size.label}: {server.name}, {key}, {n} client{'s' * (n > 1)}")
                        cells.append(_measure_cell(name, server, key, cell_subjects, n, qbar))
                        bar.update(1)
            rss = {name: s.rss_mib() for name, s in started.items()}
            peak = {name: s.peak_rss_mib() for name, s in started.items()}
            profile = ""
            if profile_to is not None:
                bar.set_description(f"{size.label}: profiling workbench serve (py-spy)")
                server = started["workbench"]
                paths = [server.target.request_path(query_for("point", s)) for s in islice(cycle(pool), requests)]
                qbar.reset(total=len(paths))
                profile = profile_server(server, partial(run_cell, server.target, paths, max(clients), qbar),
                                         profile_to)
                bar.update(1)
    return ServeRun(size, counts, quads, requests, warmup, needed > len(pool),
                    {k: q.replace("<T>", "T") for k, q in QUERIES.items()}, cells, checks, setup, pids, rss,
                    warmup_errors, profile, load_before, peak)


# ---------------------------------------------------------------- the command


def tool_versions() -> str:
    """The server side's versions: the oxigraph CLI, uvicorn, starlette."""
    try:
        oxi = subprocess.run([oxigraph_binary(), "--version"], capture_output=True, text=True,
                             check=False).stdout.strip()
    except (OSError, RuntimeError):
        oxi = "oxigraph n/a"
    return ", ".join([oxi or "oxigraph n/a", *(f"{p} {metadata.version(p)}" for p in ("uvicorn", "starlette"))])


def command_line(size: Size, *, full: bool, requests: int, clients: Sequence[int], warmup: int, seed: int) -> str:
    """The command that repeats a run.

    >>> command_line(parse_size("100k"), full=False, requests=2000, clients=(1, 8), warmup=200, seed=0)
    'workbench bench serve --relations 100k --requests 2000 --clients 1,8 --warmup 200 --seed 0'
    """
    which = "--full" if full else f"--relations {size.label}"
    return (f"workbench bench serve {which} --requests {requests} --clients {','.join(map(str, clients))} "
            f"--warmup {warmup} --seed {seed}")


def main(
    size: Size | None = None,
    *,
    full: bool = False,
    requests: int = DEFAULT_REQUESTS,
    clients: Sequence[int] = DEFAULT_CLIENTS,
    warmup: int = DEFAULT_WARMUP,
    seed: int = 0,
    workdir: Path | None = None,
    markdown: Path | None = None,
    out: Path | None = None,
    profile_to: Path | None = None,
    echo: Callable[[str], object] = print,
) -> ServeRun:
    """The whole benchmark: machine line and command, the run, the table (printed, and into
    ``markdown`` and ``out``). Failed requests do not stop it: they are counted and shouted."""
    size = parse_size(FULL_RELATIONS) if full else size or parse_size(DEFAULT_RELATIONS)
    command = command_line(size, full=full, requests=requests, clients=clients, warmup=warmup, seed=seed)
    machine_line, code = f"{machine()}, {tool_versions()}", code_version()
    echo(f"Machine: {machine_line}\nCode: {code}\nCommand: {command}")
    with _sigterm_as_interrupt(), working_dir(workdir, "serve") as root:
        result = run(size, requests=requests, clients=clients, warmup=warmup, seed=seed, workdir=root,
                     profile_to=profile_to)
    date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = render(result, command=command, machine_line=machine_line, date=date, code=code)
    echo(block)
    echo("Servers: " + "; ".join(f"{SERVERS[k]} {v}" for k, v in result.pids.items()))
    if result.profile:
        echo(f"\nWhere workbench serve spends its time, point query at {max(clients)} clients "
             f"(py-spy, collapsed stacks in {profile_to}):\n{result.profile}")
    if out is not None:
        payload = {"command": command, "machine": machine_line, "code": code, "date": date, **result.to_json()}
        out.write_text(json.dumps(payload, indent=1, allow_nan=True) + "\n", encoding="utf-8")
        echo(f"Wrote {out}")
    if markdown is not None:
        write_markdown(markdown, block, size.label)
        echo(f"Wrote the Serving section of {markdown}")
    for line in error_banner(result):
        echo(line)
    return result
