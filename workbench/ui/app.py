"""The browser workbench's one script: signed out, the only page is the sign-in; signed in, the
pages the user's roles allow.

Streamlit runs it through ``workbench/ui/launch/streamlit_app.py`` (``workbench up`` does; or
``streamlit run workbench/ui/launch/streamlit_app.py`` with ``$WORKBENCH_URL`` set), never as
``streamlit run workbench/ui/app.py``: Streamlit takes a ``pages/`` directory beside its script
for pages of its own, and the page modules here live in ``workbench/ui/pages/``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

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
        # Every page's address leads to the sign-in, so a link opened in a new tab (/review,
        # /sources?record=ID) shows that page once signed in, if the user's roles allow it.
        pages = [st.Page(sign_in_page, title="Sign in", icon=":material/login:", default=True)]
        pages += [st.Page(_signing_in(spec.module), title="Sign in", url_path=spec.module) for spec in PAGES]
        st.navigation(pages, position="hidden").run()
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
            sections.setdefault(spec.section, []).append(
                st.Page(_page(spec.module), title=spec.title, icon=spec.icon, url_path=spec.module))
    st.navigation(sections).run()


def _signing_in(module: str) -> Callable[[], None]:
    """The sign-in, at a page's address."""

    def page() -> None:
        sign_in_page()

    page.__name__ = f"sign_in_{module}"
    return page


def _page(module: str) -> Callable[[], None]:
    """The page's render(), its module imported only when the page is shown."""

    def render() -> None:
        importlib.import_module(f"workbench.ui.pages.{module}").render()

    render.__name__ = module
    return render


if __name__ == "__main__":  # as Streamlit runs a script
    main()
