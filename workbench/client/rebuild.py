"""The Workbench types rebuilt from their ``to_json()``, for the client of the JSON API
(:mod:`workbench.client`): what the server sends back becomes the type the embedded API returns.

>>> entity({"iri": "urn:wb:entity:paris", "names": ["Paris"], "aliases": [{"alias": "巴黎", "lang": "zh"}],
...         "merged_into": None}).aliases
(('巴黎', 'zh'),)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.access.users import Role, User
from workbench.errors import Invalid
from workbench.review.queue import Checks
from workbench.review.rulebook import Act, Version
from workbench.review.ruledryrun import Conclusion, Contradiction, DryRun
from workbench.review.summaries import Summary
from workbench.values.records import Entity, ImportReport, Record, Tombstone


def read_upload(path: Path) -> str:
    """A local file's text, to send. Raises Invalid for a missing file or one that is not UTF-8."""
    if not path.is_file():
        raise Invalid(f"no such file: {path}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(f"not UTF-8 text (byte {exc.start})", where=str(path)) from None


def entity(d: Mapping[str, Any]) -> Entity:
    return Entity(d["iri"], tuple(d["names"]), tuple((a["alias"], a["lang"]) for a in d["aliases"]),
                  d.get("merged_into"))


def import_report(d: Mapping[str, Any]) -> ImportReport:
    return ImportReport(**{**d, "files": tuple(d["files"]), "new_entities": tuple(d.get("new_entities", ()))})


def record_or_tombstone(d: Mapping[str, Any]) -> Record | Tombstone:
    if "erased_by" in d:
        return Tombstone(**d)
    return Record.from_json(dict(d))


def checks(d: Mapping[str, Any]) -> Checks:
    return Checks(d["candidate"], d["valid"], tuple(d["problems"]), tuple(d["duplicates"]), tuple(d["conflicts"]),
                  {n: tuple(e) for n, e in d["names"].items()})


def summary(d: Mapping[str, Any]) -> Summary:
    return Summary(d["id"], d["summary"], tuple(d["of"]), d["fresh"], tuple(d["why_stale"]))


def _act(d: Mapping[str, Any] | None) -> Act | None:
    return None if d is None else Act(d["who"], d["when"], d.get("comment", ""))


def version(d: Mapping[str, Any]) -> Version:
    proposed = _act(d["proposed"])
    assert proposed is not None
    return Version(d["id"], d["version"], d["iri"], d["status"], d["author"], d.get("text", ""), proposed,
                   _act(d.get("signed_off")), _act(d.get("retired")))


def _conclusion(d: Mapping[str, Any]) -> Conclusion:
    s, p, o = d["triple"]
    return Conclusion((s, p, o), d["text"], tuple(d["proof"]))


def dry_run(d: Mapping[str, Any]) -> DryRun:
    counts = d["counts"]
    return DryRun(
        d["rule"], d["against"], tuple(d["predicates"]), d["subjects"], counts["before"], counts["after"],
        tuple(_conclusion(c) for c in d["added"]), tuple(_conclusion(c) for c in d["removed"]),
        counts["added"], counts["removed"],
        tuple(Contradiction(_conclusion(c), c["record"], c["said"], c["new"]) for c in d["contradictions"]),
        d["incomplete"], d["questions"],
    )


def user(d: Mapping[str, Any]) -> User:
    return User(d["name"], frozenset(Role(r) for r in d["roles"]), frozenset(d.get("groups", ())))
