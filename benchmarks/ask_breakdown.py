"""Where a question's time goes: ``python -m benchmarks.ask_breakdown STORE_DIR --worlds N``.

Issue 19, part 2. ``bench ask``'s questions (per tier) asked of a store ``bench ask`` built (its
``--workdir``/SIZE/workbench), each once to warm up and then ``--repeat`` times, with no profiler:
the time of each part of ``Workbench.ask`` is read with ``perf_counter`` around it, and every
store call inside a part (a query, or a quad pattern: ``Store.matching``) is charged to that part,
so each part splits into the store's own work (the query and reading its rows) and the Python
around it. Printed in microseconds per question.

The parts: name binding (``answers.binding.bind``), the rules (``rules.engine.Engine.solve``:
premises, closures, negatives riding along), the proofs (``answers.proofs.Prover``: labels,
sources, statements), the rest of ``answers.ask.ask`` (findings and the Answer), and the rest of
``Workbench.ask`` (the relation's name, the version check, the read lock).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.ask import pick_questions, question_options
from benchmarks.ask_results import TIERS

PARTS = ("name binding", "rules", "proofs", "answer", "service")


class Meter:
    """Microseconds charged to the part running now (the innermost one wrapped), split into the
    store's calls and the rest."""

    def __init__(self) -> None:
        self.stack: list[str] = ["service"]
        self.total: dict[str, float] = defaultdict(float)  # part -> seconds inside it, its inner parts excluded
        self.store: dict[str, float] = defaultdict(float)  # part -> seconds in store calls
        self.calls: dict[str, int] = defaultdict(int)

    def part(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            outer = self.stack[-1]
            self.stack.append(name)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.perf_counter() - start
                self.stack.pop()
                self.total[name] += took
                self.total[outer] -= took
        return wrapped

    def store_call(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.store[self.stack[-1]] += time.perf_counter() - start
                self.calls[self.stack[-1]] += 1
        return wrapped


@contextmanager
def instrument(meter: Meter) -> Iterator[None]:
    """Wrap the parts and the store's reads (this process only), and put them back after."""
    from workbench.answers import ask as answers_ask
    from workbench.answers import binding, proofs
    from workbench.rules import engine
    from workbench.store.pyox import PyoxStore

    wrapped = [(binding, "bind", "name binding"), (engine.Engine, "solve", "rules"),
               (proofs.Prover, "__init__", "proofs"), (proofs.Prover, "proof", "proofs"),
               (answers_ask, "ask", "answer")]
    reads = [(PyoxStore, name, "") for name in ("select", "ask", "construct", "matching")]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in wrapped + reads]
    for owner, name, part in wrapped:
        setattr(owner, name, meter.part(part, getattr(owner, name)))
    for owner, name, _ in reads:
        setattr(owner, name, meter.store_call(getattr(owner, name)))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def run(store_dir: Path, n_worlds: int, *, per_tier: int, repeat: int, seed: int) -> dict[str, dict[str, Any]]:
    from workbench.service import Workbench

    questions = pick_questions(n_worlds, per_tier, seed=seed)
    wb = Workbench.open(store_dir, user="bench")
    meter = Meter()
    try:
        for q in questions["recorded"][:5]:
            wb.ask(q.subject_name, q.relation_name, q.object_name)  # rules, labels and indexes loaded
        with instrument(meter):
            found = _measure(wb, questions, meter, repeat)
    finally:
        wb.close()
    return found


def _measure(wb: Any, questions: dict[str, Any], meter: Meter, repeat: int) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for tier in TIERS:
        meter.total.clear()
        meter.store.clear()
        meter.calls.clear()
        asks = 0
        start = time.perf_counter()
        for _ in range(repeat):
            for q in questions[tier]:
                wb.ask(q.subject_name, q.relation_name, q.object_name)
                asks += 1
        whole = time.perf_counter() - start
        found[tier] = {"us": whole / asks * 1e6, "parts": {
            p: {"us": meter.total[p] / asks * 1e6, "store_us": meter.store[p] / asks * 1e6,
                "store_calls": meter.calls[p] / asks} for p in PARTS}}
        found[tier]["parts"]["service"]["us"] += whole / asks * 1e6  # the outermost part: all not inside
    return found


def render(found: dict[str, dict[str, Any]]) -> str:
    lines = ["| tier | whole (µs) | " + " | ".join(f"{p}: store / Python (µs)" for p in PARTS) + " | store calls |",
             "|---|---:|" + "---:|" * len(PARTS) + "---:|"]
    for tier, row in found.items():
        parts = row["parts"]
        cells = [f"{parts[p]['store_us']:,.0f} / {parts[p]['us'] - parts[p]['store_us']:,.0f}" for p in PARTS]
        calls = sum(parts[p]["store_calls"] for p in PARTS)
        lines.append(f"| {TIERS[tier]} | {row['us']:,.0f} | " + " | ".join(cells) + f" | {calls:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ask_breakdown", description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path, help="a store `bench ask` built: WORKDIR/SIZE/workbench")
    question_options(parser, repeat=5, repeat_help="passes over them")
    args = parser.parse_args(argv)
    print(render(run(args.store, args.worlds, per_tier=args.questions, repeat=args.repeat, seed=args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
