"""A candidate's record as the review page's edit form shows it, and back.

The form has a field for what curators fix most (statement, type, about, when it applied) and
one box with every other field of the record as JSON (id, source, triples...), so that any field
can be edited and none is lost. What comes back is checked by the server as any record is.

>>> fields, rest = split({"id": "c-1", "statement": "Ravi likes tea.", "type": "observation", "about": ["Ravi"],
...                       "source": {"id": "chat-1", "said_by": "me"}})
>>> fields
{'statement': 'Ravi likes tea.', 'type': 'observation', 'about': 'Ravi', 'effective_from': '', 'effective_to': ''}
>>> join({**fields, "statement": "Ravi likes green tea.", "about": "Ravi, tea"}, rest)["about"]
['Ravi', 'tea']
>>> join(fields, '{"id": "c-1",\\n "source": }')
Traceback (most recent call last):
...
workbench.errors.Invalid: other fields (JSON): Expecting value (line 2, column 12)
>>> changes({"status": "pending", "decided_by": None}, {"status": "rejected", "decided_by": "root"})
[('status', 'pending', 'rejected'), ('decided_by', None, 'root')]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from workbench import limits
from workbench.errors import Invalid

TYPES = ("observation", "decision", "preference", "constraint", "event", "state", "common_sense")
FIELDS = ("statement", "type", "about", "effective_from", "effective_to")
# What a decision changes on a candidate: shown when someone else decided it first.
DECISION = ("status", "decided_by", "decided_at", "reason", "approved_as", "merged_into")


def split(record: Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """The form's fields (as text) and the rest of the record as indented JSON."""
    about = record.get("about") or []
    fields = {
        "statement": str(record.get("statement", "")),
        "type": str(record.get("type", "observation")),
        "about": ", ".join(str(a) for a in about) if isinstance(about, list) else str(about),
        "effective_from": str(record.get("effective_from") or ""),
        "effective_to": str(record.get("effective_to") or ""),
    }
    rest = {k: v for k, v in record.items() if k not in FIELDS}
    return fields, json.dumps(rest, indent=2, ensure_ascii=False)


def join(fields: Mapping[str, str], rest: str) -> dict[str, Any]:
    """The record the form says. Raises Invalid for other fields that are not a JSON object,
    naming the line and column."""
    limits.check_json_text(rest, "other fields (JSON)")
    try:
        others = json.loads(rest) if rest.strip() else {}
    except json.JSONDecodeError as exc:
        raise Invalid(f"{exc.msg} (line {exc.lineno}, column {exc.colno})", where="other fields (JSON)") from None
    if not isinstance(others, dict):
        raise Invalid("must be a JSON object of the record's other fields", where="other fields (JSON)")
    overlap = sorted(set(others) & set(FIELDS))
    if overlap:
        raise Invalid(f"{', '.join(overlap)} has its own box above; remove it here", where="other fields (JSON)")
    record: dict[str, Any] = {"statement": fields.get("statement", "").strip(), "type": fields.get("type", ""),
                              **others}
    about = [a.strip() for a in fields.get("about", "").split(",") if a.strip()]
    if about:
        record["about"] = about
    for key in ("effective_from", "effective_to"):
        value = fields.get(key, "").strip()
        if value:
            record[key] = value
    return record


def changes(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """What a decision someone else made changed on a candidate: (field, before, now)."""
    return [(k, before.get(k), now.get(k)) for k in DECISION if before.get(k) != now.get(k)]
