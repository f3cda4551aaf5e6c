"""Export and import round-trip: the dataset comes back isomorphic, literals as they were entered."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from rdflib.compare import isomorphic

from tests.conftest import FIXED_NOW
from workbench.errors import Conflict, Forbidden, Invalid
from workbench.service import Workbench


def _graphs(path: Path) -> dict[str, rdflib.Graph]:
    """Each named graph of an N-Quads file as an rdflib graph, for isomorphism checks."""
    quads: dict[str, list[ox.Triple]] = {}
    for q in ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS):
        quads.setdefault(str(q.graph_name), []).append(q.triple)
    out = {}
    for name, triples in quads.items():
        g = rdflib.Graph()
        g.parse(data=ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES), format="nt")
        out[name] = g
    return out


@pytest.mark.parametrize("suffix", [".trig", ".nq", ".jsonld"])
def test_export_restore_round_trip_is_isomorphic(sample: Workbench, tmp_path: Path, suffix: str) -> None:
    sample.erase("m-friend-1", reason="so tombstones travel too")
    first = tmp_path / f"first{suffix}"
    sample.export(first)
    with Workbench.open(tmp_path / "copy", create=True, user="other", clock=lambda: FIXED_NOW) as copy:
        report = copy.restore(first)
        assert report.records_added == 20
        copy.export(tmp_path / "second.nq")
    sample.export(tmp_path / "first.nq")
    a, b = _graphs(tmp_path / "first.nq"), _graphs(tmp_path / "second.nq")
    assert a.keys() == b.keys()
    for name in a:
        assert isomorphic(a[name], b[name]), name


def test_importing_an_export_is_refused_and_changes_nothing(sample: Workbench, tmp_path: Path) -> None:
    """An export holds Workbench's own graphs (users, metadata, audit): it is restored into an
    empty store, never imported (invariant 11)."""
    out = tmp_path / "all.trig"
    sample.export(out)
    before = sorted(map(str, sample.store.quads()))
    with pytest.raises(Forbidden, match=r"all.trig:\d+: writes Workbench.s own graph <urn:wb:graph:\w+>.*workbench restore"):
        sample.import_files([out])
    with pytest.raises(Conflict, match="empty store"):
        sample.restore(out)
    assert sorted(map(str, sample.store.quads())) == before


def test_only_the_owner_restores(sample: Workbench, tmp_path: Path) -> None:
    out = tmp_path / "all.trig"
    sample.export(out)
    with Workbench.open(tmp_path / "copy", create=True, user="other", clock=lambda: FIXED_NOW) as copy:
        with pytest.raises(Forbidden, match="only the store's owner"):
            copy.acting_as("cora").restore(out)
        assert not copy.store.graph_names()
        with pytest.raises(Invalid, match="not a Workbench export"):
            facts = tmp_path / "facts.trig"
            facts.write_text("<urn:x:a> <urn:x:b> <urn:x:c> .\n", encoding="utf-8")
            copy.restore(facts)


def test_triple_formats_get_active_facts_without_provenance(sample: Workbench, tmp_path: Path) -> None:
    out = tmp_path / "facts.ttl"
    sample.export(out)
    triples = list(ox.parse(path=str(out), format=ox.RdfFormat.TURTLE))
    text = {str(t.object) for t in triples}
    assert '"data region: EU or UK"' in text
    assert '"data region: EU only"' not in text  # superseded
    assert not any("prov#" in str(t.predicate) for t in triples)


def test_literals_come_back_as_entered(wb: Workbench, tmp_path: Path) -> None:
    src = tmp_path / "values.ttl"
    src.write_text(
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        '<urn:x:a> <urn:x:count> "7"^^xsd:integer ; <urn:x:when> "2026-05-01"^^xsd:date ;\n'
        '  <urn:x:ok> true ; <urn:x:price> "12.5"^^xsd:decimal ; <urn:x:name> "Zoë"@de ;\n'
        '  <urn:x:code> "007" ; <urn:x:ratio> "1.5"^^xsd:double .\n',
        encoding="utf-8",
    )
    wb.import_files([src], source="values")
    out = tmp_path / "out.nq"
    wb.export(out)
    wanted = {str(q.object) for q in ox.parse(path=str(src), format=ox.RdfFormat.TURTLE)}
    got = {
        str(q.object)
        for q in ox.parse(path=str(out), format=ox.RdfFormat.N_QUADS)
        if str(q.graph_name) == "<urn:wb:record:values>"
    }
    assert wanted == got


@pytest.mark.regression("`export nodir/out.trig` ended in a traceback")
def test_exporting_into_a_missing_directory_says_so(sample: Workbench, tmp_path: Path) -> None:
    with pytest.raises(Invalid, match=r"out\.trig: no such directory: .*nodir$"):
        sample.export(tmp_path / "nodir" / "out.trig")
    with pytest.raises(Invalid, match="is a directory"):
        sample.export(tmp_path)
    assert not (tmp_path / "nodir").exists()


def test_an_export_streams_instead_of_holding_the_store(tmp_path: Path) -> None:
    """A quad at a time from the store to the file: the export's peak is a small part of its size."""
    import tracemalloc

    from benchmarks import synth

    synth.write(tmp_path / "w.nt", n_worlds=40, seed=0, fmt="nt")
    with Workbench.open(tmp_path / "s", create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init()
        wb.import_files([tmp_path / "w.nt"], record_type="common_sense", source="synth", said_by="root",
                        statement="Synthetic worlds.")
        target = tmp_path / "all.nq"
        tracemalloc.start()
        try:
            written = wb.export(target)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    size = target.stat().st_size
    assert written > 40_000 and written == target.read_bytes().count(b"\n")
    assert peak < size / 10, f"the export held {peak:,} bytes at its peak for {size:,} bytes written"
