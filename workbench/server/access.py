"""Who is asking, and what they may see.

Over HTTP the bearer token decides who acts; the server never trusts a name. A store with no
users at all (a fresh local store) is open to requests without a token, as the CLI is; once it
has a user, every request needs a valid token.

What the user may then see is the service's business (:meth:`Workbench.seen_by`): every
request, SPARQL or JSON, runs on the store as that user may see it.
"""

from __future__ import annotations

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
