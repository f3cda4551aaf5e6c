"""Users and roles. Every change is attributed to a person; what a person may change follows
their roles:

| role | may |
|---|---|
| viewer | read and ask |
| curator | approve, edit, reject and merge candidate facts; propose rules |
| reviewer | sign off rule versions someone else wrote |
| admin | add users and grant roles; everything the others may |

A user's API token is made once, shown once, and kept only as its SHA-256 hash. The first user
of a store bootstraps it and must be an admin; after that only an admin adds users. On a local
store ``--as NAME`` says who acts; over HTTP the token decides (the server never trusts a name).

>>> Role.parse("Curator").value
'curator'
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.acts import activity, agent_quads
from workbench.errors import Conflict, Forbidden, Invalid, NotFound
from workbench.ids import USERS_GRAPH, agent_iri, id_from_iri
from workbench.store import Batch, Store
from workbench.vocab import PREFIXES, PROV, RDF, RDFS, WB


class Role(enum.Enum):
    VIEWER = "viewer"
    CURATOR = "curator"
    REVIEWER = "reviewer"
    ADMIN = "admin"

    @property
    def iri(self) -> ox.NamedNode:
        return {Role.VIEWER: WB.Viewer, Role.CURATOR: WB.Curator, Role.REVIEWER: WB.Reviewer, Role.ADMIN: WB.Admin}[
            self
        ]

    @classmethod
    def parse(cls, text: str) -> Role:
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise Invalid(f"unknown role {text!r}; use one of {', '.join(r.value for r in cls)}") from None


@dataclass(frozen=True)
class User:
    name: str
    roles: frozenset[Role]

    def may(self, role: Role) -> bool:
        return role in self.roles or Role.ADMIN in self.roles

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "roles": sorted(r.value for r in self.roles)}


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def users(store: Store) -> list[User]:
    """Every user, by name."""
    rows = store.select(
        PREFIXES + f"SELECT ?u ?r WHERE {{ GRAPH {USERS_GRAPH} {{ ?u a wb:User . OPTIONAL {{ ?u wb:role ?r }} }} }}"
    )
    found: dict[str, set[Role]] = {}
    by_iri = {r.iri.value: r for r in Role}
    for row in rows:
        name = id_from_iri(row["u"])  # type: ignore[arg-type]
        roles = found.setdefault(name, set())
        if row["r"] is not None:
            roles.add(by_iri[row["r"].value])
    return [User(n, frozenset(r)) for n, r in sorted(found.items())]


def user(store: Store, name: str) -> User | None:
    return next((u for u in users(store) if u.name == name), None)


def add(store: Store, name: str, roles: Iterable[Role], *, actor: str, now: str) -> str:
    """Add a user with roles; returns their API token (shown once, stored as a hash).

    Raises Invalid for a blank name or no role, Conflict for a name already taken, Forbidden when
    ``actor`` is not an admin (or, on a store with no users yet, when the first user is not one).
    """
    name = name.strip()
    wanted = frozenset(roles)
    if not name:
        raise Invalid("a user needs a name")
    if not wanted:
        raise Invalid(f"give {name} at least one role: --role viewer|curator|reviewer|admin")
    everyone = users(store)
    if any(u.name == name for u in everyone):
        raise Conflict(f"there is already a user called {name!r}")
    if not everyone:
        if Role.ADMIN not in wanted:
            raise Forbidden(f"the first user of a store must be an admin: add {name} with --role admin")
    else:
        require(store, actor, Role.ADMIN, "add users")
    token = "wb_" + secrets.token_urlsafe(32)
    who = agent_iri(name)
    act, quads = activity("user", WB.UserAdded, actor=actor, now=now, graph=USERS_GRAPH)
    quads += agent_quads(name, USERS_GRAPH) + agent_quads(actor, USERS_GRAPH)
    quads += [
        ox.Quad(who, RDF.type, WB.User, USERS_GRAPH),
        ox.Quad(who, RDFS.label, ox.Literal(name), USERS_GRAPH),
        ox.Quad(who, WB.tokenHash, ox.Literal(_hash(token)), USERS_GRAPH),
        *(ox.Quad(who, WB.role, r.iri, USERS_GRAPH) for r in sorted(wanted, key=lambda r: r.value)),
        ox.Quad(act, PROV.generated, who, USERS_GRAPH),
    ]
    store.write(Batch(quads=quads))
    return token


def require(store: Store, name: str, role: Role, doing: str) -> User:
    """The user ``name`` if they hold ``role`` (or are an admin). Raises Forbidden in plain words."""
    found = user(store, name)
    if found is None:
        raise Forbidden(f"{name!r} is not a user of this store, so cannot {doing}; an admin can add them "
                        f"with `workbench users add {name} --role {role.value}`")
    if not found.may(role):
        raise Forbidden(f"{name} cannot {doing}: that needs the {role.value} role "
                        f"(they have {', '.join(sorted(r.value for r in found.roles)) or 'none'})")
    return found


def by_token(store: Store, token: str) -> User:
    """The user a bearer token belongs to. Raises Forbidden for an unknown token."""
    rows = store.select(PREFIXES + f"SELECT ?u ?h WHERE {{ GRAPH {USERS_GRAPH} {{ ?u wb:tokenHash ?h }} }}")
    digest = _hash(token)
    for row in rows:
        if hmac.compare_digest(row["h"].value, digest):  # type: ignore[union-attr]
            found = user(store, id_from_iri(row["u"]))  # type: ignore[arg-type]
            if found:
                return found
    raise Forbidden("unknown or revoked token")


def get(store: Store, name: str) -> User:
    found = user(store, name)
    if found is None:
        raise NotFound(f"no user {name!r}")
    return found
