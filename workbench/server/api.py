"""The JSON API under ``/api/``: one route per Workbench call, described by
:mod:`workbench.server.routes` (which also validates requests and writes the OpenAPI document).

Each request: who asks (the bearer token; the server never trusts a claimed name), the fields
checked against the route table (400 naming the field), one Workbench call in a worker thread on
a per-request view acting as the token's user, and the result's ``to_json()``. Review routes
write, so they need a token even on a store with no users (401 otherwise). Errors are
:meth:`WorkbenchError.to_json` with the error's status. No CORS headers are sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from workbench.access.users import User
from workbench.errors import Invalid, ParseError
from workbench.model import Status
from workbench.server.access import REALM, authenticate
from workbench.server.protocol import ProtocolError
from workbench.server.routes import ROUTES, TABLE, ApiRoute, openapi, validate
from workbench.server.sparql import read_body
from workbench.service import Workbench

KINDS = {401: "Unauthorized", 413: "TooLarge"}
Call = Callable[[Workbench, dict[str, Any]], Any]


def _records(wb: Workbench, a: dict[str, Any]) -> Any:
    status = a.get("status", "active")
    try:
        parsed = None if status == "all" else Status(status)
    except ValueError:
        raise Invalid("must be active, superseded, retracted or all", where="status") from None
    try:
        found = wb.records(as_of=a.get("as_of"), status=parsed, record_type=a.get("type"), about=a.get("about"),
                           limit=a.get("limit"))
    except ValueError as exc:  # an unknown record type
        raise Invalid(str(exc), where="type") from None
    return [r.to_json() for r in found]


def _candidates(wb: Workbench, a: dict[str, Any]) -> Any:
    status = a.get("status", "pending")
    return [c.to_json() for c in wb.candidates(status=None if status == "all" else status, text=a.get("text"))]


CALLS: dict[str, Call] = {
    "stats": lambda wb, a: wb.stats(),
    "ask": lambda wb, a: wb.ask(a["subject"], a["relation"], a.get("object"), as_of=a.get("as_of"),
                                guess=a.get("guess", False)).to_json(),
    "count": lambda wb, a: wb.count(a["event_type"], about=a.get("about"), year=a.get("year"), start=a.get("from"),
                                    end=a.get("to"), as_of=a.get("as_of")).to_json(),
    "current": lambda wb, a: wb.current(a["subject"], a["state"], as_of=a.get("as_of")).to_json(),
    "decision": lambda wb, a: wb.decision(a["scope"], as_of=a.get("as_of")).to_json(),
    "recall": lambda wb, a: wb.recall(a["question"], purpose=a.get("purpose", "default"), limit=a.get("limit"),
                                      budget_chars=a.get("budget_chars")).to_json(),
    "records": _records,
    "record": lambda wb, a: wb.record(a["id"]).to_json(),
    "candidates": _candidates,
    "approve": lambda wb, a: wb.approve(a["ids"], edits=a.get("edits"), create=a.get("create", ())),
    "reject": lambda wb, a: wb.reject(a["ids"], reason=a["reason"]),
}
assert set(CALLS) == set(ROUTES), "every route in the table has a call, and no call is without a route"


@dataclass
class Api:
    """The JSON routes over ``wb``, with the request body limit ``max_body`` (bytes, else 413)."""

    wb: Workbench
    max_body: int
    # One call at a time: the views share the base Workbench's caches (rules, relation labels,
    # vector indexes), which are not built for concurrent use.
    lock: threading.Lock = field(default_factory=threading.Lock)

    def routes(self) -> list[Route]:
        out = [Route("/api/openapi.json", self.schema, methods=["GET"], name="api.schema")]
        for r in TABLE:
            out.append(Route(r.path, self._endpoint(r), methods=[r.method], name=f"api.{r.name}"))
        return out

    async def schema(self, request: Request) -> Response:
        return JSONResponse(openapi())

    def _endpoint(self, route: ApiRoute) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return await self._handle(route, request)
            except ProtocolError as exc:
                body = {"error": KINDS.get(exc.status, "Invalid"), "message": exc.message}
                return JSONResponse(body, status_code=exc.status, headers=exc.headers)

        return endpoint

    async def _handle(self, route: ApiRoute, request: Request) -> Response:
        authorization = request.headers.get("authorization")
        if route.writes and not authorization:
            raise ProtocolError(401, f"{route.name} changes the store: send Authorization: Bearer TOKEN",
                                headers={"WWW-Authenticate": REALM})
        user = await run_in_threadpool(authenticate, self.wb, authorization)
        given = await self._body(request) if route.method == "POST" else self._query(route, request)
        args = validate(route, given)
        result = await run_in_threadpool(self._call, route, user, args)
        return JSONResponse(result)

    def _call(self, route: ApiRoute, user: User | None, args: dict[str, Any]) -> Any:
        with self.lock:
            view = self._view(user)
            try:
                return CALLS[route.name](view, args)
            finally:
                if view is not self.wb and view._rules is not None:  # rules loaded for this view serve the next
                    self.wb._rules, self.wb._rules_key = view._rules, view._rules_key

    def _view(self, user: User | None) -> Workbench:
        """The base Workbench acting as ``user``: the same store object and the same caches."""
        if user is None:
            return self.wb
        base = self.wb
        view = Workbench(base.store, user=user.name, clock=base._clock, rules_dir=base.rules_dir,
                         encoder=base.encoder_spec)
        # Share the caches: what a view marks stale (after approve) is the base's own index.
        view._vectors, view._names, view._things = base.record_vectors(), base.name_index(), base.things()
        view._relation_labels = base._relations()
        view._rules, view._rules_key = base._rules, base._rules_key
        return view

    def _query(self, route: ApiRoute, request: Request) -> dict[str, Any]:
        given: dict[str, Any] = dict(request.path_params)
        known = {f.name: f for f in route.fields}
        for key, value in request.query_params.items():
            f = known.get(key)
            if f is not None and "integer" in f.types and "string" not in f.types:
                try:
                    given[key] = int(value)
                except ValueError:
                    raise Invalid(f"must be an integer, not {value!r}", where=key) from None
            else:
                given[key] = value
        return given

    async def _body(self, request: Request) -> dict[str, Any]:
        raw = await read_body(request, self.max_body)
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"the request body is not JSON: {exc}", where="body") from None
        if not isinstance(body, dict):
            raise Invalid("the request body must be a JSON object", where="body")
        return body

