"""The query editor a browser gets at ``/sparql``: YASGUI, served by the server itself.

A browser opening ``/sparql`` (a GET with no query whose ``Accept`` rates HTML above Turtle, see
:func:`wants_editor`) gets :func:`editor_response`, a small page that loads the vendored YASGUI
build (``resources/yasgui/``, version and refresh command in its README.md) from
``/sparql-editor/`` (:func:`assets`) and points it at this server's own ``/sparql``, by POST.

Nothing is loaded from elsewhere, so the page works offline: the two YASGUI autocompleters that
ask a web service (Linked Open Vocabularies, for properties and classes) are switched off, the
endpoint list offers only this server, and the page's Content-Security-Policy lets it connect to
its own origin only. The token box adds ``Authorization: Bearer TOKEN`` to each query; the token
is kept in ``sessionStorage`` (this tab, until it closes), never in YASGUI's ``localStorage``, never
in a share link. YASGUI keeps queries in ``localStorage`` as usual, but not their results.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import os
import re
import secrets
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from workbench.resources import YASGUI_DIR
from workbench.server import negotiation

STATIC = YASGUI_DIR
PREFIX = "/sparql-editor"
# By suffix, so that the answer does not depend on the machine's mime.types.
MEDIA_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    "": "text/plain; charset=utf-8",  # LICENSE
}
# The page asks for the files with ?v=<hash of their content>, so a refreshed build is fetched anew.
ASSET_CACHE = "public, max-age=86400"
DEFAULT_QUERY = """PREFIX wb: <https://w3id.org/workbench/ns#>
SELECT ?record ?statement WHERE {
  GRAPH ?source { ?record wb:statement ?statement }
}
LIMIT 20
"""
_SLOT = re.compile(r"\{\{(\w+)\}\}")
CSP = (
    "default-src 'none'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)


def wants_editor(request: Request) -> bool:
    """Whether ``request`` is a browser opening ``/sparql``: a GET (or HEAD) with neither a
    ``query`` nor an ``update`` parameter whose ``Accept`` rates text/html above Turtle.

    Programs asking for the service description (no Accept, ``*/*``, a SPARQL results type)
    and every query or update go to the Protocol endpoint as before.

    >>> from starlette.requests import Request
    >>> def asking(accept: str, query: bytes = b"", method: str = "GET") -> bool:
    ...     headers = [(b"accept", accept.encode())]
    ...     scope = {"type": "http", "method": method, "query_string": query, "headers": headers}
    ...     return wants_editor(Request(scope))
    >>> asking("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
    True
    >>> asking("text/html", b"query=ASK%7B%7D"), asking("text/html", method="POST")
    (False, False)
    >>> asking("application/sparql-results+json"), asking("*/*"), asking("")
    (False, False, False)
    """
    if request.method not in ("GET", "HEAD"):
        return False
    if "query" in request.query_params or "update" in request.query_params:
        return False
    return negotiation.prefers(request.headers.get("accept"), "text/html", "text/turtle")


@functools.cache
def asset_version() -> str:
    """A short hash of the vendored build, for the asset URLs (computed once per process)."""
    digest = hashlib.sha256()
    for name in ("yasgui.min.js", "yasgui.min.css"):
        digest.update((STATIC / name).read_bytes())
    return digest.hexdigest()[:12]


def _json_for_html(value: object) -> str:
    """JSON that is safe inside a <script> element: no '<', '>' or '&' to end it early."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(endpoint: str, nonce: str) -> str:
    """The editor page for the endpoint at ``endpoint`` (an absolute URL), its inline script
    allowed by ``nonce``.

    >>> text = page("http://127.0.0.1:7000/sparql", "n0")
    >>> "<title>Workbench SPARQL</title>" in text and '"endpoint": "http://127.0.0.1:7000/sparql"' in text
    True
    >>> "</script><b>" in page("http://h/</script><b>", "n0")
    False
    """
    config = {"endpoint": endpoint, "query": DEFAULT_QUERY, "tokenKey": "workbench.sparql.token"}
    version = asset_version()
    values = {
        "css": f"{PREFIX}/yasgui.min.css?v={version}",
        "js": f"{PREFIX}/yasgui.min.js?v={version}",
        "endpoint": html.escape(endpoint),
        "query": html.escape(DEFAULT_QUERY),
        "nonce": nonce,
        "config": _json_for_html(config),
    }
    return _SLOT.sub(lambda m: values[m.group(1)], TEMPLATE)  # one pass: a value is never read as a slot


def editor_response(endpoint: str) -> Response:
    """The editor page as an answer, with a Content-Security-Policy that keeps it on this origin."""
    nonce = secrets.token_urlsafe(16)
    headers = {
        "Content-Security-Policy": CSP.format(nonce=nonce),
        "Cache-Control": "no-cache",
        "Vary": "Accept",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    return HTMLResponse(page(endpoint, nonce), headers=headers)


class EditorFiles(StaticFiles):
    """The vendored YASGUI files: fixed content types, a Cache-Control header, ETag revalidation."""

    def file_response(
        self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = ASSET_CACHE
        if response.status_code != 304:
            suffix = Path(full_path).suffix
            response.headers["Content-Type"] = MEDIA_TYPES.get(suffix, "application/octet-stream")
            response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def assets() -> Mount:
    """The route serving ``resources/yasgui/`` under ``/sparql-editor/`` (no token needed: it is code)."""
    return Mount(PREFIX, app=EditorFiles(directory=STATIC), name="sparql-editor")


TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Workbench SPARQL</title>
<link rel="stylesheet" href="{{css}}">
<style>
  body { margin: 0; font-family: system-ui, sans-serif; }
  .wb-bar { display: flex; flex-wrap: wrap; gap: 0.5em 1em; align-items: center; padding: 0.5em 1em;
            border-bottom: 1px solid #ddd; background: #f7f7f7; }
  .wb-bar h1 { font-size: 1.1em; margin: 0; }
  .wb-bar p { margin: 0; color: #555; font-size: 0.9em; }
  .wb-token input { width: 22em; }
  #yasgui { padding: 0 0.5em; }
</style>
</head>
<body>
<div class="wb-bar">
  <h1>Workbench SPARQL</h1>
  <p>Read-only SPARQL 1.1 Query at <code>{{endpoint}}</code>. Each record is a named graph;
  record metadata is beside its source, in <code>GRAPH &lt;urn:wb:source:ID&gt;</code>.</p>
  <label class="wb-token">Token
    <input id="wb-token" type="password" autocomplete="off" spellcheck="false"
           placeholder="needed once the store has users">
  </label>
  <button id="wb-token-forget" type="button">Forget token</button>
  <p>Sent as <code>Authorization: Bearer</code> with each query; kept in this tab only.</p>
</div>
<div id="yasgui"></div>
<noscript>
<p>The query editor (YASGUI) needs JavaScript. This form sends the query as a plain GET
(without a token).</p>
<form method="get" action="">
<p><textarea name="query" rows="12" cols="100">{{query}}</textarea></p>
<p><button type="submit">Run query</button></p>
</form>
</noscript>
<script type="application/json" id="wb-editor-config">{{config}}</script>
<script src="{{js}}"></script>
<script nonce="{{nonce}}">
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("wb-editor-config").textContent);
  var box = document.getElementById("wb-token");
  var sharing = false;

  function token() { return box.value.trim(); }
  function keep() {
    try {
      if (token()) { sessionStorage.setItem(config.tokenKey, token()); }
      else { sessionStorage.removeItem(config.tokenKey); }
    } catch (e) { /* storage refused: the token lives in the box only */ }
  }
  try { box.value = sessionStorage.getItem(config.tokenKey) || ""; } catch (e) { box.value = ""; }
  box.addEventListener("input", keep);
  document.getElementById("wb-token-forget").addEventListener("click", function () {
    box.value = "";
    keep();
  });

  // Called by YASGUI for every query, never stored: YASGUI persists only plain values.
  function headers() {
    return token() && !sharing ? { Authorization: "Bearer " + token() } : {};
  }
  // A share link carries a tab's request headers: make them come out without the token.
  ["getShareableLink", "getShareObject"].forEach(function (name) {
    var original = Yasgui.Tab.prototype[name];
    Yasgui.Tab.prototype[name] = function () {
      sharing = true;
      try { return original.apply(this, arguments); } finally { sharing = false; }
    };
  });
  // The property and class autocompleters ask a web service (Linked Open Vocabularies): off.
  var offline = Yasgui.Yasqe.defaults.autocompleters.filter(function (name) {
    return name !== "property" && name !== "class";
  });
  Yasgui.Yasqe.defaults.autocompleters = offline;
  Yasgui.defaults.yasqe.autocompleters = offline.slice();

  window.workbenchYasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: { endpoint: config.endpoint, method: "POST", headers: headers },
    copyEndpointOnNewTab: false,
    endpointCatalogueOptions: { getData: function () { return [{ endpoint: config.endpoint }]; } },
    yasqe: { value: config.query },
    yasr: { maxPersistentResponseSize: 0 }
  });
})();
</script>
</body>
</html>
"""
