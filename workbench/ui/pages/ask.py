"""Ask: a question about a thing (subject, relation, and an object for a yes/no question), a count,
a current state, the decision that governs a scope, or a question in words (recall).

Each kind has its own tab and keeps its last answer for the session, so one can go back and
forth. The answer shows its tier as a badge, the proof tree as a graph with each record's source
one click away, and model guesses apart (:mod:`workbench.ui.answerview`).
"""

from __future__ import annotations

import datetime as dt

import streamlit as st

from workbench.recall.bundles import Bundle
from workbench.ui import session
from workbench.ui.answerview import show_answer, show_bundle
from workbench.ui.common import acting
from workbench.values.answers import Answer

KEY = "ask"
EXAMPLES = ('"my car" needs gas · Sparky needs · me "advisor\'s university" · "Paris Hilton" "located in"')


def render() -> None:
    st.title("Ask")
    st.caption("Every answer says how it knows: recorded, derived (with its reasons), a model guess, "
               "or no evidence.")
    tabs = st.tabs(["Question", "Count", "Current state", "Decision", "In words"])
    with tabs[0]:
        _question()
    with tabs[1]:
        _count()
    with tabs[2]:
        _current()
    with tabs[3]:
        _decision()
    with tabs[4]:
        _recall()


def _day(value: dt.date | None) -> str | None:
    return value.isoformat() if value else None


def _as_of(key: str) -> dt.date | None:
    found: dt.date | None = st.date_input("As of (optional)", value=None, key=key, format="YYYY-MM-DD",
                                          help="What was effective then. Empty: now.")
    return found


def _keep(name: str, found: Answer | Bundle | None) -> None:
    if found is not None:
        st.session_state[f"{KEY}.{name}.result"] = found


def _answer(name: str) -> None:
    found = st.session_state.get(f"{KEY}.{name}.result")
    if isinstance(found, Answer):
        show_answer(found, f"{KEY}.{name}")


def _question() -> None:
    with st.form(f"{KEY}.question"):
        left, middle, right = st.columns(3)
        subject = left.text_input("Subject", key=f"{KEY}.subject", placeholder="my car",
                                  help="A name or a registered alias.")
        relation = middle.text_input("Relation", key=f"{KEY}.relation", placeholder="needs",
                                     help="As people say it: is a, needs, used for, located in...")
        obj = right.text_input("Object (optional)", key=f"{KEY}.object", placeholder="gas",
                               help="Give one to ask yes or no.")
        left, right = st.columns(2)
        with left:
            as_of = _as_of(f"{KEY}.question.as_of")
        with right:
            guess = st.toggle("Guess for genuine gaps", key=f"{KEY}.guess",
                              help="When nothing is recorded or derivable, rank model guesses from "
                                   "similar things. They are shown apart and are never facts.")
        asked = st.form_submit_button("Ask", type="primary", icon=":material/search:")
    st.caption(f"Examples: {EXAMPLES}")
    if asked:
        if not subject.strip() or not relation.strip():
            st.warning("Give a subject and a relation.")
        else:
            with acting():
                _keep("question", session.client().ask(subject.strip(), relation.strip(), obj.strip() or None,
                                                       as_of=_day(as_of), guess=guess))
    _answer("question")


def _count() -> None:
    with st.form(f"{KEY}.count"):
        left, right = st.columns(2)
        event_type = left.text_input("Kind of event", key=f"{KEY}.event_type", placeholder="wedding")
        about = right.text_input("About (optional)", key=f"{KEY}.about", placeholder="me")
        year_col, start_col, end_col, as_of_col = st.columns(4)
        year = year_col.text_input("Year (optional)", key=f"{KEY}.year", placeholder="2026 or this",
                                   help="A year, or 'this' for this year. Or give a period instead.")
        with start_col:
            start: dt.date | None = st.date_input("From (optional)", value=None, key=f"{KEY}.from",
                                                  format="YYYY-MM-DD")
        with end_col:
            end: dt.date | None = st.date_input("To (optional)", value=None, key=f"{KEY}.to", format="YYYY-MM-DD")
        with as_of_col:
            as_of = _as_of(f"{KEY}.count.as_of")
        asked = st.form_submit_button("Count", type="primary", icon=":material/functions:")
    st.caption("Counted by code over the records. Events with no date cannot be placed in a period: "
               "the answer then says \"at least\".")
    if asked:
        if not event_type.strip():
            st.warning("Give a kind of event, such as wedding.")
        else:
            with acting():
                _keep("count", session.client().count(event_type.strip(), about=about.strip() or None,
                                                      year=year.strip() or None, start=_day(start), end=_day(end),
                                                      as_of=_day(as_of)))
    _answer("count")


def _current() -> None:
    with st.form(f"{KEY}.current"):
        left, middle, right = st.columns(3)
        subject = left.text_input("Subject", key=f"{KEY}.current.subject", placeholder="me")
        state = middle.text_input("State", key=f"{KEY}.state", placeholder="weight")
        with right:
            as_of = _as_of(f"{KEY}.current.as_of")
        asked = st.form_submit_button("Show the current value", type="primary", icon=":material/update:")
    st.caption("The latest logged value, with every earlier one in the history.")
    if asked:
        if not subject.strip() or not state.strip():
            st.warning("Give a subject and a state.")
        else:
            with acting():
                _keep("current", session.client().current(subject.strip(), state.strip(), as_of=_day(as_of)))
    _answer("current")


def _decision() -> None:
    with st.form(f"{KEY}.decision"):
        left, right = st.columns(2)
        scope = left.text_input("Scope", key=f"{KEY}.scope", placeholder="Project Atlas",
                                help="What a decision applies to: a project, a team...")
        with right:
            as_of = _as_of(f"{KEY}.decision.as_of")
        asked = st.form_submit_button("Show the decision", type="primary", icon=":material/gavel:")
    st.caption("The decision that governs now (or then), who decided it, why, and what it replaced.")
    if asked:
        if not scope.strip():
            st.warning("Give a scope, such as Project Atlas.")
        else:
            with acting():
                _keep("decision", session.client().decision(scope.strip(), as_of=_day(as_of)))
    _answer("decision")


def _recall() -> None:
    pending = st.session_state.pop(f"{KEY}.recall.next", None)
    if pending:  # a did-you-mean the person picked: put it in the box before the box is drawn
        st.session_state[f"{KEY}.text"] = pending
    with st.form(f"{KEY}.recall"):
        text = st.text_area("Your question", key=f"{KEY}.text", height=80,
                            placeholder="What does Ravi work on?")
        purpose = st.segmented_control(
            "What for", ["default", "writing", "decision"], default="default", key=f"{KEY}.purpose",
            format_func=lambda p: {"default": "general", "writing": "writing (more, shorter)",
                                   "decision": "a decision (few, exact)"}[p],
            help="Sets how many records and how much text come back.")
        asked = st.form_submit_button("Recall", type="primary", icon=":material/psychology:")
    st.caption("Names in the question bind exactly to what is recorded; similarity only ranks. "
               "Nothing that bears on it: \"no memory\".")
    if (asked or pending) and (text or "").strip():
        with acting():
            _keep("recall", session.client().recall(text.strip(), purpose=str(purpose or "default")))
    elif asked:
        st.warning("Write a question.")
    found = st.session_state.get(f"{KEY}.recall.result")
    if isinstance(found, Bundle):
        chosen = show_bundle(found, f"{KEY}.recall")
        if chosen:
            st.session_state[f"{KEY}.recall.next"] = chosen
            st.rerun()
