"""The sample data in ``data/``: admitted common sense, a person's memories, and the aliases they
registered; with ``proposals``, also the sample's proposals, so that a newcomer's store has work
for a curator and a reviewer. ``workbench init --sample`` and ``workbench up`` load all of it;
loading it twice changes nothing.

The proposals are what a model might propose from the person's chats, made as an extraction
would make them, by a stand-in model, ``sample-extractor``, with the prompt version
``sample-v1``: three candidate facts in the review queue (``proposals.jsonl``), each with the
problem a curator must see (a name that binds nothing, a conflict with a recorded fact, a
duplicate of a record), and one rule version (``proposed-rule.ttl``) authored and proposed by
that model, so that whoever signs in first (the store's first admin) may sign it off: a
reviewer never signs off a version they wrote or proposed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import Conflict
from workbench.imports.common import ProgressFactory
from workbench.review import queue, rulebook
from workbench.review.queue import Proposal
from workbench.values.records import ImportReport, RecordType

if TYPE_CHECKING:
    from workbench.service import Workbench

COMMON_SENSE_SOURCE = "common-sense-v1"
MODEL = "sample-extractor"  # the stand-in model the sample's proposals name as their extractor
PROMPT_VERSION = "sample-v1"
AUTHOR = f"model:{MODEL}"  # who wrote and proposed the sample's rule version
PROPOSALS = "proposals.jsonl"
PROPOSED_RULE = "proposed-rule.ttl"


def load(
    wb: Workbench, data: Path, *, progress: ProgressFactory | None = None, proposals: bool = False
) -> list[ImportReport]:
    reports = [
        wb.import_files(
            [data / "common-sense.ttl"],
            record_type=RecordType.COMMON_SENSE,
            source=COMMON_SENSE_SOURCE,
            said_by="workbench-curators",
            statement="Admitted common sense: kinds of things and what each kind has, is used for, depends on, needs.",
            progress=progress,
        ),
        wb.import_files([data / "memories.jsonl"], progress=progress),
    ]
    acting = wb.user
    try:
        for alias in json.loads((data / "aliases.json").read_text(encoding="utf-8")):
            wb.user = alias["by"]
            with contextlib.suppress(Conflict):  # registered by an earlier load
                wb.add_alias(alias["entity"], alias["alias"], lang=alias.get("lang"))
    finally:
        wb.user = acting
    if proposals:
        propose(wb, data)
    return reports


def _via(path: Path) -> Proposal:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Proposal("extraction", f"sample: {path.name}", model=MODEL, prompt_version=PROMPT_VERSION,
                    input_digest=digest)


def propose(wb: Workbench, data: Path) -> tuple[list[str], bool]:
    """Queue the sample's candidate facts and propose its rule version, each once: a candidate
    queued before (whatever became of it since) and a version stored before are left as they
    are. Returns the candidate ids newly queued and whether the rule version was newly proposed."""
    path = data / PROPOSALS
    found = queue.parse_file(path)
    queued = {c.id for c in queue.list_candidates(wb.store, ids=[c["id"] for c in found])}
    fresh = [c for c in found if c["id"] not in queued]
    new = wb.propose(fresh, _via(path)) if fresh else []
    return new, _propose_rule(wb, data / PROPOSED_RULE)


def _propose_rule(wb: Workbench, path: Path) -> bool:
    """The rule version in ``path``, proposed through the rulebook by the sample's extractor (a
    stand-in model, not a user of the store: no role check). Returns whether it was new."""
    with contextlib.suppress(Conflict):  # another text holds this version: leave it be
        done = rulebook.propose(wb.store, path, actor=AUTHOR, now=wb._now(), relations=wb.relations(),
                                files=wb.rule_files(), via=_via(path), check_role=False)
        return any(p.outcome == "proposed" for p in done)
    return False


def waiting(wb: Workbench) -> tuple[int, int]:
    """How many of the sample's proposals still wait: candidate facts pending a curator, and
    rule versions pending a reviewer's sign-off."""
    facts = sum(1 for c in wb.candidates() if c.model == MODEL)
    rules = sum(1 for v in wb.rule_versions() if v.status == "proposed" and v.author == AUTHOR)
    return facts, rules
