"""Tests for benchmarks.synth: determinism, shape, size, names and held-out facts."""

from __future__ import annotations

import doctest
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import synth
from benchmarks.synth import World, generate, write

# A world's relations are its drawn budget, so per world the tolerance is the budget
# range around the essay's 705 relations per world.
PER_WORLD_TOLERANCE = 0.01


def _parse(path: Path, fmt: ox.RdfFormat) -> list[ox.Quad]:
    return list(ox.parse(path=path, format=fmt))


def _value(term: object) -> str:
    assert isinstance(term, (ox.NamedNode, ox.Literal))  # no blank nodes or triples
    return term.value


def _spo(quads: list[ox.Quad]) -> set[tuple[str, str, str]]:
    return {(_value(q.subject), q.predicate.value, _value(q.object)) for q in quads}


def _is_acyclic(world: World) -> bool:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(kind: str) -> bool:
        if state.get(kind) == 1:
            return False
        if state.get(kind) == 2:
            return True
        state[kind] = 1
        ok = all(visit(p) for p in world.parents[kind])
        state[kind] = 2
        return ok

    return all(visit(k) for k in world.kinds)


@pytest.fixture(scope="module")
def small_nq(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, synth.Counts]:
    path = tmp_path_factory.mktemp("synth") / "w.nq"
    return path, write(path, n_worlds=12, seed=3)


def test_doctests() -> None:
    result = doctest.testmod(synth)
    assert result.attempted > 0 and result.failed == 0


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.nq", tmp_path / "b.nq", tmp_path / "c.nq"
    write(a, n_worlds=10, seed=5)
    write(b, n_worlds=10, seed=5)
    write(c, n_worlds=10, seed=6)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_world_independent_of_world_count() -> None:
    few, many = list(generate(5, seed=9)), list(generate(50, seed=9))
    assert few == many[:5]
    assert list(many[3].triples()) == list(few[3].triples())


def test_counts_match_written_file(small_nq: tuple[Path, synth.Counts]) -> None:
    path, counts = small_nq
    quads = _parse(path, ox.RdfFormat.N_QUADS)
    by_kind = Counter("label" if isinstance(q.object, ox.Literal) else "relation"
                      for q in quads)
    assert counts.triples == len(quads) == len(set(quads))
    assert counts.relations == by_kind["relation"]
    assert counts.labels == by_kind["label"]
    assert counts.worlds == len({q.graph_name for q in quads}) == 12
    assert {q.predicate.value for q in quads if not isinstance(q.object, ox.Literal)} \
        == synth.RELATIONS
    assert counts.relations == sum(w.relation_count() for w in generate(12, seed=3))


def test_nq_and_nt_hold_the_same_triples(
        tmp_path: Path, small_nq: tuple[Path, synth.Counts]) -> None:
    nq_path, nq_counts = small_nq
    nt_path = tmp_path / "w.nt"
    assert write(nt_path, n_worlds=12, seed=3, fmt="nt") == nq_counts
    nq, nt = _parse(nq_path, ox.RdfFormat.N_QUADS), _parse(nt_path, ox.RdfFormat.N_TRIPLES)
    assert all(q.graph_name == ox.NamedNode(_value(q.subject).split("/")[0]) for q in nq)
    assert _spo(nq) == _spo(nt)
    assert len(nt) == len(nq)


def test_relations_per_world_about_705() -> None:
    for world in generate(40, seed=1):
        assert world.relation_count() == pytest.approx(705, rel=PER_WORLD_TOLERANCE)
        assert world.relation_count() == sum(p in synth.RELATIONS
                                             for _, p, _ in world.triples())


def test_essay_size_within_two_percent() -> None:
    total = sum(w.relation_count() for w in generate(synth.ESSAY_WORLDS))
    assert total == pytest.approx(synth.ESSAY_RELATIONS, rel=0.02)


def test_worlds_for_relations() -> None:
    assert synth.worlds_for_relations(10_000) == 14
    assert synth.worlds_for_relations(100_000) == 142
    assert synth.worlds_for_relations(1_270_000) == 1_800
    assert synth.worlds_for_relations(0) == 1


def test_things_kinds_and_multi_kind_members() -> None:
    worlds = list(generate(20, seed=2))
    things = [(w, t) for w in worlds for t in w.things]
    assert all(1 <= len(w.members[t]) <= 2 for w, t in things)
    assert all(set(w.members[t]) <= set(w.kinds) for w, t in things)
    multi = [(w, t) for w, t in things if len(w.members[t]) == 2]
    assert 0.07 < len(multi) / len(things) < 0.13
    for w, t in multi:  # from different trees: no shared root
        a, b = ({k, *w.ancestors(k)} for k in w.members[t])
        assert not a & b


def test_kind_forest_shape_and_leaf_facts() -> None:
    leaf_facts = []
    for w in generate(20, seed=4):
        assert 12 <= len(w.kinds) <= 16
        assert all(len(p) <= 1 for p in w.parents.values())
        assert max(len(w.ancestors(k)) for k in w.kinds) <= 2
        children = {p for ps in w.parents.values() for p in ps}
        leaf_facts += [len(w.kind_facts[k]) for k in w.kinds if k not in children]
        for k in w.kinds:  # written facts are new, not repeats of inherited ones
            above = {f for a in w.ancestors(k) for f in w.kind_facts[a]}
            assert not above & set(w.kind_facts[k])
            assert len(set(w.kind_facts[k])) == len(w.kind_facts[k])
    assert 23 <= sum(leaf_facts) / len(leaf_facts) <= 25


def test_labels_unique_across_200_worlds() -> None:
    labels: list[str] = []
    for w in generate(200, seed=0):
        entities = {*w.kinds, *w.things, *w.features}
        assert set(w.labels) == entities  # exactly one label each
        assert all(w.labels[e].split()[0].isalpha() for e in entities)
        labels += w.labels.values()
    assert len(set(labels)) == len(labels)


def test_held_out_facts_never_written(small_nq: tuple[Path, synth.Counts]) -> None:
    path, _ = small_nq
    written = _spo(_parse(path, ox.RdfFormat.N_QUADS))
    worlds = list(generate(12, seed=3))
    held = [h for w in worlds for h in w.held_out]
    assert len(held) == 12 * synth.HELD_OUT_PER_WORLD == len(set(held))
    assert not written & set(held)
    for w in worlds:  # nor entailed by inheritance, yet about real entities
        for s, p, o in w.held_out:
            assert (p, o) not in w.entailed_facts(s)
            assert s in w.labels and o in w.features


def test_literal_escaping_round_trips() -> None:
    text = 'a "quoted" back\\slash\nnew\tline\x01 caf\u00e9'
    line = f"<urn:x> <urn:p> {synth._literal(text)} .\n"
    (triple,) = ox.parse(line, format=ox.RdfFormat.N_TRIPLES)
    assert triple.object == ox.Literal(text)


def test_write_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write(tmp_path / "x", n_worlds=0)
    with pytest.raises(ValueError):
        write(tmp_path / "x", n_worlds=synth.MAX_WORLDS + 1)
    with pytest.raises(ValueError):
        write(tmp_path / "x", n_worlds=1, fmt="ttl")  # type: ignore[arg-type]


def test_main_writes_and_prints_counts(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.nt"
    assert synth.main(["--worlds", "2", "--seed", "1", "--format", "nt", str(out)]) == 0
    counts = write(tmp_path / "api.nt", n_worlds=2, seed=1, fmt="nt")
    assert f"relations={counts.relations}" in capsys.readouterr().out
    assert out.read_bytes() == (tmp_path / "api.nt").read_bytes()
    with pytest.raises(SystemExit):
        synth.main(["--worlds", "0", str(out)])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(-(2**40), 2**40), n=st.integers(1, 4), extra=st.integers(0, 3))
def test_property_deterministic_acyclic_typed(seed: int, n: int, extra: int) -> None:
    worlds = list(generate(n, seed=seed))
    assert worlds == list(generate(n + extra, seed=seed))[:n]
    for w in worlds:
        assert _is_acyclic(w)
        assert all(w.members[t] for t in w.things)
        triples = list(w.triples())
        assert len(triples) == len(set(triples))
        assert not set(triples) & set(w.held_out)
