"""Where Workbench's own files are: the ontology, the rules and the sample data, beside the
package in a source checkout or an editable install."""

from pathlib import Path

import pyoxigraph as ox

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
