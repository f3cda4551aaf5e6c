"""Frozen values that Workbench hands out: records with provenance, sources, entities, reports.

They are plain data: what the store said, with where it came from. ``to_json()`` gives the stable
JSON shape the CLI's ``--json`` and (later) the HTTP API print.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.vocab import WB


class RecordType(enum.Enum):
    """The kinds of statement a record can be; the value is the name used in files and the CLI."""

    DECISION = "decision"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    EVENT = "event"
    STATE = "state"
    OBSERVATION = "observation"
    COMMON_SENSE = "common_sense"

    @property
    def iri(self) -> Any:
        return _TYPE_IRIS[self]

    @classmethod
    def from_iri(cls, iri: str) -> RecordType:
        return _TYPE_BY_IRI[iri]

    @classmethod
    def parse(cls, text: str) -> RecordType:
        """A record type from its name (``"common sense"`` and ``"common-sense"`` work too)."""
        key = text.strip().lower().replace(" ", "_").replace("-", "_")
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(t.value for t in cls)
            raise ValueError(f"unknown record type {text!r}; expected one of {names}") from None


_TYPE_IRIS = {
    RecordType.DECISION: WB.Decision,
    RecordType.PREFERENCE: WB.Preference,
    RecordType.CONSTRAINT: WB.Constraint,
    RecordType.EVENT: WB.Event,
    RecordType.STATE: WB.State,
    RecordType.OBSERVATION: WB.Observation,
    RecordType.COMMON_SENSE: WB.CommonSense,
}
_TYPE_BY_IRI = {v.value: k for k, v in _TYPE_IRIS.items()}


class Status(enum.Enum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"

    @property
    def iri(self) -> Any:
        return {Status.ACTIVE: WB.Active, Status.SUPERSEDED: WB.Superseded, Status.RETRACTED: WB.Retracted}[self]

    @classmethod
    def from_iri(cls, iri: str) -> Status:
        return cls(iri.rsplit("#", 1)[1].lower())


@dataclass(frozen=True)
class Source:
    """Where a record came from: who said it, where, when, and who may see it."""

    id: str
    said_by: str
    captured_at: str | None = None
    locator: str | None = None
    text: str | None = None
    visible_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class Record:
    """One assertion: a statement from one source, its triples and its metadata."""

    id: str
    iri: str
    statement: str
    type: RecordType
    status: Status
    source: Source
    created_at: str
    said_by: str
    effective_from: str | None = None
    effective_to: str | None = None
    extracted_by: str | None = None
    prompt_version: str | None = None
    confirmed_by: str | None = None
    about: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()
    decided_by: str | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    admitted: bool = False
    triples: tuple[tuple[str, str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["type"] = self.type.value
        out["status"] = self.status.value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        """A record back from :meth:`to_json`; ``from_json(r.to_json()) == r``."""
        d = dict(data)
        src = dict(d.pop("source"))
        src["visible_to"] = tuple(src.get("visible_to") or ())
        d["source"] = Source(**src)
        d["type"], d["status"] = RecordType(d["type"]), Status(d["status"])
        for key in ("about", "applies_to", "supersedes", "superseded_by"):
            d[key] = tuple(d[key])
        d["triples"] = tuple(tuple(t) for t in d["triples"])
        return cls(**d)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: the record with its provenance (:mod:`workbench.presentation.notebook`)."""
        from workbench.presentation.notebook import record_html

        return record_html(self)


@dataclass(frozen=True)
class Entity:
    """A stable IRI with the names and aliases that point to it."""

    iri: str
    names: tuple[str, ...]
    aliases: tuple[tuple[str, str | None], ...] = ()  # (alias, language tag)
    merged_into: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "iri": self.iri,
            "names": list(self.names),
            "aliases": [{"alias": a, "lang": lang} for a, lang in self.aliases],
            "merged_into": self.merged_into,
        }


@dataclass(frozen=True)
class Resolution:
    """What a name binds to: exactly one entity, several (ambiguous), or none (unknown)."""

    name: str
    outcome: str  # "bound" | "ambiguous" | "unknown"
    entities: tuple[str, ...] = ()

    @property
    def entity(self) -> str | None:
        return self.entities[0] if self.outcome == "bound" else None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "outcome": self.outcome, "entities": list(self.entities)}


@dataclass(frozen=True)
class ImportReport:
    """What an import did."""

    files: tuple[str, ...]
    records_added: int
    records_unchanged: int
    entities_created: int
    quads_added: int
    activity: str
    new_entities: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        """In words: ``20 records added, 0 unchanged, 19 entities created``."""
        return (
            f"{_count(self.records_added, 'record')} added, {self.records_unchanged} unchanged, "
            f"{_count(self.entities_created, 'entity', 'entities')} created"
        )

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["files"] = list(self.files)
        out["new_entities"] = list(self.new_entities)
        return out


@dataclass(frozen=True)
class Tombstone:
    """What remains of an erased record: what kind, who, when, why. No content."""

    iri: str
    kind: str
    erased_by: str
    erased_at: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"
