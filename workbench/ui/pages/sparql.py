"""SPARQL: a query editor, results as a table (a yes or no for ASK, Turtle for CONSTRUCT and
DESCRIBE), and downloads in the standard formats.

Queries go to the server's ``/sparql`` as the signed-in user (``Client.sparql``), so they see
what that user may see, and only queries run here (updates are refused). The editor is
streamlit-code-editor (Ace, with SPARQL highlighting; its scripts ship in the package, nothing
is loaded from elsewhere); a plain text box does the same job. A syntax error names its line and
column and points at the spot. "With the rules' conclusions" sends ``reasoning=true``: what the
signed-off rules conclude for the query, in the graph ``<urn:wb:graph:derived>``, never stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from workbench import formats
from workbench.client import Client
from workbench.errors import WorkbenchError
from workbench.ui import session
from workbench.ui.common import explain

KEY = "sparql"
EXAMPLES = {
    "Records by graph size": (
        "SELECT ?g (COUNT(*) AS ?triples)\nWHERE { GRAPH ?g { ?s ?p ?o } }\nGROUP BY ?g\nORDER BY DESC(?triples)\n"
        "LIMIT 20"),
    "Records and their statements": (
        "PREFIX wb: <https://w3id.org/workbench/ns#>\nPREFIX dcterms: <http://purl.org/dc/terms/>\n"
        "PREFIX prov: <http://www.w3.org/ns/prov#>\n\n"
        "SELECT ?id ?statement ?source\nWHERE {\n  GRAPH ?source {\n"
        "    ?record dcterms:identifier ?id ;\n            wb:statement ?statement ;\n"
        "            prov:wasDerivedFrom ?source .\n  }\n}\nORDER BY ?id"),
    "Is anything recorded about my car?": (
        "ASK { GRAPH ?g { <urn:wb:entity:my-car> ?p ?o } }"),
    "The triples of one record": (
        "CONSTRUCT { ?s ?p ?o }\nWHERE { GRAPH <urn:wb:record:m-car-1> { ?s ?p ?o } }"),
    "What things need, recorded and derived (turn on the rules' conclusions)": (
        "PREFIX wb: <https://w3id.org/workbench/ns#>\n\n"
        "SELECT ?thing ?needs ?graph\nWHERE { GRAPH ?graph { ?thing wb:needs ?needs } }\nORDER BY ?graph ?thing"),
}
# Download formats by kind of result: (format Client.sparql takes, button label, file extension, MIME type);
# graphs in the three formats people open (the endpoint also answers RDF/XML).
TABLE_FORMATS = tuple((f.name, f.label, f.extensions[0][1:], f.media_type) for f in formats.RESULTS)
GRAPH_FORMATS = tuple((f.name, f.label, f.extensions[0][1:], f.media_type) for f in formats.GRAPHS if f.name != "xml")
PROLOGUE = re.compile(r"\s*(?:#[^\n]*(?:\n|$)|BASE\s*<[^>]*>|PREFIX\s*[^\s:]*:\s*<[^>]*>)", re.IGNORECASE)
FORM = re.compile(r"\s*(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.IGNORECASE)
AT = re.compile(r"\bat (\d+):(\d+)\b")
XSD = "http://www.w3.org/2001/XMLSchema#"
INTEGERS = {"integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "negativeInteger",
            "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"}


def query_form(query: str) -> str | None:
    """SELECT, ASK, CONSTRUCT or DESCRIBE: the keyword after the prologue (comments, BASE and
    PREFIX declarations); None for anything else (the server then says what is wrong).

    >>> query_form("PREFIX ex: <http://e/#x> # a comment\\nconstruct { ?s ?p ?o } WHERE { ?s ?p ?o }")
    'CONSTRUCT'
    """
    pos = 0
    while (m := PROLOGUE.match(query, pos)) and m.end() > pos:
        pos = m.end()
    found = FORM.match(query, pos)
    return found.group(1).upper() if found else None


def term(t: dict[str, Any], full: bool = False) -> str:
    """One SPARQL JSON result term as text: its value, or (``full``) as N-Triples writes it."""
    kind, value = t.get("type"), str(t.get("value", ""))
    if kind == "uri":
        return f"<{value}>" if full else value
    if kind == "bnode":
        return f"_:{value}"
    if kind == "triple":
        inner = t.get("value", {})
        return "<< " + " ".join(term(inner[k], True) for k in ("subject", "predicate", "object")) + " >>"
    if not full:
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    if t.get("xml:lang"):
        return f'"{escaped}"@{t["xml:lang"]}'
    datatype = t.get("datatype")
    return f'"{escaped}"^^<{datatype}>' if datatype else f'"{escaped}"'


def results(data: bytes, full: bool = False) -> pd.DataFrame | bool:
    """SPARQL JSON results: a table for SELECT (one column per variable, empty where unbound),
    a boolean for ASK."""
    doc = json.loads(data)
    if "boolean" in doc:
        return bool(doc["boolean"])
    names = [str(v) for v in doc.get("head", {}).get("vars", [])]
    cell = (lambda t: term(t, True)) if full else _number_or_text
    rows = [{v: cell(b[v]) if v in b else None for v in names} for b in doc["results"]["bindings"]]
    return pd.DataFrame(rows, columns=names)


def _number_or_text(t: dict[str, Any]) -> int | float | str:
    """A number for a numeric literal (so that the table sorts it as one), else the term's text."""
    datatype = str(t.get("datatype", ""))
    if t.get("type") == "literal" and datatype.startswith(XSD):
        kind = datatype[len(XSD):]
        try:
            if kind in INTEGERS:
                return int(t["value"])
            if kind in ("decimal", "double", "float"):
                return float(t["value"])
        except ValueError:
            pass
    return term(t)


@dataclass(frozen=True)
class Ran:
    """A query that ran: its text, its form, and the answer as the server sent it."""

    query: str
    form: str  # "table" (SELECT, ASK) or "graph" (CONSTRUCT, DESCRIBE)
    data: bytes
    reasoning: bool = False  # with the rules' conclusions (in <urn:wb:graph:derived>)


def run(client: Client, query: str, reasoning: bool = False) -> Ran:
    """Run ``query`` as JSON results, or as Turtle when it builds a graph (``reasoning``: with
    the rules' conclusions)."""
    form = query_form(query)
    if form in ("CONSTRUCT", "DESCRIBE"):
        return Ran(query, "graph", client.sparql(query, format="turtle", reasoning=reasoning), reasoning)
    try:
        return Ran(query, "table", client.sparql(query, format="json", reasoning=reasoning), reasoning)
    except WorkbenchError as exc:
        if form is None and "text/turtle" in exc.message:  # a graph after all (the server says so)
            return Ran(query, "graph", client.sparql(query, format="turtle", reasoning=reasoning), reasoning)
        raise


def fetch(client: Client, query: str, fmt: str, reasoning: bool = False) -> Callable[[], bytes]:
    """The answer in ``fmt``, fetched when the download is clicked."""
    return lambda: client.sparql(query, format=fmt, reasoning=reasoning)


def render() -> None:
    st.title("SPARQL")
    st.caption("Query the store as you may see it. Records are named graphs (use `GRAPH ?g { ... }`); their "
               "metadata is beside their source, in `GRAPH <urn:wb:source:ID>`. Only queries run here, never updates.")
    state = st.session_state
    state.setdefault(f"{KEY}.query", EXAMPLES["Records by graph size"])
    state.setdefault(f"{KEY}.version", 0)
    left, right = st.columns([3, 1])
    with left:
        example = st.selectbox("Start from an example", ["—", *EXAMPLES], key=f"{KEY}.example")
    with right:
        plain = st.toggle("Plain text box", key=f"{KEY}.plain", help="A simple box instead of the editor with "
                          "syntax highlighting (for screen readers, or if the editor does not load).")
    reasoning = st.toggle("With the rules' conclusions", key=f"{KEY}.reasoning",
                          help="Also what the signed-off rules conclude for this query, computed now from what you "
                          "may see and never stored: each in the graph <urn:wb:graph:derived>, with its rule, its "
                          "records and a link to its proof.")
    if example != "—" and state.get(f"{KEY}.example.used") != example:
        state[f"{KEY}.example.used"] = example
        state[f"{KEY}.query"] = EXAMPLES[example]
        state[f"{KEY}.version"] += 1  # a fresh editor shows the new text
        state.pop(f"{KEY}.text", None)
    query = _plain() if plain else _editor()
    if query is not None:
        state[f"{KEY}.query"] = query
        state.pop(f"{KEY}.error", None)
        try:
            state[f"{KEY}.ran"] = run(session.client(), query, reasoning)
        except WorkbenchError as exc:
            state.pop(f"{KEY}.ran", None)
            state[f"{KEY}.error"] = exc
    error = state.get(f"{KEY}.error")
    if isinstance(error, WorkbenchError):
        _error(error, state[f"{KEY}.query"])
    ran = state.get(f"{KEY}.ran")
    if isinstance(ran, Ran):
        _show(ran)


def _plain() -> str | None:
    """The query from a text box (on Run), or None."""
    with st.form(f"{KEY}.form"):
        text = st.text_area("Query", value=st.session_state[f"{KEY}.query"], key=f"{KEY}.text", height=240)
        asked = st.form_submit_button("Run", type="primary", icon=":material/play_arrow:")
    return text if asked and text.strip() else None


def _editor() -> str | None:
    """The query from the code editor (on Ctrl+Enter or its Run button), or None."""
    try:
        from code_editor import code_editor
    except ImportError:
        st.caption("The editor with highlighting is not installed (pip install -e '.[ui]'); a plain box it is.")
        return _plain()
    state = st.session_state
    error = state.get(f"{KEY}.error")
    annotations = []
    if isinstance(error, WorkbenchError) and (at := AT.search(error.message)):
        annotations = [{"row": int(at.group(1)) - 1, "column": int(at.group(2)) - 1, "type": "error",
                        "text": error.message}]
    button = {"name": "Run", "feather": "Play", "primary": True, "hasText": True, "showWithIcon": True,
              "commands": ["submit"], "style": {"bottom": "0.44rem", "right": "0.4rem"}}
    answer = code_editor(state[f"{KEY}.query"], lang="sparql", height=[12, 24], buttons=[button],
                         props={"annotations": annotations}, key=f"{KEY}.editor.{state[f'{KEY}.version']}")
    st.caption("Ctrl+Enter or **Run** runs the query.")
    if not isinstance(answer, dict) or answer.get("type") != "submit" or not answer.get("id"):
        return None
    if state.get(f"{KEY}.editor.seen") == answer["id"]:
        return None  # the same submission, seen on an earlier run
    state[f"{KEY}.editor.seen"] = answer["id"]
    text = str(answer.get("text", ""))
    return text if text.strip() else None


def _error(exc: WorkbenchError, query: str) -> None:
    """The server's complaint; for a syntax error, the line and column, and the spot itself."""
    at = AT.search(exc.message)
    if not at:
        st.error(explain(exc), icon=":material/error:")
        return
    line, column = int(at.group(1)), int(at.group(2))
    what = exc.message[at.end():].lstrip(": ") or exc.message
    st.error(f"The query has a mistake at line {line}, column {column}: {what}", icon=":material/error:")
    lines = query.splitlines()
    if 1 <= line <= len(lines):
        text = lines[line - 1]
        st.code(f"{line:>4} | {text}\n     | {' ' * (column - 1)}^", language=None)


def _show(ran: Ran) -> None:
    st.subheader("Results")
    if ran.form == "graph":
        text = ran.data.decode("utf-8", "replace")
        st.caption(f"{_triples(text)} triples, as Turtle.")
        st.code(text or "# no triples", language="turtle")
        _downloads(ran, GRAPH_FORMATS)
        return
    full = st.toggle("Show terms in full (<IRIs>, \"literals\"^^types)", key=f"{KEY}.full")
    found = results(ran.data, full)
    if isinstance(found, bool):
        (st.success if found else st.info)(f"The answer is {'yes' if found else 'no'} ({str(found).lower()}).")
    else:
        st.caption(f"{len(found)} row{'s' if len(found) != 1 else ''}.")
        st.dataframe(found, hide_index=True)
    _downloads(ran, TABLE_FORMATS)


def _triples(turtle: str) -> int:
    import pyoxigraph as ox

    try:
        return sum(1 for _ in ox.parse(turtle.encode("utf-8"), format=ox.RdfFormat.TURTLE))
    except (SyntaxError, ValueError):
        return 0


def _downloads(ran: Ran, formats: tuple[tuple[str, str, str, str], ...]) -> None:
    st.markdown("Download:")
    cols = st.columns(len(formats) + 2)
    client = session.client()
    for col, (fmt, label, ext, mime) in zip(cols, formats, strict=False):
        with col:
            st.download_button(label, fetch(client, ran.query, fmt, ran.reasoning), file_name=f"results.{ext}",
                               mime=mime, key=f"{KEY}.download.{fmt}", icon=":material/download:", on_click="ignore")
