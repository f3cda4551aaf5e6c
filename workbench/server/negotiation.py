"""Content negotiation: which serialisation an ``Accept`` header asks for.

A query's form decides the family (results for SELECT/ASK, RDF for CONSTRUCT/DESCRIBE); the
``Accept`` header picks one member by its q-values, with ties going to the order below, whose
first entry is also the default for ``*/*`` or no header.

>>> choose("text/csv;q=0.5, application/sparql-results+xml", RESULTS).name
'xml'
>>> choose(None, GRAPHS).media_type
'text/turtle'
>>> choose("image/png", GRAPHS) is None
True
"""

from __future__ import annotations

from functools import lru_cache

from workbench.formats import GRAPHS, RESULTS, Format

__all__ = ["GRAPHS", "RESULTS", "Format", "choose", "prefers"]


def _ranges(accept: str) -> list[tuple[str, float]]:
    """The media ranges of an Accept header with their q-values (malformed q counts as 0)."""
    out = []
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        q = 1.0
        for param in fields[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = max(0.0, min(1.0, float(value)))
                except ValueError:
                    q = 0.0
        out.append((media, q))
    return out


def _quality(media: str, ranges: list[tuple[str, float]]) -> float:
    """The q of the most specific range that matches ``media``; -1 if none does."""
    kind = media.split("/")[0]
    best, specificity = -1.0, -1
    for pattern, q in ranges:
        if pattern == media:
            rank = 2
        elif pattern == f"{kind}/*":
            rank = 1
        elif pattern == "*/*" or pattern == "*":
            rank = 0
        else:
            continue
        if rank > specificity:
            best, specificity = q, rank
    return best


@lru_cache(maxsize=256)  # clients send the same few headers: every query asks
def choose(accept: str | None, formats: tuple[Format, ...]) -> Format | None:
    """The format the header prefers among ``formats``; the first one when there is no header;
    None when the header accepts none of them (the caller answers 406)."""
    if not accept or not accept.strip():
        return formats[0]
    ranges = _ranges(accept)
    best: Format | None = None
    best_q = 0.0
    for fmt in formats:
        q = max(_quality(m, ranges) for m in (fmt.media_type, *fmt.aliases))
        if q > best_q:
            best, best_q = fmt, q
    return best


def prefers(accept: str | None, media: str, over: str) -> bool:
    """Whether the header rates ``media`` strictly above ``over`` (an HTML page over Turtle)."""
    if not accept:
        return False
    ranges = _ranges(accept)
    return _quality(media, ranges) > max(_quality(over, ranges), 0.0)
