"""Whose record it is: the entities whose experience or statement a record holds, apart from
those it merely mentions or addresses.

A record belongs to the subjects of its triples and, when its speaker (the source's
``said_by``, bound exactly as a name) is one of the entities the record names, to the speaker:
"Mei told Sofia that she adopted a beagle" is Mei's, and only mentions Sofia. A record whose
speaker it does not name (someone reporting on others, "Ravi works on chip design" said by me)
belongs to every entity it is about. See docs/data-model.md, "Whose record it is".

>>> from workbench.values.records import Record, RecordType, Source, Status
>>> told = Record("r1", "urn:wb:record:r1", "Mei told Sofia that she adopted a beagle.", RecordType.OBSERVATION,
...               Status.ACTIVE, Source("s1", "Mei"), "", "Mei", about=("urn:e:mei", "urn:e:sofia"))
>>> sorted(owners_of(told, speaker="urn:e:mei"))
['urn:e:mei']
>>> sorted(owners_of(told, speaker=None))
['urn:e:mei', 'urn:e:sofia']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from workbench.names import entities
from workbench.names.keys import name_key
from workbench.store import Store
from workbench.values.records import Record


def named(record: Record) -> frozenset[str]:
    """Every entity IRI a record names: what it is about, applies to, who decided it, its triples' terms."""
    terms = {t[1:-1] for triple in record.triples for t in (triple[0], triple[2]) if t.startswith("<urn:wb:entity:")}
    return frozenset({*record.about, *record.applies_to, *([record.decided_by] if record.decided_by else []), *terms})


def owners_of(record: Record, *, speaker: str | None) -> frozenset[str]:
    """The entities ``record`` belongs to, given the entity its speaker binds to (or None)."""
    subjects = {t[0][1:-1] for t in record.triples if t[0].startswith("<urn:wb:entity:")}
    everyone = named(record)
    if speaker is not None and speaker in everyone:
        return frozenset({speaker, *subjects})
    return everyone


Resolve = Callable[[set[str]], Mapping[str, Sequence[str]]]  # name keys -> the entities each binds


def owners(store: Store, found: Sequence[Record], resolve: Resolve | None = None,
           ) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """Each record's owners, and the entities that speak in these records (a speaker named in
    a record of their own). ``resolve`` binds speakers' names (default: read from ``store``)."""
    keys = {r.id: name_key(r.source.said_by or r.said_by or "") for r in found}
    wanted = {k for k in keys.values() if k}
    bound = resolve(wanted) if resolve else entities.resolve_keys(store, wanted)
    out: dict[str, frozenset[str]] = {}
    speakers: set[str] = set()
    for r in found:
        iris = bound.get(keys[r.id], ())
        speaker = iris[0] if len(iris) == 1 else None
        out[r.id] = owners_of(r, speaker=speaker)
        if speaker is not None and speaker in out[r.id]:
            speakers.add(speaker)
    return out, frozenset(speakers)
