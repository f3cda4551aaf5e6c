"""How the service recalls and guesses with vectors (:meth:`Workbench.recall`,
:meth:`Workbench.guess_kinds`): the indexes are the reading Workbench's own
(:class:`workbench.service.shared.Indexes`), built beside the store it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyoxigraph as ox

from workbench.recall.bundles import Bundle
from workbench.values.guesses import Guess
from workbench.vectors.kept import Bar

if TYPE_CHECKING:
    from workbench.service import Workbench


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

