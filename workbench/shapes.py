"""SHACL validation of what an import brings in, against the shapes in ``shapes/``.

pySHACL runs the shapes over the import's metadata (assertions, sources, entities) before anything
lands; a violation stops the import and names the record, the field and the constraint.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
import rdflib
from pyshacl import validate as shacl_validate

SHAPES_DIR = Path(__file__).resolve().parent.parent / "shapes"
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


def validate(quads: Iterable[ox.Quad]) -> list[Violation]:
    """Violations of the shapes by these quads' triples, sorted; empty when they conform."""
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
