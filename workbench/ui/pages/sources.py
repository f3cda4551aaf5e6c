"""Sources and history: pick a record (by its id, or words of its statement or source) and see
where it came from (the source: who said it, when, where, its text; who extracted and confirmed
it; the import that brought it in), its supersession chain, its audit trail, and erasure.

Only an admin erases, after confirming, with a reason; what stays is a content-free tombstone.
Anyone else is told so and whom to ask: there is no request queue (an admin erases on request).
``?record=ID`` in the page's URL opens that record (the Ask page links leaves here).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Sequence
from urllib.parse import unquote

import streamlit as st

from workbench.access.users import Role
from workbench.client import Client
from workbench.errors import NotFound, WorkbenchError
from workbench.presentation.notebook import frame, short
from workbench.records.audit import Event
from workbench.ui import session
from workbench.ui.common import explain
from workbench.ui.md import code, md
from workbench.values.records import Record, Status, Tombstone

MAX_CHOICES = 200
STATUS_COLOURS = {"active": "green", "superseded": "orange", "retracted": "gray"}


def matches(record: Record, text: str) -> bool:
    """Whether the record's id, statement, source id or who said it contains ``text`` (any case)."""
    folded = text.strip().casefold()
    return not folded or any(folded in (x or "").casefold()
                             for x in (record.id, record.statement, record.source.id, record.said_by))


def _outcome() -> None:
    found = st.session_state.pop("src_done", None)
    if found:
        kind, message = found
        (st.success if kind == "ok" else st.error)(message)


def _erase(wb: Client, record_id: str) -> None:
    reason = st.session_state.get("erase_reason", "").strip()
    if not reason or not st.session_state.get("erase_confirm"):
        st.session_state["src_done"] = ("error", "To erase, give the reason and tick the confirmation.")
        return
    try:
        stone = wb.erase(record_id, reason=reason)
    except WorkbenchError as exc:
        st.session_state["src_done"] = ("error", explain(exc))
        return
    st.session_state["src_done"] = ("ok", f"Erased {record_id}: only a tombstone stays ({stone.kind}, erased by "
                                          f"{stone.erased_by} at {stone.erased_at}: {stone.reason}).")
    st.session_state["erase_reason"], st.session_state["erase_confirm"] = "", False


# ---------------------------------------------------------------------- sections


def _provenance(record: Record, events: Sequence[Event]) -> None:
    src = record.source
    where = ", ".join(x for x in (f"captured {md(src.captured_at)}" if src.captured_at else "",
                                  f"at {code(src.locator)}" if src.locator else "") if x)
    seen = ", ".join(src.visible_to) if src.visible_to else "everyone"
    lines = [f"- **Source** {code(src.id)}: said by **{md(src.said_by or 'unknown')}**"
             + (f", {where}" if where else "") + f"; visible to {md(seen)}"]
    if record.admitted:
        lines.append("- Admitted common sense")
    if record.extracted_by:
        prompt = f" (prompt {md(record.prompt_version)})" if record.prompt_version else ""
        lines.append(f"- **Extracted by** {md(record.extracted_by)}{prompt}")
    if record.confirmed_by:
        lines.append(f"- **Confirmed by** {md(record.confirmed_by)}")
    for e in events:
        if e.what in ("import", "approval", "proposal"):
            detail = f": {md(e.detail)}" if e.detail else ""
            lines.append(f"- **{md(e.what.capitalize())}** by {md(e.who)} at {md(e.when)}{detail}")
    lines.append(f"- **Recorded** {md(record.created_at)}" if record.created_at else "- Recorded: unknown")
    if record.effective_from or record.effective_to:
        lines.append(f"- **Effective** from {md(record.effective_from or 'its start')}"
                     f" to {md(record.effective_to or 'now, or until superseded')}")
    for what, terms in (("About", record.about), ("Applies to", record.applies_to),
                        ("Decided by", (record.decided_by,) if record.decided_by else ())):
        if terms:
            lines.append(f"- **{what}** " + ", ".join(f"{code(short(t))}" for t in terms))
    st.markdown("\n".join(lines))
    if src.text:
        st.caption("What the source says")
        st.markdown("> " + md(src.text).replace("\n", "\n> "))
    if record.triples:
        st.caption("What the record states")
        st.dataframe([{"subject": short(s), "relation": short(p), "object": short(o)} for s, p, o in record.triples],
                     hide_index=True)


def _history(wb: Client, record_id: str) -> None:
    try:
        chain = wb.history(record_id)
    except WorkbenchError as exc:
        st.error(explain(exc))
        return
    if len(chain) <= 1 and not any(isinstance(c, Tombstone) for c in chain):
        st.caption("No corrections: this record neither supersedes another nor was superseded.")
    steps = []
    for i, item in enumerate(chain, 1):
        if isinstance(item, Tombstone):
            erased = unquote(item.iri.removeprefix("urn:wb:record:"))
            steps.append(f"{i}. ✕ {code(erased)} **erased** ({md(item.kind)}) by {md(item.erased_by)} at "
                         f"{md(item.erased_at)}: {md(item.reason)}")
            continue
        here = " ← **this record**" if item.id == record_id else ""
        when = f", effective from {md(item.effective_from)}" if item.effective_from else ""
        steps.append(f"{i}. {'●' if item.status is Status.ACTIVE else '○'} {code(item.id)} · {item.status.value}"
                     f"{when}{here}  \n   {md(item.statement)}  \n   "
                     f"_source {md(item.source.id)}, said by {md(item.source.said_by or 'unknown')}_")
        if item.superseded_by:
            steps[-1] += f"  \n   ↓ superseded by {', '.join(code(s) for s in item.superseded_by)}"
    st.markdown("\n".join(steps))


def _audit(events: Sequence[Event]) -> None:
    if events:
        st.dataframe(frame(events), hide_index=True, width="stretch")
    else:
        st.caption("No acts recorded on it.")


def _erasure(wb: Client, record_id: str) -> None:
    st.caption("Erasing removes the record, everything copied from it (its source's text if only it used "
               "it, candidates, summaries, vectors) and leaves a tombstone that says what kind of thing it was, "
               "who erased it, when and why, and nothing of its content. It cannot be undone.")
    if not session.may(Role.ADMIN):
        who = session.user()
        signed = (f"You are signed in as {who.name} ({', '.join(sorted(r.value for r in who.roles))})."
                  if who else "This store has no users, so it is read only here.")
        st.info(f"Only an admin can erase a record. {signed} To have it erased, ask an admin of this workbench "
                "and tell them the record id and why; they can erase it on this page, or with:",
                icon=":material/lock:")
        st.code(f'workbench erase {shlex.quote(record_id)} --reason "..."', language="bash")
        return
    with st.form("erase_form"):
        st.text_input("Why it must be erased", key="erase_reason", placeholder="asked to forget")
        st.checkbox(f"I understand that {record_id} is removed for good", key="erase_confirm")
        st.form_submit_button("Erase for good", type="primary", on_click=_erase, args=(wb, record_id),
                              icon=":material/delete_forever:")


def _erased(wb: Client, record_id: str) -> bool:
    """Show what remains of an erased record; False when there is no such record at all."""
    try:
        events = wb.audit(record_id)
    except NotFound:
        return False
    st.warning(f"{code(record_id)} was erased: only its tombstone and audit trail remain.", icon=":material/delete:")
    tabs = st.tabs(["History", "Audit trail"])
    with tabs[0]:
        _history(wb, record_id)
    with tabs[1]:
        _audit(events)
    return True


def _choose(wb: Client, query: str, everything: bool) -> Record | None:
    records = wb.records(status=None if everything else Status.ACTIVE)
    hits = [r for r in records if matches(r, query)]
    exact = query.strip()
    if exact and all(r.id != exact for r in hits):
        with contextlib.suppress(NotFound):
            hits.insert(0, wb.record(exact))  # superseded, retracted or otherwise not listed
    if not hits:
        if not (exact and _erased(wb, exact)):
            st.info(f"No record matches “{query}”." + ("" if everything else " Try all records, not only active."))
        return None
    by_id = {r.id: r for r in hits[:MAX_CHOICES]}
    if len(hits) > MAX_CHOICES:
        st.caption(f"The first {MAX_CHOICES} of {len(hits)} records: narrow the search to see the others.")
    pick = st.selectbox(f"Record ({len(hits)} found)", list(by_id), key="src_pick",
                        format_func=lambda i: f"{i}  ·  {by_id[i].statement[:90]}")
    return by_id.get(pick) if pick else None


def render() -> None:
    st.title("Sources and history")
    st.caption("Where a record came from, how it was corrected, and every act on it.")
    wb = session.client()
    if "src_query" not in st.session_state:
        st.session_state["src_query"] = st.query_params.get("record", "")
    cols = st.columns([3, 1])
    query = cols[0].text_input("Record id, or words of its statement or source", key="src_query",
                               placeholder="d-atlas-region-2, Atlas, issue-ATL-142")
    everything = cols[1].toggle("All records", key="src_all", help="superseded and retracted ones too")
    _outcome()
    try:
        record = _choose(wb, query, everything)
        if record is None:
            return
        events = wb.audit(record.id)
    except WorkbenchError as exc:
        st.error(explain(exc), icon=":material/error:")
        return
    st.badge(record.status.value, color=STATUS_COLOURS.get(record.status.value, "gray"))  # type: ignore[arg-type]
    st.markdown(f"{code(record.id)} · {record.type.value.replace('_', ' ')}  \n**{md(record.statement)}**")
    provenance, history, audit, erasure = st.tabs(["Provenance", "History", "Audit trail", "Erasure"])
    with provenance:
        _provenance(record, events)
    with history:
        _history(wb, record.id)
    with audit:
        _audit(events)
    with erasure:
        _erasure(wb, record.id)
