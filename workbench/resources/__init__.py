"""Workbench's own files, shipped inside the package: the ontology, the reviewed rules, the SHACL
shapes, the sample data and evaluation sets, the extraction prompts and the query editor. Found
through :mod:`importlib.resources`, so an installed wheel finds them as a checkout does; the
checkout's top-level ``ontology/``, ``rules/``, ``shapes/`` and ``data/`` are links to these
folders, for editing.

>>> sorted(p.name for p in RULES_DIR.glob("*.ttl"))[:2]
['advisor-university.ttl', 'current-decision.ttl']
>>> (DATA_DIR / "memories.jsonl").is_file()
True
"""

import functools
from importlib.resources import files
from pathlib import Path

import pyoxigraph as ox

from workbench.vocab import WB

HERE = Path(str(files(__name__)))  # a folder on disk: wheels install unpacked
ONTOLOGY_DIR = HERE / "ontology"
RULES_DIR = HERE / "rules"
SHAPES_DIR = HERE / "shapes"
DATA_DIR = HERE / "data"
PROMPTS_DIR = HERE / "prompts"
YASGUI_DIR = HERE / "yasgui"


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
