"""The rules table the service shows (:meth:`Workbench.rule_list`): each rule in the rules
directory and each stored version, and which of them answers now. The lifecycle itself is
:mod:`workbench.review.rulebook`, the dry run :mod:`workbench.review.ruledryrun`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError
from workbench.review import rulebook

if TYPE_CHECKING:
    from workbench.service import Workbench


def rule_list(wb: Workbench) -> list[dict[str, Any]]:
    """See :meth:`Workbench.rule_list`."""
    active = {(r.id, r.version): r for r in wb.rules.rules}
    stored = rulebook.versions(wb.store)
    taken_over = {v.id for v in stored if (v.id, v.version) in active}
    relations = wb.relations()
    rows = [{"id": r.id, "version": r.version,
             # A file's rule that a signed-off stored version replaced no longer answers.
             "status": "superseded" if r.id in taken_over and (r.id, r.version) not in active else r.status,
             "author": r.author, "reading": r.reading, "kind": r.kind, "where": r.file, "tests": len(r.tests),
             "answers": (r.id, r.version) in active}
            for r in wb.rule_files().rules]
    rows += [{"id": v.id, "version": v.version, "status": v.status, "author": v.author,
              "reading": _reading(v, active, relations), "kind": None, "where": "store", "tests": None,
              "answers": (v.id, v.version) in active}
             for v in stored]
    return rows


def _reading(version: rulebook.Version, active: dict[tuple[str, int], Any], relations: frozenset[str]) -> str | None:
    """A stored version's plain-language reading: the loaded rule's, else its own text's."""
    found = active.get((version.id, version.version))
    if found is not None:
        return str(found.reading)
    try:
        return str(rulebook.version_rule(version, relations).reading)
    except WorkbenchError:  # a text that no longer loads (relations changed): the list still shows it
        return None
