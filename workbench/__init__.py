"""Workbench: a knowledge-curation workbench for memory that can say how it knows.

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

from workbench.answer.model import Answer, Derived, Finding, Recorded, Tier
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
from workbench.model import Entity, ImportReport, Record, RecordType, Resolution, Source, Status, Tombstone
from workbench.service import Workbench


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
