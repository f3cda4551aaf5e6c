"""Questions, the part of the :class:`workbench.service.Workbench` API that answers: facts
(recorded or derived, with proofs), counts, current states and decisions, and the rules they use.

Every name binds exactly first (:mod:`workbench.answer.names`); the answers come from
:mod:`workbench.answer`; the rules from ``rules_dir`` (:mod:`workbench.rules`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

from workbench import records
from workbench.answer.model import Answer, Tier
from workbench.answer.period import period
from workbench.errors import Invalid
from workbench.relations import Relations
from workbench.resources import declared_relations
from workbench.rules.model import RuleSet
from workbench.store import Store


class Questions:
    """Mixed into Workbench: what it needs is the store, the clock and where the rules are."""

    store: Store
    rules_dir: Path
    _clock: Callable[[], dt.datetime]
    _rules: RuleSet | None
    _relation_labels: Relations | None
    _labels_version: str | None = None  # the store's version when the labels were read

    _rules_key: object = None  # what the cached rules were built from: rules_dir and the stored versions
    _stamp: tuple[str, tuple[tuple[str, str], ...]] | None = None  # the stored versions, as of a store version

    @property
    def rules(self) -> RuleSet:
        """The rules that answer: those in ``rules_dir``, except where the store holds a
        signed-off version of a rule (its active version answers, or none once retired; see
        :mod:`workbench.review.rulebook`). Loaded and checked (syntax, shape, allowed constructs,
        test cases) again only when the files' place or the stored versions change. Raises
        ParseError/Invalid naming file, rule and line."""
        from workbench.review import rulebook

        key = (self.rules_dir, self._rule_stamp())
        if self._rules is None or key != self._rules_key:
            from workbench.rules import run_tests

            stored = rulebook.versions(self.store) if key[1] else []
            rules = rulebook.effective(self.rule_files(), stored, self.relations())
            # Active rules must pass their tests to be used; drafts are checked by `rules check`.
            failed = [c for c in run_tests(RuleSet(rules.active())) if not c.passed]
            if failed:
                c = failed[0]
                raise Invalid(
                    f"rule {c.rule} fails its test {c.case!r}: missing {list(c.missing)}, unwanted {list(c.unwanted)}",
                    where=str(self.rules_dir),
                )
            self._rules, self._rules_key = rules, key
        return self._rules

    def _rule_stamp(self) -> tuple[tuple[str, str], ...]:
        """The stored rule versions and their status. A store only this process writes says by
        its version when they may have changed, which saves a query per question; a shared
        server is asked each time."""
        from workbench.review import rulebook

        if not self.store.owned:
            return rulebook.stamp(self.store)
        version = self.store.version()
        if self._stamp is None or self._stamp[0] != version:
            self._stamp = (version, rulebook.stamp(self.store))
        return self._stamp[1]

    def rule_files(self) -> RuleSet:
        """Every rule in ``rules_dir``, loaded and checked (syntax, shape, allowed constructs),
        drafts included, test cases not run. Raises ParseError/Invalid naming file and rule."""
        from workbench.rules import load_rules

        return load_rules(self.rules_dir.glob("*.ttl"), relations=self.relations())

    def relations(self) -> frozenset[str]:
        """IRIs of the relations rules may conclude: those the store knows and those this
        version's ontology declares."""
        return frozenset(p.value for p in self._relations().by_key.values()) | declared_relations()

    def _relations(self) -> Relations:
        """Relation labels, read again after the store changed (vocabulary comes with imports,
        made through this Workbench or another acting on the same store)."""
        version = self.store.version()
        if self._relation_labels is None or version != self._labels_version:
            self._relation_labels = Relations.load(self.store)
            self._labels_version = version
        return self._relation_labels

    def ask(
        self, subject: str, relation: str, obj: str | None = None, *, as_of: str | None = None, guess: bool = False
    ) -> Answer:
        """Does ``subject relation obj`` hold, or what does ``subject relation``? Names and the
        relation are written as people write them. Answers recorded, derived (with proofs),
        no_evidence, conflicting, ambiguous or unknown_entity; never a bare value. With
        ``guess``, a genuine gap (no_evidence, asked about now) is answered ``guessed``: model
        guesses ranked by similar things, apart from any value, never stored.

        Raises Invalid for an unknown relation or a malformed date.
        """
        from workbench.answer import ask, names

        as_of = records.check_date(as_of, "--as-of") if as_of else None
        rel = names.relation(self._relations(), relation)
        question = f"{subject} {relation}" + (f" {obj}" if obj else "") + "?"
        params = _params(subject=subject, relation=relation, object=obj, as_of=as_of)
        bound = names.bind(self.store, {"subject": subject, **({"object": obj} if obj else {})},
                           kind="ask", question=question, params=params, as_of=as_of)
        if isinstance(bound, Answer):
            return bound
        answer = ask.ask(self.store, self.rules, subject=bound["subject"], relation=rel, obj=bound.get("object"),
                         as_of=as_of, question=question, params=params)
        if obj is None and ask.logged_state(answer):
            # Repeated updates of one state (a weight logged three times) are one current value
            # with its history, never several values.
            return self.current(subject, relation, as_of=as_of)
        if guess and answer.tier is Tier.NO_EVIDENCE and as_of is None:
            return self._guessed(answer, bound["subject"], rel, bound.get("object"))
        return answer

    def _guessed(self, answer: Answer, subject: ox.NamedNode, rel: ox.NamedNode, obj: object | None) -> Answer:
        """A no-evidence answer with the guesser's ranking added, or unchanged when nothing
        similar has a value to offer."""
        from dataclasses import replace

        from workbench.answer.evidence import Labels

        raw = self.guess(subject.value, rel.value)  # type: ignore[attr-defined]
        if not raw:
            return replace(answer, summary=answer.summary + " Nothing similar has a value to guess from.")
        labels = Labels(self.store, [ox.NamedNode(g.value[1:-1]) for g in raw if g.value.startswith("<")]
                        + [ox.NamedNode(b) for g in raw for b in g.because])
        guesses = tuple(
            replace(g, label=labels(_term(g.value)), because=tuple(labels(ox.NamedNode(b)) for b in g.because))
            for g in raw
        )
        head = "No evidence: nothing recorded or derivable answers this."
        if obj is not None:
            rank = next((i for i, g in enumerate(guesses, 1) if g.value == str(obj)), None)
            what = labels(obj)
            tail = (f" Model guess: {what} ranks {rank} of {len(guesses)} (score {guesses[rank - 1].score:.2f})"
                    if rank else f" Model guess: {what} is not among the {len(guesses)} ranked candidates")
        else:
            tail = f" Model guess: {guesses[0].label} (score {guesses[0].score:.2f}) and {len(guesses) - 1} more"
        return replace(answer, tier=Tier.GUESSED, guesses=guesses,
                       summary=head + tail + "; a guess from similar things, not a fact.")

    def count(
        self,
        event_type: str,
        *,
        about: str | None = None,
        year: int | str | None = None,
        start: str | None = None,
        end: str | None = None,
        as_of: str | None = None,
    ) -> Answer:
        """How many events of a kind (``wedding``), optionally about someone, in a year
        (``"this"`` for the clock's year) or a date range, as of a date. Counted by code;
        undated events that cannot be placed give "at least N". Raises Invalid for an
        impossible period."""
        from workbench.answer import count, names

        as_of = records.check_date(as_of, "--as-of") if as_of else None
        first, last = period(year, start, end, this_year=self._clock().year)
        question = f"how many {event_type}" + (f" about {about}" if about else "") + (
            f" between {first or 'the beginning'} and {last or 'now'}" if first or last else "") + "?"
        params = _params(event_type=event_type, about=about, start=first.isoformat() if first else None,
                         end=last.isoformat() if last else None, as_of=as_of)
        bound = names.bind(self.store, {"kind": event_type, **({"about": about} if about else {})},
                           kind="count", question=question, params=params, as_of=as_of)
        if isinstance(bound, Answer):
            return bound
        return count.count_events(self.store, kind=bound["kind"], about=bound.get("about"), start=first, end=last,
                                  as_of=as_of, question=question, params=params)

    def current(self, subject: str, state: str, *, as_of: str | None = None) -> Answer:
        """The current value of a changing state (``me``, ``weight``), with its history."""
        from workbench.answer import current, names

        as_of = records.check_date(as_of, "--as-of") if as_of else None
        rel = names.relation(self._relations(), state)
        question = f"current {state} of {subject}?"
        params = _params(subject=subject, state=state, as_of=as_of)
        bound = names.bind(self.store, {"subject": subject}, kind="current", question=question, params=params,
                           as_of=as_of)
        if isinstance(bound, Answer):
            return bound
        return current.current_state(self.store, subject=bound["subject"], relation=rel, as_of=as_of,
                                     question=question, params=params)

    def decision(self, scope: str, *, as_of: str | None = None) -> Answer:
        """Which decision governs a scope (a project, a setting) now or as of a date: who decided
        it, its source, what it superseded and why."""
        from workbench.answer import decision, names

        as_of = records.check_date(as_of, "--as-of") if as_of else None
        question = f"which decision governs {scope}?"
        params = _params(scope=scope, as_of=as_of)
        bound = names.bind(self.store, {"scope": scope}, kind="decision", question=question, params=params,
                           as_of=as_of)
        if isinstance(bound, Answer):
            return bound
        return decision.decision(self.store, self.rules, scope=bound["scope"], as_of=as_of, question=question,
                                 params=params)


def _term(text: str) -> object:
    """An N-Triples term back to a pyoxigraph term, for labelling."""
    return ox.NamedNode(text[1:-1]) if text.startswith("<") and text.endswith(">") else ox.Literal(text.strip('"'))


def _params(**kw: str | None) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in kw.items() if v is not None)


