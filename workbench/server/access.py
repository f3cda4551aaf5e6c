"""Who is asking, and what they may see.

Over HTTP the bearer token decides who acts; the server never trusts a name. A store with no
users at all (a fresh local store) is open to requests without a token, as the CLI is; once it
has a user, every request needs a valid token.

Every query goes through :func:`dataset_for`. Today it lets a user see everything. It is the one
place where source visibility (issue 6, part 2) will restrict the dataset a query runs over, so
that ``GRAPH ?g``, ``FROM`` / ``FROM NAMED`` and the Protocol's dataset parameters all stay
inside what the requester may see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.access import users
from workbench.access.users import User
from workbench.errors import Forbidden
from workbench.server.protocol import ProtocolError
from workbench.service import Workbench

REALM = 'Bearer realm="workbench"'


def authenticate(wb: Workbench, authorization: str | None) -> User | None:
    """The user a request's ``Authorization: Bearer`` header names; None on an open store.

    Blocking (it reads the users graph): call it from a worker thread. Raises ProtocolError 401
    with a ``WWW-Authenticate`` challenge for a wrong token, or for no token once the store has
    users.
    """
    if not authorization:
        if users.users(wb.store):
            raise ProtocolError(401, "this store needs a token: send Authorization: Bearer TOKEN",
                                headers={"WWW-Authenticate": REALM})
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ProtocolError(401, "send the token as Authorization: Bearer TOKEN",
                            headers={"WWW-Authenticate": f'{REALM}, error="invalid_request"'})
    try:
        return users.by_token(wb.store, token.strip())
    except Forbidden:
        raise ProtocolError(401, "unknown or revoked token",
                            headers={"WWW-Authenticate": f'{REALM}, error="invalid_token"'}) from None


@dataclass(frozen=True)
class Dataset:
    """The graphs a requester may query. ``everything`` today; part 2 lists visible graphs."""

    everything: bool = True

    def restrict(
        self, default_graphs: Sequence[str] | None, named_graphs: Sequence[str] | None
    ) -> tuple[list[str] | None, list[str] | None]:
        """The dataset a query runs over, given the one the request asked for (None: not asked).

        With ``everything`` the request's choice stands. Part 2 will intersect it with the
        visible graphs, and turn "not asked" into "the visible graphs" so that the query's own
        FROM / FROM NAMED cannot reach past them.
        """
        if not self.everything:  # pragma: no cover - part 2
            raise NotImplementedError("source visibility comes with issue 6, part 2")
        return (
            None if default_graphs is None else list(default_graphs),
            None if named_graphs is None else list(named_graphs),
        )


def dataset_for(user: User | None) -> Dataset:
    """What ``user`` may query (None: a request to an open store with no users).

    >>> dataset_for(None).restrict(["http://example.org/g"], None)
    (['http://example.org/g'], None)
    """
    return Dataset(everything=True)
