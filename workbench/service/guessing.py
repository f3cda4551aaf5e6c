"""How the service recalls and guesses (:meth:`Workbench.recall`, :meth:`Workbench.guess_kinds`,
:meth:`Workbench.propose_guesses`): the indexes are the reading Workbench's own
(:class:`workbench.service.shared.Indexes`), built beside the store it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyoxigraph as ox

from workbench.access import users
from workbench.access.users import Role
from workbench.access.views import PUBLIC
from workbench.errors import Invalid
from workbench.recall.bundles import Bundle
from workbench.review import queue
from workbench.review.queue import Proposal
from workbench.service.questions import one_read
from workbench.values.guesses import Guess
from workbench.vectors.kept import Bar

if TYPE_CHECKING:
    from workbench.service import Workbench


@one_read
def recall(wb: Workbench, question: str, *, purpose: str, limit: int | None, budget_chars: int | None,
           progress: Bar | None) -> Bundle:
    """See :meth:`Workbench.recall`."""
    from workbench.recall import bundles

    text = bundles.check_question(question, limit=limit, chars=budget_chars)
    index = wb._indexes.records().ready(progress)
    return bundles.recall(wb.store, index, wb._indexes.names(), text, purpose=purpose, limit=limit,
                          chars=budget_chars, cache=wb._indexes.record_cache())


def guess_kinds(wb: Workbench, name: str, *, top: int) -> tuple[Guess, ...]:
    """See :meth:`Workbench.guess_kinds`."""
    from dataclasses import replace

    from workbench.answers.evidence import Labels
    from workbench.names import entities

    iri = entities.entity_ref(wb.store, name)
    ranked = wb._indexes.things().rank_kinds(iri.value, top=top)
    labels = Labels(wb.store, [ox.NamedNode(g.value[1:-1]) for g in ranked])
    return tuple(replace(g, label=labels(ox.NamedNode(g.value[1:-1]))) for g in ranked)


def propose(wb: Workbench, *, top: int, min_chance: float, progress: Bar | None) -> list[str]:
    """See :meth:`Workbench.propose_guesses`. The guesser reads what every reader may see, so a
    proposal in the queue never shows a curator something they may not see; what was proposed
    before (pending or decided) is not proposed again."""
    from workbench.guesses import proposals

    everyone = users.users(wb._shared.store)
    if everyone and wb.reader is not None:  # a curator's act (no HTTP route: the policy table lists those)
        users.require(wb._shared.store, wb.reader, Role.CURATOR, "propose guesses")
    if not 0 <= min_chance <= 1:
        raise Invalid(f"min_chance must be from 0 to 1, not {min_chance}")
    if top < 1:
        raise Invalid(f"top must be at least 1, not {top}")
    public = wb._seen_as(PUBLIC, wb.user) if everyone else wb
    guesser = public._indexes.things()
    model, _ = guesser.ready(progress)
    found = proposals.propose(public.store, guesser, public._indexes.names(), top=top, min_chance=min_chance)
    queued = {c.id for c in queue.list_candidates(wb.store, ids=[c["id"] for cs in found.values() for c in cs])}
    new: list[str] = []
    for what, cands in found.items():
        fresh = [c for c in cands if c["id"] not in queued]
        if fresh:
            version = fresh[0]["guess"]["model"]
            new += wb.propose(queue.parse([(f"the guesser's {what} ({c['id']})", c) for c in fresh]),
                              Proposal("model", f"the guesser's {what} from the store at {model.version}",
                                       model=version))
    return new
