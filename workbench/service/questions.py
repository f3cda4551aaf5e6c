"""How the service answers questions (:meth:`Workbench.ask`, ``count``, ``current``,
``decision``): every name binds exactly first (:mod:`workbench.answers.binding`), then the
answer comes from :mod:`workbench.answers` with the rules every reader shares; a genuine gap may
get the guesser's ranking (:meth:`Workbench.ask` with ``guess``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import pyoxigraph as ox

from workbench import records
from workbench.answers import ask as facts
from workbench.answers import binding as names
from workbench.answers import count as counts
from workbench.answers import current as states
from workbench.answers import decision as decisions
from workbench.answers.period import period
from workbench.names.entities import prefetch_names
from workbench.names.keys import name_key
from workbench.rules import primed
from workbench.values.answers import Answer, Tier
from workbench.vocab import WB

if TYPE_CHECKING:
    from workbench.service import Workbench

P = ParamSpec("P")
T = TypeVar("T")


def one_read(fn: Callable[P, T]) -> Callable[P, T]:
    """A question reads one version of the store: a shared server's version (its revision and
    rule versions) is asked once, not by each cache that checks it."""
    @functools.wraps(fn)
    def read(*args: P.args, **kwargs: P.kwargs) -> T:
        wb = args[0]
        with wb._shared.store.reading():  # type: ignore[attr-defined]
            return fn(*args, **kwargs)
    return read


@one_read
def ask(
    wb: Workbench, subject: str, relation: str, obj: str | None = None, *, as_of: str | None = None, guess: bool = False
) -> Answer:
    """See :meth:`Workbench.ask`."""
    first = _first_reads(wb, subject, relation, obj) if as_of is None else None
    prefetch_names(wb.store, [subject, obj], *([first.query] if first is not None else []))
    as_of = records.as_of_day(wb.store, as_of, "--as-of")
    rel = names.relation(wb._indexes.relations(), relation)
    question = f"{subject} {relation}" + (f" {obj}" if obj else "") + "?"
    params = _params(subject=subject, relation=relation, object=obj, as_of=as_of)
    bound = names.bind(wb.store, {"subject": subject, **({"object": obj} if obj else {})},
                       kind="ask", question=question, params=params, as_of=as_of)
    if isinstance(bound, Answer):
        return bound
    answer = facts.ask(wb.store, wb.rules, subject=bound["subject"], relation=rel, obj=bound.get("object"),
                       as_of=as_of, question=question, params=params,
                       first=first if first is not None and first.relation == rel else None)
    if obj is None and facts.logged_state(answer):
        # Repeated updates of one state (a weight logged three times) are one current value
        # with its history, never several values.
        return current(wb, subject, relation, as_of=as_of)
    if guess and answer.tier is Tier.NO_EVIDENCE and as_of is None:
        return _guessed(wb, answer, bound["subject"], rel, bound.get("object"))
    return answer


def _first_reads(wb: Workbench, subject: str, relation: str | ox.NamedNode,
                 obj: str | None = None) -> primed.Primed | None:
    """On a shared server, what the question reads first, written before its names are bound,
    to go with the version check (``rules/primed``): from the rules and relations as last read
    (none yet: nothing sent; changed since: the rows are used only where they still fit). A
    relation label: an ask's (its lookups and negative facts); an IRI: the lookups alone."""

    if not primed.possible(wb.store):
        return None  # the embedded store, and a server without LATERAL: nothing to send ahead

    rules, relations = wb._shared.last_rules(), wb._indexes.last_relations()
    if rules is None or relations is None:
        return None
    if isinstance(relation, ox.NamedNode):
        return primed.Primed.of(wb.store, rules, relation, name_key(subject), None, dict, kind=("lookups",))
    rel = relations.get(relation)
    if rel is None:
        return None
    return facts.primed(wb.store, rules, rel, name_key(subject), name_key(obj) if obj else None)


def _guessed(wb: Workbench, answer: Answer, subject: ox.NamedNode, rel: ox.NamedNode, obj: object | None) -> Answer:
    """A no-evidence answer with the guesser's ranking added, or unchanged when nothing
    similar has a value to offer."""
    from dataclasses import replace

    from workbench.answers.evidence import Labels

    raw = wb.guess(subject.value, rel.value)
    if not raw:
        return replace(answer, summary=answer.summary
                       + " No basis for a guess: nothing recorded of it goes with a value.")
    labels = Labels(wb.store, [ox.NamedNode(g.value[1:-1]) for g in raw if g.value.startswith("<")]
                    + [ox.NamedNode(b) for g in raw for b in g.because])
    guesses = tuple(
        replace(g, label=labels(_term(g.value)), because=tuple(labels(ox.NamedNode(b)) for b in g.because))
        for g in raw
    )
    head = "No evidence: nothing recorded or derivable answers this."
    if obj is not None:
        rank = next((i for i, g in enumerate(guesses, 1) if g.value == str(obj)), None)
        what = labels(obj)
        tail = (f" Model guess: {what} ranks {rank} of {len(guesses)} ({guesses[rank - 1].chance_text()})"
                if rank else f" Model guess: {what} is not among the {len(guesses)} ranked candidates")
    else:
        tail = f" Model guess: {guesses[0].label} ({guesses[0].chance_text()}) and {len(guesses) - 1} more"
    return replace(answer, tier=Tier.GUESSED, guesses=guesses,
                   summary=head + tail + "; a guess from similar things, not a fact.")


@one_read
def count(
    wb: Workbench,
    event_type: str,
    *,
    about: str | None = None,
    year: int | str | None = None,
    start: str | None = None,
    end: str | None = None,
    as_of: str | None = None,
) -> Answer:
    """See :meth:`Workbench.count`."""
    prefetch_names(wb.store, [event_type, about])
    as_of = records.as_of_day(wb.store, as_of, "--as-of")
    first, last = period(year, start, end, this_year=wb._shared.clock().year)
    question = f"how many {event_type}" + (f" about {about}" if about else "") + (
        f" between {first or 'the beginning'} and {last or 'now'}" if first or last else "") + "?"
    params = _params(event_type=event_type, about=about, start=first.isoformat() if first else None,
                     end=last.isoformat() if last else None, as_of=as_of)
    bound = names.bind(wb.store, {"kind": event_type, **({"about": about} if about else {})},
                       kind="count", question=question, params=params, as_of=as_of)
    if isinstance(bound, Answer):
        return bound
    return counts.count_events(wb.store, kind=bound["kind"], about=bound.get("about"), start=first, end=last,
                               as_of=as_of, question=question, params=params)


@one_read
def current(wb: Workbench, subject: str, state: str, *, as_of: str | None = None) -> Answer:
    """See :meth:`Workbench.current`."""
    prefetch_names(wb.store, [subject])
    as_of = records.as_of_day(wb.store, as_of, "--as-of")
    rel = names.relation(wb._indexes.relations(), state)
    question = f"current {state} of {subject}?"
    params = _params(subject=subject, state=state, as_of=as_of)
    bound = names.bind(wb.store, {"subject": subject}, kind="current", question=question, params=params,
                       as_of=as_of)
    if isinstance(bound, Answer):
        return bound
    return states.current_state(wb.store, subject=bound["subject"], relation=rel, as_of=as_of,
                                question=question, params=params)


@one_read
def decision(wb: Workbench, scope: str, *, as_of: str | None = None) -> Answer:
    """See :meth:`Workbench.decision`."""
    first = _first_reads(wb, scope, WB.governedBy) if as_of is None else None
    prefetch_names(wb.store, [scope], *([first.query] if first is not None else []))
    as_of = records.as_of_day(wb.store, as_of, "--as-of")
    question = f"which decision governs {scope}?"
    params = _params(scope=scope, as_of=as_of)
    bound = names.bind(wb.store, {"scope": scope}, kind="decision", question=question, params=params,
                       as_of=as_of)
    if isinstance(bound, Answer):
        return bound
    return decisions.decision(wb.store, wb.rules, scope=bound["scope"], as_of=as_of, question=question,
                              params=params, first=first)


def _term(text: str) -> object:
    """An N-Triples term back to a pyoxigraph term, for labelling."""
    return ox.NamedNode(text[1:-1]) if text.startswith("<") and text.endswith(">") else ox.Literal(text.strip('"'))


def _params(**kw: str | None) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in kw.items() if v is not None)
