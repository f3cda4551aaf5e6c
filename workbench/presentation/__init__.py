"""Presentation at the edge: answers in words, proof trees as Graphviz DOT, and HTML and tables for
Jupyter. Values reach it only lazily (``_repr_html_``)."""
