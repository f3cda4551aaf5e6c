"""Proof trees as a graph: Graphviz DOT text for an answer, drawn by whoever holds Graphviz (the
browser workbench draws it with ``st.graphviz_chart``). Pure string building: nothing to import.

The graph reads top down: the question with its tier, each finding (a value of the answer), and
below a finding its proofs. A derived conclusion is drawn as the statement, the rule application
that drew it (rule id, version and reading) and that rule's premises; a recorded leaf as what
the record says, its id and its source (who said it, where, when); an absence a rule relied on
as a dashed box. Arrows run from what supports to what it supports. A leaf or a conclusion that
several proofs share is one node. Recorded leaves are numbered ``[1]``, ``[2]``... in the order
of :func:`leaves`, so that a page can list their sources under the same numbers.

Model guesses are never drawn: they are not evidence and are shown apart from the proof.

>>> from workbench.values.answers import Answer, Tier
>>> print(proof_dot(Answer("ask", 'Is "x" y?', Tier.NO_EVIDENCE, "No evidence.")))  # doctest: +ELLIPSIS
digraph proof {
...
  q [label="Is \\"x\\" y?\\n[no evidence] No evidence.", ...];
}
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from workbench.values.answers import Absence, Answer, Derived, Finding, Recorded

# Tier -> (words, fill colour, border colour), the colours the workbench's badges use.
TIER_STYLE = {
    "recorded": ("recorded", "#e8f5e9", "#2e7d32"),
    "derived": ("derived", "#e3f2fd", "#1565c0"),
    "guessed": ("model guess", "#fff3e0", "#ef6c00"),
    "no_evidence": ("no evidence", "#f5f5f5", "#757575"),
    "ambiguous": ("ambiguous", "#f3e5f5", "#6a1b9a"),
    "conflicting": ("conflicting", "#ffebee", "#c62828"),
    "unknown_entity": ("unknown name", "#f5f5f5", "#757575"),
}
RULE_STYLE = 'shape=box, style="rounded,filled", fillcolor="#fff8e1", color="#f9a825"'
LEAF_STYLE = 'shape=note, style=filled, fillcolor="#ffffff", color="#2e7d32"'
COMMON_SENSE_STYLE = 'shape=note, style=filled, fillcolor="#f1f8e9", color="#689f38"'
ABSENCE_STYLE = 'shape=box, style="dashed", color="#757575", fontcolor="#424242"'
WIDTH = 40  # characters per label line


def quote(text: str) -> str:
    """``text`` as a DOT quoted string (a label): backslashes and quotes escaped, line breaks as
    ``\\n``, other control characters as spaces.

    >>> print(quote('say "hi"\\\\ now\\nthen'))
    "say \\"hi\\"\\\\ now\\nthen"
    """
    text = text.replace("\r\n", "\n")
    text = "".join(ch if ch >= " " or ch == "\n" else " " for ch in text)
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def wrap(text: str, width: int = WIDTH) -> str:
    """``text`` broken into lines of at most ``width`` characters (long words are kept whole)."""
    lines = []
    for paragraph in text.splitlines() or [""]:
        lines += textwrap.wrap(paragraph, width, break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join(lines)


def where(leaf: Recorded) -> str:
    """A recorded leaf's source in a few words: who said it, where, when (or the admitted pack)."""
    src = leaf.source
    if leaf.admitted or leaf.record_type == "common_sense":
        return f"common sense, admitted {src.id}"
    parts = [f"said by {src.said_by or 'unknown'}", src.id, src.locator, src.captured_at]
    status = "" if leaf.status == "active" else f" ({leaf.status})"
    return ", ".join(p for p in parts if p) + status


def leaves(findings: Iterable[Finding]) -> list[Recorded]:
    """The recorded leaves of the findings' proofs, each once, depth first: the numbering of
    :func:`proof_dot`."""
    seen: dict[Recorded, None] = {}

    def walk(p: Recorded | Derived) -> None:
        if isinstance(p, Recorded):
            seen.setdefault(p, None)
        else:
            for q in p.premises:
                walk(q)

    for f in findings:
        for p in f.proofs:
            walk(p)
    return list(seen)


def has_proofs(answer: Answer) -> bool:
    """Whether there is a proof tree to draw (any finding with a proof)."""
    return any(f.proofs for f in answer.findings)


class _Graph:
    """Nodes and edges in the order they were first met; shared proofs are one node."""

    def __init__(self, numbers: dict[Recorded, int]) -> None:
        self.lines: list[str] = []
        self.ids: dict[object, str] = {}
        self.edges: set[tuple[str, str]] = set()
        self.counts: dict[str, int] = {}
        self.numbers = numbers

    def node(self, key: object, prefix: str, label: str, style: str, tooltip: str = "") -> tuple[str, bool]:
        """The id of ``key``'s node, and whether it is new (its node line written now)."""
        found = self.ids.get(key)
        if found is not None:
            return found, False
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        node_id = f"{prefix}{self.counts[prefix]}"
        self.ids[key] = node_id
        extra = f", tooltip={quote(tooltip)}" if tooltip else ""
        self.lines.append(f"  {node_id} [label={quote(label)}, {style}{extra}];")
        return node_id, True

    def edge(self, parent: str, child: str, style: str = "") -> None:
        """An arrow drawn from ``child`` (the support) to ``parent`` (what it supports); laid
        out with the parent above."""
        if (parent, child) in self.edges:
            return
        self.edges.add((parent, child))
        extra = f", {style}" if style else ""
        self.lines.append(f"  {parent} -> {child} [dir=back{extra}];")

    def proof(self, p: Recorded | Derived) -> str:
        if isinstance(p, Recorded):
            n = self.numbers[p]
            label = f"[{n}] {wrap(p.statement.text)}\nrecord {p.record}\n{wrap(where(p))}"
            style = COMMON_SENSE_STYLE if p.admitted or p.record_type == "common_sense" else LEAF_STYLE
            node_id, _ = self.node(p, "l", label, style, tooltip=f"{p.statement.text} ({where(p)})")
            return node_id
        fill, border = TIER_STYLE["derived"][1:]
        conclusion, new = self.node(p, "c", wrap(p.statement.text),
                                    f'shape=ellipse, style=filled, fillcolor="{fill}", color="{border}"')
        if not new:
            return conclusion
        rule, _ = self.node(("rule", p), "r", f"rule {p.rule} v{p.version}\n{wrap(p.reading)}", RULE_STYLE,
                            tooltip=_bindings(p))
        self.edge(conclusion, rule, 'label="derives", fontsize=9, color="#1565c0"')
        for premise in p.premises:
            self.edge(rule, self.proof(premise))
        for absence in p.absences:
            self.edge(rule, self.absence(absence), "style=dashed")
        return conclusion

    def absence(self, a: Absence) -> str:
        node_id, _ = self.node(("absence", a), "a", f"{wrap(a.text)}\n(checked: nothing recorded)", ABSENCE_STYLE,
                               tooltip=a.pattern)
        return node_id


def _bindings(p: Derived) -> str:
    return "; ".join(f"{k} = {v}" for k, v in p.bindings)


def _finding_style(f: Finding, tier: str) -> str:
    if f.negated:
        fill, border = TIER_STYLE["conflicting"][1:]
    else:
        fill, border = TIER_STYLE.get(tier, TIER_STYLE["no_evidence"])[1:]
    return f'shape=box, style="rounded,filled,bold", fillcolor="{fill}", color="{border}"'


def proof_dot(answer: Answer) -> str:
    """The answer's proof tree as Graphviz DOT text (see the module's docstring)."""
    tier = answer.tier.value
    words, fill, border = TIER_STYLE.get(tier, (tier.replace("_", " "), "#f5f5f5", "#757575"))
    numbers = {leaf: i for i, leaf in enumerate(leaves(answer.findings), 1)}
    graph = _Graph(numbers)
    head = f"{wrap(answer.question, 60)}\n[{words}] {wrap(answer.summary, 60)}"
    if answer.as_of:
        head += f"\n(as of {answer.as_of})"
    graph.lines.append(
        f'  q [label={quote(head)}, shape=box, style="rounded,filled,bold", fillcolor="{fill}", color="{border}"];'
    )
    for i, f in enumerate(answer.findings, 1):
        label = ("not: " if f.negated else "") + wrap(f.label) + (f"\n({wrap(f.note)})" if f.note else "")
        finding = f"f{i}"
        graph.lines.append(f"  {finding} [label={quote(label)}, {_finding_style(f, tier)}];")
        graph.edge("q", finding)
        for p in f.proofs:
            graph.edge(finding, graph.proof(p))
    return "\n".join([
        "digraph proof {",
        '  graph [rankdir=TB, nodesep=0.3, ranksep=0.45, fontname="Helvetica"];',
        '  node [fontname="Helvetica", fontsize=11, margin="0.15,0.08"];',
        '  edge [color="#616161", arrowsize=0.7];',
        *graph.lines,
        "}",
    ])
