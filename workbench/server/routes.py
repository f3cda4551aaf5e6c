"""The one table of JSON API routes: what each takes and answers, split by area
(:mod:`~workbench.server.routes_entities`, :mod:`~workbench.server.routes_review`,
:mod:`~workbench.server.routes_rules`); the questions and the first review routes are here.

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

from typing import Any

from workbench.server import routes_entities, routes_review, routes_rules, routespec
from workbench.server.routespec import ApiRoute, Field, field, validate

__all__ = ["ROUTES", "TABLE", "ApiRoute", "Field", "openapi", "validate"]

AS_OF = "an ISO date: answer as the store stood then"
FIRST = (
    ApiRoute("stats", "GET", "/api/stats", (), "Counts of records by type and status, sources, entities, quads.",
             "An object of counts."),
    ApiRoute("relations", "GET", "/api/relations", (), "The relations rules may conclude: those the store labels "
             "and those the ontology declares.", "An array of relation IRIs, sorted.", returns="strings"),
    ApiRoute("ask", "POST", "/api/ask", (
        field("subject", "string", "the subject, as people write it", required=True),
        field("relation", "string", "the relation, as people write it", required=True),
        field("object", "string", "the object: does it hold? (omit: what is it?)"),
        field("as_of", "string", AS_OF),
        field("guess", "boolean", "answer a genuine gap with ranked model guesses"),
    ), "Does subject relation object hold, or what does subject relation?", "An Answer."),
    ApiRoute("proof", "GET", "/api/proof", (
        field("subject", "string", "the subject's IRI", required=True, where="query"),
        field("relation", "string", "the relation's IRI", required=True, where="query"),
        field("object", "string", "the object's IRI (omit: every value)", where="query"),
    ), "Whether subject relation object holds, with its proof: where a SPARQL conclusion's wb:proof leads.",
        "An Answer."),
    ApiRoute("count", "POST", "/api/count", (
        field("event_type", "string", "the kind of event (wedding)", required=True),
        field("about", "string", "whom the events are about"),
        field("year", "integer|string", "a year, or \"this\""),
        field("from", "string", "the first day of the period (ISO date)"),
        field("to", "string", "the last day of the period (ISO date)"),
        field("as_of", "string", AS_OF),
    ), "How many events of a kind, counted by code.", "An Answer with count and at_least."),
    ApiRoute("current", "POST", "/api/current", (
        field("subject", "string", "whose state", required=True),
        field("state", "string", "which state (weight)", required=True),
        field("as_of", "string", AS_OF),
    ), "The current value of a changing state, with its history.", "An Answer with history."),
    ApiRoute("decision", "POST", "/api/decision", (
        field("scope", "string", "the project or setting", required=True),
        field("as_of", "string", AS_OF),
    ), "Which decision governs a scope.", "An Answer with the decision, who made it and its history."),
    ApiRoute("recall", "POST", "/api/recall", (
        field("question", "string", "the question in words", required=True),
        field("purpose", "string", "default, writing or decision: sets the budget"),
        field("limit", "integer", "at most this many records"),
        field("budget_chars", "integer", "at most this many characters"),
    ), "The records that bear on a question in words, within a budget.", "A recall Bundle."),
    ApiRoute("records", "GET", "/api/records", (
        field("type", "string", "a record type (decision, event, ...)", where="query"),
        field("status", "string", "active (default), superseded, retracted or all", where="query"),
        field("as_of", "string", AS_OF, where="query"),
        field("about", "string", "an entity's name or IRI", where="query"),
        field("limit", "integer", "at most this many records", where="query"),
    ), "Records, active ones by default.", "An array of Records.", returns="objects"),
    ApiRoute("record", "GET", "/api/records/{id}", (
        field("id", "string", "the record id", required=True, where="path"),
    ), "One record with its provenance.", "A Record."),
    ApiRoute("candidates", "GET", "/api/candidates", (
        field("status", "string", "pending (default), approved, rejected, merged or all", where="query"),
        field("text", "string", "only candidates whose text contains this", where="query"),
    ), "The candidate queue.", "An array of Candidates.", returns="objects"),
    ApiRoute("approve", "POST", "/api/review/approve", (
        field("ids", "array", "the candidate ids", required=True, items="string"),
        field("create", "array", "names to create as new entities", items="string"),
        field("edits", "object", "per candidate id, fields to change before approving"),
    ), "Approve candidates as records, all or none (curator role).", "The record ids.", writes=True, returns="strings"),
    ApiRoute("reject", "POST", "/api/review/reject", (
        field("ids", "array", "the candidate ids", required=True, items="string"),
        field("reason", "string", "why", required=True),
    ), "Reject candidates (curator role).", "null.", writes=True, returns="null"),
)
TABLE = (*FIRST, *routes_entities.TABLE, *routes_review.TABLE, *routes_rules.TABLE)
ROUTES = {r.name: r for r in TABLE}
assert len(ROUTES) == len(TABLE), "route names are unique"


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route in :data:`TABLE`."""
    return routespec.openapi(TABLE)
