"""A closure's walk fetching ahead, or not; or proofs' words and sources kept for the store's
version, or described afresh: both ways, interleaved, in one run.

``python -m benchmarks.ahead_ab WORKDIR/SIZE --worlds N`` (issue 19, part 1), on the files a
``workbench bench ask --workdir WORKDIR`` run kept: its Workbench store (embedded) and, after
``--backends remote``, its ``oxigraph`` folder (served here by ``oxigraph serve`` on loopback).
Each of ``bench ask``'s questions is asked with ``Engine.ahead`` on and off (the walk fetching
what the body looks up next about each node it reaches: ``Reads.expand``), alternately,
``--repeat`` times each, on each backend; printed: p50 per tier and way, the ratio on/off, store
calls (queries and quad patterns; round trips on the remote one) per question, and whether every answer (tier, values,
proofs, sources) was the same both ways. Exits 1 if one was not.

``--toggle kept`` compares instead what answers described kept while the store's version stays
(``evidence.Described``, on) with every question described afresh, as the first question about
its terms after a write is (off: the kept descriptions dropped before each ask); ``--toggle
first``, the question's first lookups sent with the version check before its names are bound
(``rules/primed``, on a remote store) or after; ``--toggle post``, queries POSTed directly to a
standard server or URL-encoded (``Dialect.direct_post``); ``--toggle walked``, the kinds' edges
kept while the store's version stays (``rules/walked``, on) or walked afresh, as the first
question about those kinds after a write does (off: the kept walks dropped before each ask).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks.ask import metered, pick_questions, question_options
from benchmarks.ask_remote import served
from benchmarks.ask_results import TIERS


def _asked(wb: Any, q: Any, way: bool, toggle: str = "ahead") -> tuple[float, int, str]:
    from workbench.answers.evidence import Described
    from workbench.rules import engine

    real = engine.Engine.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        if toggle == "ahead":
            self.ahead = way

    if toggle == "kept" and not way:
        Described._kept.clear()
    if toggle == "walked" and not way:
        from workbench.rules.walked import Walked

        Walked._kept.clear()
    from workbench.service import questions

    real_first = questions._first_reads
    if toggle == "first" and not way:
        questions._first_reads = lambda *args: None
    if toggle == "post" and hasattr(wb.store, "dialect"):
        wb.store.dialect = dataclasses.replace(wb.store.dialect, direct_post=way)

    engine.Engine.__init__ = init  # type: ignore[method-assign]
    trips = getattr(wb.store, "round_trips", None)
    try:
        with metered(wb.store) as store_calls:  # queries and quad patterns (an embedded store's)
            start = time.perf_counter()
            answer = wb.ask(q.subject_name, q.relation_name, q.object_name)
            took = time.perf_counter() - start
    finally:
        engine.Engine.__init__ = real  # type: ignore[method-assign]
        questions._first_reads = real_first
    n = wb.store.round_trips - trips if trips is not None else len(store_calls)
    return took, n, json.dumps(answer.to_json(), sort_keys=True)


def run(here: Path, worlds: int, *, per_tier: int, repeat: int, seed: int,
        toggle: str = "ahead") -> list[dict[str, Any]]:
    from workbench.service import Workbench
    from workbench.store import RemoteStore

    questions = pick_questions(worlds, per_tier, seed=seed)
    out: list[dict[str, Any]] = []
    with ExitStack() as stack:
        backends: list[tuple[str, Callable[[], Any]]] = [
            ("embedded", lambda: Workbench.open(here / "workbench", user="bench"))]
        if (here / "oxigraph").is_dir():
            url = stack.enter_context(served(here / "oxigraph", here / "ahead-ab-serve.log"))
            backends.append(("remote", lambda: Workbench(RemoteStore(url), user="bench")))
        for backend, opened in backends:
            wb = opened()
            try:
                wb.rules  # noqa: B018 - loaded and tested once, outside any clock
                for tier in TIERS:
                    times: dict[bool, list[float]] = {True: [], False: []}
                    counts: dict[bool, list[int]] = {True: [], False: []}
                    same = True
                    for q in questions[tier]:
                        first = {way: _asked(wb, q, way, toggle) for way in (False, True)}  # untimed: checked, counted
                        same &= first[True][2] == first[False][2]
                        for way in (False, True):
                            counts[way].append(first[way][1])
                        samples: dict[bool, list[float]] = {True: [], False: []}
                        for _ in range(repeat):
                            for way in (False, True):
                                samples[way].append(_asked(wb, q, way, toggle)[0])
                        for way in (False, True):
                            times[way].append(statistics.median(samples[way]))
                    out.append({"backend": backend, "tier": tier, "same": same,
                                "p50_on": statistics.median(times[True]) * 1000,
                                "p50_off": statistics.median(times[False]) * 1000,
                                "calls_on": statistics.mean(counts[True]), "calls_off": statistics.mean(counts[False])})
            finally:
                wb.close()
    return out


def render(rows: Sequence[dict[str, Any]], toggle: str = "ahead") -> str:
    on = {"ahead": "fetching ahead", "kept": "descriptions kept", "first": "first reads sent ahead",
          "post": "queries POSTed directly", "walked": "kinds' edges kept"}[toggle]
    lines = [f"| backend | tier | p50 without (ms) | p50 {on} (ms) | with ÷ without | "
             "store calls (round trips remote), without -> with | same answers |",
             "|---|---|---:|---:|---:|---|---|"]
    for r in rows:
        lines.append(f"| {r['backend']} | {TIERS[r['tier']]} | {r['p50_off']:.2f} | {r['p50_on']:.2f} | "
                     f"{r['p50_on'] / r['p50_off']:.2f}× | {r['calls_off']:.1f} -> {r['calls_on']:.1f} | "
                     f"{'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ahead_ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("here", type=Path, help="WORKDIR/SIZE of a `bench ask --backends remote --workdir` run")
    question_options(parser, repeat=3, repeat_help="timed asks per question and way")
    parser.add_argument("--toggle", choices=("ahead", "kept", "first", "post", "walked"), default="ahead",
                        help="what differs: the walk fetching ahead (default), descriptions kept, "
                             "the first lookups sent with the version check, or queries POSTed directly")
    args = parser.parse_args(argv)
    rows = run(args.here, args.worlds, per_tier=args.questions, repeat=args.repeat, seed=args.seed,
               toggle=args.toggle)
    print(render(rows, args.toggle))
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
