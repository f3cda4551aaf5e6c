"""Reading a SPARQL 1.1 Protocol request: which query, over which dataset, or why not.

The Protocol allows three ways to send a query (GET ``?query=``, POST form-encoded ``query=``,
POST ``application/sparql-query``) and names the dataset with ``default-graph-uri`` /
``named-graph-uri``; an update comes by POST only (form-encoded ``update=``, or
``application/sparql-update``) and :mod:`workbench.server.updates` decides what it may do.
Everything else is refused here with the status the W3C tests expect, before the store is
touched: updates by GET, several queries or updates in one request, bodies that are not UTF-8,
unknown media types. What a query itself may be (no SERVICE, bounded size and nesting) is the
service's check, :func:`workbench.sparqlcheck.check_query`, which every query goes through.
``reasoning=true`` (like Stardog's ``reasoning`` and GraphDB's ``infer``) adds the rules'
conclusions for the query, in their own graph (:mod:`workbench.rules.conclusions`).

>>> read_request("GET", b"query=ASK%20%7B%7D", None, b"")
QueryRequest(query='ASK {}', default_graphs=None, named_graphs=None, reasoning=False)
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field

from workbench.errors import WorkbenchError

FORM = "application/x-www-form-urlencoded"
DIRECT = "application/sparql-query"
UPDATE = "application/sparql-update"
SEND_UPDATES = f"send an update by POST: update=... in a form body ({FORM}), or a body of type {UPDATE}"


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
    reasoning: bool = False  # ``reasoning=true``: the rules' conclusions too (workbench.rules.conclusions)


@dataclass(frozen=True)
class UpdateRequest:
    """A SPARQL Update, sent by POST as the Protocol says (what it may do is decided later)."""

    update: str


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


def query_only(query_string: bytes) -> str | None:
    """The query of a query string that holds ``query=...`` and nothing else, decoded as
    :func:`parse_pairs` decodes it; None for any other (which :func:`read_request` reads in full).

    >>> query_only(b"query=ASK%20%7B%7D")
    'ASK {}'
    >>> query_only(b"query=ASK+%7B%7D&reasoning=true") is None
    True
    """
    if not query_string.startswith(b"query=") or b"&" in query_string:
        return None
    try:  # on the bytes: a third quicker than on the text, the same result
        return urllib.parse.unquote_to_bytes(query_string[6:].replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return None


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


def _utf8(body: bytes, params: dict[str, str], what: str) -> str:
    charset = params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise ProtocolError(400, f"{'an' if what == 'update' else 'a'} {what} must be sent as UTF-8, not {charset}")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(400, f"the {what} is not valid UTF-8") from None


def read_request(
    method: str, query_string: bytes, ctype: str | None, body: bytes
) -> QueryRequest | UpdateRequest | None:
    """The query or update a request carries, or None for a GET with no query (the service
    description).

    Raises ProtocolError: 400 for several queries or updates, a query and an update together, a
    non-UTF-8 body, an update by GET or in the URL, dataset parameters that do not apply; 415 for
    a POST that is neither form-encoded, ``application/sparql-query`` nor
    ``application/sparql-update``.
    """
    if method == "GET" and (query := query_only(query_string)) is not None:
        return QueryRequest(query, None, None, False)  # the usual GET, read without the general path
    url = Params()
    url.add(parse_pairs(query_string, "query string"))
    params = Params()
    params.add([(k, v) for k, vs in url.values.items() for v in vs])
    media, media_params = content_type(ctype)
    direct: str | None = None
    direct_update: str | None = None
    if method == "POST":
        if media == FORM:
            params.add(parse_pairs(body, "form body"))
        elif media == DIRECT:
            direct = _utf8(body, media_params, "query")
        elif media == UPDATE:
            direct_update = _utf8(body, media_params, "update")
        else:
            shown = media or "no Content-Type"
            message = f"a POST to /sparql must be {FORM}, {DIRECT} or {UPDATE}, not {shown}"
            raise ProtocolError(415, message, headers={"Accept-Post": f"{FORM}, {DIRECT}, {UPDATE}"})
    updates = params.get("update") + ([direct_update] if direct_update is not None else [])
    using = params.get("using-graph-uri") + params.get("using-named-graph-uri")
    queries = params.get("query") + ([direct] if direct is not None else [])
    if updates or using:
        return _update(method, url, params, updates, using, queries)
    if not queries:
        if method == "POST":
            raise ProtocolError(400, f"no query: send query=... or a body of type {DIRECT}; or {SEND_UPDATES}")
        return None
    if len(queries) > 1:
        raise ProtocolError(400, f"one query per request, not {len(queries)}")
    default, named = params.get("default-graph-uri"), params.get("named-graph-uri")
    return QueryRequest(queries[0], default or None, named or None, _switch(params.get("reasoning"), "reasoning"))


def _switch(values: list[str], name: str) -> bool:
    """A true/false parameter (absent: false); anything else is a clear 400."""
    if len(values) > 1:
        raise ProtocolError(400, f"{name} is given {len(values)} times; give it once, true or false")
    word = values[0].strip().lower() if values else "false"
    if word not in ("true", "false"):
        raise ProtocolError(400, f"{name} must be true or false, not {values[0]!r}")
    return word == "true"


def _update(
    method: str, url: Params, params: Params, updates: list[str], using: list[str], queries: list[str]
) -> UpdateRequest:
    """The update of a request that carries one; the Protocol's rules for updates, checked."""
    if method != "POST":
        raise ProtocolError(400, f"an update cannot be sent by {method}: {SEND_UPDATES}")
    if url.get("update"):
        raise ProtocolError(400, f"the update goes in the request body, not the URL: {SEND_UPDATES}")
    if queries:
        raise ProtocolError(400, "a request carries a query or an update, not both")
    if not updates:
        raise ProtocolError(400, f"using-graph-uri and using-named-graph-uri go with an update: {SEND_UPDATES}")
    if len(updates) > 1:
        raise ProtocolError(400, f"one update per request, not {len(updates)}")
    if using:
        raise ProtocolError(400, "using-graph-uri and using-named-graph-uri set the dataset of an update's WHERE; "
                                 "the only update accepted here, INSERT DATA, has none")
    if params.get("default-graph-uri") or params.get("named-graph-uri"):
        raise ProtocolError(400, "default-graph-uri and named-graph-uri go with a query, not an update")
    return UpdateRequest(updates[0])
