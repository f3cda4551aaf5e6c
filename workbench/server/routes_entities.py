"""Routes of the JSON API for entities and their names, and for imports (records as JSON Lines
or a JSON array, RDF text with its format). See :mod:`workbench.server.routes`."""

from __future__ import annotations

from workbench.server.routespec import ApiRoute, field

LANG = "the name's language tag (en, zh)"
UPLOAD = ("a name for the upload (a file name), used in error messages and in the import's provenance "
          "as a file's name is")
TABLE = (
    ApiRoute("entities", "GET", "/api/entities", (),
             "Every registered entity with its names, aliases and what it was merged into.",
             "An array of Entities.", returns="objects"),
    ApiRoute("entity", "GET", "/api/entity", (
        field("ref", "string", "a name or an entity IRI", required=True, where="query"),
    ), "One entity by a name that binds exactly, or by its IRI.", "An Entity."),
    ApiRoute("resolve", "GET", "/api/resolve", (
        field("name", "string", "a name as people write it", required=True, where="query"),
    ), "Which entity a name binds to: exactly one, several (ambiguous) or none. Never a guess.",
        "A Resolution: name, outcome (bound, ambiguous, unknown), entities."),
    ApiRoute("add_entity", "POST", "/api/entities", (
        field("name", "string", "the new entity's name", required=True),
        field("lang", "string", LANG),
    ), "Register a new entity under a name (even a taken one: the name becomes ambiguous).",
        "{\"iri\": the new entity's IRI}.", writes=True, role="curator", act="add entities"),
    ApiRoute("add_alias", "POST", "/api/entities/alias", (
        field("entity", "string", "the entity, by a name or its IRI", required=True),
        field("alias", "string", "the new name", required=True),
        field("lang", "string", LANG),
    ), "Register an alias of an entity; 409 if another entity has that name.", "{\"iri\": the entity's IRI}.",
        writes=True, role="curator", act="register aliases"),
    ApiRoute("merge", "POST", "/api/entities/merge", (
        field("keep", "string", "the entity that stays", required=True),
        field("other", "string", "the entity that is the same as keep", required=True),
        field("reason", "string", "why they are the same", required=True),
    ), "State that two entities are the same (reversible with split).", "{\"iri\": the merge act's IRI}.",
        writes=True, role="curator", act="merge entities"),
    ApiRoute("split", "POST", "/api/entities/split", (
        field("entity", "string", "the entity folded into another", required=True),
        field("reason", "string", "why they are not the same after all", required=True),
    ), "Undo the merge that folded an entity into another.", "{\"iri\": the split act's IRI}.",
        writes=True, role="curator", act="split entities"),
    ApiRoute("import_records", "POST", "/api/import/records", (
        field("records", "string|array", "memory records: JSON Lines text, or an array of record objects "
              "(item N is line N in errors)", required=True, items="object"),
        field("name", "string", UPLOAD),
    ), "Import memory records, all or none, checked as `workbench import` checks a .jsonl file; errors name "
       "the line (records:N) and the field.", "An ImportReport.", writes=True, role="curator",
        act="import records"),
    ApiRoute("import_rdf", "POST", "/api/import/rdf", (
        field("data", "string", "the RDF text", required=True),
        field("format", "string", "turtle, trig, ntriples, nquads, jsonld or rdfxml", required=True),
        field("name", "string", UPLOAD + "; the source id defaults to it, with the format's extension"),
        field("type", "string", "record type of plain RDF data (default observation)"),
        field("source", "string", "source id of plain RDF data"),
        field("said_by", "string", "who said the RDF data (default: the token's user)"),
        field("statement", "string", "the statement the RDF data records, in plain words"),
        field("visible_to", "array", "people or groups who may see the data", items="string"),
    ), "Import RDF, all or none, checked as `workbench import` checks a file of that format.", "An ImportReport.",
        writes=True, role="curator", act="import RDF"),
)
