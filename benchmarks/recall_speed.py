"""Recall's speed beside the plain vector recipe with the same encoder, in one run, on a memory
of a conversation's size and on one of 100,000 records.

Memory c01 of the development benchmark (two friends, 215 records) with its distractor memory
is the small memory; the large one adds records of the other eight memories, copied as often as
it takes, each copy spoken by people of their own ("Ines 7"), so that the two friends' questions
are asked among 100,000 records. Each question goes through :meth:`Workbench.recall` (names,
scope, ownership, coverage, the gate) and through the plain recipe (encode the question, top 10
by cosine over every record), both after one pass to warm them; p50 and p99 of each, and their
ratio, per size.

    python -m benchmarks recall-speed                       # 250 and 100k records, minilm
    python -m benchmarks recall-speed --records 250 --encoder hashing
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.recall.baseline import PlainRecipe
from workbench.service import Workbench
from workbench.service.evaluation import load_set
from workbench.service.memories import BENCHMARK, _plan

MEMORY = "c01"


def _filler(directory: Path, out: Path, count: int) -> int:
    """Write ``count`` records copied from the memories other than MEMORY and its distractor,
    each copy's people renamed; returns how many were written."""
    plan = _plan(BENCHMARK)
    skip = {MEMORY, plan.get(MEMORY)}
    source = [json.loads(line) for f in sorted(BENCHMARK.glob("c*.jsonl")) if f.stem not in skip
              for line in f.read_text().splitlines()]
    written = 0
    with out.open("w") as fh:
        copy = 0
        while written < count:
            copy += 1
            for r in source:
                if written >= count:
                    break
                rename = {n: f"{n} {copy}" for n in [*r.get("about", []), r["source"].get("said_by", "")] if n}
                copied = {**r, "id": f"{r['id']}-x{copy}", "about": [rename[n] for n in r.get("about", [])],
                          "source": {**r["source"], "id": f"{r['source']['id']}-x{copy}",
                                     "said_by": rename.get(r["source"].get("said_by", ""), "")}}
                if "supersedes" in r:
                    copied["supersedes"] = f"{r['supersedes']}-x{copy}"
                fh.write(json.dumps(copied) + "\n")
                written += 1
    return written


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def run(records: int, encoder: str | None, echo: Callable[[str], Any]) -> dict[str, Any]:
    plan = _plan(BENCHMARK)
    questions = [q for q in load_set(BENCHMARK / "questions.jsonl") if q.memory == MEMORY]
    with tempfile.TemporaryDirectory(prefix="workbench-speed-") as tmp:
        wb = Workbench.open(Path(tmp) / "memory", create=True, user="bench", encoder=encoder)
        try:
            wb.init()
            files = [BENCHMARK / f"{MEMORY}.jsonl", BENCHMARK / f"{plan[MEMORY]}.jsonl"]
            base = sum(len(f.read_text().splitlines()) for f in files)
            if records > base:
                extra = Path(tmp) / "filler.jsonl"
                _filler(BENCHMARK, extra, records - base)
                files.append(extra)
            start = time.perf_counter()
            total = sum(wb.import_files([f]).records_added for f in files)
            index = wb._indexes.records().ready()
            built = time.perf_counter() - start
            plain = PlainRecipe(wb.store, index.encoder, k=10)
            for q in questions:  # warm both: the record cache, the word index, FAISS, the encoder
                wb.recall(q.question, purpose=q.purpose, limit=10)
                plain.search(q.question)
            ours, theirs = [], []
            for q in questions:
                start = time.perf_counter()
                wb.recall(q.question, purpose=q.purpose, limit=10)
                ours.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                plain.search(q.question)
                theirs.append((time.perf_counter() - start) * 1000)
            p50, plain_p50 = statistics.median(ours), statistics.median(theirs)
            row: dict[str, Any] = {
                "records": total, "encoder": index.encoder.name, "questions": len(questions),
                "import_and_index_s": round(built, 1),
                "recall_p50_ms": round(p50, 2), "recall_p99_ms": round(_pct(ours, 99), 2),
                "plain_p50_ms": round(plain_p50, 2), "plain_p99_ms": round(_pct(theirs, 99), 2),
                "ratio_p50": round(p50 / plain_p50, 2)}
            echo(f"{total:>8,} records ({index.encoder.name.split('/')[0]}): recall p50 {row['recall_p50_ms']} ms "
                 f"(p99 {row['recall_p99_ms']}), plain top-10 p50 {row['plain_p50_ms']} ms "
                 f"(p99 {row['plain_p99_ms']}): {row['ratio_p50']}x; import and index {row['import_and_index_s']} s")
            return row
        finally:
            wb.close()


def main(sizes: list[int], encoder: str | None, echo: Callable[[str], Any] = print) -> list[dict[str, Any]]:
    return [run(n, encoder, echo) for n in sizes]
