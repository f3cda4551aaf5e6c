"""Routes of the JSON API for review beyond approve and reject: one candidate and its checks,
merging candidates, summaries, a record's audit and history, supersession, retraction, erasure,
and users. See :mod:`workbench.server.routes`."""

from __future__ import annotations

from workbench.server.routespec import ApiRoute, field

ID = "the record id"
TABLE = (
    ApiRoute("candidate", "GET", "/api/candidates/{id}", (
        field("id", "string", "the candidate id", required=True, where="path"),
    ), "One candidate: its record as proposed, span, proposal and decision.", "A Candidate."),
    ApiRoute("check_candidate", "GET", "/api/candidates/{id}/checks", (
        field("id", "string", "the candidate id", required=True, where="path"),
    ), "What a curator checks before approving: validation, duplicates, conflicts, name bindings.",
        "Checks: candidate, valid, problems, duplicates, conflicts, names, unbound."),
    ApiRoute("merge_candidates", "POST", "/api/review/merge", (
        field("keep", "string", "the candidate (or record) id the others fold into", required=True),
        field("others", "array", "the duplicate candidate ids", required=True, items="string"),
    ), "Fold duplicate candidates into one (curator role, checked by the call).", "null.", writes=True,
        returns="null"),
    ApiRoute("summaries", "GET", "/api/summaries", (
        field("of", "string", "only summaries resting on this record", where="query"),
        field("include_stale", "boolean", "stale summaries too, each saying why (true/false)", where="query"),
    ), "Approved summaries that are fresh (every record they rest on active and unchanged).",
        "An array of Summaries.", returns="objects"),
    ApiRoute("audit", "GET", "/api/records/{id}/audit", (
        field("id", "string", ID, required=True, where="path"),
    ), "Every attributed act on a record and the candidate it came from, oldest first.",
        "An array of Events: when, what, who, detail.", returns="objects"),
    ApiRoute("history", "GET", "/api/records/{id}/history", (
        field("id", "string", ID, required=True, where="path"),
    ), "A record's supersession chain, oldest first; erased links as tombstones.",
        "An array of Records and Tombstones.", returns="objects"),
    ApiRoute("supersede", "POST", "/api/records/supersede", (
        field("id", "string", "the record superseded", required=True),
        field("by", "string", "the record that corrects it", required=True),
        field("reason", "string", "why", required=True),
    ), "Mark a record as superseded by another (history is kept).", "null.", writes=True, returns="null",
        role="curator", act="supersede records"),
    ApiRoute("retract", "POST", "/api/records/retract", (
        field("id", "string", ID, required=True),
        field("reason", "string", "why", required=True),
    ), "Withdraw a record with no replacement; the audit keeps it.", "null.", writes=True, returns="null",
        role="curator", act="retract records"),
    ApiRoute("erase", "POST", "/api/records/erase", (
        field("id", "string", ID, required=True),
        field("reason", "string", "why, kept on the tombstone", required=True),
    ), "Erase a record and every copy the store manages; a content-free tombstone remains.",
        "A Tombstone: iri, kind, erased_by, erased_at, reason.", writes=True, role="admin", act="erase records"),
    ApiRoute("users", "GET", "/api/users", (), "Every user and their roles.", "An array of users: name, roles.",
             returns="objects", role="admin", act="list users"),
    ApiRoute("add_user", "POST", "/api/users", (
        field("name", "string", "the new user's name", required=True),
        field("roles", "array", "viewer, curator, reviewer, admin", required=True, items="string"),
        field("groups", "array", "groups they belong to (group:atlas): they see what is visible to these",
              items="string"),
    ), "Add a user (admin role, checked by the call); their token is in the answer, this once.",
        "{\"name\", \"token\"}.", writes=True),
    ApiRoute("set_groups", "POST", "/api/users/groups", (
        field("name", "string", "the user", required=True),
        field("join", "array", "groups to add them to", items="string"),
        field("leave", "array", "groups to take them out of", items="string"),
    ), "Change which groups a user is in (admin role, checked by the call).", "The user: name, roles, groups.",
        writes=True),
    ApiRoute("me", "GET", "/api/me", (), "Who the token belongs to: name, roles, groups (nulls on a store with "
             "no users).", "The user: name, roles, groups."),
)
