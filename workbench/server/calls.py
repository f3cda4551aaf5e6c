"""The Workbench calls behind the JSON API routes that are more than one line: uploads (records,
RDF, rule files) handed to the service's own file imports, rule export and tests, the evaluation,
and the role checks the API makes for calls whose service method makes none.

An upload is written to a file in a fresh temporary directory, under the name the request gives
(its base name only) with the format's extension, and imported by the same service call as
``workbench import FILE``: the same checks, the same atomicity. Its provenance names the upload
(``upload:records.jsonl``), never the temporary file. Errors then name the upload
(``records:3``, ``data.ttl``) instead of the temporary path.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench.access import users
from workbench.access.users import Role
from workbench.errors import Invalid, WorkbenchError
from workbench.formats import UPLOADS
from workbench.server.routespec import ApiRoute
from workbench.service import Workbench
from workbench.service import evaluation as ev
from workbench.values.records import RecordType

Call = Callable[[Workbench, dict[str, Any]], Any]
MAX_K = 1000  # records the plain recipe returns per question, at most
SETS = {"dev": ev.DEV_SET}  # question sets the API evaluates: shipped ones only, never a server path


def guarded(route: ApiRoute, call: Call) -> Call:
    """``call``, after checking that the acting user holds ``route.role`` (Forbidden, in the
    service's own words, otherwise); ``call`` itself when the route names no role."""
    if route.role is None:
        return call
    role = Role(route.role)

    def checked(wb: Workbench, a: dict[str, Any]) -> Any:
        users.require(wb.store, wb.user, role, route.act or route.name)
        return call(wb, a)

    return checked


# ---------------------------------------------------------------------- uploads


def _name(given: str | None, default: str) -> str:
    if given is None:
        return default
    name = given.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", "..") or "\x00" in name or len(name) > 200:
        raise Invalid("must be a file name (no directories, at most 200 characters)", where="name")
    return name


def _renamed(exc: WorkbenchError, path: Path, label: str) -> WorkbenchError:
    """``exc`` of the same class with the temporary file's path replaced by ``label``."""

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(str(path), label).replace(str(path.parent), label)
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    out = type(exc).__new__(type(exc))
    WorkbenchError.__init__(out, fix(exc.message), where=fix(exc.where), **{k: fix(v) for k, v in exc.data.items()})
    return out


@contextmanager
def upload(text: str, label: str, suffix: str) -> Iterator[Path]:
    """``text`` as a file named ``label`` (``suffix`` added unless it ends so) in a fresh
    temporary directory, removed afterwards. Errors raised inside name ``label`` where they
    named the temporary file (``records:3: ...``)."""
    filename = label if label.lower().endswith(suffix) else label + suffix
    with tempfile.TemporaryDirectory(prefix="workbench-upload-") as tmp:
        path = Path(tmp) / filename
        path.write_text(text, encoding="utf-8")
        try:
            yield path
        except WorkbenchError as exc:
            raise _renamed(exc, path, label) from None


def import_records(wb: Workbench, a: Mapping[str, Any]) -> dict[str, Any]:
    """Records as JSON Lines text, or as an array of record objects (one a line)."""
    given = a["records"]
    text = given if isinstance(given, str) else "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in given)
    label = _name(a.get("name"), "records")
    with upload(text, label, ".jsonl") as path:
        report = wb.import_files([path], used=[f"upload:{path.name}"])
    return replace(report, files=(label,)).to_json()


def import_rdf(wb: Workbench, a: Mapping[str, Any]) -> dict[str, Any]:
    fmt = UPLOADS.get(str(a["format"]).strip().lower())
    if fmt is None:
        raise Invalid(f"unknown RDF format {a['format']!r}; use one of {', '.join(UPLOADS)}", where="format")
    suffix = fmt.extensions[0]
    try:
        rtype = RecordType.parse(a["type"]) if a.get("type") is not None else None
    except ValueError as exc:
        raise Invalid(str(exc), where="type") from None
    label = _name(a.get("name"), "data")
    with upload(a["data"], label, suffix) as path:
        report = wb.import_files([path], record_type=rtype, source=a.get("source"),
                                 said_by=a.get("said_by"), statement=a.get("statement"),
                                 visible_to=a.get("visible_to", ()), used=[f"upload:{path.name}"])
    return replace(report, files=(label,)).to_json()


def propose_rules(wb: Workbench, a: Mapping[str, Any]) -> list[dict[str, Any]]:
    with upload(a["text"], _name(a.get("name"), "rules.ttl"), ".ttl") as path:
        return [p.to_json() for p in wb.propose_rules(path)]


# ---------------------------------------------------------------------- rules and evaluation


def run_rule_tests(wb: Workbench, a: Mapping[str, Any]) -> dict[str, Any]:
    label, results = wb.run_rule_tests(a["rule"], a.get("version"))
    return {"rule": label, "passed": all(c.passed for c in results), "cases": [
        {"rule": c.rule, "case": c.case, "passed": c.passed, "missing": list(c.missing), "unwanted": list(c.unwanted)}
        for c in results]}


def export_rules(wb: Workbench, a: Mapping[str, Any]) -> list[dict[str, str]]:
    with tempfile.TemporaryDirectory(prefix="workbench-rules-") as tmp:
        return [{"file": p.name, "text": p.read_text(encoding="utf-8")} for p in wb.export_rules(tmp)]


def evaluate(wb: Workbench, a: Mapping[str, Any]) -> dict[str, Any]:
    """What ``workbench eval SET --json`` prints, on a shipped question set."""
    name = a.get("set", "dev")
    if name not in SETS:
        raise Invalid(f"unknown question set {name!r}; the server evaluates {', '.join(SETS)}", where="set")
    k = a.get("k", 10)
    if not 1 <= k <= MAX_K:
        raise Invalid(f"must be at least 1 and at most {MAX_K}", where="k")
    questions = ev.load_set(SETS[name])
    data: dict[str, Any] = ev.evaluate(wb, questions, set_name=name, k=k).to_json()
    if a.get("distractors"):
        data["distractors"] = ev.with_distractors(wb, questions, set_name=name, k=k).to_json()
    if a.get("scenario"):
        data["scenario"] = ev.supersession_scenario(wb.user, ev.encoder_spec(wb)).to_json()
    return data
