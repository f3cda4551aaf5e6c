"""Who is signed in, and their client, for one browser session (``st.session_state``).

The server's URL comes from ``$WORKBENCH_URL`` (``workbench up`` sets it). A token is checked by
asking the server who it belongs to (``/api/me``); it is kept only in this session's server-side
state, never in the page or the URL.
"""

from __future__ import annotations

import os

import streamlit as st

import workbench
from workbench.access.users import Role, User
from workbench.client import Client

DEFAULT_URL = "http://127.0.0.1:7000"
_CLIENT, _USER = "workbench.client", "workbench.user"


def server_url() -> str:
    return os.environ.get("WORKBENCH_URL", DEFAULT_URL).rstrip("/")


def sign_in(token: str) -> User | None:
    """Check ``token`` with the server and keep the client for this session. Returns the user
    (None on a store with no users: anyone may read it). Raises what the client raises:
    Forbidden for a wrong token, StoreUnavailable when the server does not answer."""
    client = workbench.connect(server_url(), token.strip() or None)
    user = client.me()
    st.session_state[_CLIENT] = client
    st.session_state[_USER] = user
    return user


def sign_out() -> None:
    for key in (_CLIENT, _USER):
        st.session_state.pop(key, None)


def signed_in() -> bool:
    return _CLIENT in st.session_state


def client() -> Client:
    """The signed-in session's client (pages are only reachable once signed in)."""
    found: Client = st.session_state[_CLIENT]
    return found


def user() -> User | None:
    found: User | None = st.session_state.get(_USER)
    return found


def may(role: Role | tuple[Role, ...] | None) -> bool:
    """Whether the signed-in user holds ``role``, or one of several (admins hold every role;
    None: anyone)."""
    if role is None:
        return True
    who = user()
    return who is not None and any(who.may(r) for r in (role if isinstance(role, tuple) else (role,)))
