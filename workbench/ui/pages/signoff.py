"""Sign-off: a reviewer's queue of proposed rule versions, each with its diff against the version
in use, its test cases, a dry run on this store and the contradictions it would draw; then sign
off, or send back, with a comment.

Never one's own rule: the sign-off button is disabled, with the reason, on a version the signed-in
reviewer wrote or proposed (the service refuses it too). The service has no separate "send back"
act for rule versions: sending back withdraws the proposed version (``retire_rule`` with that
version; it reads "retired" in the history, with the comment as the reason), and the author
proposes a new version.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from workbench.access.users import Role
from workbench.client import Client
from workbench.errors import WorkbenchError
from workbench.review.rulebook import Version
from workbench.review.ruledryrun import DryRun
from workbench.rules.check import CaseResult
from workbench.ui import rulecheck, ruleview, session
from workbench.ui.common import acting, explain, needs

FLASH = "signoff.flash"


def render() -> None:
    st.title("Sign-off")
    if not needs(Role.REVIEWER, "Signing off rules"):
        return
    client = session.client()
    if FLASH in st.session_state:
        st.success(st.session_state.pop(FLASH), icon=":material/check_circle:")
    waiting: list[Version] = []
    with acting():
        waiting = [v for v in client.rule_versions() if v.status == "proposed"]
    if not waiting:
        st.info("No rule version waits for sign-off.", icon=":material/inbox:")
        return
    st.caption(f"{len(waiting)} version(s) wait for a reviewer who is neither their author nor their proposer.")
    st.dataframe([{"rule": v.id, "version": v.version, "author": v.author, "proposed by": v.proposed.who,
                   "proposed at": v.proposed.when} for v in waiting], hide_index=True)
    labels = {v.label: v for v in waiting}
    chosen = st.selectbox("Version to review", list(labels), key="signoff.pick")
    if chosen:
        _review(client, labels[chosen])


def _own(v: Version) -> str:
    """Why the signed-in reviewer may not sign ``v`` off ("" when they may)."""
    who = session.user()
    name = who.name if who else ""
    if name and name == v.author:
        return f"You wrote {v.label}: a reviewer other than its author signs it off."
    if name and name == v.proposed.who:
        return f"You proposed {v.label}: a reviewer other than its author and its proposer signs it off."
    return ""


def _review(client: Client, v: Version) -> None:
    st.subheader(v.label)
    st.caption(ruleview.acts(v))
    st.markdown("**What changes**")
    with acting():
        current = ruleview.in_use(client, v.id)
        if current is None:
            st.caption("No version of this rule answers now: all of its text is new.")
            st.code(v.text, language="turtle")
        else:
            label, text = current
            st.code(rulecheck.diff(text, v.text, label, v.label) or "(the same text as the version in use)",
                    language="diff")
    st.markdown("**Test cases**")
    results: list[CaseResult] | None = None
    with acting():
        label, results = client.run_rule_tests(v.id, v.version)
        ruleview.cases(label, results)
    st.markdown("**Dry run on this store**")
    key = f"signoff.dry.{v.iri}"
    if key not in st.session_state or st.button("Run the dry run again", key="signoff.dry_again",
                                                icon=":material/refresh:"):
        try:
            with st.spinner("Asking each subject the rule could reach, with and without it..."):
                st.session_state[key] = client.dry_run_rule(v.id, v.version)
        except WorkbenchError as exc:
            st.error(explain(exc), icon=":material/error:")
    dry: DryRun | None = st.session_state.get(key)
    if dry is not None:
        ruleview.dry_run(dry)
    _decide(client, v, failing=results is None or any(not c.passed for c in results))


def _decide(client: Client, v: Version, *, failing: bool) -> None:
    own = _own(v)
    sign, back = st.columns(2)
    with sign.form(f"signoff.sign.{v.iri}"):
        st.markdown("**Sign off**")
        comment = st.text_input("What you checked", key=f"signoff.comment.{v.iri}",
                                placeholder="e.g. read the diff and the dry run; tests pass",
                                help="Kept with the sign-off. Enter signs off.")
        why_not = own or ("Its test cases fail: it cannot be signed off." if failing else "")
        if why_not:
            st.caption(f":material/block: {why_not}")
        if st.form_submit_button("Sign off", type="primary", key=f"signoff.sign_go.{v.iri}", disabled=bool(why_not),
                                 icon=":material/verified:"):
            if not comment.strip():
                st.error("Please say what you checked: the comment is kept with the sign-off.")
            else:
                _act(lambda: client.signoff_rule(v.id, comment=comment.strip(), version=v.version),
                     f"Signed off {v.label}: it answers from now on.")
    with back.form(f"signoff.back.{v.iri}"):
        st.markdown("**Send back**")
        reason = st.text_input("What should change", key=f"signoff.reason.{v.iri}",
                               placeholder="e.g. the body is too wide; add a test for X",
                               help="Enter sends it back. The version is withdrawn (marked retired, with this "
                                    "comment as the reason); the author proposes a new version.")
        if st.form_submit_button("Send back", key=f"signoff.back_go.{v.iri}", icon=":material/undo:"):
            if not reason.strip():
                st.error("Please say what should change: the author reads it in the rule's history.")
            else:
                _act(lambda: client.retire_rule(v.id, reason=f"sent back: {reason.strip()}", version=v.version),
                     f"Sent back {v.label}: it is withdrawn, with your comment in its history.")


def _act(call: Callable[[], object], done: str) -> None:
    try:
        call()
    except WorkbenchError as exc:
        st.error(explain(exc), icon=":material/error:")
        return
    st.session_state[FLASH] = done
    st.session_state.pop("signoff.pick", None)
    st.rerun()
