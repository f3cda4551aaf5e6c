"""The JSON API under ``/api/``: one route per Workbench call, described by
:mod:`workbench.server.routes` (which also validates requests and writes the OpenAPI document).

Each request: who asks (the bearer token; the server never trusts a claimed name), the fields
checked against the route table (400 naming the field), one Workbench call in a worker thread on
the store as the token's user may see it (:meth:`Workbench.seen_by`; writes act on the store
itself, as that user), and the result's ``to_json()``. Routes that write (the table's
``writes``) need a token even on a store with no users (401 otherwise); the roles a service
call does not check itself are checked first (the table's ``role``, :func:`calls.guarded`).
Calls longer than a line live in :mod:`workbench.server.calls`. Errors are
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

from workbench import limits
from workbench.access import users
from workbench.access.users import Role, User
from workbench.errors import Invalid, ParseError
from workbench.server import calls
from workbench.server.access import REALM, authenticate
from workbench.server.protocol import ProtocolError
from workbench.server.routes import ROUTES, TABLE, ApiRoute, openapi, validate
from workbench.server.sparql import read_body
from workbench.service import Workbench
from workbench.values.records import Status

KINDS = {401: "Unauthorized", 413: "TooLarge", 415: "UnsupportedMediaType"}
BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}  # in query strings
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


def _me(wb: Workbench) -> dict[str, Any]:
    found = users.user(wb.store, wb.reader) if wb.reader else None
    return found.to_json() if found else {"name": None, "roles": [], "groups": []}


def _candidates(wb: Workbench, a: dict[str, Any]) -> Any:
    status = a.get("status", "pending")
    return [c.to_json() for c in wb.candidates(status=None if status == "all" else status, text=a.get("text"))]


CALLS: dict[str, Call] = {
    "stats": lambda wb, a: wb.stats(),
    "relations": lambda wb, a: sorted(wb.relations()),
    "ask": lambda wb, a: wb.ask(a["subject"], a["relation"], a.get("object"), as_of=a.get("as_of"),
                                guess=a.get("guess", False)).to_json(),
    "proof": lambda wb, a: wb.proof(a["subject"], a["relation"], a.get("object")).to_json(),
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
    # entities and imports (routes_entities)
    "entities": lambda wb, a: [e.to_json() for e in wb.entities()],
    "entity": lambda wb, a: wb.entity(a["ref"]).to_json(),
    "resolve": lambda wb, a: wb.resolve(a["name"]).to_json(),
    "add_entity": lambda wb, a: {"iri": wb.add_entity(a["name"], lang=a.get("lang")).value},
    "add_alias": lambda wb, a: {"iri": wb.add_alias(a["entity"], a["alias"], lang=a.get("lang")).value},
    "merge": lambda wb, a: {"iri": wb.merge(a["keep"], a["other"], reason=a["reason"]).value},
    "split": lambda wb, a: {"iri": wb.split(a["entity"], reason=a["reason"]).value},
    "import_records": calls.import_records,
    "import_rdf": calls.import_rdf,
    # review, records, users (routes_review)
    "candidate": lambda wb, a: wb.candidate(a["id"]).to_json(),
    "check_candidate": lambda wb, a: wb.check_candidate(a["id"]).to_json(),
    "merge_candidates": lambda wb, a: wb.merge_candidates(a["keep"], a["others"]),
    "summaries": lambda wb, a: [s.to_json() for s in wb.summaries(of=a.get("of"),
                                                                  include_stale=a.get("include_stale", False))],
    "audit": lambda wb, a: [e.to_json() for e in wb.audit(a["id"])],
    "history": lambda wb, a: [r.to_json() for r in wb.history(a["id"])],
    "supersede": lambda wb, a: wb.supersede(a["id"], a["by"], reason=a["reason"]),
    "retract": lambda wb, a: wb.retract(a["id"], reason=a["reason"]),
    "erase": lambda wb, a: wb.erase(a["id"], reason=a["reason"]).to_json(),
    "users": lambda wb, a: [u.to_json() for u in wb.users()],
    "set_groups": lambda wb, a: wb.set_groups(a["name"], join=a.get("join", ()), leave=a.get("leave", ())).to_json(),
    "me": lambda wb, a: _me(wb),
    "add_user": lambda wb, a: {"name": a["name"].strip(),
                               "token": wb.add_user(a["name"], a["roles"], groups=a.get("groups", ()))},
    # rules and evaluation (routes_rules)
    "rule_list": lambda wb, a: wb.rule_list(),
    "rule_versions": lambda wb, a: [v.to_json(text=True) for v in wb.rule_versions(a.get("rule"))],
    "propose_rules": calls.propose_rules,
    "run_rule_tests": calls.run_rule_tests,
    "dry_run_rule": lambda wb, a: wb.dry_run_rule(a["rule"], a.get("version")).to_json(),
    "signoff_rule": lambda wb, a: wb.signoff_rule(a["rule"], comment=a["comment"],
                                                  version=a.get("version")).to_json(text=True),
    "retire_rule": lambda wb, a: wb.retire_rule(a["rule"], reason=a["reason"],
                                                version=a.get("version")).to_json(text=True),
    "rule_history": lambda wb, a: [{**e.version.to_json(text=True), "diff": e.diff}
                                   for e in wb.rule_history(a["rule"])],
    "export_rules": calls.export_rules,
    "eval": calls.evaluate,
}
assert set(CALLS) == set(ROUTES), "every route in the table has a call, and no call is without a route"
# The roles the API checks itself, for calls whose service method checks none (the table says which).
CALLS = {name: calls.guarded(ROUTES[name], call) for name, call in CALLS.items()}


@dataclass
class Api:
    """The JSON routes over ``wb``, with the request body limit ``max_body`` (bytes, else 413)."""

    wb: Workbench
    max_body: int
    # One call at a time: the Workbenches acting for each user share the base one's caches
    # (rules, relation labels, vector indexes), which are not built for concurrent use.
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
        with users.one_directory():  # who asks, and what they may read, found in one reading of the users
            return await self._answer(route, request)

    async def _answer(self, route: ApiRoute, request: Request) -> Response:
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
        name = None if user is None else user.name
        with self.lock:
            seen = self.wb.seen_by(name)
            if not route.writes:
                return CALLS[route.name](seen, args)
            # A write acts on the store itself, as the token's user; the service looks up what
            # it names as they may see it (access.writes), so a hidden id is a missing one.
            if route.role is not None:  # a missing role is said first: 403 before any lookup
                users.require(self.wb.store, name or self.wb.user, Role(route.role), route.act or route.name)
            return CALLS[route.name](self.wb.acting_as(name), args)

    def _query(self, route: ApiRoute, request: Request) -> dict[str, Any]:
        given: dict[str, Any] = dict(request.path_params)
        known = {f.name: f for f in route.fields}
        for key, value in request.query_params.items():
            f = known.get(key)
            if f is not None and "integer" in f.types and "string" not in f.types:
                try:
                    given[key] = int(value)
                except ValueError:  # also past 4,300 digits, which Python will not read
                    shown = value if len(value) <= 40 else value[:40] + "..."
                    raise Invalid(f"must be an integer, not {shown!r}", where=key) from None
            elif f is not None and f.types == ("boolean",):
                if value.lower() not in BOOLEANS:
                    raise Invalid(f"must be true or false, not {value!r}", where=key)
                given[key] = BOOLEANS[value.lower()]
            else:
                given[key] = value
        return given

    async def _body(self, request: Request) -> dict[str, Any]:
        """The JSON object a POST sends: 415 unless it says Content-Type: application/json; 400
        unless it is UTF-8 nested at most ``limits.MAX_JSON_DEPTH`` deep (:func:`validate` then
        names a field whose strings are not Unicode text)."""
        raw = await read_body(request, self.max_body)
        if not raw.strip():
            return {}
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            said = f"Content-Type: {media[:80]}" if media else "no Content-Type"
            raise ProtocolError(415, f"the request body must be JSON, sent with Content-Type: application/json; "
                                     f"this one came with {said}", headers={"Accept-Post": "application/json"})
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ParseError(f"the request body is not UTF-8 text (byte {exc.start})", where="body") from None
        limits.check_json_text(text, "body")
        try:
            body = json.loads(text)
        except ValueError as exc:
            raise ParseError(f"the request body is not JSON: {exc}", where="body") from None
        if not isinstance(body, dict):
            raise Invalid("the request body must be a JSON object", where="body")
        return body

