"""The curators' workbench in the browser: a Streamlit multipage app over the Python client.

The UI never opens a store: it talks to ``workbench serve`` through :func:`workbench.connect`
with the signed-in user's token, so every page shows what that user may see and every act is
theirs. ``workbench up`` starts the server and this app together; ``app.py`` is the script
Streamlit runs. Pages follow the user's roles (:mod:`workbench.ui.pages`).
"""
