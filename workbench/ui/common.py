"""What every page shows the same way: tiers, errors a person can act on, proof trees.

Errors: :func:`acting` wraps a call to the server and turns its WorkbenchError into a message
in plain words, naming the field or line where the server did (the page keeps what the user
typed, since Streamlit keeps widget state).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from workbench.access.users import Role
from workbench.errors import Conflict, Forbidden, Invalid, NotFound, ParseError, StoreUnavailable, WorkbenchError
from workbench.presentation.notebook import TIER_LABELS
from workbench.ui import session

# Tier -> (label, colour) for st.badge: the notebook's words; guesses stand apart in their own colour.
_COLOURS = {"recorded": "green", "derived": "blue", "guessed": "orange", "ambiguous": "violet", "conflicting": "red"}
TIERS = {t: (label, _COLOURS.get(t, "gray")) for t, label in TIER_LABELS.items()}


def tier_badge(tier: str) -> None:
    """The tier of an answer, as a badge people learn to read at a glance."""
    label, colour = TIERS.get(tier, (tier.replace("_", " "), "gray"))
    st.badge(label, color=colour)  # type: ignore[arg-type]


def explain(exc: WorkbenchError) -> str:
    """An error in words a person can act on."""
    where = f" ({exc.where})" if getattr(exc, "where", None) else ""
    if isinstance(exc, StoreUnavailable):
        return f"Lost the connection to the Workbench server: {exc.message}. Is `workbench up` still running?"
    if isinstance(exc, Conflict):
        return f"Someone changed this first{where}: {exc.message}. Your edit is kept below; reload to see theirs."
    if isinstance(exc, Forbidden):
        return f"Not allowed: {exc.message}"
    if isinstance(exc, ParseError | Invalid):
        return f"Please fix{where}: {exc.message}"
    if isinstance(exc, NotFound):
        return f"Not found: {exc.message}"
    return str(exc)


def needs(role: Role, doing: str) -> bool:
    """Whether the signed-in user may ``doing`` (holds ``role``); if not, the page says what to ask
    an admin for."""
    if session.may(role):
        return True
    st.warning(f"{doing} needs the {role.value} role; an admin can add it "
               f"(`workbench users add NAME --role {role.value}`).")
    return False


@contextmanager
def acting() -> Iterator[None]:
    """Run a call to the server; show its error (if any) on the page instead of a traceback."""
    try:
        yield
    except WorkbenchError as exc:
        st.error(explain(exc), icon=":material/error:")
