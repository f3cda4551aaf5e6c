"""What a JSON API route is (:class:`ApiRoute`, its :class:`Field` s), how a request is checked
against one (:func:`validate`), and how a table of them becomes the OpenAPI document
(:func:`openapi`). The table itself is :mod:`workbench.server.routes`, split by area.

>>> r = ApiRoute("x", "POST", "/api/x", (field("ids", "array", "ids", required=True, items="string"),),
...              "X.", "Nothing.")
>>> validate(r, {"ids": ["a", 2]})
Traceback (most recent call last):
...
workbench.errors.Invalid: ids: item 2 must be a string, not an integer
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.errors import Invalid

JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "boolean": bool, "array": list, "object": dict,
}
NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "an array", dict: "an object",
         float: "a number", type(None): "null"}
# What a route answers with status 200, as a JSON schema.
RETURNS: dict[str, dict[str, Any]] = {
    "object": {"type": "object"},
    "objects": {"type": "array", "items": {"type": "object"}},
    "strings": {"type": "array", "items": {"type": "string"}},
    "null": {"type": "null"},
}
# The error responses every route documents, beside ``default``.
ERRORS = {
    "400": "Bad input: a field of the wrong type, missing or unknown (``where`` names it), or a bad line of an "
           "upload (``where`` names it and the line).",
    "401": "No token, or a wrong one (writes always need one; reads once the store has users).",
    "403": "The token's user lacks the role this needs (the message says which).",
    "404": "No such record, entity, candidate, rule or question set.",
    "409": "The store is not in the state the act needs (already decided, a name taken, an ambiguous name).",
    "413": "The request body is over the server's --max-body.",
}
# Beside those, on routes that take a JSON body.
BODY_ERRORS = {"415": "The request body is not sent as Content-Type: application/json."}


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
    """One route. ``writes``: it changes the store, so it needs a token even on a store without
    users. ``role``: the role the API itself checks before the call, for calls whose service
    method checks none (``act`` says what the refusal calls it); routes whose service method
    checks roles itself (review, rules, adding users) leave it None and say so in ``summary``.
    ``returns``: a key of :data:`RETURNS`, the shape of the 200 answer."""

    name: str
    method: str
    path: str
    fields: tuple[Field, ...]
    summary: str
    response: str
    writes: bool = False
    returns: str = "object"
    role: str | None = None
    act: str = ""


def field(name: str, types: str, doc: str, *, required: bool = False, items: str | None = None,
          where: str = "body") -> Field:
    """A :class:`Field`; ``types`` is ``"integer|string"`` for several."""
    return Field(name, tuple(types.split("|")), doc, required, items, where)


def _type_ok(value: Any, kind: str) -> bool:
    expected = JSON_TYPES[kind]
    if kind == "integer" and isinstance(value, bool):
        return False
    return isinstance(value, expected)


def _kind_of(value: Any) -> str:
    return NAMES.get(type(value), type(value).__name__)


def _wanted(kind: str) -> str:
    return NAMES[JSON_TYPES[kind]]  # type: ignore[index]


def _not_unicode(value: Any) -> str | None:
    """Why a JSON value holds text that is not Unicode (a lone surrogate, which JSON's ``\\ud800``
    escapes can spell but no UTF-8 text holds), or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"a lone surrogate at character {exc.start + 1}"
        return None
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else value if isinstance(value, list) else []
    return next((why for why in map(_not_unicode, items) if why), None)


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
            wanted = " or ".join(_wanted(t) for t in f.types)
            raise Invalid(f"must be {wanted}, not {_kind_of(value)}", where=f.name)
        bad = _not_unicode(value)
        if bad is not None:
            raise Invalid(f"is not valid Unicode text: {bad}", where=f.name)
        if f.items and isinstance(value, list):
            for i, item in enumerate(value, start=1):
                if not _type_ok(item, f.items):
                    raise Invalid(f"item {i} must be {_wanted(f.items)}, not {_kind_of(item)}", where=f.name)
        out[f.name] = value
    return out


def _schema(f: Field) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": list(f.types) if len(f.types) > 1 else f.types[0], "description": f.doc}
    if f.items:
        schema["items"] = {"type": f.items}
    return schema


ERROR = {"type": "object", "required": ["error", "message"],
         "properties": {"error": {"type": "string"}, "message": {"type": "string"}, "where": {"type": "string"}}}
_ERROR_REF = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _operation(r: ApiRoute) -> dict[str, Any]:
    summary = r.summary + (f" Needs the {r.role} role." if r.role else "")
    op: dict[str, Any] = {
        "operationId": r.name, "summary": summary,
        "responses": {
            "200": {"description": r.response, "content": {"application/json": {"schema": RETURNS[r.returns]}}},
            **{code: {"description": text, "content": _ERROR_REF} for code, text in ERRORS.items()},
            "default": {"description": "An error in the one JSON error shape.", "content": _ERROR_REF},
        },
    }
    if r.role:
        op["x-role"] = r.role
    params = [{"name": f.name, "in": f.where, "required": f.required or f.where == "path", "schema": _schema(f)}
              for f in r.fields if f.where != "body"]
    if params:
        op["parameters"] = params
    body = [f for f in r.fields if f.where == "body"]
    if r.method == "POST":
        op["responses"].update({code: {"description": text, "content": _ERROR_REF}
                                for code, text in BODY_ERRORS.items()})
    if body:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "additionalProperties": False,
            "required": [f.name for f in body if f.required],
            "properties": {f.name: _schema(f) for f in body},
        }}}}
    if r.writes:
        op["security"] = [{"bearer": []}]
    return op


def openapi(table: Iterable[ApiRoute]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route in ``table``."""
    paths: dict[str, dict[str, Any]] = {}
    for r in table:
        paths.setdefault(r.path, {})[r.method.lower()] = _operation(r)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Workbench JSON API", "version": "1",
                 "description": "Every answer says its tier and carries its evidence. Errors share one shape."},
        "paths": paths,
        "components": {"schemas": {"Error": ERROR},
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}, {}],
    }
