"""Candidates a model proposed from its guesses (:mod:`workbench.guesses.proposals`): the basis
each one carries, and the candidate kind for a possible merge of two entities.

A proposed kind is an ordinary candidate record ("X is a K", its source the model) and is
approved like any other. A proposed merge is its own kind, ``{"id", "statement", "merge":
{"keep": IRI, "other": IRI}}``; approving it writes the same attributed merge as ``workbench
entities merge``, in the approval's own update. Either carries ``guess``, the basis a curator
reads: ``{"model", "score", "chance", "evidence": [{"thing", "label"?, "shares"?}], "rank"?,
"rests_on"?: [record ids]}``, kept beside the candidate (``wb:guessBasis``) and never evidence for
an answer. ``rests_on`` names the records whose facts the proposal repeats in words: erasing one
erases the candidate's content (:mod:`workbench.records.lifecycle`). Nothing is bound,
typed or merged until a person approves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyoxigraph as ox

from workbench.errors import Invalid, WorkbenchError
from workbench.ids import record_iri
from workbench.names import entities
from workbench.store import Store
from workbench.vocab import WB

MERGE_FIELDS = {"id", "statement", "merge", "guess"}
GUESS_FIELDS = {"model", "score", "chance", "evidence", "rank", "rests_on"}
EVIDENCE_FIELDS = {"thing", "label", "shares"}


def is_merge(raw: Mapping[str, Any]) -> bool:
    return "merge" in raw


def _share(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def _fields(raw: Mapping[str, Any], fields: set[str], what: str, where: str) -> None:
    unknown = sorted(set(raw) - fields)
    if unknown:
        raise Invalid(f"unknown field {unknown[0]!r} in {what} (fields: {', '.join(sorted(fields))})", where=where)


def _text(raw: Mapping[str, Any], key: str, message: str, where: str) -> None:
    if not isinstance(raw.get(key), str) or not raw[key].strip():
        raise Invalid(message, where=where)


def check_guess(raw: Any, where: str) -> dict[str, Any]:
    """A candidate's ``guess`` field, checked. Raises Invalid naming where and which field."""
    if not isinstance(raw, dict):
        raise Invalid("'guess' must be an object: the model, its score, the chance and the evidence", where=where)
    _fields(raw, GUESS_FIELDS, "'guess'", where)
    _text(raw, "model", "'guess.model' must name the model and version that guessed", where)
    if not _share(raw.get("score")):
        raise Invalid("'guess.score' must be a number from 0 to 1", where=where)
    if raw.get("chance") is not None and not _share(raw["chance"]):
        raise Invalid("'guess.chance' must be a number from 0 to 1, or null when it was not measured", where=where)
    rank = raw.get("rank")
    if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool) or rank < 1):
        raise Invalid("'guess.rank' must be a whole number from 1", where=where)
    evidence = raw.get("evidence", [])
    if not isinstance(evidence, list):
        raise Invalid("'guess.evidence' must list the things the guess rests on", where=where)
    for i, item in enumerate(evidence):
        if not isinstance(item, dict) or not isinstance(item.get("thing"), str) or set(item) - EVIDENCE_FIELDS:
            raise Invalid(f"'guess.evidence[{i}]' must be an object with 'thing' (an IRI), and 'label' and "
                          "'shares' if known", where=where)
        shares = item.get("shares", [])
        if not isinstance(shares, list) or not all(isinstance(x, str) for x in shares):
            raise Invalid(f"'guess.evidence[{i}].shares' must list facts in words", where=where)
    rests = raw.get("rests_on", [])
    if not isinstance(rests, list) or not all(isinstance(x, str) and x.strip() for x in rests):
        raise Invalid("'guess.rests_on' must list the ids of the records the guess rests on", where=where)
    return dict(raw)


def _iri(value: Any, field: str, where: str) -> str:
    text = value.strip().removeprefix("<").removesuffix(">") if isinstance(value, str) else ""
    try:
        ox.NamedNode(text)
    except ValueError:
        raise Invalid(f"'merge.{field}' must be an entity's IRI", where=where) from None
    return text


def check_merge(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A merge candidate, checked field by field. Raises Invalid naming where."""
    _fields(raw, MERGE_FIELDS, "a merge candidate", where)
    _text(raw, "id", "a merge candidate needs an 'id'", where)
    _text(raw, "statement", "'statement' must say in words which two entities would be one", where)
    pair = raw.get("merge")
    if not isinstance(pair, dict) or set(pair) != {"keep", "other"}:
        raise Invalid("'merge' must be an object with 'keep' and 'other', two entities' IRIs", where=where)
    keep, other = _iri(pair["keep"], "keep", where), _iri(pair["other"], "other", where)
    if keep == other:
        raise Invalid("'merge.keep' and 'merge.other' are the same entity", where=where)
    out = {**raw, "merge": {"keep": keep, "other": other}}
    if "guess" in raw:
        out["guess"] = check_guess(raw["guess"], where)
    return out


def merge_problems(store: Store, record: Mapping[str, Any]) -> list[str]:
    """Why approving a merge candidate would fail now (an entity gone, already one), else []."""
    try:
        merge_quads(store, record, "", actor="check", now="2000-01-01T00:00:00Z")
    except WorkbenchError as exc:
        return [exc.message]
    return []


def merge_quads(seen: Store, record: Mapping[str, Any], candidate: str, *, actor: str, now: str,
                model: str | None = None) -> tuple[ox.NamedNode, list[ox.Quad]]:
    """The attributed merge an approval writes; the reason names the candidate and the model."""
    pair, by = record["merge"], f" by model {model}" if model else ""
    return entities.merge_quads(seen, f"<{pair['keep']}>", f"<{pair['other']}>", actor=actor, now=now,
                                reason=f"proposed{by} as candidate {candidate}; approved by {actor}")


def basis_quads(node: ox.NamedNode, basis: Mapping[str, Any], graph: ox.NamedNode) -> list[ox.Quad]:
    """The basis beside the candidate, and a link to each record it rests on (for erasure)."""
    return [ox.Quad(node, WB.guessBasis, ox.Literal(json.dumps(basis, sort_keys=True, ensure_ascii=False)), graph),
            *(ox.Quad(node, WB.guessRestsOn, record_iri(r), graph) for r in basis.get("rests_on", []))]


def basis_lines(basis: Mapping[str, Any]) -> list[str]:
    """A model proposal's basis in words: the chance first, then what it rests on.

    >>> basis_lines({"model": "m@1", "score": 0.9, "chance": 0.8, "evidence": [
    ...     {"thing": "<urn:k>", "label": "dog", "shares": ["has fur"]}]})
    ['such guesses were right 80% of the time; score 0.90; model m@1', 'nearest: dog (shares: has fur)']
    >>> basis_lines({"model": "m@1", "score": 0.5, "chance": None})[0]
    'chance not measured; score 0.50; model m@1'
    """
    chance = basis.get("chance")
    said = "chance not measured" if chance is None else f"such guesses were right {chance:.0%} of the time"
    lines = [f"{said}; score {float(basis.get('score') or 0):.2f}; model {basis.get('model', '?')}"]
    for item in basis.get("evidence", []):
        shares = f" (shares: {', '.join(item['shares'])})" if item.get("shares") else ""
        lines.append(f"nearest: {item.get('label') or item['thing']}{shares}")
    return lines
