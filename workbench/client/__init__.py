"""The Python client of the JSON API: ``workbench.connect(url, token)`` offers the calls of
``workbench.open(path)`` against a running ``workbench serve``.

The same signatures, the same types rebuilt from JSON (:class:`Answer`, :class:`Bundle`,
:class:`Record`, :class:`Candidate`, :class:`Entity`, rule versions...; see
:mod:`workbench.client.rebuild`), and the same :class:`WorkbenchError` subclasses, mapped back from the
one JSON error shape. The transport is the standard library's (``urllib.request``). Calls that
take files (``import_files``, ``propose_rules``) read them here and send their text; one file
per import.

>>> client = connect("http://127.0.0.1:7000/", "TOKEN")
>>> client.base
'http://127.0.0.1:7000'
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench import errors
from workbench.access.users import Role, User
from workbench.client import rebuild as convert
from workbench.errors import Forbidden, Invalid, StoreUnavailable, WorkbenchError
from workbench.formats import by_extension, sparql_formats
from workbench.recall.bundles import Bundle
from workbench.records.audit import Event
from workbench.review.queue import Candidate, Checks
from workbench.review.rulebook import Entry, Proposed, Version
from workbench.review.ruledryrun import DryRun
from workbench.review.summaries import Summary
from workbench.rules.check import CaseResult
from workbench.store.files import write_atomically
from workbench.values.answers import Answer
from workbench.values.records import Entity, ImportReport, Record, RecordType, Resolution, Status, Tombstone

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
        params = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in (query or {}).items()
                  if v is not None}
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps({k: v for k, v in body.items() if v is not None}).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return json.loads(self._send(urllib.request.Request(url, data=data, method=method, headers=headers)))

    def _send(self, request: urllib.request.Request) -> bytes:
        """The answer's body; an error answer raised as the WorkbenchError it names (JSON), or
        by its status (a plain-text message, as /sparql gives)."""
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return bytes(response.read())
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

    def proof(self, subject: str, relation: str, obj: str | None = None) -> Answer:
        query = {"subject": subject, "relation": relation, "object": obj}
        return Answer.from_json(self._request("GET", "/api/proof", query=query))

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

    def relations(self) -> frozenset[str]:
        """IRIs of the relations rules may conclude (as :meth:`Workbench.relations`)."""
        return frozenset(self._request("GET", "/api/relations"))

    def record(self, record_id: str) -> Record:
        return Record.from_json(self._request("GET", "/api/records/" + _part(record_id)))

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

    def candidate(self, candidate_id: str) -> Candidate:
        return Candidate(**self._request("GET", "/api/candidates/" + _part(candidate_id)))

    def check_candidate(self, candidate_id: str) -> Checks:
        return convert.checks(self._request("GET", f"/api/candidates/{_part(candidate_id)}/checks"))

    def merge_candidates(self, keep: str, others: Sequence[str]) -> None:
        self._request("POST", "/api/review/merge", {"keep": keep, "others": list(others)})

    def summaries(self, *, of: str | None = None, include_stale: bool = False) -> list[Summary]:
        found = self._request("GET", "/api/summaries", query={"of": of, "include_stale": include_stale or None})
        return [convert.summary(s) for s in found]

    def audit(self, record_id: str) -> list[Event]:
        return [Event(**e) for e in self._request("GET", f"/api/records/{_part(record_id)}/audit")]

    # ------------------------------------------------------------------ records over time

    def history(self, record_id: str) -> list[Record | Tombstone]:
        found = self._request("GET", f"/api/records/{_part(record_id)}/history")
        return [convert.record_or_tombstone(r) for r in found]

    def supersede(self, old_id: str, new_id: str, *, reason: str) -> None:
        self._request("POST", "/api/records/supersede", {"id": old_id, "by": new_id, "reason": reason})

    def retract(self, record_id: str, *, reason: str) -> None:
        self._request("POST", "/api/records/retract", {"id": record_id, "reason": reason})

    def erase(self, record_id: str, *, reason: str) -> Tombstone:
        return Tombstone(**self._request("POST", "/api/records/erase", {"id": record_id, "reason": reason}))

    # ------------------------------------------------------------------ entities and names

    def entities(self) -> list[Entity]:
        return [convert.entity(e) for e in self._request("GET", "/api/entities")]

    def entity(self, ref: str) -> Entity:
        return convert.entity(self._request("GET", "/api/entity", query={"ref": ref}))

    def resolve(self, name: str) -> Resolution:
        found = self._request("GET", "/api/resolve", query={"name": name})
        return Resolution(found["name"], found["outcome"], tuple(found["entities"]))

    def add_entity(self, name: str, *, lang: str | None = None) -> ox.NamedNode:
        return ox.NamedNode(self._request("POST", "/api/entities", {"name": name, "lang": lang})["iri"])

    def add_alias(self, ref: str, alias: str, *, lang: str | None = None) -> ox.NamedNode:
        body = {"entity": ref, "alias": alias, "lang": lang}
        return ox.NamedNode(self._request("POST", "/api/entities/alias", body)["iri"])

    def merge(self, keep: str, other: str, *, reason: str) -> ox.NamedNode:
        body = {"keep": keep, "other": other, "reason": reason}
        return ox.NamedNode(self._request("POST", "/api/entities/merge", body)["iri"])

    def split(self, ref: str, *, reason: str) -> ox.NamedNode:
        return ox.NamedNode(self._request("POST", "/api/entities/split", {"entity": ref, "reason": reason})["iri"])

    # ------------------------------------------------------------------ imports

    def import_files(self, paths: Sequence[str | os.PathLike[str]], *, record_type: RecordType | str | None = None,
                     source: str | None = None, said_by: str | None = None, statement: str | None = None,
                     visible_to: Sequence[str] = (), progress: object | None = None) -> ImportReport:
        """One file (.jsonl records, or RDF by its extension) read here and imported by the
        server, all or nothing; the file's name stands for it in errors and provenance. Several
        files are refused: over HTTP each is its own import (``progress`` is accepted for the
        same signature)."""
        files = [Path(p) for p in paths]
        if len(files) != 1:
            raise Invalid("over HTTP, import one file at a time" if files else "name at least one file to import")
        text = convert.read_upload(files[0])
        if files[0].suffix.lower() == ".jsonl":
            return self.import_records(text, name=files[0].name)
        found = by_extension(files[0])
        fmt = found.upload if found else None
        if fmt is None:
            raise Invalid(f"cannot tell the RDF format from the extension {files[0].suffix!r}", where=str(files[0]))
        rtype = record_type.value if isinstance(record_type, RecordType) else record_type
        return self.import_rdf(text, format=fmt, name=files[0].name, record_type=rtype, source=source,
                               said_by=said_by, statement=statement, visible_to=visible_to)

    def import_records(self, records: str | Sequence[Mapping[str, Any]], *, name: str | None = None) -> ImportReport:
        """Memory records as JSON Lines text or as record objects (item N is line N in errors)."""
        body = {"records": records if isinstance(records, str) else [dict(r) for r in records], "name": name}
        return convert.import_report(self._request("POST", "/api/import/records", body))

    def import_rdf(self, data: str, *, format: str, name: str | None = None, record_type: str | None = None,
                   source: str | None = None, said_by: str | None = None, statement: str | None = None,
                   visible_to: Sequence[str] = ()) -> ImportReport:
        """RDF text in ``format`` (turtle, trig, ntriples, nquads, jsonld, rdfxml)."""
        body = {"data": data, "format": format, "name": name, "type": record_type, "source": source,
                "said_by": said_by, "statement": statement, "visible_to": list(visible_to) or None}
        return convert.import_report(self._request("POST", "/api/import/rdf", body))

    # ------------------------------------------------------------------ rules

    def rule_list(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._request("GET", "/api/rules")
        return found

    def rule_versions(self, rule_id: str | None = None) -> list[Version]:
        return [convert.version(v) for v in self._request("GET", "/api/rules/versions", query={"rule": rule_id})]

    def propose_rules(self, path: str | os.PathLike[str]) -> list[Proposed]:
        """The rule file read here; the server checks and stores it as ``rules propose`` does."""
        file = Path(path)
        body = {"text": convert.read_upload(file), "name": file.name}
        return [Proposed(**p) for p in self._request("POST", "/api/rules/propose", body)]

    def propose_rule_text(self, text: str, *, name: str = "rules.ttl") -> list[Proposed]:
        """Rule Turtle given as text (say, from an editor), checked and stored as
        :meth:`propose_rules` does a file; ``name`` stands for it in errors and provenance."""
        body = {"text": text, "name": name}
        return [Proposed(**p) for p in self._request("POST", "/api/rules/propose", body)]

    def run_rule_tests(self, rule_id: str, version: int | None = None) -> tuple[str, list[CaseResult]]:
        found = self._request("GET", f"/api/rules/{_part(rule_id)}/test", query={"version": version})
        return found["rule"], [CaseResult(c["rule"], c["case"], tuple(c["missing"]), tuple(c["unwanted"]))
                               for c in found["cases"]]

    def dry_run_rule(self, rule_id: str, version: int | None = None) -> DryRun:
        return convert.dry_run(self._request("GET", f"/api/rules/{_part(rule_id)}/dry-run",
                                             query={"version": version}))

    def signoff_rule(self, rule_id: str, *, comment: str, version: int | None = None) -> Version:
        body = {"rule": rule_id, "comment": comment, "version": version}
        return convert.version(self._request("POST", "/api/rules/signoff", body))

    def retire_rule(self, rule_id: str, *, reason: str, version: int | None = None) -> Version:
        body = {"rule": rule_id, "reason": reason, "version": version}
        return convert.version(self._request("POST", "/api/rules/retire", body))

    def rule_history(self, rule_id: str) -> list[Entry]:
        found = self._request("GET", f"/api/rules/{_part(rule_id)}/history")
        return [Entry(convert.version(e), e["diff"]) for e in found]

    def export_rules(self, directory: str | os.PathLike[str]) -> list[Path]:
        """The server's stored rules, written here as ``DIR/{id}.ttl`` files."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for f in self._request("GET", "/api/rules/export"):
            path = target / Path(f["file"]).name
            write_atomically(path, f["text"].encode("utf-8"))
            written.append(path)
        return written

    # ------------------------------------------------------------------ evaluation and users

    def evaluate(self, set_name: str = "dev", *, k: int = 10, distractors: bool = False,
                 scenario: bool = False) -> dict[str, Any]:
        """What ``workbench eval SET --json`` prints, run by the server on a shipped set (``dev``)."""
        query = {"set": set_name, "k": k, "distractors": distractors or None, "scenario": scenario or None}
        found: dict[str, Any] = self._request("GET", "/api/eval", query=query)
        return found

    def users(self) -> list[User]:
        return [convert.user(u) for u in self._request("GET", "/api/users")]

    def me(self) -> User | None:
        """Who the token belongs to; None on a store with no users (no token needed there)."""
        found = self._request("GET", "/api/me")
        return convert.user(found) if found.get("name") else None

    def set_groups(self, name: str, *, join: Iterable[str] = (), leave: Iterable[str] = ()) -> User:
        body = {"name": name, "join": list(join) or None, "leave": list(leave) or None}
        return convert.user(self._request("POST", "/api/users/groups", body))

    def sparql(self, query: str, *, format: str = "json", reasoning: bool = False) -> bytes:
        """A SPARQL query's answer from the server's /sparql, serialised as ``format`` (as
        :meth:`Workbench.sparql`, ``reasoning`` too), over what the token's user may see."""
        results, graph = sparql_formats(format)  # as Workbench.sparql reads it
        accept = f"{results.media_type}, {graph.media_type};q=0.9"
        data = urllib.parse.urlencode({"query": query, **({"reasoning": "true"} if reasoning else {})}).encode()
        headers = {"Accept": accept, "Content-Type": "application/x-www-form-urlencoded"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return self._send(urllib.request.Request(self.base + "/sparql", data=data, method="POST", headers=headers))

    def add_user(self, name: str, roles: Iterable[Role | str], *, groups: Iterable[str] = ()) -> str:
        body = {"name": name, "roles": [r.value if isinstance(r, Role) else r for r in roles],
                "groups": list(groups) or None}
        return str(self._request("POST", "/api/users", body)["token"])




def _part(text: str) -> str:
    """One path segment."""
    return urllib.parse.quote(text, safe="")


def connect(url: str, token: str | None = None, *, timeout: float = 30.0) -> Client:
    """A client of the Workbench server at ``url`` (its root, ``/api`` or ``/sparql``), acting as
    the user ``token`` belongs to; no token for reads on a store without users."""
    return Client(url, token, timeout=timeout)
