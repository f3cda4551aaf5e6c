"""The script ``streamlit run`` is given (``workbench up`` does): the app of :mod:`workbench.ui.app`.

It lives in a directory of its own because Streamlit treats a ``pages/`` directory beside its
script as pages of its own: beside ``workbench/ui/pages/`` the first request after a start, if
it named a page (a bookmark, a restored tab), ran the page module itself, a blank page with the
module names for navigation and no sign-in.
"""

from workbench.ui.app import main

if __name__ == "__main__":  # as Streamlit runs a script, on every rerun
    main()
