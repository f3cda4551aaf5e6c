"""SPARQL with reasoning on beside the same query without it, in one run (issue 19, part 5).

For each size a seeded synthetic store (:mod:`benchmarks.synth`, imported as ``bench load``
does) answers three queries through :meth:`Workbench.sparql` as the store's owner reads it:
one thing's needs (``<thing> wb:has ?y``), every
``wb:has`` fact, and every fact of every relation (a variable predicate: the rules'
conclusions of every relation they conclude). Each is timed without and with ``reasoning``;
the with-reasoning time is split into the rules' conclusions, writing them into the query
(:func:`workbench.rules.conclusions.joined`), and the query. Prints a Markdown table and the command.

Run: ``PYTHONPATH=. python -m benchmarks.sparql_reasoning --sizes 10k,100k``
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks import synth
from benchmarks.load import parse_size

HAS = f"<{synth.HAS}>"
QUERIES = {
    "one thing's wb:has": "SELECT ?y ?g WHERE { GRAPH ?g { THING " + HAS + " ?y } }",
    "every wb:has": "SELECT ?x ?y ?g WHERE { GRAPH ?g { ?x " + HAS + " ?y } }",
    "every relation (count)": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }",
}


def _rows(data: bytes) -> int:
    out = json.loads(data)
    bindings = out["results"]["bindings"]
    return int(bindings[0]["n"]["value"]) if bindings and "n" in bindings[0] else len(bindings)


def run(size_text: str, repeat: int, every_up_to: int) -> list[str]:
    from workbench.rules import conclusions
    from workbench.service import Workbench

    size = parse_size(size_text)
    here = Path(tempfile.mkdtemp(prefix=f"reasoning-{size.label}-"))
    nq = here / "synth.nq"
    synth.write(nq, n_worlds=size.worlds, seed=0)
    wb = Workbench.open(here / "store", create=True, user="bench")
    wb.init()
    wb.import_files([nq], record_type="common_sense", source="synth-seed-0", said_by="bench",
                    statement="A synthetic common-sense world (benchmarks.synth, seed 0).")
    world = next(synth.generate(1, seed=0))
    thing = next(iter(sorted(world.things)))
    out = []
    for name, template in QUERIES.items():
        if name.startswith("every") and size.worlds > every_up_to:
            continue
        query = template.replace("THING", f"<{thing}>")
        plain, reasoned, parts = [], [], []
        for _ in range(repeat + 1):  # the first of each warms the caches
            t = time.perf_counter()
            n_plain = _rows(wb.sparql(query))
            plain.append(time.perf_counter() - t)
            t = time.perf_counter()
            n_reasoned = _rows(wb.sparql(query, reasoning=True))
            reasoned.append(time.perf_counter() - t)
            t0 = time.perf_counter()
            goals = conclusions.goals_in(query, conclusions.concluded(wb.rules))
            found = conclusions.conclusions(wb.store, wb.rules, goals)
            t1 = time.perf_counter()
            conclusions.joined(query, conclusions.quads(found))
            t2 = time.perf_counter()
            parts.append((t1 - t0, t2 - t1, len(found)))
        p, r = statistics.median(plain[1:]), statistics.median(reasoned[1:])
        c = statistics.median(x[0] for x in parts[1:])
        v = statistics.median(x[1] for x in parts[1:])
        out.append(f"| {size.label} | {name} | {n_plain:,} | {n_reasoned:,} | {parts[-1][2]:,} | {p * 1000:.1f} ms | "
                   f"{r * 1000:.1f} ms | {c * 1000:.1f} ms | {v * 1000:.1f} ms | {r / p:.1f}x |")
    wb.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10k,100k", help="relations (10k, 100k, 1.27M) or worlds (3w)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--every-up-to", default="10k", help="the queries of every subject only up to this size")
    args = parser.parse_args()
    print("| size | query | rows without | rows with | conclusions | p50 without | p50 with | "
          "of which conclusions | of which joining them into the query | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in args.sizes.split(","):
        for line in run(s, args.repeat, parse_size(args.every_up_to).worlds):
            print(line, flush=True)
    print(f"\n`PYTHONPATH=. python -m benchmarks.sparql_reasoning --sizes {args.sizes} --repeat {args.repeat} "
          f"--every-up-to {args.every_up_to}`")


if __name__ == "__main__":
    main()
