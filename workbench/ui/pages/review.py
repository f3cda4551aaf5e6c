"""Review queue: candidate facts a person approves, edits, rejects or merges, one after another.

Each candidate shows the text it was taken from, the checks a curator reads before approving
(validation, duplicates, conflicts, name bindings), and forms for each decision; once decided, the
next pending candidate opens. Several candidates can be selected for one decision. Every act is the
signed-in curator's, through the client (the server checks the role again).

Keyboard: J and K move to the next and previous candidate, Shift+A approves as proposed; in a form,
Enter (Ctrl+Enter in a multi-line box) submits it, and Tab moves between fields.

A decision that someone else made first (Conflict) keeps the candidate open with what changed and
the edit the user made, never dropping it.

A model proposal (``workbench guesses propose``: a likely kind, a likely merge) shows the model
and version, the chance measured for such guesses, and the things it rests on; approving a
proposed merge merges the two entities, as ``workbench entities merge`` would.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

import streamlit as st

from workbench.access.users import Role
from workbench.client import Client
from workbench.errors import Conflict, WorkbenchError
from workbench.review.guessed import basis_lines, is_merge
from workbench.review.queue import Candidate, Checks
from workbench.ui import recordform, session
from workbench.ui.common import acting, explain, needs
from workbench.ui.md import code, md

STATUSES = ("pending", "approved", "rejected", "merged", "all")
SEEN = "review.seen."  # + id: the candidate as this session first saw it pending, to tell what changed since
CURRENT, AFTER, CONFLICT, FLASH, BULK, PICK = (f"review.{k}" for k in ("current", "after", "conflict", "flash",
                                                                      "bulk", "pick"))


def render() -> None:
    st.title("Review queue")
    if not needs(Role.CURATOR, "The review queue"):
        return
    client = session.client()
    if FLASH in st.session_state:
        st.success(st.session_state.pop(FLASH), icon=":material/check_circle:")
    if st.session_state.pop("review.clear_bulk", False):
        st.session_state[BULK] = []
    status, words = _filters()
    found: list[Candidate] = []
    with acting():
        found = client.candidates(status=None if status == "all" else status, text=words or None)
    ids = [c.id for c in found]
    by_id = {c.id: c for c in found}
    cid = _current(ids)
    _queue(found, status)
    _bulk(client, found)
    st.divider()
    if cid is None:
        st.info("Nothing to review here." if status == "pending" and not words
                else "No candidate matches these filters.")
        return
    _navigation(ids, cid, {c.id: _label(c) for c in found})
    cand = by_id.get(cid)
    if cand is None:  # decided by someone else while it was open: fetch it as it is now
        with acting():
            cand = client.candidate(cid)
    if cand is not None:
        _detail(client, cand, ids)


# ---------------------------------------------------------------------- the list


def _filters() -> tuple[str, str]:
    left, right = st.columns([1, 2])
    status = left.selectbox("Status", STATUSES, key="review.status",
                            help="Pending candidates wait for a decision; the others are kept for the audit.")
    words = right.text_input("Words in the statement", key="review.words", placeholder="e.g. Atlas",
                             help="Only candidates whose statement contains these words.")
    chosen = (str(status), str(words).strip())
    if st.session_state.get("review.filtered") != chosen:  # other filters: open what they show
        st.session_state["review.filtered"] = chosen
        if CONFLICT not in st.session_state:  # (a conflict stays open, with the edit, until dismissed)
            _forget(st.session_state.get(CURRENT))
    return chosen


def _forget(cid: object) -> None:
    """Close the open candidate (the next render opens another)."""
    for key in (CURRENT, CONFLICT, f"{SEEN}{cid}"):
        st.session_state.pop(key, None)


def _current(ids: Sequence[str]) -> str | None:
    """The candidate open now: the one a conflict keeps open, the one picked (even once someone
    else decided it: the page then says so), or the next after the last decision, else the first."""
    state = st.session_state
    pinned = state.get(CONFLICT)
    if pinned:
        state[CURRENT] = pinned["id"]
        return str(pinned["id"])
    current = state.get(CURRENT)
    if current in ids or (current is not None and f"{SEEN}{current}" in state):
        return str(current)
    following = [i for i in state.pop(AFTER, []) if i in ids]
    state[CURRENT] = following[0] if following else (ids[0] if ids else None)
    return state[CURRENT]  # type: ignore[no-any-return]


def _label(c: Candidate) -> str:
    text = str(c.record.get("statement", ""))
    return f"{c.id} · {text[:80]}{'…' if len(text) > 80 else ''}"


def _queue(found: Sequence[Candidate], status: str) -> None:
    st.caption(f"{len(found)} candidate(s)" + ("" if status == "all" else f" {status}"))
    if found:
        rows = [{"id": c.id, "statement": c.record.get("statement", ""),
                 "type": "merge" if is_merge(c.record) else c.record.get("type", ""),
                 "status": c.status, "proposed by": c.proposed_by, "proposed at": c.proposed_at,
                 **({"chance": _chance(c)} if any(x.guess for x in found) else {})} for c in found]
        st.dataframe(rows, hide_index=True, height=min(38 + 35 * len(rows), 260))


def _chance(c: Candidate) -> str:
    if not c.guess:
        return ""
    return "not measured" if c.guess.get("chance") is None else f"{c.guess['chance']:.0%}"


def _bulk(client: Client, found: Sequence[Candidate]) -> None:
    pending = [c for c in found if c.status == "pending"]
    if not pending:
        return
    labels = {c.id: _label(c) for c in pending}
    if any(i not in labels for i in st.session_state.get(BULK, [])):
        st.session_state[BULK] = [i for i in st.session_state[BULK] if i in labels]
    with st.expander("Decide on several at once", icon=":material/checklist:"):
        chosen: list[str] = st.multiselect("Select candidates", list(labels), format_func=labels.__getitem__, key=BULK,
                                           placeholder="Choose one or more pending candidates")
        if not chosen:
            st.caption("Select candidates to approve, reject or merge them together (all or none).")
            return
        approve, reject, merge = st.columns(3)
        with approve.form("review.bulk_approve"):
            create = st.text_input("Names to create, if any bind nothing", key="review.bulk_create",
                                   help="Comma-separated. A name that binds no entity stops the approval "
                                        "unless you create it here.")
            if st.form_submit_button(f"Approve {len(chosen)}", type="primary", key="review.bulk_approve_go"):
                names = [n.strip() for n in create.split(",") if n.strip()]
                _bulk_act(lambda: client.approve(chosen, create=names), f"Approved {len(chosen)} candidate(s).",
                          chosen)
        with reject.form("review.bulk_reject"):
            reason = st.text_input("Reason for rejecting", key="review.bulk_reason",
                                   placeholder="e.g. not said; the model inferred it")
            if st.form_submit_button(f"Reject {len(chosen)}", key="review.bulk_reject_go"):
                if not reason.strip():
                    st.error("Please give a reason: it is kept for the audit.")
                else:
                    _bulk_act(lambda: client.reject(chosen, reason=reason.strip()),
                              f"Rejected {len(chosen)} candidate(s).", chosen)
        with merge.form("review.bulk_merge"):
            keep = st.selectbox("Keep", chosen, format_func=labels.__getitem__, key="review.bulk_keep",
                                help="The others are folded into this one as duplicates.")
            if st.form_submit_button("Merge into it", key="review.bulk_merge_go", disabled=len(chosen) < 2):
                others = [i for i in chosen if i != keep]
                _bulk_act(lambda: client.merge_candidates(str(keep), others),
                          f"Merged {len(others)} candidate(s) into {keep}.", others)


def _bulk_act(call: Callable[[], object], done: str, chosen: Sequence[str]) -> None:
    try:
        call()
    except WorkbenchError as exc:
        st.error(explain(exc), icon=":material/error:")
        return
    if st.session_state.get(CURRENT) in chosen:
        _forget(st.session_state.get(CURRENT))
    for cid in chosen:  # decided here, not by someone else
        st.session_state.pop(f"{SEEN}{cid}", None)
    st.session_state[FLASH] = done
    st.session_state["review.clear_bulk"] = True
    st.rerun()


# ---------------------------------------------------------------------- one candidate


def _navigation(ids: Sequence[str], cid: str, labels: dict[str, str]) -> None:
    where = ids.index(cid) if cid in ids else -1

    def go(step: int) -> None:
        if ids:
            st.session_state[CURRENT] = ids[(where + step) % len(ids)] if where >= 0 else ids[0]
            st.session_state.pop(CONFLICT, None)

    def pick() -> None:
        st.session_state[CURRENT] = st.session_state[PICK]
        st.session_state.pop(CONFLICT, None)

    if cid in ids:
        st.session_state[PICK] = cid
    left, mid, right = st.columns([6, 1, 1], vertical_alignment="bottom")
    if ids:
        left.selectbox("Open candidate", ids, format_func=lambda i: labels.get(i, i), key=PICK, on_change=pick,
                       help="Or J / K for the next and previous one.")
    mid.button("Previous", icon=":material/arrow_upward:", shortcut="K", on_click=go, args=(-1,), key="review.prev",
               disabled=len(ids) < 2)
    right.button("Next", icon=":material/arrow_downward:", shortcut="J", on_click=go, args=(1,), key="review.next",
                 disabled=len(ids) < 2)


def _detail(client: Client, cand: Candidate, ids: Sequence[str]) -> None:
    rec = cand.record
    st.subheader(md(str(rec.get("statement", cand.id))))
    badges = st.columns([1, 5])
    with badges[0]:
        colour: Literal["orange", "green", "red", "gray"] = {"pending": "orange", "approved": "green",
                                                              "rejected": "red"}.get(cand.status, "gray")  # type: ignore[assignment]
        st.badge(cand.status, color=colour)
    by = f"model {cand.model}" + (f" ({cand.prompt_version})" if cand.prompt_version else "") if cand.model \
        else cand.proposed_by
    badges[1].caption(f"`{cand.id}` · {rec.get('type', '')} · proposed by {by} at {cand.proposed_at}")
    seen = st.session_state.get(f"{SEEN}{cand.id}")
    if cand.status == "pending":
        st.session_state[f"{SEEN}{cand.id}"] = seen = cand.to_json()
    elif seen and seen["status"] == "pending" and CONFLICT not in st.session_state:
        who = f" by {cand.decided_by}" if cand.decided_by else ""
        st.session_state[CONFLICT] = {"id": cand.id, "message": f"{cand.id} was {cand.status}{who} while you had "
                                                                "it open", "edit": None}
    pinned = st.session_state.get(CONFLICT)
    if pinned and pinned["id"] == cand.id:
        _conflict(cand, pinned)
    elif cand.status != "pending":
        _decided(cand)
    if cand.guess:
        _guess(cand)
    if not is_merge(rec):
        _source(cand)
    checks: Checks | None = None
    with acting():
        checks = client.check_candidate(cand.id)
    if checks is not None:
        _checks(checks)
    if seen:  # pending when this session opened it: the forms stay, with what the user typed
        _decisions(client, cand, checks, ids, open_=cand.status == "pending")


def _guess(cand: Candidate) -> None:
    """What a model proposal rests on: the chance measured for such guesses, then the things nearest."""
    basis = cand.guess or {}
    said, *_ = basis_lines(basis)
    what = "a merge of two entities" if is_merge(cand.record) else "a kind"
    st.info(f"**Model proposal**: {what}, guessed by `{md(str(basis.get('model', '?')))}`. {md(said.capitalize())}. "
            "A guess until you approve it: nothing is typed or merged before.", icon=":material/psychology:")
    evidence = basis.get("evidence") or []
    if evidence:
        st.markdown("**Nearest things**")
        st.dataframe([{"thing": e.get("label") or e["thing"], "IRI": e["thing"],
                       "facts it shares": "; ".join(e.get("shares", []))} for e in evidence], hide_index=True)


def _source(cand: Candidate) -> None:
    source = cand.record.get("source") or {}
    if cand.span:
        st.markdown("**Taken from**")
        st.markdown("\n".join(f"> {md(line)}" for line in cand.span.splitlines()) or "> ")
    said = ", ".join(str(x) for x in (source.get("said_by"), source.get("captured_at"), source.get("locator")) if x)
    st.caption(f"Source {code(str(source.get('id', '?')))}" + (f": {md(said)}" if said else ""))
    text = source.get("text")
    if text and text != cand.span:
        with st.expander("The whole source text"):
            st.text(str(text))


def _checks(checks: Checks) -> None:
    st.markdown("**Checks before approving**")
    cols = st.columns(3)
    with cols[0]:
        if checks.valid:
            st.success("Valid: it imports as a record.", icon=":material/check:")
        else:
            st.error("Would not import:\n\n" + "\n".join(f"- {md(p)}" for p in checks.problems),
                     icon=":material/block:")
    with cols[1]:
        if checks.duplicates:
            st.warning("Says the same as: " + ", ".join(code(d) for d in checks.duplicates),
                       icon=":material/content_copy:")
        else:
            st.info("No duplicate among active records.", icon=":material/content_copy:")
    with cols[2]:
        if checks.conflicts:
            st.warning("Conflicts:\n\n" + "\n".join(f"- {md(c)}" for c in checks.conflicts), icon=":material/warning:")
        else:
            st.info("No recorded fact says otherwise.", icon=":material/balance:")
    if checks.names:
        rows = [{"name": n, "binds to": ", ".join(e) if e else "nothing yet",
                 "outcome": "bound" if len(e) == 1 else ("ambiguous" if e else "unbound")}
                for n, e in sorted(checks.names.items())]
        st.dataframe(rows, hide_index=True)


def _decided(cand: Candidate) -> None:
    what = {"approved": f"as record `{cand.approved_as}`" if cand.approved_as else "",
            "merged": f"into `{cand.merged_into}`" if cand.merged_into else ""}.get(cand.status, "")
    by = f" by {cand.decided_by}" if cand.decided_by else ""
    when = f" on {cand.decided_at}" if cand.decided_at else ""
    why = f": {md(cand.reason)}" if cand.reason else ""
    st.info(f"{cand.status.capitalize()} {what}{by}{when}{why}".replace("  ", " "), icon=":material/gavel:")


def _conflict(cand: Candidate, pinned: dict[str, Any]) -> None:
    st.error(explain(Conflict(pinned["message"])), icon=":material/sync_problem:")
    before = st.session_state.get(f"review.seen.{cand.id}", {})
    changed = recordform.changes(before, cand.to_json())
    if changed:
        st.markdown("**What changed since you opened it**")
        st.dataframe([{"field": f.replace("_", " "), "when you opened it": "" if a is None else str(a),
                       "now": "" if b is None else str(b)} for f, a, b in changed], hide_index=True)
    if pinned.get("edit") is not None:
        st.markdown("**Your edit, kept** (copy it to propose it again, or to import it as a new record)")
        st.code(json.dumps(pinned["edit"], indent=2, ensure_ascii=False), language="json")
    if st.button("Done: go on to the next", key="review.conflict_done", icon=":material/skip_next:"):
        _forget(cand.id)
        st.rerun()


# ---------------------------------------------------------------------- deciding


def _decide(cand: Candidate, ids: Sequence[str], call: Callable[[], object], done: str,
            edit: dict[str, Any] | None = None) -> None:
    """Run a decision; then open the next candidate. A Conflict keeps this one open with the
    edit; other errors show where they are and keep the forms as they were."""
    try:
        call()
    except Conflict as exc:
        st.session_state[CONFLICT] = {"id": cand.id, "message": exc.message, "edit": edit}
        st.rerun()
    except WorkbenchError as exc:
        st.error(explain(exc), icon=":material/error:")
        return
    where = ids.index(cand.id) if cand.id in ids else 0
    st.session_state[AFTER] = [*ids[where + 1:], *ids[:where]]
    _forget(cand.id)
    st.session_state[FLASH] = done
    st.rerun()


def _decisions(client: Client, cand: Candidate, checks: Checks | None, ids: Sequence[str], *, open_: bool) -> None:
    key = f"review.{cand.id}"
    unbound = [n for n, e in (checks.names.items() if checks else ()) if not e]
    ambiguous = [n for n, e in (checks.names.items() if checks else ()) if len(e) > 1]
    approve, reject = st.columns([3, 2])
    with approve.form(f"{key}.approve"):
        st.markdown("**Approve as proposed**")
        create = [n for n in unbound if st.checkbox(f"Create a new entity named “{md(n)}”", key=f"{key}.create.{n}",
                                                    help="It binds no entity yet; or bind it to an existing one.")]
        if ambiguous:
            st.caption("Binds several entities: " + ", ".join(ambiguous) + ". Edit the name, or register an alias.")
        if st.form_submit_button("Approve", type="primary", shortcut="Shift+A", key=f"{key}.approve_go",
                                 help="Shift+A"):
            _decide(cand, ids, lambda: client.approve([cand.id], create=create), f"Approved {cand.id}.")
    with reject.form(f"{key}.reject"):
        st.markdown("**Reject**")
        reason = st.text_input("Reason", key=f"{key}.reason", placeholder="e.g. not said; the model inferred it",
                               help="Kept for the audit. Enter rejects.")
        if st.form_submit_button("Reject", key=f"{key}.reject_go"):
            if not reason.strip():
                st.error("Please give a reason: it is kept for the audit.")
            else:
                _decide(cand, ids, lambda: client.reject([cand.id], reason=reason.strip()), f"Rejected {cand.id}.")
    if not is_merge(cand.record):
        _edit(client, cand, ids, key, open_=open_)
    if unbound and open_:
        _bind(client, key, unbound)
    if checks and checks.duplicates and open_:
        st.markdown("**Merge as a duplicate**")
        for dup in checks.duplicates:
            if dup != cand.id and st.button(f"Merge into record {dup}", key=f"{key}.merge.{dup}",
                                            icon=":material/call_merge:"):
                _decide(cand, ids, functools.partial(client.merge_candidates, dup, [cand.id]),
                        f"Merged {cand.id} into {dup}.")


def _edit(client: Client, cand: Candidate, ids: Sequence[str], key: str, *, open_: bool) -> None:
    fields, rest = recordform.split(cand.record)
    with st.expander("Edit, then approve", icon=":material/edit:", expanded=not open_), st.form(f"{key}.edit"):
        values = {
            "statement": st.text_input("Statement", fields["statement"], key=f"{key}.e.statement"),
            "type": st.selectbox("Type", recordform.TYPES, key=f"{key}.e.type",
                                 index=recordform.TYPES.index(fields["type"])
                                 if fields["type"] in recordform.TYPES else 0),
            "about": st.text_input("About (names, comma-separated)", fields["about"], key=f"{key}.e.about"),
            "effective_from": st.text_input("Effective from (ISO date)", fields["effective_from"],
                                            key=f"{key}.e.from"),
            "effective_to": st.text_input("Effective to (ISO date)", fields["effective_to"], key=f"{key}.e.to"),
        }
        others = st.text_area("Other fields (JSON)", rest, key=f"{key}.e.rest", height=200,
                              help="Every other field of the record: id, source, triples... Ctrl+Enter submits.")
        create = st.text_input("Names to create, if any bind nothing", key=f"{key}.e.create",
                               help="Comma-separated; a new name stops the approval unless created here.")
        if st.form_submit_button("Approve with these edits", type="primary", key=f"{key}.edit_go"):
            try:
                edit = recordform.join({k: str(v) for k, v in values.items()}, str(others))
            except WorkbenchError as exc:
                st.error(explain(exc), icon=":material/error:")
                return
            names = [n.strip() for n in str(create).split(",") if n.strip()]
            _decide(cand, ids, lambda: client.approve([cand.id], edits={cand.id: edit}, create=names),
                    f"Approved {cand.id} as edited.", edit=edit)


def _bind(client: Client, key: str, unbound: Sequence[str]) -> None:
    with st.expander("Bind a name to an existing entity", icon=":material/link:"), st.form(f"{key}.bind"):
        name = st.selectbox("Name", unbound, key=f"{key}.bind.name")
        entity = st.text_input("Existing entity (its name or IRI)", key=f"{key}.bind.entity",
                               help="The name is registered as that entity's alias: an attributed act of its own.")
        if st.form_submit_button("Register the alias", key=f"{key}.bind_go") and entity.strip():
            try:
                client.add_alias(entity.strip(), str(name))
            except WorkbenchError as exc:
                st.error(explain(exc), icon=":material/error:")
                return
            st.session_state[FLASH] = f"“{md(str(name))}” now names {md(entity.strip())}."
            st.rerun()
