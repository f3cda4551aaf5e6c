"""Answers and recall bundles on a page: the tier as a badge, the summary, the values, the proof
tree drawn as a graph, each recorded leaf's source one click away, and model guesses apart.

Every widget takes a ``key`` prefix so that several answers can stand on one page (the Ask page
keeps one per kind of question). Full records are fetched only when someone asks to see one,
and kept for the session (``st.session_state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from workbench.presentation.dot import has_proofs, leaves, proof_dot, where
from workbench.recall.bundles import Bundle, Memory
from workbench.ui import session
from workbench.ui.common import acting, tier_badge
from workbench.ui.md import md
from workbench.values.answers import Answer, Finding, Recorded
from workbench.values.guesses import Guess
from workbench.values.records import Record, Source

_RECORDS = "answerview.records"  # record id -> Record, fetched once per session


def show_answer(answer: Answer, key: str) -> None:
    """An answer: tier and summary first, then values, the proof graph, sources, history and
    guesses, each in its own section."""
    tier = answer.tier.value
    with st.container(border=True):
        tier_badge(tier)
        st.markdown(f"**{md(answer.summary)}**")
        st.caption(md(answer.question) + (f" · as of {answer.as_of}" if answer.as_of else ""))
        if answer.count is not None:
            shown = f"at least {answer.count}" if answer.at_least else str(answer.count)
            st.metric("How many", shown, help="Counted by code over the records."
                      + (f" {len(answer.undated)} undated could not be placed." if answer.undated else ""))
        if answer.incomplete:
            st.warning("Incomplete: the reasoning reached its depth bound; there may be more.")
    if answer.candidates:
        st.markdown("**The name matches several things; none was picked:**")
        st.markdown("\n".join(f"- `{md(c)}`" for c in answer.candidates))
    _findings(answer.findings, tier)
    if has_proofs(answer):
        st.subheader("How it knows")
        st.graphviz_chart(proof_dot(answer))
        st.caption("Arrows run from what supports to what it supports. Numbered boxes are records; "
                   "open one below to see its source.")
        _sources(leaves(answer.findings), f"{key}.src")
    if answer.undated:
        st.subheader("Undated, could not be placed")
        _findings_with_sources(answer.undated, tier, f"{key}.undated")
    if answer.history:
        st.subheader("History")
        _findings_with_sources(answer.history, tier, f"{key}.history")
    if answer.guesses:
        show_guesses(answer.guesses)


def _findings(findings: Sequence[Finding], tier: str) -> None:
    holds = [f for f in findings if not f.negated]
    negated = [f for f in findings if f.negated]
    if holds:
        st.subheader("Values" if tier != "conflicting" else "Values that disagree")
        st.dataframe(_findings_frame(holds), hide_index=True)
    if negated:
        st.subheader("Recorded as not so")
        st.dataframe(_findings_frame(negated), hide_index=True)


def _findings_frame(findings: Sequence[Finding]) -> pd.DataFrame:
    rows = []
    for f in findings:
        details = "; ".join(f"{what}: {value}" for what, value in f.details)
        rows.append({"value": f.label, "note": f.note, "details": details,
                     "records": ", ".join(sorted({leaf.record for leaf in leaves([f])}))})
    return pd.DataFrame(rows, columns=["value", "note", "details", "records"])


def _findings_with_sources(findings: Sequence[Finding], tier: str, key: str) -> None:
    st.dataframe(_findings_frame(findings), hide_index=True)
    _sources(leaves(findings), key)


def _sources(found: Sequence[Recorded], key: str) -> None:
    """One expander per recorded leaf, numbered as in the graph: its source at once, the whole
    record (and what the source says) one click further."""
    for n, leaf in enumerate(found, 1):
        admitted = " · admitted common sense" if leaf.admitted or leaf.record_type == "common_sense" else ""
        with st.expander(f"[{n}] {leaf.statement.text} — record {leaf.record}{admitted}"):
            st.markdown(f"**Source:** {md(where(leaf))}")
            _source_table(leaf.source, leaf.record, leaf.record_type, leaf.status)
            record_panel(leaf.record, f"{key}.{n}")


def _source_table(src: Source, record_id: str, record_type: str, status: str) -> None:
    _facts([("record", record_id), ("type", record_type.replace("_", " ")), ("status", status),
            ("source", src.id), ("said by", src.said_by), ("captured at", src.captured_at or "—"),
            ("where", src.locator or "—")])


def _facts(rows: Sequence[tuple[str, str]]) -> None:
    """What one thing is, as a two-column table: what, and its value."""
    st.table(pd.DataFrame({"value": [v for _, v in rows]}, index=[k for k, _ in rows]), hide_header=True)


def record_panel(record_id: str, key: str) -> None:
    """A button that fetches the record (once per session) and shows it with what its source says."""
    cache: dict[str, Record] = st.session_state.setdefault(_RECORDS, {})
    if record_id not in cache:
        if not st.button("Show the record and what its source says", key=f"{key}.open",
                         icon=":material/description:"):
            return
        with acting():
            cache[record_id] = session.client().record(record_id)
        if record_id not in cache:
            return
    show_record(cache[record_id])


def show_record(r: Record) -> None:
    st.markdown(f"**{md(r.statement)}**")
    src = r.source
    if src.text:
        st.markdown("The source says:")
        st.info(src.text, icon=":material/format_quote:")
    facts: list[tuple[str, Any]] = [
        ("record", r.id), ("type", r.type.value.replace("_", " ")), ("status", r.status.value),
        ("said by", r.said_by), ("entered", r.created_at), ("effective from", r.effective_from),
        ("effective to", r.effective_to), ("decided by", r.decided_by), ("confirmed by", r.confirmed_by),
        ("extracted by", r.extracted_by), ("supersedes", ", ".join(r.supersedes)),
        ("superseded by", ", ".join(r.superseded_by)), ("source", src.id), ("source said by", src.said_by),
        ("captured at", src.captured_at), ("where", src.locator),
    ]
    _facts([(k, str(v)) for k, v in facts if v])


def show_guesses(guesses: Sequence[Guess]) -> None:
    """Model guesses in their own box, labelled as such, never among the values."""
    with st.container(border=True):
        st.subheader("Model guesses")
        tier_badge("guessed")
        st.caption("Not facts and never used as reasons: values that things of the same kinds have, ranked "
                   "by a model learned from the store. The chance is how often such guesses were right on "
                   "held-out facts (empty: not measured, too few). A person can check one and record it.")
        rows = [{"guess": g.label or g.value, "chance": g.chance, "score": g.score,
                 "because": ", ".join(g.because)} for g in guesses]
        st.dataframe(pd.DataFrame(rows), hide_index=True, column_config={
            "chance": st.column_config.ProgressColumn("chance", min_value=0.0, max_value=1.0, format="%.2f"),
            "score": st.column_config.NumberColumn("model score", format="%.3f")})


# ---------------------------------------------------------------------- recall


def show_bundle(bundle: Bundle, key: str) -> str | None:
    """A recall bundle: its tier, the names understood, the records with tier, score and source;
    "no memory" said plainly with any did-you-mean suggestions. Returns a question to ask
    instead when the person picks a suggestion (a person binds the name, never the page)."""
    with st.container(border=True):
        tier_badge(bundle.tier)
        st.markdown(f"**{md(bundle.summary)}**")
        if bundle.scope:
            st.caption("Names understood: " + ", ".join(f"{md(n)} → `{e}`" for n, e in bundle.scope))
        if bundle.probability is not None:
            st.caption(f"Chance that these records hold the answer: {bundle.probability:.0%} (the calibrated "
                       "gate; under its threshold the answer is no memory)")
    chosen = None
    if bundle.tier == "no_memory":
        st.info("No memory: nothing recorded bears on this question. That is an answer, not a failure.",
                icon=":material/search_off:")
    for name, options in bundle.suggestions:
        st.markdown(f"'{md(name)}' names nothing recorded. Did you mean "
                    + " or ".join(f"**{md(o)}**" for o in options) + "?")
        for i, option in enumerate(options):
            if st.button(f"Ask about {option}", key=f"{key}.suggest.{name}.{i}"):
                chosen = bundle.question.replace(name, option, 1)
    recorded = [m for m in bundle.memories if m.tier != "guessed"]
    guessed = [m for m in bundle.memories if m.tier == "guessed"]
    if recorded:
        st.subheader("Records")
        _memories(recorded, f"{key}.rec")
    if guessed:
        with st.container(border=True):
            st.subheader("Found by similarity alone")
            tier_badge("guessed")
            st.caption("A model guess: no name in the question bound to anything recorded, so these records "
                       "are only similar in wording.")
            _memories(guessed, f"{key}.guess")
    for note in bundle.notes:
        st.caption(note)
    if bundle.memories:
        st.caption(f"{len(bundle.memories)} of at most {bundle.purpose.limit} records, {bundle.chars} of "
                   f"{bundle.purpose.chars} characters ({bundle.purpose.name} budget).")
    return chosen


def _memories(found: Sequence[Memory], key: str) -> None:
    rows = [{"record": m.record.id, "statement": m.record.statement, "tier": _tier_words(m.tier),
             "score": m.score, "status": m.record.status.value, "source": m.record.source.id,
             "said by": m.record.source.said_by, "captured at": m.record.source.captured_at or ""}
            for m in found]
    st.dataframe(pd.DataFrame(rows), hide_index=True, column_config={
        "score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0, format="%.2f")})
    for n, m in enumerate(found, 1):
        r = m.record
        with st.expander(f"{r.id}: {r.statement}"):
            st.caption(f"{_tier_words(m.tier)} · score {m.score:.2f} · why: {m.why}")
            _source_table(r.source, r.id, r.type.value, r.status.value)
            record_panel(r.id, f"{key}.{n}")


def _tier_words(tier: str) -> str:
    return "model guess" if tier == "guessed" else tier.replace("_", " ")

