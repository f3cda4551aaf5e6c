"""Overview: what the store holds, what waits for people (the review queue, rules awaiting
sign-off), and how well recall does on the development set, as charts.

Everything is read as the signed-in user may see it. The evaluation runs on the server and
takes a while (other calls wait meanwhile), so it runs only when asked and is kept for the
session.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from workbench.access.users import Role
from workbench.ui import session
from workbench.ui.common import acting

EVAL = "overview.eval"
# What the evaluation measures, in words, from its totals: (key, label, higher is better).
MEASURES = (
    ("hit_at_1", "found first (hit@1)", True),
    ("hit_at_5", "in the first 5 (hit@5)", True),
    ("hit_at_10", "in the first 10 (hit@10)", True),
    ("abstention", "says 'no memory' when there is none", True),
    ("false_abstention", "says 'no memory' wrongly", False),
)


def render() -> None:
    st.title("Overview")
    _store()
    left, right = st.columns(2)
    with left:
        _queue()
    with right:
        _rules()
    _evaluation()


def _counts(title: str, counts: dict[str, int]) -> None:
    """A small horizontal bar chart of counts, in the order given."""
    if not counts:
        return
    st.caption(title)
    data = pd.DataFrame({"what": [k.replace("_", " ") for k in counts], "count": list(counts.values())})
    chart = alt.Chart(data).mark_bar().encode(
        y=alt.Y("what:N", sort=list(data["what"]), title=None, axis=alt.Axis(labelLimit=240)),
        x=alt.X("count:Q", title=None, axis=alt.Axis(tickMinStep=1, format="d")),
        tooltip=["what", "count"],
    ).properties(height=24 * len(counts) + 30)
    st.altair_chart(chart, width="stretch")


def _store() -> None:
    stats: dict[str, Any] | None = None
    with acting():
        stats = session.client().stats()
    if stats is None:
        return
    st.subheader("The store")
    cols = st.columns(5)
    for col, (key, label) in zip(cols, (("records", "Records"), ("sources", "Sources"), ("entities", "Entities"),
                                        ("tombstones", "Erased"), ("quads", "Triples in all")), strict=True):
        col.metric(label, f"{int(stats.get(key, 0)):,}")
    left, right = st.columns(2)
    with left:
        _counts("Records by type", dict(sorted(stats.get("by_type", {}).items())))
    with right:
        _counts("Records by status", dict(sorted(stats.get("by_status", {}).items())))
    backend = str(stats.get("backend", "?"))
    # Only an admin (or anyone, on a store with no users) is sure to read it all; the counts never
    # say whether anything was left out (that would tell what is hidden).
    who = session.user()
    everything = who is None or Role.ADMIN in who.roles
    seen = f"the whole store ({backend})" if everything else f"the part of the store you may see ({backend})"
    st.caption(f"Counted over {seen}, at {session.server_url()}.")


def _queue() -> None:
    st.subheader("Review queue")
    found = None
    with acting():
        found = session.client().candidates(status=None)
    if found is None:
        return
    by_status = Counter(c.status for c in found)
    st.metric("Waiting for a curator", by_status.get("pending", 0))
    if by_status:
        _counts("Candidates by status", dict(sorted(by_status.items())))
    else:
        st.caption("Nothing has been proposed yet.")


def _rules() -> None:
    st.subheader("Rules")
    found = None
    with acting():
        found = session.client().rule_list()
    if found is None:
        return
    by_status = Counter(str(r.get("status", "?")) for r in found)
    st.metric("Waiting for sign-off", by_status.get("proposed", 0))
    _counts("Rules by status", dict(sorted(by_status.items())))
    rows = [{"rule": r.get("id"), "version": r.get("version"), "status": r.get("status"),
             "tests": r.get("tests"), "author": r.get("author"), "reading": r.get("reading")} for r in found]
    with st.expander(f"All {len(rows)} rules"):
        st.dataframe(pd.DataFrame(rows), hide_index=True)


def _evaluation() -> None:
    st.subheader("Recall on the development set")
    st.caption("The questions in data/eval/dev.jsonl, answered by Workbench's recall and by the plain recipe "
               "(the top 10 records by vector similarity). It takes a little while, and needs the whole "
               "sample data: run it as someone who may see every source.")
    if st.button("Run the evaluation", key="overview.run", icon=":material/play_arrow:"):
        with st.spinner("Evaluating..."), acting():
            st.session_state[EVAL] = session.client().evaluate("dev")
    report: dict[str, Any] | None = st.session_state.get(EVAL)
    if report is None:
        return
    ours, plain = report["workbench"]["totals"], report["plain"]["totals"]
    names = {"workbench": "Workbench recall", "plain": str(report["plain"].get("system", "plain recipe"))}
    frame = pd.DataFrame(
        {names["workbench"]: [float(ours[k]) for k, _, _ in MEASURES],
         names["plain"]: [float(plain[k]) for k, _, _ in MEASURES]},
        index=[label for _, label, _ in MEASURES],
    )
    st.altair_chart(_compare(frame), width="stretch")
    table = frame.copy()
    table["better"] = ["higher" if up else "lower" for _, _, up in MEASURES]
    st.dataframe(table.style.format({names["workbench"]: "{:.1%}", names["plain"]: "{:.1%}"}))
    cols = st.columns(4)
    cols[0].metric("Questions", int(ours["questions"]),
                   help=f"{ours['answerable']} answerable, {ours['no_memory']} with no memory")
    cols[1].metric("Old records returned", int(ours["stale_returned"]),
                   delta=int(ours["stale_returned"]) - int(plain["stale_returned"]), delta_color="inverse",
                   help="Superseded records given back; the delta is against the plain recipe.")
    cols[2].metric("Unrelated records per answer", f"{float(ours['mean_unrelated']):.2f}",
                   delta=round(float(ours["mean_unrelated"]) - float(plain["mean_unrelated"]), 2),
                   delta_color="inverse")
    cols[3].metric("Characters per answer", f"{float(ours['mean_chars']):.0f}",
                   delta=round(float(ours["mean_chars"]) - float(plain["mean_chars"]), 1), delta_color="inverse")
    st.caption(f"Encoder {report.get('encoder')}, k = {report.get('k')}.")
    misses = [q for q in report["workbench"].get("questions", []) if not q.get("ok", True)]
    if misses:
        with st.expander(f"{len(misses)} questions Workbench did not get right"):
            st.dataframe(pd.DataFrame([{"question": q.get("question"), "tier": q.get("tier"),
                                        "rank": q.get("rank")} for q in misses]), hide_index=True)


def _compare(frame: pd.DataFrame) -> alt.Chart:
    """The two systems side by side, one pair of bars per measure, in the order of MEASURES."""
    data = frame.reset_index(names="measure").melt("measure", var_name="system", value_name="share")
    chart: alt.Chart = alt.Chart(data).mark_bar().encode(
        y=alt.Y("measure:N", sort=list(frame.index), title=None, axis=alt.Axis(labelLimit=320)),
        yOffset=alt.YOffset("system:N", sort=list(frame.columns)),
        x=alt.X("share:Q", title="share of questions", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("system:N", sort=list(frame.columns), title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["measure", "system", alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=56 * len(frame.index) + 20)
    return chart
