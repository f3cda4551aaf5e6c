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

import contextlib
import contextvars
import enum
import hashlib
import secrets
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import pyoxigraph as ox

from workbench.errors import Conflict, Forbidden, Invalid, NotFound
from workbench.ids import STORE_NODE, TOKENS_GRAPH, USERS_GRAPH, agent_iri, id_from_iri
from workbench.records.acts import activity, agent_quads
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
    groups: frozenset[str] = frozenset()  # e.g. "group:atlas": they see what is visible to these

    def may(self, role: Role) -> bool:
        return role in self.roles or Role.ADMIN in self.roles

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "roles": sorted(r.value for r in self.roles), "groups": sorted(self.groups)}


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def users(store: Store) -> list[User]:
    """Every user, by name."""
    return list(_directory(store)[0].values())


def by_name(store: Store) -> Mapping[str, User]:
    """Every user by name: on a store this process owns, the same mapping until the store changes."""
    return _directory(store)[0]


# Users and token hashes of stores this process owns, read again only after the store changed:
# every request to the server looks up its token, and the reader's groups.
_DIRECTORIES: weakref.WeakKeyDictionary[Store, tuple[str, dict[str, User], dict[str, str]]] = (
    weakref.WeakKeyDictionary()
)


# A store another process may write is read again each time, except within one request
# (:func:`one_directory`), which reads it once: who the token is, who the reader is and what
# their SPARQL may read are then one reading (they were two or three round trips to the server).
_ONE_REQUEST: contextvars.ContextVar[dict[tuple[int, int], tuple[dict[str, User], dict[str, str]]] | None] = (
    contextvars.ContextVar("workbench_one_directory", default=None)
)


@contextlib.contextmanager
def one_directory() -> Iterator[None]:
    """Within: each store's users are read at most once (again after this process writes it).
    The server opens one per request; worker threads the request hands work to share it."""
    token = _ONE_REQUEST.set({})
    try:
        yield
    finally:
        _ONE_REQUEST.reset(token)


def _directory(store: Store) -> tuple[dict[str, User], dict[str, str]]:
    """(users by name, names by token hash), cached per version of a store this process owns."""
    version = store.version() if store.owned else None
    cached = _DIRECTORIES.get(store)
    if version is not None and cached is not None and cached[0] == version:
        return cached[1], cached[2]
    request = _ONE_REQUEST.get() if version is None else None
    key = (id(store), store.generation)  # the request's store lives as long as the request
    if request is not None and key in request:
        return request[key]
    rows = store.select(
        PREFIXES + f"""SELECT ?u ?r ?g ?h WHERE {{ {{ GRAPH {USERS_GRAPH} {{ ?u a wb:User .
        {{ ?u wb:role ?r }} UNION {{ ?u wb:memberOf ?g }} UNION {{ }} }} }}
        UNION {{ GRAPH {TOKENS_GRAPH} {{ ?u wb:tokenHash ?h }} }} }}"""
    )
    found: dict[str, tuple[set[Role], set[str]]] = {}
    hashes: dict[str, str] = {}
    by_iri = {r.iri.value: r for r in Role}
    for row in rows:
        name = id_from_iri(row["u"])  # type: ignore[arg-type]
        if row["h"] is not None:
            hashes[row["h"].value] = name
            continue
        roles, groups = found.setdefault(name, (set(), set()))
        if row["r"] is not None:
            roles.add(by_iri[row["r"].value])
        if row["g"] is not None:
            groups.add(id_from_iri(row["g"]))  # type: ignore[arg-type]
    everyone = {n: User(n, frozenset(r), frozenset(g)) for n, (r, g) in sorted(found.items())}
    if version is not None:
        _DIRECTORIES[store] = (version, everyone, hashes)
    elif request is not None:
        request[key] = (everyone, hashes)
    return everyone, hashes


def user(store: Store, name: str) -> User | None:
    return _directory(store)[0].get(name)


def add(
    store: Store, name: str, roles: Iterable[Role], *, actor: str, now: str, groups: Iterable[str] = ()
) -> str:
    """Add a user with roles (and groups); returns their API token (shown once, stored as a hash).

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
        ox.Quad(who, WB.tokenHash, ox.Literal(_hash(token)), TOKENS_GRAPH),
        ox.Quad(TOKENS_GRAPH, WB.visibleTo, STORE_NODE, TOKENS_GRAPH),
        *(ox.Quad(who, WB.role, r.iri, USERS_GRAPH) for r in sorted(wanted, key=lambda r: r.value)),
        *(ox.Quad(who, WB.memberOf, agent_iri(g), USERS_GRAPH) for g in _groups(groups)),
        ox.Quad(act, PROV.generated, who, USERS_GRAPH),
    ]
    store.write(Batch(quads=quads))
    return token


def _groups(names: Iterable[str]) -> list[str]:
    out = sorted({n.strip() for n in names})
    if "" in out:
        raise Invalid("a group needs a name, such as group:atlas")
    return out


def set_groups(store: Store, name: str, *, join: Iterable[str] = (), leave: Iterable[str] = (), actor: str,
               now: str) -> User:
    """Add ``name`` to groups and take them out of others (an admin's act, attributed). Returns the
    user as they are now. Raises NotFound for an unknown user, Forbidden for a non-admin."""
    require(store, actor, Role.ADMIN, "change who belongs to which group")
    get(store, name)
    who = agent_iri(name)
    act, quads = activity("membership", WB.MembershipChanged, actor=actor, now=now, graph=USERS_GRAPH)
    quads += [ox.Quad(act, PROV.used, who, USERS_GRAPH)]
    quads += [ox.Quad(who, WB.memberOf, agent_iri(g), USERS_GRAPH) for g in _groups(join)]
    store.apply(insert=quads, delete=[ox.Quad(who, WB.memberOf, agent_iri(g), USERS_GRAPH) for g in _groups(leave)])
    return get(store, name)


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
    everyone, hashes = _directory(store)
    digest = _hash(token)
    # A dict lookup by the hash: the hash of a secret token, so its timing tells nothing useful.
    name = hashes.get(digest)
    if name is not None and name in everyone:
        return everyone[name]
    raise Forbidden("unknown or revoked token")


def get(store: Store, name: str) -> User:
    found = user(store, name)
    if found is None:
        raise NotFound(f"no user {name!r}")
    return found
