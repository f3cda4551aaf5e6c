"""The quality half of ``workbench bench recall``: the development set through Workbench's recall
and the plain vector-RAG recipe side by side, in the same run, on the same scratch store and
encoder, plain and with distractors; hit@1/5/10, abstention on no-memory questions, false
abstention, stale records returned and context size. The goal is to beat the plain recipe on
every one of them at once; the table says where it does and where it does not.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.markdown import write_section
from workbench.errors import Unsupported
from workbench.service import evaluation as evaluate
from workbench.service.evaluation import Totals

BEGIN = "<!-- bench recall quality: generated, do not edit by hand -->"
END = "<!-- end bench recall quality -->"
ROWS: tuple[tuple[str, str, bool], ...] = (
    # (label, Totals field, higher is better)
    ("hit@1", "hit_at_1", True),
    ("hit@5", "hit_at_5", True),
    ("hit@10", "hit_at_10", True),
    ("abstention on no-memory questions", "abstention", True),
    ("false abstention (goal < 5%)", "false_abstention", False),
    ("stale records returned", "stale_returned", False),
    ("mean context (characters)", "mean_chars", False),
)


def _fmt(value: float | int | None, field: str) -> str:
    if value is None:
        return "-"
    if field in ("stale_returned",):
        return str(value)
    if field == "mean_chars":
        return f"{value:,.0f}"
    return f"{100 * value:.1f}%"


def _verdict(ours: float | int | None, theirs: float | int | None, higher: bool, field: str) -> str:
    if ours is None or theirs is None:
        return ""
    if field == "false_abstention":  # the plain recipe never abstains: the yardstick is the goal
        return "goal met" if ours < 0.05 else "**goal missed**"
    if ours == theirs:
        return "tie"
    return "better" if (ours > theirs) == higher else "**worse**"


def table(label: str, wb: Totals, plain: Totals) -> list[str]:
    lines = [f"| {label} | Workbench | plain top-10 | Workbench is |", "|---|---:|---:|---|"]
    for name, field, higher in ROWS:
        a, b = getattr(wb, field), getattr(plain, field)
        lines.append(f"| {name} | {_fmt(a, field)} | {_fmt(b, field)} | {_verdict(a, b, higher, field)} |")
    return lines


#: (table label, Workbench's totals, the plain recipe's) for one encoder, plain or with distractors
Compared = tuple[str, Totals, Totals]


def run(encoders: Sequence[str], *, echo: Callable[[str], object], user: str = "bench",
        compared: list[Compared] | None = None) -> list[str]:
    """Markdown lines: for each encoder that can load here, the dev set plain and with distractors
    (the totals also appended to ``compared`` when given)."""
    questions = evaluate.load_set("dev")
    out: list[str] = []
    for spec in encoders:
        try:
            with evaluate.scratch(user, spec) as (wb, _):
                report = evaluate.evaluate(wb, questions, set_name="dev", k=10)
                noisy = evaluate.with_distractors(wb, questions, set_name="dev", k=10)
        except Unsupported as exc:
            echo(f"skipping the {spec} encoder: {exc}")
            continue
        for label, rep in ((f"dev set, `{spec}` encoder ({report.encoder})", report),
                           (f"with {noisy.records} distractor records, `{spec}`", noisy.report)):
            lines = table(label, rep.workbench.totals, rep.plain.totals)
            if compared is not None:
                compared.append((label, rep.workbench.totals, rep.plain.totals))
            echo("\n".join(lines) + "\n")
            out += [*lines, ""]
    return out


def main(encoders: Sequence[str], *, markdown: Path | None, echo: Callable[[str], object]) -> list[Compared]:
    """Run and print the tables (and write them into ``markdown``); returns what was compared."""
    compared: list[Compared] = []
    lines = run(encoders, echo=echo, compared=compared)
    if markdown is None:
        return compared
    d = evaluate.load_set("dev")
    head = [
        f"Command: `workbench bench recall --quality-only --markdown {markdown}` "
        "(also part of every `bench recall` run)  ",
        f"Date: {dt.date.today().isoformat()}",
        "",
        f"The development set (`data/eval/dev.jsonl`: {len(d)} questions, "
        f"{sum(q.no_memory for q in d)} with no memory) on a scratch store with the sample data, each question "
        "through `Workbench.recall` (its purpose's budget, at most 8 records) and through the plain vector-RAG "
        "recipe (every record embedded with the same encoder, top 10 by cosine, never abstains), in the same run. "
        "Then again after importing seeded distractor records (other projects' decisions, half superseded; other "
        "people's facts) with one probe question per generated decision. Per-question tables: `workbench eval dev "
        "[--distractors]`.",
        "",
    ]
    write_section(markdown, "Recall quality", "\n".join(head + lines), begin=BEGIN, end=END)
    return compared
