"""The Python client of the JSON API: ``workbench.connect(url, token)`` offers the calls of
``workbench.open(path)`` against a running ``workbench serve``.

The same signatures, the same types rebuilt from JSON (:class:`Answer`, :class:`Bundle`,
:class:`Record`, :class:`Candidate`), and the same :class:`WorkbenchError` subclasses, mapped back
from the one JSON error shape. Standard library only (``urllib.request``).

>>> client = connect("http://127.0.0.1:7000/", "TOKEN")
>>> client.base
'http://127.0.0.1:7000'
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench import errors
from workbench.answer.model import Answer
from workbench.errors import Forbidden, Invalid, StoreUnavailable, WorkbenchError
from workbench.guess.recall import Bundle
from workbench.model import Record, RecordType, Status
from workbench.review.queue import Candidate

# Error names the server sends that are not classes here: 401 (no or a bad token) is refused
# access, 413 (too large a body) bad input.
ALIASES: dict[str, type[WorkbenchError]] = {"Unauthorized": Forbidden, "TooLarge": Invalid}


def error_from_json(status: int, body: Mapping[str, Any]) -> WorkbenchError:
    """The WorkbenchError subclass an error body names (else the one its status belongs to), with
    its message, ``where`` and data as the embedded API raises them."""
    name = str(body.get("error", ""))
    found = getattr(errors, name, None)
    cls: type[WorkbenchError]
    if isinstance(found, type) and issubclass(found, WorkbenchError):
        cls = found
    elif name in ALIASES:
        cls = ALIASES[name]
    else:
        by_status = [c for c in vars(errors).values()
                     if isinstance(c, type) and issubclass(c, WorkbenchError) and c.status == status]
        cls = by_status[0] if by_status else WorkbenchError
    where = body.get("where")
    message = str(body.get("message", ""))
    if where and message.startswith(f"{where}: "):
        message = message[len(where) + 2:]
    data = {k: v for k, v in body.items() if k not in ("error", "message", "where")}
    exc = cls.__new__(cls)
    WorkbenchError.__init__(exc, message, where=where, **data)
    return exc


class Client:
    """A running Workbench server, with the calls of :class:`workbench.service.Workbench`."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise Invalid(f"{url!r} is not an http(s) URL of a Workbench server")
        path = parts.path.rstrip("/")
        for tail in ("/api", "/sparql"):
            path = path.removesuffix(tail)
        self.base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        self.token = token
        self.timeout = timeout

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: each call is its own connection."""

    # ------------------------------------------------------------------ transport

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None,
                 query: Mapping[str, Any] | None = None) -> Any:
        url = self.base + path
        params = {k: str(v) for k, v in (query or {}).items() if v is not None}
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps({k: v for k, v in body.items() if v is not None}).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = {"message": raw.decode("utf-8", "replace").strip() or exc.reason}
            raise error_from_json(exc.code, payload if isinstance(payload, dict) else {}) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreUnavailable(f"the Workbench server at {self.base} did not answer: {reason}") from None

    # ------------------------------------------------------------------ questions

    def ask(self, subject: str, relation: str, obj: str | None = None, *, as_of: str | None = None,
            guess: bool = False) -> Answer:
        body = {"subject": subject, "relation": relation, "object": obj, "as_of": as_of, "guess": guess or None}
        return Answer.from_json(self._request("POST", "/api/ask", body))

    def count(self, event_type: str, *, about: str | None = None, year: int | str | None = None,
              start: str | None = None, end: str | None = None, as_of: str | None = None) -> Answer:
        body = {"event_type": event_type, "about": about, "year": year, "from": start, "to": end, "as_of": as_of}
        return Answer.from_json(self._request("POST", "/api/count", body))

    def current(self, subject: str, state: str, *, as_of: str | None = None) -> Answer:
        return Answer.from_json(self._request("POST", "/api/current", {"subject": subject, "state": state,
                                                                        "as_of": as_of}))

    def decision(self, scope: str, *, as_of: str | None = None) -> Answer:
        return Answer.from_json(self._request("POST", "/api/decision", {"scope": scope, "as_of": as_of}))

    def recall(self, question: str, *, purpose: str = "default", limit: int | None = None,
               budget_chars: int | None = None, progress: object | None = None) -> Bundle:
        """``progress`` is accepted for the same signature; the server builds any index itself."""
        body = {"question": question, "purpose": purpose, "limit": limit, "budget_chars": budget_chars}
        return Bundle.from_json(self._request("POST", "/api/recall", body))

    # ------------------------------------------------------------------ records

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._request("GET", "/api/stats")
        return result

    def record(self, record_id: str) -> Record:
        return Record.from_json(self._request("GET", "/api/records/" + urllib.parse.quote(record_id, safe="")))

    def records(self, *, as_of: str | None = None, status: Status | None = Status.ACTIVE,
                record_type: RecordType | str | None = None, about: str | None = None,
                limit: int | None = None) -> list[Record]:
        rtype = record_type.value if isinstance(record_type, RecordType) else record_type
        query = {"type": rtype, "status": status.value if status else "all", "as_of": as_of, "about": about,
                 "limit": limit}
        return [Record.from_json(r) for r in self._request("GET", "/api/records", query=query)]

    # ------------------------------------------------------------------ review

    def candidates(self, *, status: str | None = "pending", text: str | None = None) -> list[Candidate]:
        found = self._request("GET", "/api/candidates", query={"status": status or "all", "text": text})
        return [Candidate(**c) for c in found]

    def approve(self, ids: Sequence[str], *, edits: Mapping[str, Mapping[str, Any]] | None = None,
                create: Iterable[str] = ()) -> list[str]:
        body = {"ids": list(ids), "edits": None if edits is None else {k: dict(v) for k, v in edits.items()},
                "create": list(create) or None}
        return [str(i) for i in self._request("POST", "/api/review/approve", body)]

    def reject(self, ids: Sequence[str], *, reason: str) -> None:
        self._request("POST", "/api/review/reject", {"ids": list(ids), "reason": reason})


def connect(url: str, token: str | None = None, *, timeout: float = 30.0) -> Client:
    """A client of the Workbench server at ``url`` (its root, ``/api`` or ``/sparql``), acting as
    the user ``token`` belongs to; no token for reads on a store without users."""
    return Client(url, token, timeout=timeout)
