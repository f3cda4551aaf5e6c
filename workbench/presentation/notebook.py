"""Workbench in Jupyter: answers, proof trees, recall bundles, records and review items as rich
HTML, and lists of them as pandas tables.

The values Workbench hands out have a ``_repr_html_`` that delegates here, so a notebook shows
an :class:`~workbench.values.answers.Answer` with its tier as a coloured label and its proof tree
as nested lists (each derived step a ``<details>`` that opens to its premises, each recorded leaf
with its source), model guesses set apart in their own box labelled "model guess", and a
:class:`~workbench.recall.bundles.Bundle` with each record's source. Everything is plain HTML with
inline styles, every value escaped: no UI framework, nothing to load.

:func:`frame` turns a list of records, candidates, entities, recalled memories, audit events
or anything else Workbench returns into a ``pandas.DataFrame`` (pandas is imported only then:
``pip install -e '.[notebook]'``).

>>> "model guess" in tier_label("guessed")
True
>>> escape_text("<b>")
'&lt;b&gt;'
"""

from __future__ import annotations

import dataclasses
import enum
import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from workbench.review.guessed import basis_lines, is_merge

if TYPE_CHECKING:
    import pandas

    from workbench.recall.bundles import Bundle
    from workbench.review.queue import Candidate
    from workbench.values.answers import Answer, Finding, Proof
    from workbench.values.guesses import Guess
    from workbench.values.records import Record, Source

# Tier -> the words people see. Guesses are always called so. The browser workbench uses these too.
TIER_LABELS: dict[str, str] = {
    "recorded": "recorded", "derived": "derived", "guessed": "model guess", "no_evidence": "no evidence",
    "no_memory": "no memory", "ambiguous": "ambiguous", "conflicting": "conflicting",
    "unknown_entity": "unknown name",
}
_COLOURS = {"recorded": "#1a7f37", "derived": "#0969da", "guessed": "#bc4c00", "ambiguous": "#8250df",
            "conflicting": "#cf222e"}
# Tier -> (label, colour); guesses stand apart in their own colour.
TIERS: dict[str, tuple[str, str]] = {t: (label, _COLOURS.get(t, "#57606a")) for t, label in TIER_LABELS.items()}
GUESS_COLOUR = TIERS["guessed"][1]
PREFIXES = (
    ("urn:wb:entity:", ""),
    ("https://w3id.org/workbench/ns#", "wb:"),
    ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdf:"),
    ("http://www.w3.org/2000/01/rdf-schema#", "rdfs:"),
    ("http://www.w3.org/2004/02/skos/core#", "skos:"),
    ("http://www.w3.org/2002/07/owl#", "owl:"),
    ("http://www.w3.org/ns/prov#", "prov:"),
)
_BOX = "font-family:system-ui,sans-serif;font-size:13px;line-height:1.45;max-width:60em"
_MUTED = "color:#57606a"


def escape_text(value: object) -> str:
    """Any value as HTML text: escaped, quotes included."""
    return html.escape("" if value is None else str(value), quote=True)


def tier_label(tier: str | enum.Enum) -> str:
    """A tier as a coloured label (``guessed`` reads "model guess")."""
    key = tier.value if isinstance(tier, enum.Enum) else str(tier)
    label, colour = TIERS.get(key, (key.replace("_", " "), "#57606a"))
    return (f'<span class="wb-tier wb-tier-{escape_text(key)}" style="background:{colour};color:#fff;'
            f'border-radius:3px;padding:0 .45em;font-size:12px;font-weight:600">{escape_text(label)}</span>')


def short(term: str) -> str:
    """An N-Triples term or IRI, shorter for people: ``<urn:wb:entity:my-car>`` -> ``my-car``,
    ``<https://w3id.org/workbench/ns#needs>`` -> ``wb:needs``; literals as they are."""
    text = term[1:-1] if term.startswith("<") and term.endswith(">") else term
    for long, prefix in PREFIXES:
        if text.startswith(long):
            return prefix + unquote(text[len(long):])
    return text


def _page(body: str, kind: str) -> str:
    return f'<div class="wb wb-{kind}" style="{_BOX}">{body}</div>'


def _muted(text: str) -> str:
    return f'<span style="{_MUTED}">{text}</span>'


def _pairs(rows: Iterable[tuple[str, object]]) -> str:
    """A small two-column table of (what, value), leaving out empty values; values escaped."""
    cells = "".join(f'<tr><th style="text-align:left;padding-right:1em;{_MUTED};font-weight:normal">'
                    f"{escape_text(k)}</th><td>{escape_text(v)}</td></tr>"
                    for k, v in rows if v not in (None, "", (), []))
    return f'<table style="border-collapse:collapse">{cells}</table>' if cells else ""


# ---------------------------------------------------------------------- sources and proofs


def source_text(source: Source, *, admitted: bool = False) -> str:
    """Where a fact came from, in words (escaped): who said it, which source, where, when."""
    if admitted:
        return f"common sense, admitted {escape_text(source.id)}"
    where = ", ".join(escape_text(x) for x in (source.id, source.locator, source.captured_at) if x)
    return f"said by {escape_text(source.said_by or 'unknown')}, {where}"


def proof_html(proof: Proof) -> str:
    """One proof as a nested list item: a recorded leaf with its record and source, or a derived
    step (rule id and version, its reading) in a ``<details>`` that opens to its premises."""
    from workbench.values.answers import Derived

    if not isinstance(proof, Derived):
        status = "" if proof.status == "active" else f" ({escape_text(proof.status)})"
        common = proof.admitted or proof.record_type == "common_sense"
        where = source_text(proof.source, admitted=True) if common else (
            f"record <code>{escape_text(proof.record)}</code>; {source_text(proof.source)}")
        return (f'<li class="wb-leaf">{escape_text(proof.statement.text)} {tier_label("recorded")}{status}<br>'
                f"{_muted(where)}</li>")
    premises = "".join(proof_html(p) for p in proof.premises)
    absences = "".join(f'<li class="wb-absence">{escape_text(a.text)} {_muted("(checked: nothing recorded)")}</li>'
                       for a in proof.absences)
    rule = f"rule <code>{escape_text(proof.rule)}</code> v{proof.version}"
    return (f'<li class="wb-step"><details open><summary>{escape_text(proof.statement.text)} '
            f'{tier_label("derived")} {_muted(rule)}</summary>'
            f'<div style="{_MUTED};font-style:italic">{escape_text(proof.reading)}</div>'
            f'<ul class="wb-premises" style="margin:.2em 0">{premises}{absences}</ul></details></li>')


def proof_tree_html(proofs: Sequence[Proof]) -> str:
    """Proofs as a nested HTML list (the proof tree)."""
    if not proofs:
        return ""
    items = "".join(proof_html(p) for p in proofs)
    return f'<ul class="wb-proof" style="margin:.2em 0 .4em 0;padding-left:1.4em">{items}</ul>'


def finding_html(finding: Finding) -> str:
    """One value of an answer, with its details and proof tree."""
    label = escape_text(finding.label)
    head = f"<s>{label}</s> {_muted('(a record says this does not hold)')}" if finding.negated else f"<b>{label}</b>"
    note = f" {_muted(escape_text(finding.note))}" if finding.note else ""
    return (f'<li class="wb-finding">{head}{note}{_pairs(finding.details)}'
            f"{proof_tree_html(finding.proofs)}</li>")


def guesses_html(guesses: Sequence[Guess]) -> str:
    """Model guesses in a box of their own: ranked, scored, never facts."""
    if not guesses:
        return ""
    rows = "".join(
        f"<li>{escape_text(g.label or g.value)} {_muted(g.chance_text())}"
        + (f" {_muted('like ' + escape_text(', '.join(short(b) for b in g.because)))}" if g.because else "")
        + "</li>" for g in guesses)
    return (f'<div class="wb-guesses" style="border:2px dashed {GUESS_COLOUR};border-radius:4px;'
            f'padding:.3em .8em;margin:.5em 0">{tier_label("guessed")} '
            f"<b>Model guesses</b> {_muted('not facts: ranked by similar things, never used as premises')}"
            f"<ol>{rows}</ol></div>")


def answer_html(answer: Answer) -> str:
    """An answer: its tier, summary, findings with proof trees, count, history, and any model
    guesses set apart."""
    parts = [f'<div>{tier_label(answer.tier)} <b>{escape_text(answer.summary)}</b></div>',
             f'<div>{_muted("question: " + escape_text(answer.question))}'
             + (f" {_muted('as of ' + escape_text(answer.as_of))}" if answer.as_of else "") + "</div>"]
    if answer.count is not None:
        parts.append(f'<div class="wb-count">count: <b>{"at least " if answer.at_least else ""}{answer.count}</b>'
                     + (f" {_muted(f'{len(answer.undated)} undated')}" if answer.undated else "") + "</div>")
    for title, findings in (("", answer.findings), ("Undated, could not be placed", answer.undated),
                            ("History", answer.history)):
        if findings:
            heading = f"<div><b>{escape_text(title)}</b></div>" if title else ""
            parts.append(f'{heading}<ul style="padding-left:1.2em">{"".join(finding_html(f) for f in findings)}</ul>')
    if answer.candidates:
        names = ", ".join(f"<code>{escape_text(c)}</code>" for c in answer.candidates)
        parts.append(f"<div>The name binds to several entities, none chosen: {names}</div>")
    parts.append(guesses_html(answer.guesses))
    if answer.incomplete:
        parts.append(f"<div>{_muted('Incomplete: the depth bound was reached; there may be more.')}</div>")
    return _page("".join(parts), "answer")


# ---------------------------------------------------------------------- recall, records, candidates


def bundle_html(bundle: Bundle) -> str:
    """A recall bundle: its tier, the names that bound, each record with its source (guessed
    ones labelled "model guess"), "did you mean" suggestions (never bindings) and notes."""
    parts = [f'<div>{tier_label(bundle.tier)} <b>{escape_text(bundle.summary)}</b></div>',
             f"<div>{_muted('question: ' + escape_text(bundle.question))}</div>"]
    if bundle.scope:
        bound = ", ".join(f"{escape_text(n)} → <code>{escape_text(short(e))}</code>" for n, e in bundle.scope)
        parts.append(f"<div>names bound: {bound}</div>")
    items = []
    for m in bundle.memories:
        guess = m.tier == "guessed"
        style = f"border-left:3px dashed {GUESS_COLOUR};padding-left:.5em" if guess else ""
        label = tier_label("guessed") + " " if guess else ""
        items.append(f'<li class="wb-memory" style="{style}">{label}<code>{escape_text(m.record.id)}</code> '
                     f"{escape_text(m.record.statement)} {_muted(f'score {m.score:.2f}')}"
                     + ("" if m.record.status.value == "active" else f" {_muted(escape_text(m.record.status.value))}")
                     + f"<br>{_muted(source_text(m.record.source))}</li>")
    if items:
        parts.append(f'<ol style="padding-left:1.6em">{"".join(items)}</ol>')
        if bundle.probability is not None:
            parts.append(f"<div>{_muted(f'chance that these records hold the answer: {bundle.probability:.0%}')}</div>")
    for name, similar in bundle.suggestions:
        alike = ("; did you mean " + ", ".join(escape_text(s) for s in similar) + "?") if similar else ""
        said = f"“{escape_text(name)}” binds no name{alike} (a suggestion, never a binding)"
        parts.append(f"<div>{_muted(said)}</div>")
    parts += [f"<div>{_muted('note: ' + escape_text(n))}</div>" for n in bundle.notes]
    budget = (f"budget {escape_text(bundle.purpose.name)}: {len(bundle.memories)} of {bundle.purpose.limit} "
              f"records, {bundle.chars} of {bundle.purpose.chars} characters")
    parts.append(f"<div>{_muted(budget)}</div>")
    return _page("".join(parts), "bundle")


def triples_html(triples: Sequence[tuple[str, str, str]]) -> str:
    rows = "".join("<tr>" + "".join(f'<td style="padding-right:1em"><code>{escape_text(short(t))}</code></td>'
                                    for t in triple) + "</tr>" for triple in triples)
    return f'<table class="wb-triples" style="border-collapse:collapse">{rows}</table>' if rows else ""


def record_html(record: Record) -> str:
    """A record with its provenance: the source (who, when, where, its text), who extracted and
    confirmed it, its dates, its triples and its place in a supersession chain."""
    src = record.source
    head = (f'<div><code>{escape_text(record.id)}</code> {tier_label("recorded")} '
            f"{_muted(escape_text(f'{record.type.value}, {record.status.value}'))}</div>"
            f"<div><b>{escape_text(record.statement)}</b></div>")
    provenance = _pairs([
        ("source", src.id), ("said by", src.said_by), ("captured at", src.captured_at), ("locator", src.locator),
        ("visible to", ", ".join(src.visible_to)), ("recorded at", record.created_at),
        ("effective from", record.effective_from), ("effective to", record.effective_to),
        ("extracted by", record.extracted_by), ("prompt version", record.prompt_version),
        ("confirmed by", record.confirmed_by), ("about", ", ".join(short(a) for a in record.about)),
        ("applies to", ", ".join(short(a) for a in record.applies_to)),
        ("decided by", short(record.decided_by) if record.decided_by else None),
        ("supersedes", ", ".join(record.supersedes)), ("superseded by", ", ".join(record.superseded_by)),
        ("admitted common sense", "yes" if record.admitted else None),
    ])
    quote = (f'<blockquote style="margin:.3em 0;padding-left:.6em;border-left:3px solid #d0d7de">'
             f"{escape_text(src.text)}</blockquote>" if src.text else "")
    return _page(head + provenance + quote + triples_html(record.triples), "record")


def candidate_html(candidate: Candidate) -> str:
    """A review item: what the candidate proposes, the text it was taken from, who proposed it,
    and what became of it. A candidate is not a fact until a curator approves it."""
    rec = candidate.record
    found = rec.get("source")
    source: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    head = (f'<div><code>{escape_text(candidate.id)}</code> '
            f'<span style="border:1px solid #57606a;border-radius:3px;padding:0 .4em;font-size:12px">'
            f"candidate: {escape_text(candidate.status)}</span> "
            f"{_muted('proposed, not a fact until a curator approves it')}</div>"
            f"<div><b>{escape_text(rec.get('statement', ''))}</b></div>")
    listed = rec.get("triples")
    triples: list[Any] = listed if isinstance(listed, list) else []
    rows = "".join("<tr>" + "".join(f'<td style="padding-right:1em">{escape_text(x)}</td>' for x in t) + "</tr>"
                   for t in triples if isinstance(t, list))
    span = (f'<blockquote style="margin:.3em 0;padding-left:.6em;border-left:3px solid #d0d7de">'
            f"{escape_text(candidate.span)}</blockquote>" if candidate.span else "")
    details = _pairs([
        ("type", rec.get("type")), ("source", source.get("id")), ("said by", source.get("said_by")),
        ("proposed by", candidate.proposed_by), ("proposed at", candidate.proposed_at),
        ("model", candidate.model), ("prompt version", candidate.prompt_version),
        ("decided by", candidate.decided_by), ("decided at", candidate.decided_at), ("reason", candidate.reason),
        ("approved as", candidate.approved_as), ("merged into", candidate.merged_into),
        ("merge", " into ".join((rec["merge"]["other"], rec["merge"]["keep"])) if is_merge(rec) else None),
        *(("model's guess", line) for line in (basis_lines(candidate.guess) if candidate.guess else ())),
    ])
    table = f'<table style="border-collapse:collapse">{rows}</table>' if rows else ""
    return _page(head + span + table + details, "candidate")


# ---------------------------------------------------------------------- tables


def row(item: Any) -> dict[str, Any]:
    """One item as a flat dict of plain values: the columns of :func:`frame`."""
    from workbench.recall.bundles import Memory
    from workbench.review.queue import Candidate
    from workbench.values.records import Entity, Record

    if isinstance(item, Record):
        src = item.source
        return {"id": item.id, "type": item.type.value, "status": item.status.value, "statement": item.statement,
                "source": src.id, "said_by": src.said_by, "captured_at": src.captured_at, "locator": src.locator,
                "created_at": item.created_at or None, "effective_from": item.effective_from,
                "effective_to": item.effective_to, "extracted_by": item.extracted_by,
                "confirmed_by": item.confirmed_by, "about": ", ".join(short(a) for a in item.about),
                "supersedes": ", ".join(item.supersedes), "superseded_by": ", ".join(item.superseded_by)}
    if isinstance(item, Memory):
        return {"tier": item.tier, "score": round(item.score, 4), **row(item.record), "why": item.why}
    if isinstance(item, Candidate):
        return {"id": item.id, "status": item.status, "statement": item.record.get("statement"),
                "type": item.record.get("type"), "span": item.span, "proposed_by": item.proposed_by,
                "proposed_at": item.proposed_at, "decided_by": item.decided_by, "reason": item.reason,
                "approved_as": item.approved_as, "merged_into": item.merged_into}
    if isinstance(item, Entity):
        return {"iri": item.iri, "names": ", ".join(item.names),
                "aliases": ", ".join(f"{a}@{lang}" if lang else a for a, lang in item.aliases),
                "merged_into": item.merged_into}
    if isinstance(item, Mapping):
        return dict(item)
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return {f.name: _plain(getattr(item, f.name)) for f in dataclasses.fields(item)}
    raise TypeError(f"cannot make a table row of {type(item).__name__}")


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list | frozenset | set):
        return ", ".join(str(_plain(v)) for v in value)
    return value


def frame(items: Iterable[Any] | Bundle) -> pandas.DataFrame:
    """A ``pandas.DataFrame`` of records, candidates, entities, recalled memories (a Bundle's too),
    audit events, tombstones or dicts: one row each. Needs pandas (``pip install -e '.[notebook]'``)."""
    try:
        import pandas
    except ImportError:
        raise ImportError("tables need pandas: pip install -e '.[notebook]'") from None
    from workbench.recall.bundles import Bundle

    rows = items.memories if isinstance(items, Bundle) else items
    return pandas.DataFrame([row(i) for i in rows])
