"""Which records a question is about: the names in it that bind exactly (longest first, never
overlapping) and the records that mention each bound entity (or one merged into it). Steps 1
and 2 of recall (:mod:`workbench.recall.bundles`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyoxigraph as ox

from workbench.names import entities
from workbench.names.entities import registered
from workbench.names.keys import name_key
from workbench.records import meta
from workbench.records.cache import RecordCache
from workbench.store import Store
from workbench.store.base import reach
from workbench.vocab import OWL, PREFIXES

MAX_NAME_WORDS = 6

CJK_ONLY = re.compile(r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+$")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[\w'’-]+", re.UNICODE)


def spot_names(store: Store, text: str, cache: RecordCache | None = None,
               ) -> tuple[list[tuple[str, tuple[str, ...], int, int]], list[tuple[int, int]]]:
    """Names in ``text`` that bind exactly: (as written, entities, start, end), longest first
    and never overlapping; and the spans of tokens left over."""
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    grams: dict[tuple[int, int], str] = {}
    for i in range(len(spans)):
        for n in range(1, MAX_NAME_WORDS + 1):
            if i + n > len(spans):
                break
            start, end = spans[i][0], spans[i + n - 1][1]
            piece = text[start:end].rstrip("'’-")
            for variant in (piece, re.sub(r"['’]s$", "", piece), _bare_possessive(piece)):  # "Ravi's" -> "Ravi"
                if variant:
                    grams.setdefault((start, start + len(variant)), variant)
    keys = {name_key(g) for g in grams.values()}
    found = cache.resolve(keys) if cache else entities.resolve_keys(store, keys)
    hits = [(g, found[name_key(g)], s, e) for (s, e), g in grams.items() if found.get(name_key(g))]
    hits.sort(key=lambda h: (-(h[3] - h[2]), h[2]))
    taken: list[tuple[str, tuple[str, ...], int, int]] = []
    for h in hits:
        if all(h[3] <= t[2] or h[2] >= t[3] for t in taken):
            taken.append(h)
    taken.sort(key=lambda h: h[2])
    left = [(s, e) for s, e in spans if all(e <= t[2] or s >= t[3] for t in taken)]
    return taken, left


def _bare_possessive(piece: str) -> str:
    """"Ravis" -> "Ravi": a capitalised name typed with its possessive s and no apostrophe
    ("What was Ravis time?"). It binds only if the whole word binds nothing (the longest
    binding wins, and "Ravis" itself is looked up too)."""
    last = piece.rsplit(" ", 1)[-1]
    if len(last) >= 4 and last[0].isupper() and last.endswith("s") and not last.endswith("ss") and last[:-1].isalpha():
        return piece[:-1]
    return ""


_RECALLED = """?r a wb:Assertion ; dcterms:identifier ?id ; wb:status ?st ; wb:recordType ?t .
    FILTER(?st != wb:Retracted && ?t != wb:CommonSense)"""


def scope_records(store: Store, iris: Sequence[str]) -> dict[str, set[str]]:
    """Record ids that mention each entity (or an entity merged into it), not retracted."""
    if not iris:
        return {}
    merged = reach(store, "?_same", OWL.sameAs, [ox.NamedNode(i) for i in iris], forward=False, backward=True,
                   within=registered("?_same"))
    pairs = [(m.value, e.value) for e, ms in merged.items() for m in ms]
    both = " ".join(f"(<{m}> <{e}>)" for m, e in pairs)
    rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?e ?id WHERE {{ VALUES (?m ?e) {{ {both} }}
        {{ {meta("?r", "?r wb:about|wb:appliesTo|wb:decidedBy ?m")} }}
        UNION {{ GRAPH ?r {{ ?m ?p ?o }} }} UNION {{ GRAPH ?r {{ ?s ?q ?m }} }}
        {meta("?r", _RECALLED)} }}"""
    )
    out: dict[str, set[str]] = {i: set() for i in iris}
    for r in rows:
        out[r["e"].value].add(r["id"].value)  # type: ignore[union-attr]
    return out
