"""One error tree for Workbench.

Every error a user can meet is a :class:`WorkbenchError`. Each carries plain words for people,
the data a program needs (``where``: file, line, record or field) and an HTTP status, so the CLI,
the server and notebooks all report it the same way::

    WorkbenchError                 500
    ├── Invalid                    400  bad input: a file, a line, a field, a query
    │   └── ParseError             400  malformed RDF or JSON, with file, line and column
    ├── NotFound                   404  no such record, entity, source
    ├── Conflict                   409  the store is not in the state the act needs
    │   └── Ambiguous              409  a name matches several entities
    ├── Forbidden                  403  the requester may not do or see this
    ├── Unsupported                501  a backend cannot do what was asked
    ├── ModelUnavailable           502  the model server (extraction only) failed or gave a broken answer
    └── StoreUnavailable           503  the store cannot be reached, or is held by another process
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class WorkbenchError(Exception):
    """The root of every Workbench error."""

    status = 500

    def __init__(self, message: str, *, where: str | None = None, **data: Any) -> None:
        self.message = message
        self.where = where
        self.data: Mapping[str, Any] = data
        super().__init__(f"{where}: {message}" if where else message)

    def to_json(self) -> dict[str, Any]:
        """The one JSON error shape: ``{"error": kind, "message": text, "where": ..., ...data}``."""
        out: dict[str, Any] = {"error": type(self).__name__, "message": str(self)}
        if self.where:
            out["where"] = self.where
        out.update(self.data)
        return out


class Invalid(WorkbenchError):
    """Bad input; nothing was changed."""

    status = 400


class ParseError(Invalid):
    """Malformed RDF, JSON or SPARQL."""


class NotFound(WorkbenchError):
    status = 404


class Conflict(WorkbenchError):
    status = 409


class Ambiguous(Conflict):
    """A name matches several entities; ``candidates`` lists them."""

    def __init__(self, name: str, candidates: Sequence[str], *, where: str | None = None) -> None:
        listed = ", ".join(f"<{c}>" for c in candidates)
        super().__init__(
            f"the name {name!r} matches {len(candidates)} entities: {listed}; "
            "register a distinct alias or name the entity by its IRI",
            where=where,
            name=name,
            candidates=list(candidates),
        )


class Forbidden(WorkbenchError):
    status = 403


class Unsupported(WorkbenchError):
    status = 501


class ModelUnavailable(WorkbenchError):
    """The model server an extraction talks to could not be reached, refused, timed out, or answered
    something that is not a chat completion. Only ``workbench extract`` meets it: no model is ever
    called at answer time. 502 because the fault lies upstream, not in the request."""

    status = 502


class StoreUnavailable(WorkbenchError):
    status = 503
