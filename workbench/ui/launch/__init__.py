"""Where Streamlit's script lives: a directory of its own (see ``streamlit_app.py``)."""
