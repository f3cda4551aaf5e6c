"""Proof trees as Graphviz DOT (workbench/presentation/dot.py): the nodes and edges an answer's proof
has, leaves numbered as the page lists them, labels escaped so that any text stays one label,
and guesses never drawn.

There is no Graphviz here to render the text, so a small reader of the DOT subset proof_dot
writes checks it: every statement is a node or an edge with quoted attributes, every edge joins
declared nodes, and every node hangs from the question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.presentation.dot import leaves, proof_dot, quote
from workbench.service import Workbench
from workbench.values.answers import Absence, Answer, Derived, Finding, Recorded, Statement, Tier
from workbench.values.records import Source

STRING = r'"(?:[^"\\]|\\.)*"'
VALUE = rf"(?:{STRING}|[\w.#-]+)"
ATTRS = re.compile(rf"\s*(\w+)=({VALUE})\s*(?:,|$)")
STATEMENT = re.compile(r"^  (\w+)(?: -> (\w+))? \[(.*)\];$")


def read(dot: str) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, dict[str, str]]]]:
    """Nodes (id -> attributes) and edges (parent, child, attributes) of proof_dot's output;
    fails on anything else. Attribute values come back unescaped."""
    lines = dot.splitlines()
    assert lines[0] == "digraph proof {" and lines[-1] == "}"
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    for line in lines[1:-1]:
        if re.match(r"^  (graph|node|edge) \[", line):
            continue
        m = STATEMENT.match(line)
        assert m, f"not a node or an edge: {line!r}"
        attrs = _attrs(m.group(3))
        if m.group(2):
            edges.append((m.group(1), m.group(2), attrs))
        else:
            assert m.group(1) not in nodes, f"{m.group(1)} declared twice"
            nodes[m.group(1)] = attrs
    for parent, child, _ in edges:
        assert parent in nodes and child in nodes, (parent, child)
    return nodes, edges


def _attrs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = ATTRS.match(text, pos)
        assert m and m.end() > pos, f"bad attributes at {text[pos:]!r}"
        value = m.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", lambda x: "\n" if x.group(1) == "n" else x.group(1), value[1:-1])
        out[m.group(1)] = value
        pos = m.end()
    return out


def reachable(edges: list[tuple[str, str, dict[str, str]]]) -> set[str]:
    below: dict[str, list[str]] = {}
    for parent, child, _ in edges:
        below.setdefault(parent, []).append(child)
    seen, todo = {"q"}, ["q"]
    while todo:
        for child in below.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


@pytest.fixture(scope="module")
def wb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workbench]:
    path: Path = tmp_path_factory.mktemp("graph") / "store"
    with Workbench.open(path, create=True, user="tester") as bench:
        bench.init(sample=True)
        yield bench


def test_a_derived_answer_is_drawn_down_to_its_recorded_leaves(wb: Workbench) -> None:
    answer = wb.ask("my car", "needs", "gas")
    assert answer.tier is Tier.DERIVED
    nodes, edges = read(proof_dot(answer))
    labels = {k: v["label"] for k, v in nodes.items()}
    assert labels["q"].startswith("my car needs gas?\n[derived] Yes")
    assert labels["f1"] == "gasoline"
    assert labels["c1"] == "my car needs gasoline"
    assert labels["r1"].startswith("rule inherit-kind v1\nIf X is a K")
    assert labels["l1"] == "[1] my car is a petrol car\nrecord m-car-1\nsaid by me, chat-2026-01-04#2,\n2026-01-04T09:12:00Z"
    assert labels["l2"].startswith("[2] petrol car needs gasoline\nrecord common-sense-v1\ncommon sense, admitted")
    assert {(p, c) for p, c, _ in edges} == {("q", "f1"), ("f1", "c1"), ("c1", "r1"), ("r1", "l1"), ("r1", "l2")}
    assert all(a["dir"] == "back" for _, _, a in edges)  # arrows run from the support up to what it supports
    assert reachable(edges) == set(nodes)
    assert "k = petrol car" in nodes["r1"]["tooltip"]  # the rule's bindings on hover
    assert [leaf.record for leaf in leaves(answer.findings)] == ["m-car-1", "common-sense-v1"]


def test_a_leaf_two_proofs_share_is_one_node(wb: Workbench) -> None:
    answer = wb.ask("Sparky", "needs")
    nodes, edges = read(proof_dot(answer))
    sparky = [k for k, v in nodes.items() if "record m-sparky-1" in v["label"]]
    assert len(sparky) == 1
    assert sorted(p for p, c, _ in edges if c == sparky[0]) == ["r1", "r2"]  # both rule applications rest on it
    numbered = sorted(int(v["label"][1:v["label"].index("]")]) for k, v in nodes.items() if k.startswith("l"))
    assert numbered == list(range(1, len(leaves(answer.findings)) + 1))


def test_an_absence_a_rule_relied_on_is_a_dashed_node(wb: Workbench) -> None:
    nodes, edges = read(proof_dot(wb.decision("Project Atlas")))
    absent = [k for k in nodes if k.startswith("a")]
    assert len(absent) == 1 and "nothing recorded" in nodes[absent[0]]["label"]
    assert nodes[absent[0]]["style"] == "dashed"
    assert [a.get("style") for p, c, a in edges if c == absent[0]] == ["dashed"]


def test_a_recorded_answer_and_no_evidence(wb: Workbench) -> None:
    nodes, edges = read(proof_dot(wb.ask("my advisor", "teaches at")))
    assert [k for k in nodes if k.startswith(("r", "c"))] == []  # no rule, no derived conclusion
    assert any("record m-advisor" in v["label"] for v in nodes.values())
    nodes, edges = read(proof_dot(wb.ask("Paris Hilton", "located in")))
    assert list(nodes) == ["q"] and edges == []
    assert "[no evidence]" in nodes["q"]["label"]


def test_guesses_are_never_drawn(wb: Workbench, tmp_path: Path) -> None:
    file = tmp_path / "k.jsonl"
    file.write_text(
        '{"id": "m-g1", "statement": "Kettle One is a kettle.", "type": "observation", "about": ["Kettle One"], '
        '"source": {"id": "chat-g1", "said_by": "me"}, "triples": [["Kettle One", "is a", "kettle"]]}\n'
        '{"id": "m-g2", "statement": "Kettle Two makes tea.", "type": "observation", "about": ["Kettle Two"], '
        '"source": {"id": "chat-g2", "said_by": "me"}, "triples": [["Kettle Two", "is a", "kettle"], '
        '["Kettle Two", "used for", "tea"]]}\n', encoding="utf-8")
    wb.import_files([file])
    answer = wb.ask("Kettle One", "used for", guess=True)
    assert answer.tier is Tier.GUESSED and [g.label for g in answer.guesses] == ["tea"]
    nodes, edges = read(proof_dot(answer))
    assert list(nodes) == ["q"] and edges == []  # the summary names the guess; nothing is drawn as evidence


def test_any_text_stays_one_label() -> None:
    nasty = 'a "quoted" \\ back\\slash, \\n not a newline, {braces}; -> [x=y]\nsecond line\r\n\x00\x1b end'
    src = Source("src \"1\"", 'O"Brien', "2026-01-01", "C:\\notes\\a.txt")
    leaf = Recorded(Statement("<s>", "<p>", "<o>", nasty), 'rec"1', "observation", "active", src)
    derived = Derived(Statement("<s>", "<p>", "<o2>", nasty + " too"), 'rule"x', 2, nasty, (("x", nasty),),
                      (leaf,), (Absence("?a <p> ?b", nasty),))
    answer = Answer("ask", nasty, Tier.DERIVED, nasty, (Finding("<o2>", nasty, (derived,), note=nasty),))
    nodes, edges = read(proof_dot(answer))
    assert set(nodes) == {"q", "f1", "c1", "r1", "l1", "a1"}
    flat = {k: v["label"].replace("\n", " ") for k, v in nodes.items()}
    # Words survive (wrapped lines aside); the control characters are spaces.
    assert '"quoted" \\ back\\slash, \\n not a newline, {braces}; -> [x=y]' in flat["l1"]
    assert "\x00" not in flat["l1"] and "\x1b" not in flat["l1"] and "\r" not in flat["l1"]
    assert 'rule rule"x v2' in flat["r1"]
    assert nodes["r1"]["tooltip"] == "x = " + nasty.replace("\r\n", "\n").replace("\x00", " ").replace("\x1b", " ")
    assert 'said by O"Brien, src "1", C:\\notes\\a.txt' in flat["l1"]


def test_quote() -> None:
    assert quote('say "hi"') == '"say \\"hi\\""'
    assert quote("a\\nb") == '"a\\\\nb"'  # a backslash and an n stay that, not a line break
    assert quote("a\nb") == '"a\\nb"'
