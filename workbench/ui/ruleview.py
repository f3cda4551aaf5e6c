"""What the Rules and Sign-off pages both show: a version's acts, test results, a dry run, and
the text of the version in use (to diff a proposal against)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from workbench.client import Client
from workbench.review.rulebook import Version
from workbench.review.ruledryrun import Conclusion, DryRun
from workbench.rules.check import CaseResult


def acts(v: Version) -> str:
    """Who did what to a version, in one line."""
    out = [f"proposed by {v.proposed.who} at {v.proposed.when}", f"author {v.author}"]
    if v.signed_off:
        out.append(f"signed off by {v.signed_off.who} at {v.signed_off.when}"
                   + (f" (“{v.signed_off.comment}”)" if v.signed_off.comment else ""))
    if v.retired:
        out.append(f"retired by {v.retired.who} at {v.retired.when}"
                   + (f" (“{v.retired.comment}”)" if v.retired.comment else ""))
    return "; ".join(out)


def cases(label: str, results: Sequence[CaseResult]) -> None:
    """Test cases with pass or fail, and what was missing or unwanted."""
    failed = [c for c in results if not c.passed]
    if not results:
        st.warning(f"{label} has no test cases.")
    elif failed:
        st.error(f"{label}: {len(failed)} of {len(results)} test case(s) fail.", icon=":material/cancel:")
    else:
        st.success(f"{label}: all {len(results)} test case(s) pass.", icon=":material/check_circle:")
    if results:
        st.dataframe([{"test case": c.case, "result": "pass" if c.passed else "FAIL",
                       "expected, not concluded": "\n".join(c.missing),
                       "concluded, must not follow": "\n".join(c.unwanted)} for c in results], hide_index=True)


def _conclusions(title: str, mark: str, items: Sequence[Conclusion], total: int) -> None:
    if not total:
        return
    st.markdown(f"**{title}** ({len(items)} of {total} shown)")
    for c in items:
        with st.expander(f"{mark} {c.text}"):
            st.code("\n".join(c.proof) or "(no proof given)", language=None)


def dry_run(dr: DryRun) -> None:
    """A dry run: counts, samples with their proofs, and contradictions with recorded facts."""
    against = f"against {dr.against}, the version in use" if dr.against else "against no version in use"
    st.caption(f"{dr.rule} {against}: {dr.subjects} subject(s) asked about, {dr.questions} question(s). "
               "Nothing was written.")
    cols = st.columns(4)
    cols[0].metric("Conclusions before", dr.before)
    cols[1].metric("After", dr.after, delta=dr.after - dr.before)
    cols[2].metric("Added", dr.added_count)
    cols[3].metric("Removed", dr.removed_count)
    _conclusions("Added", "+", dr.added, dr.added_count)
    _conclusions("Removed", "−", dr.removed, dr.removed_count)
    if dr.contradictions:
        st.error(f"Contradicts {len(dr.contradictions)} recorded negative fact(s):\n\n" + "\n".join(
            f"- {x.conclusion.text}{' (new)' if x.new else ' (also drawn today)'}: record `{x.record}` says it is "
            f"not so ({x.said})" for x in dr.contradictions), icon=":material/report:")
    else:
        st.info("No recorded fact says any of its conclusions is not so.", icon=":material/balance:")
    if dr.incomplete:
        st.warning("Incomplete: the depth bound was reached, so there may be more conclusions.")


def file_text(row: dict[str, Any]) -> str | None:
    """The text of a rule in the server's rules directory, when this machine can read it (``workbench
    up`` runs both here); the API gives the text of stored versions only."""
    where = row.get("where")
    if not where or where == "store":
        return None
    path = Path(str(where))
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def in_use(client: Client, rule_id: str, stored: Sequence[Version] | None = None) -> tuple[str, str] | None:
    """The version of ``rule_id`` that answers now, as (label, text): its active stored version, else
    the rules directory's. None when no version answers (or its text cannot be read here)."""
    stored = client.rule_versions(rule_id) if stored is None else stored
    active = [v for v in stored if v.status == "active"]
    if active:
        return active[-1].label, active[-1].text
    for row in client.rule_list():
        if row["id"] == rule_id and row["where"] != "store" and row.get("answers"):
            text = file_text(row)
            if text is not None:
                return f"{rule_id} v{row['version']} (rules directory)", text
    return None
