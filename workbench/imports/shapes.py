"""SHACL validation of what an import brings in, against the shapes in ``shapes/``.

The shapes run over the import's metadata (assertions, sources, entities) before it commits; a
violation stops the import and names the record, the field and the constraint. They run on
:mod:`workbench.imports.shacl_core` when it knows every construct the shapes use (about 30x faster), else
on pySHACL, the reference implementation; tests check that both give the same verdicts.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import pyoxigraph as ox
import rdflib
from pyshacl import validate as shacl_validate

from workbench.imports import shacl_core
from workbench.resources import SHAPES_DIR

SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")


@dataclass(frozen=True)
class Violation:
    focus: str
    path: str | None
    message: str

    def __str__(self) -> str:
        where = f" ({self.path})" if self.path else ""
        return f"<{self.focus}>{where}: {self.message}"


@functools.cache
def shapes_graph() -> rdflib.Graph:
    graph = rdflib.Graph()
    for path in sorted(SHAPES_DIR.glob("*.ttl")):
        graph.parse(path, format="turtle")
    return graph


def to_rdflib(quads: Iterable[ox.Quad]) -> rdflib.Graph:
    """The quads' triples as an rdflib graph (pySHACL's input), through N-Triples."""
    data = ox.serialize((q.triple for q in quads), format=ox.RdfFormat.N_TRIPLES) or b""
    graph = rdflib.Graph()
    graph.parse(data=data, format="nt")
    return graph


@functools.cache
def compiled() -> shacl_core.Shapes | None:
    """The shapes compiled for the fast evaluator, or None if they use what it does not know."""
    triples: list[ox.Quad] = []
    for path in sorted(SHAPES_DIR.glob("*.ttl")):
        triples += ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
    try:
        return shacl_core.Shapes(triples)
    except shacl_core.UnknownConstruct:
        return None


def validate(quads: Iterable[ox.Quad]) -> list[Violation]:
    """Violations of the shapes by these quads' triples, sorted; empty when they conform."""
    quads = list(quads)
    fast = compiled()
    if fast is None:
        return validate_with_pyshacl(quads)
    out = {Violation(r.focus, r.path, r.message) for r in fast.validate(quads)}
    return sorted(out, key=lambda v: (v.focus, v.path or "", v.message))


def validate_with_pyshacl(quads: Iterable[ox.Quad]) -> list[Violation]:
    """The same, by pySHACL: the reference the fast evaluator is tested against."""
    data = to_rdflib(quads)
    conforms, report, _ = shacl_validate(data, shacl_graph=shapes_graph(), advanced=True, allow_warnings=True)
    if conforms:
        return []
    out = []
    for result in report.subjects(rdflib.RDF.type, SH.ValidationResult):
        focus = report.value(result, SH.focusNode)
        path = report.value(result, SH.resultPath)
        source_shape = report.value(result, SH.sourceShape)
        name = shapes_graph().value(source_shape, SH.name) if source_shape is not None else None
        message = report.value(result, SH.resultMessage)
        out.append(Violation(str(focus), str(name or path) if (name or path) else None, str(message)))
    return sorted(out, key=lambda v: (v.focus, v.path or "", v.message))
