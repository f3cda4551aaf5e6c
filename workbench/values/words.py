"""Answers in words: the summary, then each finding with its reasons, proofs as indented trees.

Sparky needs charging  [derived]
  ← Sparky is a electric car (said by me, chat-2026-02-11#5, 2026-02-11T18:40:00Z)
  + electric car needs charging (common sense, admitted common-sense-v1)
  [rule inherit-kind v1: If X is a K, ...]
"""

from __future__ import annotations

from workbench.values.answers import Answer, Derived, Finding, Recorded


def source(r: Recorded) -> str:
    src = r.source
    if r.admitted or r.record_type == "common_sense":
        return f"common sense, admitted {src.id}"
    where = ", ".join(x for x in (src.id, src.locator, src.captured_at) if x)
    status = "" if r.status == "active" else f", {r.status}"
    return f"said by {src.said_by or 'unknown'}, {where}{status}"


def proof_lines(p: Recorded | Derived, indent: str = "  ", lead: str = "") -> list[str]:
    if isinstance(p, Recorded):
        return [f"{indent}{lead}{p.statement.text} ({source(p)})"]
    lines = [f"{indent}{lead}{p.statement.text} [rule {p.rule} v{p.version}]"]
    for i, premise in enumerate(p.premises):
        lines += proof_lines(premise, indent + "    ", "← " if i == 0 else "+ ")
    for a in p.absences:
        lines.append(f"{indent}    + {a.text} (checked: nothing recorded)")
    return lines


def finding_lines(f: Finding) -> list[str]:
    head = f"- {f.label}" + (f"  ({f.note})" if f.note else "")
    lines = [head]
    for what, value in f.details:
        lines.append(f"    {what}: {value}")
    for p in f.proofs:
        lines += proof_lines(p, "    ")
    return lines


def render(answer: Answer) -> str:
    lines = [f"[{answer.tier.value}] {answer.summary}"]
    if answer.as_of:
        lines.append(f"(as of {answer.as_of})")
    for f in answer.findings:
        lines += finding_lines(f)
    if answer.undated:
        lines.append("Undated, could not be placed:")
        for f in answer.undated:
            lines += finding_lines(f)
    if answer.history:
        lines.append("History:")
        for f in answer.history:
            lines += finding_lines(f)
    rules = sorted({f"{p.rule} v{p.version}: {p.reading}" for f in answer.findings for p in _derived(f)})
    if rules:
        lines.append("Rules used:")
        lines += [f"  {r}" for r in rules]
    if answer.guesses:
        lines.append(f"Model guesses (not facts; {answer.guesses[0].model or 'ranked by similar things'}):")
        for g in answer.guesses:
            like = f"  like {', '.join(g.because)}" if g.because else ""
            lines.append(f"  ? {g.label or g.value}  {g.chance_text()}{like}")
    if answer.incomplete:
        lines.append("Incomplete: the depth bound was reached; there may be more.")
    return "\n".join(lines)


def _derived(f: Finding) -> list[Derived]:
    out: list[Derived] = []
    stack = [p for p in f.proofs if isinstance(p, Derived)]
    while stack:
        d = stack.pop()
        out.append(d)
        stack += [p for p in d.premises if isinstance(p, Derived)]
    return out
