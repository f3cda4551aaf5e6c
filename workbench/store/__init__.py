"""Stores: the embedded default (pyoxigraph on disk) and any SPARQL 1.1 server.

>>> import tempfile, pathlib
>>> store = open_store(pathlib.Path(tempfile.mkdtemp()) / "s", create=True)
>>> store.ask("ASK { ?s ?p ?o }")
False
>>> store.close()
"""

from __future__ import annotations

import os

from workbench.errors import Invalid
from workbench.store.base import Batch, Capabilities, FileLoad, Row, Store, Term
from workbench.store.embedded import EmbeddedStore
from workbench.store.pyox import MemoryStore
from workbench.store.remote import RemoteStore

__all__ = [
    "Batch",
    "Capabilities",
    "EmbeddedStore",
    "FileLoad",
    "MemoryStore",
    "RemoteStore",
    "Row",
    "Store",
    "Term",
    "open_store",
]


def open_store(location: str | os.PathLike[str], *, create: bool = False, timeout: float = 30.0,
               update_endpoint: str | None = None) -> Store:
    """An http(s) URL opens a remote SPARQL store (``update_endpoint``: where it takes updates,
    when not where :class:`RemoteStore` would look); anything else is a directory on disk."""
    text = os.fspath(location)
    if text.startswith(("http://", "https://")):
        return RemoteStore(text, update_url=update_endpoint, timeout=timeout)
    if update_endpoint:
        raise Invalid("an update endpoint goes with a SPARQL server's URL, not a store directory")
    return EmbeddedStore(text, create=create)
