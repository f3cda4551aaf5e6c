"""The one table of JSON API routes: what each takes and answers.

The same table drives request validation (:func:`validate`) and the OpenAPI document
(:func:`openapi`), so the schema cannot drift from the code.

>>> validate(ROUTES["ask"], {"subject": "me", "relation": 3})
Traceback (most recent call last):
...
workbench.errors.Invalid: relation: must be a string, not an integer
>>> validate(ROUTES["ask"], {"subject": "me", "relation": "needs"})
{'subject': 'me', 'relation': 'needs'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.errors import Invalid

JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "boolean": bool, "array": list, "object": dict,
}
NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "an array", dict: "an object",
         float: "a number", type(None): "null"}


@dataclass(frozen=True)
class Field:
    """One request field: its name, JSON type(s), whether it is required, and what it means.
    ``items`` is the type of an array's items; ``where`` is ``body``, ``query`` or ``path``."""

    name: str
    types: tuple[str, ...]
    doc: str
    required: bool = False
    items: str | None = None
    where: str = "body"


@dataclass(frozen=True)
class ApiRoute:
    name: str
    method: str
    path: str
    fields: tuple[Field, ...]
    summary: str
    response: str
    writes: bool = False


def _f(name: str, types: str, doc: str, *, required: bool = False, items: str | None = None,
       where: str = "body") -> Field:
    return Field(name, tuple(types.split("|")), doc, required, items, where)


AS_OF = "an ISO date: answer as the store stood then"
TABLE = (
    ApiRoute("stats", "GET", "/api/stats", (), "Counts of records by type and status, sources, entities, quads.",
             "An object of counts."),
    ApiRoute("ask", "POST", "/api/ask", (
        _f("subject", "string", "the subject, as people write it", required=True),
        _f("relation", "string", "the relation, as people write it", required=True),
        _f("object", "string", "the object: does it hold? (omit: what is it?)"),
        _f("as_of", "string", AS_OF),
        _f("guess", "boolean", "answer a genuine gap with ranked model guesses"),
    ), "Does subject relation object hold, or what does subject relation?", "An Answer."),
    ApiRoute("count", "POST", "/api/count", (
        _f("event_type", "string", "the kind of event (wedding)", required=True),
        _f("about", "string", "whom the events are about"),
        _f("year", "integer|string", "a year, or \"this\""),
        _f("from", "string", "the first day of the period (ISO date)"),
        _f("to", "string", "the last day of the period (ISO date)"),
        _f("as_of", "string", AS_OF),
    ), "How many events of a kind, counted by code.", "An Answer with count and at_least."),
    ApiRoute("current", "POST", "/api/current", (
        _f("subject", "string", "whose state", required=True),
        _f("state", "string", "which state (weight)", required=True),
        _f("as_of", "string", AS_OF),
    ), "The current value of a changing state, with its history.", "An Answer with history."),
    ApiRoute("decision", "POST", "/api/decision", (
        _f("scope", "string", "the project or setting", required=True),
        _f("as_of", "string", AS_OF),
    ), "Which decision governs a scope.", "An Answer with the decision, who made it and its history."),
    ApiRoute("recall", "POST", "/api/recall", (
        _f("question", "string", "the question in words", required=True),
        _f("purpose", "string", "default, writing or decision: sets the budget"),
        _f("limit", "integer", "at most this many records"),
        _f("budget_chars", "integer", "at most this many characters"),
    ), "The records that bear on a question in words, within a budget.", "A recall Bundle."),
    ApiRoute("records", "GET", "/api/records", (
        _f("type", "string", "a record type (decision, event, ...)", where="query"),
        _f("status", "string", "active (default), superseded, retracted or all", where="query"),
        _f("as_of", "string", AS_OF, where="query"),
        _f("about", "string", "an entity's name or IRI", where="query"),
        _f("limit", "integer", "at most this many records", where="query"),
    ), "Records, active ones by default.", "An array of Records."),
    ApiRoute("record", "GET", "/api/records/{id}", (
        _f("id", "string", "the record id", required=True, where="path"),
    ), "One record with its provenance.", "A Record."),
    ApiRoute("candidates", "GET", "/api/candidates", (
        _f("status", "string", "pending (default), approved, rejected, merged or all", where="query"),
        _f("text", "string", "only candidates whose text contains this", where="query"),
    ), "The candidate queue.", "An array of Candidates."),
    ApiRoute("approve", "POST", "/api/review/approve", (
        _f("ids", "array", "the candidate ids", required=True, items="string"),
        _f("create", "array", "names to create as new entities", items="string"),
        _f("edits", "object", "per candidate id, fields to change before approving"),
    ), "Approve candidates as records, all or none (curator role).", "The record ids.", writes=True),
    ApiRoute("reject", "POST", "/api/review/reject", (
        _f("ids", "array", "the candidate ids", required=True, items="string"),
        _f("reason", "string", "why", required=True),
    ), "Reject candidates (curator role).", "null.", writes=True),
)
ROUTES = {r.name: r for r in TABLE}


def _type_ok(value: Any, kind: str) -> bool:
    expected = JSON_TYPES[kind]
    if kind == "integer" and isinstance(value, bool):
        return False
    return isinstance(value, expected)


def _kind_of(value: Any) -> str:
    return NAMES.get(type(value), type(value).__name__)


def validate(route: ApiRoute, given: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``given`` checked against ``route``: required ones present, each of its
    type(s); unknown fields refused. Raises Invalid naming the field (``where``)."""
    known = {f.name: f for f in route.fields}
    extra = sorted(set(given) - set(known))
    if extra:
        raise Invalid(f"unknown field; {route.name} takes {', '.join(known) or 'no fields'}", where=extra[0])
    out: dict[str, Any] = {}
    for f in route.fields:
        if f.name not in given or given[f.name] is None:
            if f.required:
                raise Invalid("is required", where=f.name)
            continue
        value = given[f.name]
        if not any(_type_ok(value, t) for t in f.types):
            wanted = " or ".join(NAMES[JSON_TYPES[t]] for t in f.types)  # type: ignore[index]
            raise Invalid(f"must be {wanted}, not {_kind_of(value)}", where=f.name)
        if f.items and not all(_type_ok(v, f.items) for v in value):
            raise Invalid(f"every item must be {NAMES[JSON_TYPES[f.items]]}", where=f.name)  # type: ignore[index]
        out[f.name] = value
    return out


def _schema(f: Field) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": list(f.types) if len(f.types) > 1 else f.types[0], "description": f.doc}
    if f.items:
        schema["items"] = {"type": f.items}
    return schema


ERROR = {"type": "object", "required": ["error", "message"],
         "properties": {"error": {"type": "string"}, "message": {"type": "string"}, "where": {"type": "string"}}}


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route in :data:`TABLE`."""
    paths: dict[str, dict[str, Any]] = {}
    for r in TABLE:
        op: dict[str, Any] = {
            "operationId": r.name, "summary": r.summary,
            "responses": {
                "200": {"description": r.response, "content": {"application/json": {"schema": {}}}},
                "default": {"description": "An error in the one JSON error shape.",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
            },
        }
        params = [{"name": f.name, "in": f.where, "required": f.required or f.where == "path", "schema": _schema(f)}
                  for f in r.fields if f.where != "body"]
        if params:
            op["parameters"] = params
        body = [f for f in r.fields if f.where == "body"]
        if body:
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False,
                "required": [f.name for f in body if f.required],
                "properties": {f.name: _schema(f) for f in body},
            }}}}
        if r.writes:
            op["security"] = [{"bearer": []}]
        paths.setdefault(r.path, {})[r.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "Workbench JSON API", "version": "1",
                 "description": "Every answer says its tier and carries its evidence. Errors share one shape."},
        "paths": paths,
        "components": {"schemas": {"Error": ERROR},
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}, {}],
    }
