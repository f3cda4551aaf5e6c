"""A short-lived claim on a rule or on the candidate queue, so that two people deciding the same
thing at once cannot both win.

Why not a conditional SPARQL update (``DELETE {status Proposed} INSERT {status Active} WHERE
{status Proposed}``)? Oxigraph, embedded on disk or as a server, runs concurrent updates on
snapshots without detecting that two of them changed the same triples: both see "proposed",
both succeed, and the store ends with two sign-offs (measured: four concurrent updates, most
runs had two or more winners). Other SPARQL 1.1 stores promise no more. What every store does
promise is that an update, once answered, is seen by every read that starts afterwards. On that
alone, a claim works:

1. insert my claim (``<node> wb:claim "TOKEN EXPIRY"``, in the graph of what is claimed);
2. read every claim on the rule;
3. if mine is the only live one, I hold it; otherwise withdraw mine, wait a random
   moment and try again.

Two holders at once are impossible: whoever read second inserted before reading, so it saw the
first one's claim. Two who see each other both withdraw, and random waits make one go first.
A claim expires (``LEASE`` seconds), so a process killed while holding one blocks nobody for
long; the work done while holding it is one read and one write.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pyoxigraph as ox

from workbench.errors import Conflict
from workbench.ids import RULES_GRAPH
from workbench.store import Store
from workbench.vocab import WB

LEASE = 60.0  # seconds a claim stays live
ATTEMPTS = 60


@contextmanager
def holding(store: Store, node: ox.NamedNode, what: str, graph: ox.NamedNode = RULES_GRAPH) -> Iterator[None]:
    """Hold the claim on ``node`` (a rule, or the queue) in ``graph`` for the ``with`` block.
    Raises Conflict, naming ``what``, when others keep holding it."""
    token = uuid.uuid4().hex
    for attempt in range(ATTEMPTS):
        mine = ox.Quad(node, WB.claim, ox.Literal(f"{token} {time.time() + LEASE:.3f}"), graph)
        store.apply(insert=[mine])
        claims = [
            r["c"] for r in store.select(f"SELECT ?c WHERE {{ GRAPH {graph} {{ {node} {WB.claim} ?c }} }}")
        ]
        now = time.time()
        stale = [c for c in claims if isinstance(c, ox.Literal) and _expiry(c.value) <= now]
        if stale:
            store.remove([ox.Quad(node, WB.claim, c, graph) for c in stale])
        others = [c for c in claims if c != mine.object and c not in stale]
        if not others:
            break
        store.remove([mine])
        time.sleep(random.uniform(0.002, 0.01) * (1 + min(attempt, 10)))
    else:
        raise Conflict(f"someone else is changing {what} right now; try again in a moment")
    try:
        yield
    finally:
        store.remove([mine])


def _expiry(text: str) -> float:
    try:
        return float(text.rsplit(" ", 1)[1])
    except (IndexError, ValueError):
        return 0.0  # not a claim this code wrote: treat it as expired
