"""The Streamlit script: ``streamlit run workbench/ui/app.py`` (``workbench up`` runs it).

Signed out, the only page is the sign-in; signed in, the pages the user's roles allow.
"""

from __future__ import annotations

import importlib

import streamlit as st

from workbench.errors import WorkbenchError
from workbench.ui import session
from workbench.ui.common import explain
from workbench.ui.pages import PAGES


def sign_in_page() -> None:
    st.title("Workbench")
    st.caption(f"A memory that says how it knows. Server: {session.server_url()}")
    with st.form("sign-in"):
        token = st.text_input("Your API token", type="password",
                              help="`workbench users add NAME --role ...` prints it once; `workbench up` "
                                   "prints the first admin's.")
        if st.form_submit_button("Sign in", type="primary"):
            try:
                session.sign_in(token)
            except WorkbenchError as exc:
                st.error(explain(exc))
            else:
                st.rerun()


def main() -> None:
    st.set_page_config(page_title="Workbench", page_icon=":material/psychology:", layout="wide")
    if not session.signed_in():
        st.navigation([st.Page(sign_in_page, title="Sign in", icon=":material/login:")]).run()
        return
    who = session.user()
    with st.sidebar:
        if who is None:
            st.caption("An open store (no users): read only.")
        else:
            roles = ", ".join(sorted(r.value for r in who.roles))
            st.markdown(f"**{who.name}** · {roles}")
        if st.button("Sign out", icon=":material/logout:"):
            session.sign_out()
            st.rerun()
    sections: dict[str, list[st.Page]] = {}
    for spec in PAGES:
        if session.may(spec.role):
            render = importlib.import_module(f"workbench.ui.pages.{spec.module}").render
            sections.setdefault(spec.section, []).append(
                st.Page(render, title=spec.title, icon=spec.icon, url_path=spec.module))
    st.navigation(sections).run()


main()
