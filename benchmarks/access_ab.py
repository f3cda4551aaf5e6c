"""``bench access``'s remote readers with a record's metadata read beside it unfiltered, or not:
both ways, interleaved, on one warm server.

``python -m benchmarks.access_ab WORKDIR/SIZE --worlds N [--order on,off,off,on]`` (issue 20), on
the files a ``workbench bench access --workdir WORKDIR`` run kept: its ``oxigraph`` folder, served
here once by ``oxigraph serve`` on loopback. A run ``named`` is ``on`` with the admin found by
name at each question, as each reader is (``bench access --admin-by-name``). Each run in the order is
:func:`benchmarks.access.measure_backend` on the remote backend, in a process of its own: ``on``
as shipped (``access.rewrite.seen_with``: the metadata groups of Workbench's own queries beside
their record take no filter of their own), ``off`` with every group filtered. Printed per run,
one JSON line: each reader's first answers after the writes (ms) and their median ÷ the
admin's, the steady p50 per tier, round trips per question, and how many answers were wrong.
Each run adds its writes to the store (public records).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
from pathlib import Path
from typing import Any

from benchmarks.ask_remote import served


def _measured(elide: bool, *args: Any) -> dict[str, Any]:
    if not elide:
        from workbench.access import rewrite

        rewrite.seen_with = lambda groups: frozenset()
    from benchmarks.access import measure_backend

    return measure_backend(*args)


def _summary(way: str, found: dict[str, Any]) -> dict[str, Any]:
    readers = found["readers"]
    admin = statistics.median(readers["admin"]["after_write_s"])
    row: dict[str, Any] = {"way": way, "load": [round(x, 2) for x in found["load"]]}
    for who, r in readers.items():
        row[who] = {"after_write_ms": [round(x * 1e3, 1) for x in r["after_write_s"]],
                    "ratio": round(statistics.median(r["after_write_s"]) / admin, 2),
                    "p50_ms": {t: round(statistics.median(v), 2) for t, v in r["ms"].items()},
                    "round_trips": r["round_trips"], "wrong": len(r["wrong"])}
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.access_ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("here", type=Path, help="WORKDIR/SIZE of a `workbench bench access --workdir` run")
    parser.add_argument("--worlds", type=int, required=True, help="its worlds (14174 at 10M)")
    parser.add_argument("--order", default="on,off,off,on",
                        help="runs: on, off, or named (on, the admin found by name at each question as a reader is)")
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--writes", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("bench-access-ab.json"))
    args = parser.parse_args(argv)
    rows = []
    with served(args.here / "oxigraph", args.here / "access-ab-serve.log") as url:
        for way in args.order.split(","):
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                found = pool.apply(_measured, (way != "off", "remote", url, str(args.here), args.worlds,
                                               args.questions, args.writes, 0, way == "named"))
            rows.append(_summary(way, found))
            print(json.dumps(rows[-1]), flush=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
