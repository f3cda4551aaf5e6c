"""Workbench: a knowledge-curation workbench for memory that can say how it knows.

Start with :func:`open` (a store on this machine or a SPARQL 1.1 server) or :func:`connect` (a
running ``workbench serve``); both give the same calls. Where things live, in the order imports
run (a module imports only from its own part and those before it; tests/test_architecture.py):

- ``values`` (records, answers, tiers, guesses, rules), ``errors``, ``ids``, ``vocab``,
  ``formats``, ``limits``, ``progress``, ``resources`` (the shipped ontology, rules, shapes, data);
- ``store`` and ``sparqlcheck``: the backends and the query check;
- ``names``, ``records``, ``rules``, ``imports``, ``vectors``, ``access``;
- ``answers``, ``recall``, ``guesses``; then ``review`` and ``extraction``;
- ``service`` (:class:`Workbench`, the one API); ``presentation`` and ``client``;
- ``cli``, ``server``, ``ui``, at the edge.

>>> import tempfile, pathlib, workbench
>>> wb = workbench.open(pathlib.Path(tempfile.mkdtemp()) / "memory", create=True)
>>> wb.init(sample=True)[1].records_added
20
>>> wb.resolve("巴黎").entities
('urn:wb:entity:paris',)
>>> answer = wb.ask("my car", "needs", "gas")
>>> answer.tier, answer.values
(<Tier.DERIVED: 'derived'>, ['gasoline'])
>>> wb.count("wedding", about="me", year=2026).summary
'At least 3 weddings between 2026-01-01 and 2026-12-31; 1 undated one could not be placed.'
>>> wb.close()
"""

from __future__ import annotations

import os

from workbench.client import Client, connect
from workbench.errors import (
    Ambiguous,
    Conflict,
    Forbidden,
    Invalid,
    ModelUnavailable,
    NotFound,
    ParseError,
    StoreUnavailable,
    Unsupported,
    WorkbenchError,
)
from workbench.service import Workbench
from workbench.values.answers import Answer, Derived, Finding, Recorded, Tier
from workbench.values.records import Entity, ImportReport, Record, RecordType, Resolution, Source, Status, Tombstone


def open(location: str | os.PathLike[str], *, create: bool = False, user: str | None = None) -> Workbench:  # noqa: A001
    """Open a store: a directory on this machine, or the URL of a SPARQL 1.1 server. (The JSON API
    of a running ``workbench serve``, with the same calls: :func:`connect`.)"""
    return Workbench.open(location, create=create, user=user)


__all__ = [
    "Ambiguous",
    "Answer",
    "Client",
    "Conflict",
    "Derived",
    "Entity",
    "Finding",
    "Forbidden",
    "ImportReport",
    "Invalid",
    "ModelUnavailable",
    "NotFound",
    "ParseError",
    "Record",
    "Recorded",
    "RecordType",
    "Resolution",
    "Source",
    "Status",
    "StoreUnavailable",
    "Tier",
    "Tombstone",
    "Unsupported",
    "Workbench",
    "WorkbenchError",
    "connect",
    "open",
]
