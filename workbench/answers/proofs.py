"""From the engine's supports to the proofs an answer carries, with sources and words.

All the records a set of proofs rests on are described in one query, and all their terms named
in another, however deep the proofs go.
"""

from __future__ import annotations

from collections.abc import Iterable

from workbench.answers.evidence import describe
from workbench.rules.proof import Fact, Step, Support
from workbench.store import Store
from workbench.values.answers import Absence, Derived, Recorded
from workbench.values.rules import Var


def _walk(s: Support) -> Iterable[Support]:
    yield s
    if isinstance(s, Step):
        for p in s.premises:
            yield from _walk(p)


def terms(supports: Iterable[Support]) -> set[object]:
    out: set[object] = set()
    for top in supports:
        for s in _walk(top):
            out.update(s.triple)
            if isinstance(s, Step):
                out.update(v for _, v in s.bindings)
                for premise, vals in s.absences:
                    out.update(t for t in (premise.s, premise.p, premise.o) if not isinstance(t, Var))
                    out.update(v for _, v in vals)
    return out


class Prover:
    """Turns supports into :class:`Recorded` and :class:`Derived` proofs for one answer."""

    def __init__(self, store: Store, supports: Iterable[Support], *, extra_terms: Iterable[object] = ()) -> None:
        tops = list(supports)
        facts = [(s.triple, s.record) for top in tops for s in _walk(top) if isinstance(s, Fact)]
        self.labels, self._recorded = describe(store, terms(tops) | set(extra_terms), facts)
        self._derived: dict[int, tuple[Step, Derived]] = {}  # by id: a step many values' proofs share

    def proof(self, s: Support) -> Recorded | Derived:
        if isinstance(s, Fact):
            return self._recorded[(s.triple, s.record.value)]
        built = self._derived.get(id(s))
        if built is not None:
            return built[1]
        out = Derived(
            statement=self.labels.statement(s.triple),
            rule=s.rule.id,
            version=s.rule.version,
            reading=s.rule.reading,
            bindings=tuple((k, self.labels(v)) for k, v in s.bindings),
            premises=tuple(self.proof(p) for p in s.premises),
            absences=tuple(self._absence(p, dict(vals)) for p, vals in s.absences),
        )
        self._derived[id(s)] = (s, out)  # the step kept with it: its id is not reused meanwhile
        return out

    def _absence(self, premise: object, vals: dict[str, object]) -> Absence:
        from workbench.values.rules import Premise

        assert isinstance(premise, Premise)

        def show(t: object, word: bool) -> str:
            if isinstance(t, Var):
                if t.name in vals:
                    return self.labels(vals[t.name]) if word else str(vals[t.name])
                return "anything" if word else f"?{t.name}"
            return self.labels(t) if word else str(t)

        pattern = " ".join(show(t, False) for t in (premise.s, premise.p, premise.o))
        words = " ".join(show(t, True) for t in (premise.s, premise.p, premise.o))
        return Absence(pattern=pattern, text=f"no record says {words}")

