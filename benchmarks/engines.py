"""The sample's questions on each engine, side by side in one run: the embedded store, a real
``oxigraph serve`` and a real Virtuoso (both started here on loopback, as the tests start them:
tests/conftest.py). Each question is asked once untimed (caches filled, recall's index built),
then ``--repeat`` times per engine, engines interleaved; printed: the p50 per question and engine,
the HTTP round trips a remote question makes (the last repeat's), and Virtuoso's time over
Oxigraph's. Small by design (the sample data): what it
shows is what each engine costs per request, not how either scales.

    python -m benchmarks.engines --repeat 60
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.load import machine
from tests.conftest import FIXED_NOW, OxigraphServer, VirtuosoServer
from workbench.service import Workbench
from workbench.store import EmbeddedStore, RemoteStore

QUESTIONS: dict[str, Callable[[Workbench], Any]] = {
    "derived": lambda wb: wb.ask("my car", "needs", "gas"),
    "recorded": lambda wb: wb.ask("my car", "is a"),
    "no evidence": lambda wb: wb.ask("Paris", "needs", "gas"),
    "count": lambda wb: wb.count("wedding", about="me", year=2026),
    "decision": lambda wb: wb.decision("Project Atlas"),
    "recall": lambda wb: wb.recall("what does Ravi work on?"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=60)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="wb-engines-"))
    oxigraph, virtuoso = OxigraphServer(folder / "oxigraph"), VirtuosoServer(folder / "virtuoso")
    benches: dict[str, Workbench] = {}
    try:
        stores = {"embedded": EmbeddedStore(folder / "embedded", create=True),
                  "oxigraph": RemoteStore(f"{oxigraph.url}/query"), "virtuoso": RemoteStore(virtuoso.url)}
        for name, store in stores.items():
            benches[name] = Workbench(store, user="root", clock=lambda: FIXED_NOW)
            benches[name].init(sample=True)
        times: dict[tuple[str, str], list[float]] = {(n, q): [] for n in benches for q in QUESTIONS}
        trips: dict[tuple[str, str], int] = {}
        for wb in benches.values():  # once, untimed: caches filled, indexes built
            for ask in QUESTIONS.values():
                ask(wb)
        for _ in range(args.repeat):
            for q, ask in QUESTIONS.items():
                for name, wb in benches.items():
                    before = getattr(wb.store, "round_trips", 0)
                    start = time.perf_counter()
                    ask(wb)
                    times[(name, q)].append((time.perf_counter() - start) * 1000)
                    trips[(name, q)] = getattr(wb.store, "round_trips", 0) - before  # the last repeat's
    finally:
        for wb in benches.values():
            wb.close()
        oxigraph.stop()
        virtuoso.stop()
    print(f"Machine: {machine()}; {args.repeat} repeats, engines interleaved\n")
    print("| question | embedded p50 (ms) | `oxigraph serve` p50 (ms) | Virtuoso p50 (ms) | round trips | "
          "Virtuoso ÷ Oxigraph |")
    print("|---|---:|---:|---:|---:|---:|")
    for q in QUESTIONS:
        e, o, v = (statistics.median(times[(n, q)]) for n in ("embedded", "oxigraph", "virtuoso"))
        rt = trips[("oxigraph", q)], trips[("virtuoso", q)]
        print(f"| {q} | {e:.2f} | {o:.2f} | {v:.2f} | {rt[0]} / {rt[1]} | {v / o:.2f}× |")


if __name__ == "__main__":
    main()
