"""Rule review, the part of the :class:`workbench.service.Workbench` API that changes rules:
propose versions, run their tests, dry-run them on the store, sign off, retire, history, export.

Thin: the lifecycle is :mod:`workbench.review.rulebook`, the dry run
:mod:`workbench.review.ruledryrun`. Whoever acts is the Workbench's user (``--as`` on a local
store); every act is attributed and checked against their roles.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

from workbench.errors import WorkbenchError
from workbench.review import rulebook
from workbench.review.ruledryrun import DryRun
from workbench.rules.check import CaseResult
from workbench.rules.model import RuleSet
from workbench.store import Store


class _Host(Protocol):
    """What the mixin needs of the Workbench it is mixed into."""

    store: Store
    user: str

    def now(self) -> str: ...

    def relations(self) -> frozenset[str]: ...

    def rule_files(self) -> RuleSet: ...

    @property
    def rules(self) -> RuleSet: ...


class RuleReview:
    """Mixed into Workbench. Rule versions live in the store; see :mod:`workbench.review.rulebook`."""

    def propose_rules(self: _Host, path: str | os.PathLike[str]) -> list[rulebook.Proposed]:
        """Store each rule in the file as a new version, proposed (the import of rule files).
        Raises ParseError/Invalid naming file, line and column, Forbidden unless a curator or
        reviewer acts, Conflict for a version not above every stored one."""
        return rulebook.propose(self.store, Path(path), actor=self.user, now=self.now(),
                                relations=self.relations(), files=self.rule_files())

    def rule_list(self: _Host) -> list[dict[str, Any]]:
        """Each rule in the rules directory (drafts too, even when a test fails) and each stored
        version: id, version, status, author, reading, kind, where it lives (its file, or
        ``store``), its number of test cases, and whether it answers questions now (a signed-off
        stored version takes over from the file). What ``workbench rules list --json`` prints."""
        active = {(r.id, r.version): r for r in self.rules.rules}
        stored = rulebook.versions(self.store)
        taken_over = {v.id for v in stored if (v.id, v.version) in active}
        rows = [{"id": r.id, "version": r.version,
                 # A file's rule that a signed-off stored version replaced no longer answers.
                 "status": "superseded" if r.id in taken_over and (r.id, r.version) not in active else r.status,
                 "author": r.author, "reading": r.reading, "kind": r.kind, "where": r.file, "tests": len(r.tests),
                 "answers": (r.id, r.version) in active}
                for r in self.rule_files().rules]
        rows += [{"id": v.id, "version": v.version, "status": v.status, "author": v.author,
                  "reading": _reading(v, active, self.relations()), "kind": None, "where": "store", "tests": None,
                  "answers": (v.id, v.version) in active}
                 for v in stored]
        return rows

    def rule_versions(self: _Host, rule_id: str | None = None) -> list[rulebook.Version]:
        """Stored versions of a rule (or of every rule), oldest first."""
        return rulebook.versions(self.store, rule_id)

    def run_rule_tests(self: _Host, rule_id: str, version: int | None = None) -> tuple[str, list[CaseResult]]:
        """Run a version's test cases (default: the latest stored, else the file's)."""
        return rulebook.run_version_tests(self.store, rule_id, version, relations=self.relations(),
                                          files=self.rule_files())

    def dry_run_rule(self: _Host, rule_id: str, version: int | None = None) -> DryRun:
        """What a version (default: the latest proposed) would derive on this store, against the
        version in use: added and removed conclusions with proofs, and contradictions with
        recorded negative facts. Writes nothing."""
        from workbench.review.ruledryrun import dry_run

        v = rulebook.find(self.store, rule_id, version)
        return dry_run(self.store, self.rules, rulebook.version_rule(v, self.relations()))

    def signoff_rule(self: _Host, rule_id: str, *, comment: str, version: int | None = None) -> rulebook.Version:
        """Sign off a proposed version as the acting reviewer: it answers from now on, and the
        version before it retires. See :func:`workbench.review.rulebook.signoff` for the checks."""
        return rulebook.signoff(self.store, rule_id, version, actor=self.user, comment=comment, now=self.now(),
                                relations=self.relations(), files=self.rule_files())

    def retire_rule(self: _Host, rule_id: str, *, reason: str, version: int | None = None) -> rulebook.Version:
        """Withdraw a rule's active version (or a named proposed one) from answering."""
        return rulebook.retire(self.store, rule_id, version, actor=self.user, reason=reason, now=self.now())

    def rule_history(self: _Host, rule_id: str) -> list[rulebook.Entry]:
        """Every stored version: status, author, proposer, sign-off, retirement, and its diff."""
        return rulebook.history(self.store, rule_id)

    def export_rules(self: _Host, directory: str | os.PathLike[str]) -> list[Path]:
        """Write the stored rules back as Turtle files, one per rule (``propose`` is the import)."""
        return rulebook.export(self.store, Path(directory))


def _reading(version: rulebook.Version, active: dict[tuple[str, int], Any], relations: frozenset[str]) -> str | None:
    """A stored version's plain-language reading: the loaded rule's, else its own text's."""
    found = active.get((version.id, version.version))
    if found is not None:
        return str(found.reading)
    try:
        return str(rulebook.version_rule(version, relations).reading)
    except WorkbenchError:  # a text that no longer loads (relations changed): the list still shows it
        return None
