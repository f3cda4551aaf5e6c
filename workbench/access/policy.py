"""Who may do what: the role each act needs, checked by the service for every named user
(a Workbench from :meth:`~workbench.service.Workbench.seen_by` or ``acting_as``, so HTTP,
the CLI's ``--as`` and Python alike) and by the server before it looks anything up. Acts the
review modules check themselves (approving, signing off, adding users...) are not repeated here.
The store's owner on this machine (no named user) may do all of it, and so may anyone on a store
with no users yet (an open store, as the server treats it: :mod:`workbench.server.access`).

>>> ACTS["erase records"].value
'admin'
"""

from __future__ import annotations

from workbench.access.users import Role, User, require, users
from workbench.store import Store

ACTS = {
    "add entities": Role.CURATOR,
    "register aliases": Role.CURATOR,
    "merge entities": Role.CURATOR,
    "split entities": Role.CURATOR,
    "import records": Role.CURATOR,
    "import RDF": Role.CURATOR,
    "supersede records": Role.CURATOR,
    "retract records": Role.CURATOR,
    "erase records": Role.ADMIN,
    "list users": Role.ADMIN,
}


def allow(store: Store, name: str | None, act: str) -> User | None:
    """The user ``name`` if they may do ``act``; None for the store's owner (no name) or on an
    open store. Raises Forbidden in plain words (not a user; which role it needs and which they hold)."""
    if name is None or not users(store):
        return None
    return require(store, name, ACTS[act], act)
