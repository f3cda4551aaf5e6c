"""Where Workbench's own files are: the ontology, the rules and the sample data, beside the
package in a source checkout or an editable install."""

import functools
from pathlib import Path

import pyoxigraph as ox

from workbench.vocab import WB

ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY_DIR = ROOT / "ontology"
RULES_DIR = ROOT / "rules"
DATA_DIR = ROOT / "data"


def ontology_triples() -> list[ox.Triple]:
    """Every triple of the vocabulary files in ontology/."""
    return [
        q.triple
        for path in sorted(ONTOLOGY_DIR.glob("*.ttl"))
        for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE)
    ]


@functools.cache
def declared_relations() -> frozenset[str]:
    """IRIs of the relations this version's ontology declares (those with a ``wb:relationLabel``)."""
    return frozenset(str(t.subject.value) for t in ontology_triples() if t.predicate == WB.relationLabel)  # type: ignore[union-attr]
