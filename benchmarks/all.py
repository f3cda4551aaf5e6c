"""``workbench bench all``: every benchmark at the chosen sizes in one run, peers side by side.

The parts are the other benchmarks' own ``main`` functions, run one after the other on the same
seeded worlds; this module only picks their settings, keeps what each printed, and gathers the
figures into one summary (:mod:`benchmarks.all_report`):

* **load** (:mod:`~benchmarks.load`): Workbench's import with provenance, pyoxigraph's bare
  bulk load (the floor) and rdflib's in-memory parse, each in a child process (peak RSS its own);
* **ask** (:mod:`~benchmarks.ask`): ``Workbench.ask`` and the bare store's SPARQL (the floor),
  one child process per size running ``python -m benchmarks ask`` (its peak RSS is the asking's);
* **peers** (:mod:`~benchmarks.ask_peers`): pySHACL's and owlrl's materialisation, then
  lookups, each in a child process under ``--peer-timeout`` and ``--peer-memory``, size after
  size until it gives up;
* **recall** (:mod:`~benchmarks.recall`, :mod:`~benchmarks.recall_quality`): the FAISS
  indexes at as many vectors as the size has relations, and the development set through
  ``Workbench.recall`` beside the plain vector-RAG recipe;
* **serve** (:mod:`~benchmarks.serve`): ``workbench serve`` beside a bare ``oxigraph serve``
  over the same quads, at each size.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import child_env, progress, synth
from benchmarks.ask_peers import DEFAULT_MEMORY_GIB, DEFAULT_TIMEOUT, PEERS, PeerRun, run_peers
from benchmarks.limits import run_limited
from benchmarks.load import Size, code_version, machine, working_dir
from benchmarks.recall_quality import Compared

PARTS = ("load", "ask", "peers", "recall", "serve")
DEFAULT_SIZES = "10k,100k"
FULL_SIZES = "10k,100k,1.27M"
DEFAULT_QUESTIONS = 100
DEFAULT_REPEAT = 3
DEFAULT_REQUESTS = 2000
DEFAULT_CLIENTS = (1, 8)
DEFAULT_QUERIES = 500
QUALITY_ENCODERS = ("hashing",)  # the default encoder; MiniLM is bench recall's to measure
REPORT, CHART = "bench-all.md", "bench-all.svg"


@dataclass
class AskRun:
    """``Workbench.ask`` and the floor at one size (one child process): their figures per tier,
    from ``bench ask``'s JSON, and the child's peak RSS."""

    size: Size
    tiers: dict[str, Any]  # tier -> bench ask's to_json() of it
    peak_rss_mib: float
    relations: int

    def p50(self, tier: str, contender: str) -> float:
        return float(self.tiers[tier]["contenders"][contender]["p50_ms"])

    def right(self, tier: str, contender: str) -> tuple[int, int]:
        t = self.tiers[tier]
        return int(t["agree"].get(contender, 0)), int(t["questions"])


@dataclass
class AllRun:
    """Everything one ``bench all`` measured; a part not run is left empty."""

    sizes: list[Size]
    command: str
    machine: str
    code: str
    date: str = ""
    peer_timeout: float = DEFAULT_TIMEOUT
    peer_memory_gib: float = DEFAULT_MEMORY_GIB
    load: list[Any] = field(default_factory=list)  # bench load's SizeRun per size
    ask: list[AskRun] = field(default_factory=list)
    peers: dict[str, list[PeerRun]] = field(default_factory=dict)
    recall: list[Any] = field(default_factory=list)  # bench recall's Dataset per size
    quality: list[Compared] = field(default_factory=list)
    serve: list[Any] = field(default_factory=list)  # bench serve's ServeRun per size
    printed: dict[str, str] = field(default_factory=dict)  # part -> what its main printed
    load_average: list[float] = field(default_factory=list)  # 1-minute load average at the start and the end

    def relations(self, size: Size) -> int:
        """The size's relations as written (from whichever part wrote them), else the estimate."""
        for r in [*self.load, *self.serve]:
            if r.size == size:
                return int(r.counts.relations)
        return next((a.relations for a in self.ask if a.size == size),
                    round(size.worlds * synth.MEAN_RELATIONS_PER_WORLD))


class Printed:
    """An ``echo`` that prints and keeps what it printed, for the report's details."""

    def __init__(self, echo: Callable[[str], object]) -> None:
        self.echo = echo
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        self.echo(text)
        # The report has its own machine line and command; a part's temporary paths mean nothing there.
        kept = [line for line in text.splitlines() if not line.startswith("Wrote ")]
        if len(kept) >= 3 and [line.split(":")[0] for line in kept[:3]] == ["Machine", "Code", "Command"]:
            kept = kept[3:]
        if kept:
            self.lines.append("\n".join(kept))

    def text(self) -> str:
        return "\n".join(self.lines)


def vectors_for(size: Size) -> tuple[str, int]:
    """As many vectors as the size has relations (one record statement per relation), labelled.

    >>> from benchmarks.load import parse_size
    >>> vectors_for(parse_size("1.27M")), vectors_for(parse_size("2w"))
    (('1.27M', 1270000), ('2w', 1411))
    """
    from benchmarks.recall import parse_count

    try:
        return size.label, parse_count(size.label)
    except ValueError:
        return size.label, round(size.worlds * synth.MEAN_RELATIONS_PER_WORLD)


def command_line(sizes: Sequence[Size], *, seed: int, parts: Sequence[str], questions: int, repeat: int,
                 peer_timeout: float, peer_memory_gib: float, requests: int, queries: int) -> str:
    """The command that repeats a run.

    >>> from benchmarks.load import parse_size
    >>> command_line([parse_size("10k")], seed=0, parts=PARTS, questions=100, repeat=3, peer_timeout=300,
    ...              peer_memory_gib=8, requests=2000, queries=500)
    'workbench bench all --sizes 10k --seed 0 --questions 100 --repeat 3 --peer-timeout 300 --peer-memory 8 \
--requests 2000 --queries 500'
    """
    skip = [p for p in PARTS if p not in parts]
    return (f"workbench bench all --sizes {','.join(s.label for s in sizes)} --seed {seed} --questions {questions} "
            f"--repeat {repeat} --peer-timeout {peer_timeout:g} --peer-memory {peer_memory_gib:g} "
            f"--requests {requests} --queries {queries}" + (f" --skip {','.join(skip)}" if skip else ""))


# ---------------------------------------------------------------- the parts


def run_ask(size: Size, *, questions: int, repeat: int, seed: int, workdir: Path, echo: Callable[[str], object]
            ) -> AskRun:
    """``python -m benchmarks ask`` at one size in a child process (no pySHACL: the peers run
    apart, under a budget); its table echoed, its JSON read back."""
    workdir.mkdir(parents=True, exist_ok=True)
    out, printed = workdir / f"ask-{size.label}.json", workdir / f"ask-{size.label}.txt"
    done = run_limited([sys.executable, "-m", "benchmarks", "ask", "--sizes", size.label,
                        "--questions", str(questions), "--repeat", str(repeat), "--seed", str(seed), "--no-pyshacl",
                        "--workdir", str(workdir), "--out", str(out)], stdout=printed, env=child_env())
    echo(printed.read_text(encoding="utf-8", errors="replace"))
    if not done.ok:
        raise RuntimeError(f"workbench bench ask at {size.label} failed (exit {done.returncode}); its errors are "
                           "above, on stderr")
    data = json.loads(out.read_text(encoding="utf-8"))["sizes"][0]
    return AskRun(size, data["tiers"], done.peak_rss_mib, int(data["relations"]))


def _nt(size: Size, *, seed: int, root: Path) -> Path:
    """The size's worlds as N-Triples: bench load's file when it wrote one, else a new one."""
    loaded = root / "load" / size.label / "synth.nt"
    if loaded.exists():
        return loaded
    path = root / "peers" / size.label / "synth.nt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        synth.write(path, n_worlds=size.worlds, seed=seed, fmt="nt")
    return path


def run_parts(result: AllRun, *, parts: Sequence[str], seed: int, root: Path, questions: int, repeat: int,
              requests: int, clients: Sequence[int], queries: int, echo: Callable[[str], object]) -> None:
    """Each part in turn, its printout kept in ``result.printed``."""
    sizes = result.sizes

    def part(name: str) -> Printed:
        echo(f"\n== bench all: {name} ==")
        return Printed(echo)

    if "load" in parts:
        from benchmarks.load import main as load_main

        p = part("load")
        result.load = load_main(sizes, seed=seed, workdir=root / "load", echo=p)
        result.printed["load"] = p.text()
    if "ask" in parts:
        p = part("ask: Workbench and the floor")
        result.ask = [run_ask(s, questions=questions, repeat=repeat, seed=seed, workdir=root / "ask", echo=p)
                      for s in sizes]
        result.printed["ask"] = p.text()
    if "peers" in parts:
        part("ask: pySHACL and owlrl, each under its budget")
        with progress(total=len(PEERS) * len(sizes), unit="run") as bar:
            result.peers = run_peers(sizes, lambda s: _nt(s, seed=seed, root=root), per_tier=questions, seed=seed,
                                     repeat=repeat, timeout=result.peer_timeout, memory_gib=result.peer_memory_gib,
                                     workdir=root / "peers", bar=bar)
    if "recall" in parts:
        from benchmarks.recall import main as recall_main
        from benchmarks.recall_quality import main as quality_main

        p = part("recall")
        result.quality = quality_main(QUALITY_ENCODERS, markdown=None, echo=p)
        result.recall = recall_main([vectors_for(s) for s in sizes], n_queries=queries, seed=seed,
                                    workdir=root / "recall", minilm=False, echo=p)
        result.printed["recall"] = p.text()
    if "serve" in parts:
        from benchmarks.serve import main as serve_main

        p = part("serve")
        result.serve = [serve_main(s, requests=requests, clients=clients, warmup=min(200, requests), seed=seed,
                                   workdir=root / "serve", echo=p) for s in sizes]
        result.printed["serve"] = p.text()


def main(
    sizes: Sequence[Size],
    *,
    seed: int = 0,
    workdir: Path | None = None,
    parts: Sequence[str] = PARTS,
    questions: int = DEFAULT_QUESTIONS,
    repeat: int = DEFAULT_REPEAT,
    peer_timeout: float = DEFAULT_TIMEOUT,
    peer_memory_gib: float = DEFAULT_MEMORY_GIB,
    requests: int = DEFAULT_REQUESTS,
    clients: Sequence[int] = DEFAULT_CLIENTS,
    queries: int = DEFAULT_QUERIES,
    markdown_dir: Path | None = Path("docs"),
    out: Path | None = None,
    echo: Callable[[str], object] = print,
) -> AllRun:
    """Run the parts at ``sizes`` (smallest first), print the summary, and write ``bench-all.md``
    and ``bench-all.svg`` into ``markdown_dir`` (and the summary as JSON into ``out``). Raises
    ValueError for an unknown part or no sizes."""
    import faiss

    from benchmarks.all_report import chart, render, summary_json
    from benchmarks.serve import tool_versions

    unknown = sorted(set(parts) - set(PARTS))
    if unknown or not parts:
        raise ValueError(f"unknown part {', '.join(unknown)}: use some of {', '.join(PARTS)}" if unknown
                         else "every part is skipped: nothing to run")
    if not sizes:
        raise ValueError("no sizes to run")
    ordered = sorted(dict.fromkeys(sizes), key=lambda s: s.worlds)
    command = command_line(ordered, seed=seed, parts=parts, questions=questions, repeat=repeat,
                           peer_timeout=peer_timeout, peer_memory_gib=peer_memory_gib, requests=requests,
                           queries=queries)
    versions = f"owlrl {metadata.version('owlrl')}, faiss {faiss.__version__}, numpy {metadata.version('numpy')}"
    result = AllRun(ordered, command, f"{machine()}, {versions}, {tool_versions()}", code_version(),
                    peer_timeout=peer_timeout, peer_memory_gib=peer_memory_gib)
    echo(f"Machine: {result.machine}\nCode: {result.code}\nCommand: {command}")
    with working_dir(workdir, "all") as root:
        result.load_average.append(os.getloadavg()[0])
        run_parts(result, parts=parts, seed=seed, root=root, questions=questions, repeat=repeat, requests=requests,
                  clients=clients, queries=queries, echo=echo)
        result.load_average.append(os.getloadavg()[0])
    result.date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    report = render(result, chart=CHART)
    echo("\n== bench all: summary ==\n" + report.split("\n## Details", 1)[0])
    if out is not None:
        out.write_text(json.dumps(summary_json(result), indent=1, allow_nan=True) + "\n", encoding="utf-8")
        echo(f"Wrote {out}")
    if markdown_dir is not None:
        markdown_dir.mkdir(parents=True, exist_ok=True)
        (markdown_dir / REPORT).write_text(report, encoding="utf-8")
        (markdown_dir / CHART).write_text(chart(result), encoding="utf-8")
        echo(f"Wrote {markdown_dir / REPORT} and {markdown_dir / CHART}")
    return result
