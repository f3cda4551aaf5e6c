"""The ``eval`` command: run a question set through recall and the plain vector-RAG recipe and
print a table a person can read at a glance (or the whole report as JSON)."""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

import click

from workbench.cli import Context, _emit, _progress, main
from workbench.errors import WorkbenchError
from workbench.service import Workbench, default_user, memories
from workbench.service import evaluation as ev

BAR = 20


@main.command("eval")
@click.argument("set_name", metavar="SET")
@click.option("--distractors", is_flag=True, help="Also rerun on a scratch store with generated distractor records.")
@click.option("--scenario", is_flag=True, help="Also run the supersession scenario on a scratch store.")
@click.option("--k", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many records the plain recipe returns.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_obj
def evaluate(ctx: Context, set_name: str, distractors: bool, scenario: bool, k: int, as_json: bool) -> None:
    """Evaluate recall on SET: a JSON Lines question set over this store (`dev` is
    data/eval/dev.jsonl, over the sample data), or a benchmark of many memories
    (`conversations` is data/eval/conversations), each in a scratch store of its own.

    Each question goes through `workbench recall` and through the plain recipe (top K by cosine
    over every record, never abstaining; on a benchmark also with a similarity floor tuned in
    the same run). The store is only read; --distractors and --scenario work on scratch stores
    with the sample data.

    \b
    Examples:
      workbench init --sample && workbench eval dev
      workbench eval dev --distractors --scenario
      workbench eval my-questions.jsonl --k 5 --json
      workbench eval conversations            # hit@k, "no memory" by kind, calibration, p50
      workbench eval guesses                  # the guesser: hit@1/5, reliability, calibration error

    `guesses` is not a question set: it prints how the guesser's stated chances held on the
    store's own held-out subjects (see `workbench guesses train`).
    """
    try:
        if set_name == "guesses":
            with ctx.open() as wb:
                meta = wb.seen_by(ctx.reader).guess_report(progress=_progress)
            if as_json:
                _emit({k: v for k, v in meta.items() if k != "up"})
            else:
                click.echo("\n".join(guess_lines(meta)))
            return
        bench = memories.benchmark_path(set_name)
        if bench is not None:
            report = memories.evaluate(ctx.user or default_user(), ctx.encoder, bench, k=k)
            if as_json:
                _emit(report.to_json())
            else:
                click.echo("\n".join(benchmark_lines(report)))
            return
        with ctx.open() as wb:
            _one_set(wb.seen_by(ctx.reader), set_name, distractors, scenario, k, as_json)
    except WorkbenchError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def _one_set(wb: Workbench, set_name: str, distractors: bool, scenario: bool, k: int, as_json: bool) -> None:
    path = ev.set_path(set_name)
    questions = ev.load_set(path)
    report = ev.evaluate(wb, questions, set_name=str(path), k=k)
    noisy = ev.with_distractors(wb, questions, set_name=str(path), k=k) if distractors else None
    spec = ev.encoder_spec(wb)
    check = ev.supersession_scenario(wb.user, spec) if scenario else None
    if as_json:
        data: dict[str, Any] = report.to_json()
        if noisy:
            data["distractors"] = noisy.to_json()
        if check:
            data["scenario"] = check.to_json()
        _emit(data)
        return
    t = report.workbench.totals
    click.echo(f"{path}: {t.questions} questions ({t.answerable} answerable, {t.no_memory} no memory); "
               f"encoder {report.encoder}\n")
    click.echo("\n".join(table(report)))
    click.echo("\n" + "\n".join(totals(report)))
    click.echo("\n".join(problems(report.workbench)))
    if noisy:
        click.echo(f"\nwith distractors: the sample data plus {noisy.records} generated records ({noisy.superseded} "
                   f"superseded; seed {noisy.seed}) on a scratch store; the set plus {noisy.probes} probe questions "
                   "about the generated decisions (x-q..)\n")
        click.echo("\n".join(totals(noisy.report)))
        click.echo("  scoping holds: " + ("yes: no bundle scoped by a name holds a distractor about another entity"
                   if noisy.scoping_holds else f"NO: {len(noisy.leaks)} distractors about other entities in scoped "
                   "bundles") + "".join(f"\n    leak: {q} got {d}" for q, d in noisy.leaks))
        stale = noisy.report.workbench.totals.stale_returned
        click.echo("  supersession holds: " + ("yes: no superseded record came back" if noisy.supersession_holds
                   else f"NO: {stale} superseded record{'s' if stale != 1 else ''} came back (listed below)"))
        for o in noisy.report.workbench.outcomes:
            if o.distractors and o.tier != "recorded":
                click.echo(f"  {o.id} ({o.tier}) returned distractors: {', '.join(o.distractors)}")
        click.echo("\n".join(problems(noisy.report.workbench)))
    if check:
        click.echo(f"\nsupersession scenario: {'PASS' if check.passed else 'FAIL'}")
        for s in check.steps:
            click.echo(f"  {'ok  ' if s.passed else 'FAIL'} {s.name}: expected {s.expected}; "
                       f"got {', '.join(s.got) or 'nothing'}")


def _fit(text: str, width: int) -> str:
    """Cut or pad to a width in terminal columns (CJK characters take two)."""
    out, used = "", 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used + w > width - (1 if len(text) > len(out) + 1 else 0):
            return out + "…" + " " * (width - used - 1)
        out, used = out + ch, used + w
    return out + " " * (width - used)


def _rank(o: ev.Outcome) -> str:
    return "-" if o.no_memory else (str(o.rank) if o.rank else "miss")


def table(report: ev.Report) -> list[str]:
    """One row per question, Workbench and the plain recipe side by side."""
    lines = [f"{'':4} {'':42} {'workbench':<36} {report.plain.system}",
             f"{'id':4} {'question':42} {'tier':<9} {'rank':>4} {'abst':>4} {'stale':>5} {'chars':>5} {'':4}"
             f" {'rank':>4} {'stale':>5} {'chars':>5}"]
    for w, p in zip(report.workbench.outcomes, report.plain.outcomes, strict=True):
        lines.append(f"{w.id:4} {_fit(w.question, 42)} {w.tier:<9} {_rank(w):>4} {'yes' if w.abstained else 'no':>4} "
                     f"{len(w.stale):>5} {w.chars:>5} {'ok' if w.ok else 'FAIL':4} {_rank(p):>4} {len(p.stale):>5} "
                     f"{p.chars:>5} {'ok' if p.ok else 'FAIL'}")
    return lines


def _bar(rate: float | None) -> str:
    if rate is None:
        return f"{'':{BAR}}  n/a"
    full = round(rate * BAR)
    return "█" * full + "░" * (BAR - full) + f" {rate:4.0%}"


def totals(report: ev.Report) -> list[str]:
    """The totals of both systems side by side, rates as bars."""
    runs: Sequence[ev.Run] = (report.workbench, report.plain)
    t = report.workbench.totals
    rows: list[tuple[str, list[str]]] = [
        (f"hit@1  ({t.answerable} answerable)", [_bar(r.totals.hit_at_1) for r in runs]),
        ("hit@5", [_bar(r.totals.hit_at_5) for r in runs]),
        ("hit@10", [_bar(r.totals.hit_at_10) for r in runs]),
        (f"abstained ({t.no_memory} no memory)", [_bar(r.totals.abstention) for r in runs]),
        ("false abstention (goal < 5%)", [_bar(r.totals.false_abstention) for r in runs]),
        ("stale records returned", [f"{r.totals.stale_returned:>{BAR + 5}}" for r in runs]),
        ("unrelated records / question", [f"{r.totals.mean_unrelated:>{BAR + 5}.1f}" for r in runs]),
        ("mean context chars", [f"{r.totals.mean_chars:>{BAR + 5}.0f}" for r in runs]),
    ]
    if any(r.totals.distractors_returned for r in runs):
        rows.append(("distractors returned", [f"{r.totals.distractors_returned:>{BAR + 5}}" for r in runs]))
    lines = [f"{'totals':30} {'workbench':<{BAR + 9}} {report.plain.system}"]
    lines += [f"{label:30} {cells[0]:<{BAR + 9}} {cells[1]}" for label, cells in rows]
    return lines


def problems(run: ev.Run) -> list[str]:
    """What Workbench got wrong, with what came back, for whoever tunes recall."""
    out = []
    for o in run.outcomes:
        got = f"got {', '.join(o.returned)} ({o.tier})" if o.returned else "got no memory"
        if o.no_memory and not o.abstained:
            out.append(f"  {o.id} answered a no-memory question: {got}  | {o.question}")
        elif not o.no_memory and not o.hit:
            out.append(f"  {o.id} {'false abstention' if o.abstained else 'miss'}: {got}  | {o.question}")
        if o.stale:
            out.append(f"  {o.id} returned stale records: {', '.join(o.stale)}  | {o.question}")
    return ["\nworkbench got wrong:", *out] if out else []


def benchmark_lines(report: memories.MemoriesReport) -> list[str]:
    """The benchmark's figures, each system side by side: hit@k, "no memory" by kind, false
    abstention, other people's and stale records, context size, p50; then the gate's calibration."""
    systems = report.systems
    width = 24
    out = [f"{report.benchmark}: {report.memories} memories, {report.records} records, "
           f"{systems[0].totals.questions} questions; encoder {report.encoder}; k {report.k}", "",
           f"{'':34}" + "".join(f"{s.name[:width - 1]:<{width}}" for s in systems)]

    def row(label: str, cells: Sequence[Any]) -> None:
        out.append(f"{label:34}" + "".join(f"{c:<{width}}" for c in cells))

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1%}"

    t = [s.totals for s in systems]
    row(f"hit@1 ({t[0].answerable} answerable)", [pct(x.hit_at_1) for x in t])
    row("hit@5", [pct(x.hit_at_5) for x in t])
    row("hit@10", [pct(x.hit_at_10) for x in t])
    kinds = [s.by_kind() for s in systems]
    for kind in kinds[0]:
        stat = "no_memory" if "no_memory" in kinds[0][kind] else "hit_at_5"
        label = f"  {kind} ({kinds[0][kind]['questions']}): " + ("no memory" if stat == "no_memory" else "hit@5")
        row(label, [pct(k[kind][stat]) for k in kinds])
    row(f"no memory ({t[0].no_memory} no-memory questions)", [pct(x.abstention) for x in t])
    row("false abstention (goal <= 5%)", [pct(x.false_abstention) for x in t])
    row("others' records in the top 5", [s.others_in_top5 for s in systems])
    row("stale records returned", [x.stale_returned for x in t])
    row("mean context chars", [f"{x.mean_chars:.0f}" for x in t])
    row("recall p50 (ms)", [f"{s.p50_ms:.1f}" for s in systems])
    out += ["", f"the gate's calibration over {sum(r['questions'] for r in report.reliability)} bundles it "
                f"judged (expected calibration error {report.ece}):"]
    out += [f"  stated {r['from']:.1f}-{r['to']:.1f}: {r['questions']:4} bundles, mean stated {r['stated']:.2f}, "
            f"held the answer {r['held']:.2f}" for r in report.reliability]
    return out


def guess_lines(meta: dict[str, Any]) -> list[str]:
    """What the guesser learned from and how its stated chances held, for a person to read."""
    cal = meta.get("calibration") or {}
    lines = [f"guesser {meta.get('version')}: learned from {meta.get('subjects', 0):,} subjects "
             f"({meta.get('kinds_known', 0):,} kinds, {meta.get('features', 0):,} features) at store "
             f"version {meta.get('fingerprint')}",
             f"  held out for measuring: {meta.get('held_out_subjects', 0):,} subjects; seconds: "
             + ", ".join(f"{k} {v}" for k, v in (meta.get("seconds") or {}).items()), "",
             "task            asked  no basis  hit@1   hit@5"]
    for task, t in (cal.get("tasks") or {}).items():
        hit1 = "  n/a" if t["hit1"] is None else f"{t['hit1']:6.1%}"
        hit5 = "  n/a" if t["hit5"] is None else f"{t['hit5']:6.1%}"
        lines.append(f"{task:<15} {t['asked']:>5}  {t['no_basis']:>8}  {hit1}  {hit5}")
    for fam, f in (cal.get("families") or {}).items():
        lines.append("")
        if not f.get("map"):
            lines.append(f"{fam} guesses: chance not measured ({f.get('cases', 0)} held-out cases; "
                         "at least 50 are needed): guesses say so")
            continue
        lines.append(f"{fam} guesses: stated chance against the share right, out of fold "
                     f"({f['cases']:,} cases; expected calibration error {f['ece']:.3f})")
        lines.append("  stated     cases  mean stated  right")
        for r in f["reliability"]:
            lines.append(f"  {r['from']:.1f}-{r['to']:.1f} {r['cases']:>9,}  {r['stated']:11.3f}  {r['right']:.3f}  "
                         + "#" * round(BAR * r["right"]))
    return lines
