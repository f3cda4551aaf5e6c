"""What every import shares: the import activity, sources, assertion metadata, validation.

An import is planned in full (parsed, bound, checked against the shapes) before anything is
written; then one :class:`workbench.store.Batch` lands atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import pyoxigraph as ox

from workbench.errors import Invalid
from workbench.ids import ENTITIES_GRAPH, META_GRAPH, agent_iri, source_graph, source_iri
from workbench.imports import literals, shapes
from workbench.records.acts import agent_quads
from workbench.store import Batch, Store
from workbench.store.base import Check
from workbench.values.records import RecordType, Status
from workbench.vocab import DCTERMS, PROV, RDF, WB, XSD


class Bar(Protocol):
    def update(self, n: int) -> object: ...
    def close(self) -> object: ...


# (description, total) -> a progress bar; the CLI passes tqdm, notebooks and tests pass nothing.
ProgressFactory = Callable[[str, int], Bar]


def write_batch(
    store: Store, batch: Batch, progress: ProgressFactory | None, total: int, check: Check | None = None
) -> None:
    """Land a batch, with a progress bar over ``total`` (quads and file bytes) when asked."""
    bar = progress("importing", total) if progress else None
    try:
        store.write(batch, progress=bar.update if bar else None, check=check)
    finally:
        if bar:
            bar.close()


@dataclass
class Plan:
    """An import, ready to land."""

    batch: Batch
    files: tuple[str, ...]
    activity: ox.NamedNode
    records_added: int = 0
    records_unchanged: int = 0
    new_entities: list[str] = field(default_factory=list)
    # Where each planned node came from (file:line), so violations can name it.
    origins: dict[str, str] = field(default_factory=dict)


def dt_literal(value: str) -> ox.Literal:
    """An xsd:date or xsd:dateTime literal from an ISO 8601 text, in the store's canonical form
    (a date in a JSON field is a value, not a spelling: +00:00 is kept as Z)."""
    return literals.canonical(ox.Literal(value, datatype=XSD.dateTime if "T" in value else XSD.date))


@dataclass(frozen=True)
class SourceSpec:
    id: str
    said_by: str
    captured_at: str | None = None
    text: str | None = None
    locator: str | None = None
    visible_to: tuple[str, ...] = ()


def source_quads(src: SourceSpec) -> list[ox.Quad]:
    """A source's description, in the source's own graph with the agents it names: what a
    reader may not see of it is that one graph (its audience, ``wb:visibleTo``, is in it)."""
    node = source_iri(src.id)
    g = node
    quads = [
        ox.Quad(node, RDF.type, WB.Source, g),
        ox.Quad(node, DCTERMS.identifier, ox.Literal(src.id), g),
        ox.Quad(node, PROV.wasAttributedTo, agent_iri(src.said_by), g),
        *agent_quads(src.said_by, g),
    ]
    if src.captured_at:
        quads.append(ox.Quad(node, PROV.generatedAtTime, dt_literal(src.captured_at), g))
    if src.text is not None:
        quads.append(ox.Quad(node, WB.sourceText, ox.Literal(src.text), g))
    if src.locator is not None:
        quads.append(ox.Quad(node, WB.locator, ox.Literal(src.locator), g))
    for name in src.visible_to:
        quads.append(ox.Quad(node, WB.visibleTo, agent_iri(name), g))
        quads += agent_quads(name, g)
    return quads


@dataclass(frozen=True)
class AssertionSpec:
    iri: ox.NamedNode
    id: str
    statement: str
    type: RecordType
    source_id: str
    said_by: str
    activity: ox.NamedNode
    created_at: str
    status: Status = Status.ACTIVE
    effective_from: str | None = None
    effective_to: str | None = None
    extracted_by: str | None = None
    prompt_version: str | None = None
    confirmed_by: str | None = None
    about: tuple[ox.NamedNode, ...] = ()
    applies_to: tuple[ox.NamedNode, ...] = ()
    decided_by: ox.NamedNode | None = None
    supported_by: tuple[str, ...] = ()
    supersedes: ox.NamedNode | None = None
    digest: str | None = None


def assertion_quads(a: AssertionSpec) -> list[ox.Quad]:
    """The metadata of one assertion, in its source's graph: whoever may not see the source may
    not see it, and it is withheld with that one graph."""
    g = source_iri(a.source_id)
    n = a.iri
    quads = [
        ox.Quad(n, RDF.type, WB.Assertion, g),
        ox.Quad(n, DCTERMS.identifier, ox.Literal(a.id), g),
        ox.Quad(n, WB.statement, ox.Literal(a.statement), g),
        ox.Quad(n, WB.recordType, a.type.iri, g),
        ox.Quad(n, WB.status, a.status.iri, g),
        ox.Quad(n, PROV.wasDerivedFrom, source_iri(a.source_id), g),
        ox.Quad(n, PROV.wasAttributedTo, agent_iri(a.said_by), g),
        ox.Quad(n, PROV.wasGeneratedBy, a.activity, g),
        ox.Quad(n, PROV.generatedAtTime, ox.Literal(a.created_at, datatype=XSD.dateTime), g),
    ]
    if a.type is RecordType.COMMON_SENSE:
        quads.append(ox.Quad(n, WB.admitted, ox.Literal(True), g))
    if a.effective_from:
        quads.append(ox.Quad(n, WB.effectiveFrom, dt_literal(a.effective_from), g))
    if a.effective_to:
        quads.append(ox.Quad(n, WB.effectiveTo, dt_literal(a.effective_to), g))
    if a.extracted_by:
        quads.append(ox.Quad(n, WB.extractedBy, agent_iri(a.extracted_by), g))
        quads += agent_quads(a.extracted_by, g)
    if a.prompt_version:
        quads.append(ox.Quad(n, WB.promptVersion, ox.Literal(a.prompt_version), g))
    if a.confirmed_by:
        quads.append(ox.Quad(n, WB.confirmedBy, agent_iri(a.confirmed_by), g))
        quads += agent_quads(a.confirmed_by, g)
    quads += [ox.Quad(n, WB.about, e, g) for e in a.about]
    quads += [ox.Quad(n, WB.appliesTo, e, g) for e in a.applies_to]
    if a.decided_by is not None:
        quads.append(ox.Quad(n, WB.decidedBy, a.decided_by, g))
    quads += [ox.Quad(n, WB.supportedBy, source_iri(s), g) for s in a.supported_by]
    if a.supersedes is not None:
        quads.append(ox.Quad(n, WB.supersedes, a.supersedes, g))
    if a.digest:
        quads.append(ox.Quad(n, WB.recordDigest, ox.Literal(a.digest), g))
    return quads


def check_shapes(quads: Iterable[ox.Quad], origins: Mapping[str, str]) -> None:
    """Validate an import's metadata and entities against shapes/; raise naming the first problem."""
    described = [q for q in quads if q.graph_name in (META_GRAPH, ENTITIES_GRAPH) or source_graph(q.graph_name)]
    violations = shapes.validate(described)
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise Invalid(
            f"does not satisfy shapes/: {first}{more}",
            where=origins.get(first.focus),
            violations=[str(v) for v in violations[:20]],
        )
