"""The Starlette application: routes, limits and the JSON error shape.

``/sparql`` answers in the SPARQL Protocol's terms (text/plain errors), except that a browser
opening it gets the query editor (:mod:`workbench.server.editor`, its files under
``/sparql-editor/``); every other route, including unknown ones, answers errors as
:meth:`WorkbenchError.to_json`, the one JSON shape the CLI's messages also come from.
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.errors import WorkbenchError
from workbench.server.api import Api
from workbench.server.editor import assets, editor_response, wants_editor
from workbench.server.lane import TRIED
from workbench.server.runner import QueryRunner
from workbench.server.sparql import PATHS, Endpoint, failed
from workbench.service import Workbench

log = logging.getLogger(__name__)
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]  # /sparql answers each, if only with 405
KINDS = {400: "Invalid", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
         413: "TooLarge"}


def create_app(
    wb: Workbench, *, max_body: int = 1_000_000, query_timeout: float = 30.0, result_limit: int = 100_000,
    query_workers: int | None = None,
) -> ASGIApp:
    """The HTTP application over ``wb``: the SPARQL 1.1 Protocol at ``/sparql`` (a query editor
    for a browser), the JSON API under ``/api/`` (:mod:`workbench.server.api`, its schema at
    ``/api/openapi.json``).

    ``max_body`` bounds a request body (bytes, else 413), ``query_timeout`` a query's run
    (seconds, else 503), ``result_limit`` an answer's rows or triples (else 413);
    ``query_workers`` is how many processes run SPARQL on readers' views (None: the default).

    >>> import tempfile, pathlib
    >>> from starlette.testclient import TestClient
    >>> wb = Workbench.open(pathlib.Path(tempfile.mkdtemp()) / "s", create=True)
    >>> with TestClient(create_app(wb)) as client:
    ...     client.get("/sparql", params={"query": "ASK {}"}).json()
    {'head': {}, 'boolean': True}
    >>> wb.close()
    """
    api = Api(wb, max_body)
    runner = QueryRunner(timeout=query_timeout, workers=query_workers)
    endpoint = Endpoint(wb, max_body, result_limit, runner, lock=api.lock)  # one writer

    async def index(request: Request) -> Response:
        return JSONResponse({"service": "workbench", "sparql": str(request.url_for("sparql")),
                             "api": str(request.url_for("api.schema"))})

    async def sparql(request: Request) -> Response:
        if wants_editor(request):  # a browser: the page needs no token, its queries do
            return editor_response(str(request.url_for("sparql")))
        return await endpoint.handle(request)

    app = Starlette(
        routes=[
            Route("/", index, methods=["GET"]),
            Route(PATHS[0], sparql, methods=METHODS, name="sparql"),
            *(Route(path, sparql, methods=METHODS) for path in PATHS[1:]),
            assets(),
            *api.routes(),
        ],
        exception_handlers={HTTPException: _http_error, WorkbenchError: _workbench_error, Exception: _failure},
    )
    return QuickLane(app, endpoint)  # outside the framework: its middleware would cost more than such a query


class QuickLane:
    """ASGI middleware: a bounded query by GET on /sparql is answered at once, on the event loop
    (:meth:`Endpoint.quick`); every other request goes on to the application. Under ``workbench
    serve`` the HTTP layer answers these before ASGI (:mod:`workbench.server.lane`); what it
    sends on, it marks, and the lane is not asked again."""

    def __init__(self, app: ASGIApp, endpoint: Endpoint) -> None:
        self.app, self.endpoint = app, endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in PATHS and TRIED not in scope:
            try:
                found = self.endpoint.quick(scope)
                response = None if found is None else Response(found[0], media_type=found[1])
            except Exception:  # answered as the endpoint answers a failure
                response = failed()
            if response is not None:
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = KINDS.get(exc.status_code, "HTTPError")
    message = f"no such route: {request.url.path}" if exc.status_code == 404 else exc.detail
    return JSONResponse({"error": kind, "message": message}, status_code=exc.status_code, headers=exc.headers)


async def _workbench_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WorkbenchError)
    return JSONResponse(exc.to_json(), status_code=exc.status)


async def _failure(request: Request, exc: Exception) -> Response:
    log.exception("request failed", exc_info=exc)
    body = {"error": "WorkbenchError", "message": "the server failed; nothing was changed"}
    return JSONResponse(body, status_code=500)
