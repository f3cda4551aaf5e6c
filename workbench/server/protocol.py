"""Reading a SPARQL 1.1 Protocol request: which query, over which dataset, or why not.

The Protocol allows three ways to send a query (GET ``?query=``, POST form-encoded ``query=``,
POST ``application/sparql-query``) and names the dataset with ``default-graph-uri`` /
``named-graph-uri``. Everything else is refused here with the status the W3C tests expect,
before the store is touched: updates (this endpoint is read-only), SERVICE (it never calls out),
several queries in one request, bodies that are not UTF-8, unknown media types.

>>> query_form("PREFIX ex: <http://ex/#> # a comment\\n SELECT * { ?s ?p ?o }")
'SELECT'
>>> calls_out("SELECT * { SERVICE <http://elsewhere/sparql> { ?s ?p ?o } }")
True
>>> calls_out('SELECT * { ?s ex:SERVICE "SERVICE <x>" }')
False
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field

from workbench.errors import WorkbenchError

FORM = "application/x-www-form-urlencoded"
DIRECT = "application/sparql-query"
UPDATE = "application/sparql-update"
UPDATE_REFUSED = "SPARQL Update is not accepted here"


class ProtocolError(WorkbenchError):
    """A request the Protocol endpoint refuses, with the HTTP status to answer and any headers
    (``Allow``, ``WWW-Authenticate``). It never leaves the server package."""

    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


@dataclass(frozen=True)
class QueryRequest:
    """A query and the dataset the request names (None: not named, the query's own applies)."""

    query: str
    default_graphs: list[str] | None = None
    named_graphs: list[str] | None = None


@dataclass
class Params:
    """Protocol parameters from the URL and a form body, each name to every value given."""

    values: dict[str, list[str]] = field(default_factory=dict)

    def add(self, pairs: list[tuple[str, str]]) -> None:
        for key, value in pairs:
            self.values.setdefault(key, []).append(value)

    def get(self, key: str) -> list[str]:
        return self.values.get(key, [])


def parse_pairs(text: bytes | str, where: str) -> list[tuple[str, str]]:
    """``a=1&b=2`` as pairs; percent-escapes must decode as UTF-8."""
    try:
        raw = text.decode("utf-8") if isinstance(text, bytes) else text
        return urllib.parse.parse_qsl(raw, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise ProtocolError(400, f"the {where} is not UTF-8") from None


def content_type(header: str | None) -> tuple[str, dict[str, str]]:
    """A Content-Type header's media type (lower case) and parameters."""
    if not header:
        return "", {}
    media, *rest = header.split(";")
    params = {}
    for item in rest:
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip().strip('"')
    return media.strip().lower(), params


def read_request(method: str, query_string: bytes, ctype: str | None, body: bytes) -> QueryRequest | None:
    """The query a request carries, or None for a GET with no query (the service description).

    Raises ProtocolError: 400 for several queries, a non-UTF-8 body or an update sent as a query;
    403 for an update; 415 for a POST that is neither form-encoded nor ``application/sparql-query``.
    """
    params = Params()
    params.add(parse_pairs(query_string, "query string"))
    media, media_params = content_type(ctype)
    direct: str | None = None
    if method == "POST":
        if media == FORM:
            params.add(parse_pairs(body, "form body"))
        elif media == DIRECT:
            charset = media_params.get("charset", "utf-8").lower()
            if charset not in ("utf-8", "utf8"):
                raise ProtocolError(400, f"a query must be sent as UTF-8, not {charset}")
            try:
                direct = body.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError(400, "the query is not valid UTF-8") from None
        elif media == UPDATE:
            raise ProtocolError(403, UPDATE_REFUSED)
        else:
            shown = media or "no Content-Type"
            message = f"a POST to /sparql must be {FORM} or {DIRECT}, not {shown}"
            raise ProtocolError(415, message, headers={"Accept-Post": f"{FORM}, {DIRECT}"})
    if params.get("update") or params.get("using-graph-uri") or params.get("using-named-graph-uri"):
        raise ProtocolError(403, UPDATE_REFUSED)
    queries = params.get("query") + ([direct] if direct is not None else [])
    if not queries:
        if method == "POST":
            raise ProtocolError(400, "no query: send query=... or a body of type application/sparql-query")
        return None
    if len(queries) > 1:
        raise ProtocolError(400, f"one query per request, not {len(queries)}")
    default, named = params.get("default-graph-uri"), params.get("named-graph-uri")
    return QueryRequest(queries[0], default or None, named or None)


# ---------------------------------------------------------------------- looking at the query text

_TOKENS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'"
    r'|<[^<>"{}|^`\\\s]*>'
    r"|#[^\n]*",
    re.DOTALL,
)
_PROLOGUE = re.compile(r"\s*(?:(?:PREFIX\s*[^\s:]*:\s*<>|BASE\s*<>)\s*)*", re.IGNORECASE)
_FORM = re.compile(
    r"(SELECT|ASK|CONSTRUCT|DESCRIBE|INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.IGNORECASE
)
_SERVICE = re.compile(r"(?<![\w:?$.\-])SERVICE\b(?![:\-])", re.IGNORECASE)
UPDATES = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})


def _masked(query: str) -> str:
    """The query with strings, IRIs and comments blanked, so keywords inside them do not count."""

    def blank(m: re.Match[str]) -> str:
        token = m.group(0)
        return "<>" if token.startswith("<") else " " if token.startswith("#") else '""'

    return _TOKENS.sub(blank, query)


def query_form(query: str) -> str | None:
    """SELECT, ASK, CONSTRUCT, DESCRIBE, or an update keyword; None if the text does not say
    (the parser then gives its own message)."""
    text = _masked(query)
    prologue = _PROLOGUE.match(text)
    rest = text[prologue.end() if prologue else 0 :]
    found = _FORM.match(rest)
    return found.group(1).upper() if found else None


def calls_out(query: str) -> bool:
    """Whether the query uses SERVICE. The endpoint refuses it outright: it never makes requests
    on a client's behalf (and federated results would bypass visibility)."""
    return _SERVICE.search(_masked(query)) is not None
