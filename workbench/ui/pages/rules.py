"""Rules: the list with status and version, an editor with highlighting and checks, test cases,
a dry run, proposing for sign-off, and each rule's history with diffs.

The editor is the Ace editor of streamlit-code-editor (Turtle mode; its JavaScript ships in the
wheel, so it works offline), or a plain text box. As you type (after a pause) the text is parsed
and loaded by the service's own rule loader, and problems are marked in the gutter and listed
with line and column; "Check" (Ctrl+Enter in the editor) also runs the rule's test cases. What is
proposed goes to the server, which checks it again and stores a proposed version; a reviewer other
than its author and proposer signs it off on the Sign-off page.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from code_editor import code_editor

from workbench.access.users import Role
from workbench.client import Client
from workbench.errors import WorkbenchError
from workbench.resources import declared_relations
from workbench.review.rulebook import Version
from workbench.ui import rulecheck, ruleview, session
from workbench.ui.common import acting, explain

DRAFT, AREA, BASE, LOADS, RESULT, FLASH = (f"rules.{k}" for k in ("draft", "area", "base", "loads", "result",
                                                                  "flash"))
CHECK_BUTTON = [{"name": "Check", "feather": "CheckCircle", "primary": True, "hasText": True, "showWithIcon": True,
                 "commands": ["submit"], "style": {"bottom": "0.44rem", "right": "0.4rem"}}]


def render() -> None:
    st.title("Rules")
    if not (session.may(Role.CURATOR) or session.may(Role.REVIEWER)):
        st.warning("Editing and proposing rules needs the curator or reviewer role; an admin can add it.")
        return
    client = session.client()
    if FLASH in st.session_state:
        st.success(st.session_state.pop(FLASH), icon=":material/check_circle:")
    rows: list[dict[str, Any]] = []
    with acting():
        rows = client.rule_list()
    _listing(rows)
    ids = sorted({str(r["id"]) for r in rows})
    rule_id = st.selectbox("Rule", ids, key="rules.rule", index=None, placeholder="Choose a rule to edit, test, "
                           "dry-run or read its history")
    stored: list[Version] = []
    if rule_id:
        with acting():
            stored = client.rule_versions(rule_id)
    edit, test, history = st.tabs(["Edit and propose", "Test and dry run", "History"])
    with edit:
        _loaders(client, rule_id, rows, stored)
        _editor(client)
    with test:
        _try(client, rule_id, stored)
    with history:
        _history(client, rule_id, _texts(rule_id, rows, stored) if rule_id else {}, stored)


def _listing(rows: list[dict[str, Any]]) -> None:
    if not rows:
        st.info("No rules yet.")
        return
    table = [{"rule": r["id"], "version": r["version"], "status": r["status"], "answers now": bool(r["answers"]),
              "where": "store" if r["where"] == "store" else "rules directory", "author": r["author"],
              "reads": r.get("reading") or ""} for r in rows]
    st.dataframe(table, hide_index=True, column_config={"answers now": st.column_config.CheckboxColumn()})


# ---------------------------------------------------------------------- the editor


def _load(text: str) -> None:
    """Put ``text`` in the editor (a callback: before the editor's widgets are drawn)."""
    state = st.session_state
    state[DRAFT] = state[BASE] = state[AREA] = text
    state[LOADS] = state.get(LOADS, 0) + 1
    state.pop(RESULT, None)


def _author() -> str:
    who = session.user()
    return who.name if who else "me"


def _loaders(client: Client, rule_id: str | None, rows: list[dict[str, Any]], stored: list[Version]) -> None:
    if DRAFT not in st.session_state:
        _load(rulecheck.TEMPLATE.format(author=_author()))
    cols = st.columns(3)
    cols[0].button("New rule", icon=":material/add:", key="rules.new", on_click=_load,
                   args=(rulecheck.TEMPLATE.format(author=_author()),), help="A template with every part a rule needs.")
    if not rule_id:
        return
    texts = _texts(rule_id, rows, stored)
    if not texts:
        cols[1].caption("The text of this rule cannot be read here.")
        return
    latest = max(texts, key=lambda k: texts[k][0])
    number, text = texts[latest]
    top = max([number, *(int(r["version"]) for r in rows if r["id"] == rule_id)])
    cols[1].button(f"Start version {top + 1}", icon=":material/edit_note:", key="rules.next", type="primary",
                   on_click=_load, args=(rulecheck.next_version(text, rule_id, number, top + 1, _author()),),
                   help=f"{latest} with a new version number, you as its author, and status draft: an edit is a new "
                        "version.")
    chosen = cols[2].selectbox("Open as it is", list(texts), key="rules.open", index=None, placeholder="a version")
    if chosen and st.session_state.get("rules.opened") != chosen:
        st.session_state["rules.opened"] = chosen
        _load(texts[chosen][1])


def _texts(rule_id: str, rows: list[dict[str, Any]], stored: list[Version]) -> dict[str, tuple[int, str]]:
    """Every text of the rule there is, by label: the rules directory's (when readable here), then
    the stored versions, oldest first, as (version, text)."""
    texts: dict[str, tuple[int, str]] = {}
    for row in rows:
        if row["id"] == rule_id and row["where"] != "store":
            text = ruleview.file_text(row)
            if text is not None:
                texts[f"{rule_id} v{row['version']} (rules directory)"] = (int(row["version"]), text)
    texts.update({v.label: (v.version, v.text) for v in stored})
    return texts


@st.fragment
def _editor(client: Client) -> None:
    state = st.session_state
    plain = st.toggle("Plain text box", key="rules.plain", on_change=_flip,
                      help="A plain box instead of the highlighting editor (for screen readers, or no JavaScript).")
    known = _relations(client)
    before = state[DRAFT]
    quick = rulecheck.check(before, known, tests=False)  # as you type: parse and load, no test cases
    marks = rulecheck.gutter_marks(quick.problems)
    submitted = False
    if plain:
        st.text_area("Rule (Turtle)", key=AREA, height=480, help="Ctrl+Enter applies the text and checks it.")
        state[DRAFT] = state[AREA]
    else:
        answer = code_editor(state[BASE], lang="turtle", key=f"rules.ace.{state[LOADS]}", height=[18, 36],
                             response_mode=["debounce", "blur"], buttons=CHECK_BUTTON, focus=False,
                             props={"annotations": marks},
                             options={"wrap": False, "showLineNumbers": True, "tabSize": 4})
        if answer and answer.get("id") and answer["id"] != state.get("rules.ace_id"):
            state["rules.ace_id"] = answer["id"]
            state[DRAFT] = answer["text"]
            submitted = answer.get("type") == "submit"
    if state[DRAFT] != before:
        quick = rulecheck.check(state[DRAFT], known, tests=False)
        if not plain and rulecheck.gutter_marks(quick.problems) != marks:
            st.rerun(scope="fragment")  # once more, to mark the new text's problems in the gutter
    if quick.problems:
        _problems(quick.problems)
    else:
        st.caption(":material/check: Loads as a rule file: " + ", ".join(f"{r.id} v{r.version}" for r in quick.rules))
    left, right = st.columns(2)
    if left.button("Check", icon=":material/fact_check:", key="rules.check", help="Parse, load and run the test "
                   "cases here, before proposing (Ctrl+Enter in the editor).") or submitted:
        state[RESULT] = (state[DRAFT], rulecheck.check(state[DRAFT], known))
    if right.button("Propose for sign-off", icon=":material/send:", key="rules.propose", type="primary"):
        _propose(client, state[DRAFT])
    checked, result = state.get(RESULT, (None, None))
    if result is not None and checked == state[DRAFT]:  # the check of this very text
        if result.problems and not quick.problems:  # a test case's own Turtle
            _problems(result.problems)
        elif not result.problems:
            for rule in result.rules:
                ruleview.cases(rule.label, [c for c in result.cases if c.rule == rule.label])
        with acting():
            _placement(client, result)


def _flip() -> None:
    """Carry the text over when switching between the editor and the plain box."""
    state = st.session_state
    if state["rules.plain"]:
        state[AREA] = state[DRAFT]
    else:
        _load(state.get(AREA, state[DRAFT]))


def _relations(client: Client) -> frozenset[str]:
    """The relations rules may conclude, asked of the server once a session."""
    if "rules.relations" not in st.session_state:
        try:
            st.session_state["rules.relations"] = client.relations()
        except WorkbenchError as exc:  # checking goes on with the ontology's relations, and says so
            st.warning(explain(exc))
            return declared_relations()
    found: frozenset[str] = st.session_state["rules.relations"]
    return found


def _problems(problems: tuple[rulecheck.Problem, ...]) -> None:
    for p in problems:
        st.error(f"**{p.at.capitalize()}**: {p.message}" if p.at else p.message, icon=":material/error:")


def _placement(client: Client, result: rulecheck.Checked) -> None:
    """Warn, before the server refuses, about a version that is not above the stored ones."""
    for rule in result.rules:
        stored = [v.version for v in client.rule_versions(rule.id)]
        shipped = [int(r["version"]) for r in client.rule_list() if r["id"] == rule.id and r["where"] != "store"]
        top = max([*stored, *shipped], default=0)
        if rule.version <= top:
            st.warning(f"Version {rule.version} of {rule.id} exists already: proposing it changes nothing if it says "
                       f"the same, and is refused otherwise. An edit is a new version (v{top + 1}).",
                       icon=":material/filter_1:")


def _propose(client: Client, text: str) -> None:
    local = rulecheck.check(text, _relations(client), tests=False)
    name = f"{local.rules[0].id}.ttl" if local.rules else "rules.ttl"
    try:
        done = client.propose_rule_text(text, name=name)
    except WorkbenchError as exc:
        where = rulecheck.locate(text, exc.message)
        at = f" (line {where[0]}, column {where[1]})" if where else ""
        st.error(explain(exc) + at, icon=":material/error:")
        return
    said = "; ".join(f"{p.id} v{p.version}: " + ("proposed; a reviewer other than you signs it off on the Sign-off page"
                                                  if p.outcome == "proposed" else "stored already with this text, "
                                                  "nothing changed") for p in done)
    st.session_state[FLASH] = said
    st.rerun(scope="app")


# ---------------------------------------------------------------------- tests, dry run, history


def _version_choice(stored: list[Version], key: str) -> int | None:
    if not stored:
        return None
    labels = {f"v{v.version} ({v.status})": v.version for v in stored}
    chosen = st.selectbox("Version", list(labels), index=len(labels) - 1, key=key)
    return labels[chosen] if chosen else None


def _try(client: Client, rule_id: str | None, stored: list[Version]) -> None:
    if not rule_id:
        st.caption("Choose a rule above.")
        return
    version = _version_choice(stored, "rules.try_version")
    if not stored:
        st.caption("No stored version: the test cases run on the rules directory's version; a dry run needs a "
                   "stored (proposed) version.")
    tests, dry = st.columns(2)
    if tests.button("Run the test cases", icon=":material/science:", key="rules.run_tests"):
        with acting():
            label, results = client.run_rule_tests(rule_id, version)
            ruleview.cases(label, results)
    if dry.button("Dry run on this store", icon=":material/preview:", key="rules.dry_run", disabled=not stored):
        with acting(), st.spinner("Asking each subject the rule could reach, with and without it..."):
            ruleview.dry_run(client.dry_run_rule(rule_id, version))


def _history(client: Client, rule_id: str | None, texts: dict[str, tuple[int, str]], stored: list[Version]) -> None:
    if not rule_id:
        st.caption("Choose a rule above.")
        return
    if not stored:
        st.caption(f"{rule_id} has no stored version yet: it lives in the rules directory only.")
        return
    shipped = [label for label in texts if label.endswith("(rules directory)")]
    with acting():
        entries = client.rule_history(rule_id)
        for n, entry in reversed(list(enumerate(entries))):
            v = entry.version
            with st.expander(f"{v.label} · {v.status}", expanded=n == len(entries) - 1):
                st.caption(ruleview.acts(v))
                diff = entry.diff
                if n == 0 and shipped:  # the first stored version, against the rules directory's
                    diff = rulecheck.diff(texts[shipped[0]][1], v.text, shipped[0], v.label)
                st.code(diff or "(the same text as the version before)", language="diff")
    if len(texts) > 1:
        st.markdown("**Compare two versions**")
        labels = list(texts)
        left, right = st.columns(2)
        a = left.selectbox("From", labels, index=len(labels) - 2, key="rules.diff_from")
        b = right.selectbox("To", labels, index=len(labels) - 1, key="rules.diff_to")
        if a and b:
            st.code(rulecheck.diff(texts[a][1], texts[b][1], a, b) or "(the same text)", language="diff")
