"""Routes of the JSON API for the rule lifecycle (list, versions, propose, test, dry run,
sign-off, retire, history, export) and the recall evaluation. See :mod:`workbench.server.routes`."""

from __future__ import annotations

from workbench.server.routespec import ApiRoute, field

RULE = "the rule id"
VERSION = "which version (default: the latest proposed)"
TABLE = (
    ApiRoute("rule_list", "GET", "/api/rules", (),
             "Each rule in rules/ and each stored version: id, version, status, author, where it lives, and whether "
             "it answers now (what `workbench rules list --json` prints).", "An array of rows.", returns="objects"),
    ApiRoute("rule_versions", "GET", "/api/rules/versions", (
        field("rule", "string", "only this rule's versions", where="query"),
    ), "Stored rule versions, oldest first, with their text and the acts on them.",
        "An array of Versions (with text).", returns="objects"),
    ApiRoute("propose_rules", "POST", "/api/rules/propose", (
        field("text", "string", "a rule file's Turtle text", required=True),
        field("name", "string", "the file's name, in errors and the proposal's provenance (default rules.ttl)"),
    ), "Store each rule in the text as a new version, proposed, checked as `workbench rules propose FILE` checks "
       "a file (curator or reviewer role, checked by the call).",
        "An array of {id, version, outcome}.", writes=True, returns="objects"),
    ApiRoute("run_rule_tests", "GET", "/api/rules/{rule}/test", (
        field("rule", "string", RULE, required=True, where="path"),
        field("version", "integer", "which version (default: the latest stored, else the file's)", where="query"),
    ), "Run a rule version's test cases.", "{rule, passed, cases: [{rule, case, passed, missing, unwanted}]}."),
    ApiRoute("dry_run_rule", "GET", "/api/rules/{rule}/dry-run", (
        field("rule", "string", RULE, required=True, where="path"),
        field("version", "integer", VERSION, where="query"),
    ), "What a version would derive on this store against the version in use. Writes nothing.", "A DryRun."),
    ApiRoute("signoff_rule", "POST", "/api/rules/signoff", (
        field("rule", "string", RULE, required=True),
        field("comment", "string", "what you checked, in a few words", required=True),
        field("version", "integer", VERSION),
    ), "Sign off a proposed version: it answers from now on (reviewer role, neither author nor proposer, "
       "checked by the call).", "The Version (with text).", writes=True),
    ApiRoute("retire_rule", "POST", "/api/rules/retire", (
        field("rule", "string", RULE, required=True),
        field("reason", "string", "why it no longer answers", required=True),
        field("version", "integer", "which version (default: the active one)"),
    ), "Withdraw a rule's active version (or a named proposed one) from answering (reviewer role, checked by the "
       "call).", "The Version (with text).", writes=True),
    ApiRoute("rule_history", "GET", "/api/rules/{rule}/history", (
        field("rule", "string", RULE, required=True, where="path"),
    ), "Every stored version of a rule with who did what and a diff against the version before.",
        "An array of Versions (with text), each with diff.", returns="objects"),
    ApiRoute("export_rules", "GET", "/api/rules/export", (),
             "The stored rules as rule files: each rule's active version, else its latest, with the store's status.",
             "An array of {file, text}.", returns="objects"),
    ApiRoute("eval", "GET", "/api/eval", (
        field("set", "string", "the question set: dev (default)", where="query"),
        field("k", "integer", "how many records the plain recipe returns (default 10, at most 1000)", where="query"),
        field("distractors", "boolean", "also rerun on a scratch store with distractor records", where="query"),
        field("scenario", "boolean", "also run the supersession scenario on a scratch store", where="query"),
    ), "Evaluate recall on a shipped question set against the plain vector-RAG recipe (what `workbench eval "
       "--json` prints). Reads only; slow: other API calls wait meanwhile.", "The evaluation report."),
)
