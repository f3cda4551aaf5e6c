"""Review, the part of the :class:`workbench.service.Workbench` API where people decide what
becomes a fact: users and roles, and the candidate queue (models and other pipelines propose,
curators approve, edit, reject or merge). Every act is attributed to ``self.user``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench import audit
from workbench.access import users
from workbench.access.users import Role, User
from workbench.access.writes import Writer
from workbench.audit import Event
from workbench.errors import Invalid
from workbench.review import extract as extraction
from workbench.review import prompts, queue, summaries
from workbench.review.extract import ExtractReport
from workbench.review.queue import Candidate, Checks, Proposal
from workbench.review.summaries import Summary
from workbench.rules.model import RuleSet
from workbench.store import Store


class Reviewing:
    """Mixed into Workbench: it needs the store, who acts, the clock, and a hook for changed records."""

    store: Store
    user: str
    now: Callable[[], str]  # Workbench's clock, as an ISO time
    _records_changed: Callable[[], None]  # Guesses': indexes catch up after records change
    relations: Callable[[], frozenset[str]]  # Questions': what rules may conclude
    rule_files: Callable[[], RuleSet]  # Questions': the rules in the rules directory
    _writer: Callable[[], Writer]  # Workbench's: who writes, and the store as they may see it

    # ------------------------------------------------------------------ users

    def add_user(self, name: str, roles: Iterable[Role | str], *, groups: Iterable[str] = ()) -> str:
        """Add a user (in ``groups``, such as ``group:atlas``); returns their API token, shown this
        once. The first user must be an admin; after that only an admin adds users. Raises
        Forbidden, Conflict, Invalid."""
        parsed = [r if isinstance(r, Role) else Role.parse(r) for r in roles]
        return users.add(self.store, name, parsed, actor=self.user, now=self.now(), groups=groups)

    def set_groups(self, name: str, *, join: Iterable[str] = (), leave: Iterable[str] = ()) -> User:
        """Put a user in groups and take them out of others (an admin's act): they then see the
        sources visible to the groups they are in. Returns the user as they are now."""
        return users.set_groups(self.store, name, join=join, leave=leave, actor=self.user, now=self.now())

    def users(self) -> list[User]:
        return users.users(self.store)

    # ------------------------------------------------------------------ candidates

    def import_candidates(self, path: str | os.PathLike[str]) -> list[str]:
        """Queue the candidate records of a JSON Lines file (the memory-record format, each may
        carry ``span``), all or none. Returns the ids newly queued."""
        file = Path(path)
        if not file.is_file():
            raise Invalid(f"no such file: {file}")
        found = queue.parse_file(file)
        return queue.propose(self.store, found, Proposal("import", str(file)), actor=self.user, now=self.now(),
                             seen=self._writer().seen)

    def propose(self, candidates: Sequence[dict[str, Any]], via: Proposal) -> list[str]:
        """Queue checked candidate records (from an extractor); see :func:`workbench.review.queue.propose`."""
        return queue.propose(self.store, candidates, via, actor=self.user, now=self.now(), seen=self._writer().seen)

    def extract(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        llm_url: str,
        model: str,
        api_key: str | None = None,
        prompt: str = prompts.DEFAULT,
        timeout: float = 60.0,
    ) -> ExtractReport:
        """Ask a model (any OpenAI-compatible chat-completions server) for candidate facts in
        transcripts (.txt, .md, .jsonl) and queue them for a curator; never into the fact store.
        Rules in its answers become proposed rule versions by the model, proposed by this user,
        pending a reviewer's sign-off. All or nothing: an answer that fails validation is reported
        in ``rejected`` and nothing is queued or proposed. ``api_key`` None takes
        $WORKBENCH_LLM_KEY. See :mod:`workbench.review.extract`.

        Raises Invalid (a transcript, the URL), NotFound (an unknown prompt version),
        ModelUnavailable (the model server failed, with why), Forbidden (the answers hold rules
        and this user may not propose rules), Conflict (a queue or rule race).
        """
        chat = extraction.connect(llm_url, model, api_key=api_key, timeout=timeout)
        return extraction.run(self.store, [Path(p) for p in paths], chat=chat, prompt=prompt, propose=self.propose,
                              actor=self.user, now=self.now(), rule_relations=self.relations(),
                              rule_files=self.rule_files())

    def candidates(self, *, status: str | None = "pending", text: str | None = None) -> list[Candidate]:
        return queue.list_candidates(self.store, status=status, text=text)

    def candidate(self, candidate_id: str) -> Candidate:
        return queue.get(self.store, candidate_id)

    def check_candidate(self, candidate_id: str) -> Checks:
        """What a curator sees before approving: validation, duplicates, conflicts, name bindings."""
        return queue.checks(self.store, queue.get(self.store, candidate_id))

    def approve(
        self, ids: Sequence[str], *, edits: Mapping[str, Mapping[str, Any]] | None = None, create: Iterable[str] = ()
    ) -> list[str]:
        """Approve candidates as records (all or none), attributed to their source, the extractor
        and this curator. Returns the record ids."""
        done = queue.approve(self.store, ids, actor=self.user, now=self.now(), edits=edits, create=create,
                             seen=self._writer().seen)
        self._records_changed()
        return done

    def reject(self, ids: Sequence[str], *, reason: str) -> None:
        queue.reject(self.store, ids, reason=reason, actor=self.user, now=self.now(), seen=self._writer().seen)

    def summaries(self, *, of: str | None = None, include_stale: bool = False) -> list[Summary]:
        """Approved summaries that are fresh (every record they rest on active and unchanged);
        with ``include_stale`` the others too, each saying why it went stale."""
        return summaries.summaries(self.store, of=of, include_stale=include_stale)

    def audit(self, record_id: str) -> list[Event]:
        """Every attributed act on a record and the candidate it came from, oldest first."""
        return audit.trail(self.store, record_id)

    def merge_candidates(self, keep: str, others: Sequence[str]) -> None:
        queue.merge(self.store, keep, others, actor=self.user, now=self.now(), seen=self._writer().seen)
