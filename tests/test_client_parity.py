"""The HTTP client against the service: every public method of :class:`Workbench` is offered by
:class:`Client` with the same parameters, or is listed here as embedded-only with the reason.
A method added to the service fails this test until it is offered over HTTP or listed."""

from __future__ import annotations

import inspect

from workbench.client import Client
from workbench.service import Workbench

EMBEDDED_ONLY = {
    "open": "opens a store on this machine; over HTTP, workbench.connect(url, token)",
    "seen_by": "over HTTP the token decides who reads; the server never trusts a name",
    "acting_as": "over HTTP the token decides who acts; the server never trusts a name",
    "init": "setting a store up is done on the machine that holds it (workbench init)",
    "load_sample": "setting a store up is done on the machine that holds it (workbench init --sample)",
    "restore": "only the store's owner on this machine restores an export, which says who may do what",
    "export": "writes a file on the store's machine; over HTTP, CONSTRUCT at /sparql reads what the token may see",
    "extract": "calls a model server from the store's machine (offline work, never while answering)",
    "propose": "the extractor's hook on the store's machine; over HTTP, proposals come as rule texts or records",
    "import_candidates": "reads a file on the store's machine (workbench candidates import)",
    "guess": "the guesser's raw ranking by IRI; over HTTP ask(..., guess=True) labels the same guesses",
    "guess_kinds": "the guesser's kinds for a name, on the store's machine (workbench guess-kinds)",
    "train_guesses": "learning the guesser's model is offline work on the store's machine (workbench guesses train)",
    "guess_report": "what the guesser learned and measured, on the store's machine (workbench eval guesses)",
    "propose_guesses": "the guesser's offline proposals into the queue, on the store's machine (workbench guesses "
                       "propose); over HTTP they are reviewed as candidates",
    "index_status": "the vector indexes sit beside the store, on its machine (workbench index status)",
    "rebuild_index": "the vector indexes sit beside the store, on its machine (workbench index rebuild)",
    "rules": "the loaded rule objects; over HTTP, rule_list describes each rule and whether it answers",
    "rule_files": "the rules directory is on the store's machine; over HTTP, rule_list lists its rules",
    "rules_dir": "a directory on the store's machine",
    "readable_now": "the store a reader's query reads if their view is built, for the server's event loop (its quick lane); a client just asks",
}
# Parameters the service takes that a client does not send, and why.
SERVICE_ONLY_PARAMETERS = {
    ("import_files", "used"): "what provenance names for data that came over HTTP: the server sets it",
    ("sparql", "default_graph"): "the Protocol's default-graph-uri, sent by SPARQL clients to /sparql",
    ("sparql", "named_graphs"): "the Protocol's named-graph-uri, sent by SPARQL clients to /sparql",
    ("sparql", "evaluate"): "how the server runs a checked query (its worker processes)",
    ("sparql", "proof_base"): "where the server's conclusions link to: its own /api/proof",
    ("sparql", "deadline"): "the server's own request deadline, for the rules' conclusions",
}


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_every_service_method_is_offered_over_http_or_listed_with_a_reason() -> None:
    missing = _public(Workbench) - _public(Client) - set(EMBEDDED_ONLY)
    assert missing == set(), f"offer these in workbench.client.Client or list them in EMBEDDED_ONLY: {missing}"


def test_the_list_names_only_what_the_service_has_and_the_client_lacks() -> None:
    assert set(EMBEDDED_ONLY) <= _public(Workbench)
    assert set(EMBEDDED_ONLY) & _public(Client) == set()
    assert all(reason.strip() for reason in EMBEDDED_ONLY.values())


def test_shared_methods_take_the_same_parameters() -> None:
    for name in sorted(_public(Workbench) & _public(Client)):
        ours = [p for p in inspect.signature(getattr(Workbench, name)).parameters if p != "self"]
        theirs = [p for p in inspect.signature(getattr(Client, name)).parameters if p != "self"]
        expected = [p for p in ours if (name, p) not in SERVICE_ONLY_PARAMETERS]
        assert theirs == expected, name
    for name, parameter in SERVICE_ONLY_PARAMETERS:
        assert parameter in inspect.signature(getattr(Workbench, name)).parameters
