"""Views on disk (workbench.access.views): where they live, who shares one, when one is rebuilt
and when its folder goes. What a view hides is the leak matrix's business (test_visibility)."""

from __future__ import annotations

import fcntl
import gc
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from tests.conftest import FIXED_NOW
from tests.test_visibility import PRIVATE
from workbench.access.views import Views, ViewStore, viewer
from workbench.rules.walked import Walked
from workbench.service import Workbench
from workbench.store import MemoryStore, Store
from workbench.store import base as store_base


@pytest.fixture
def wb(tmp_path: Path) -> Iterator[Workbench]:
    """The sample store with one family record, an admin, two viewers and a family member."""
    with Workbench.open(tmp_path / "s", create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init(sample=True)
        wb.add_user("root", ["admin"])
        wb.add_user("boss", ["admin"])
        for name in ("bob", "carol", "fam"):
            wb.add_user(name, ["viewer"])
        wb.set_groups("fam", join=["group:family"])
        file = tmp_path / "private.jsonl"
        file.write_text(json.dumps(PRIVATE[0]) + "\n")
        wb.import_files([file])
        yield wb


def _view(wb: Workbench, name: str) -> ViewStore:
    """The view ``name``'s SPARQL reads (bob's and carol's Workbenches read it too)."""
    store = wb._readable(name)
    assert isinstance(store, ViewStore)
    if name in ("bob", "carol"):
        assert wb.seen_by(name).store is store
    return store


def _copies(wb: Workbench) -> list[Path]:
    return sorted(p for p in (wb.store.files_dir / "views").glob("copies.*/*"))


def test_a_view_is_on_disk_under_the_store(wb: Workbench) -> None:
    view = _view(wb, "bob")
    assert view.copy.directory is not None and view.copy.directory.is_dir()
    assert view.copy.directory.parent.parent == wb.store.files_dir / "views"
    assert _copies(wb) == [view.copy.directory]
    assert "p-van-1" not in {r.id for r in wb.seen_by("bob").records()}
    assert view.files_dir == wb.store.files_dir / "views" / view.reader.key  # its vectors, per reader


def test_readers_who_may_not_see_the_same_things_share_a_view(wb: Workbench) -> None:
    bob, carol, fam = _view(wb, "bob"), _view(wb, "carol"), _view(wb, "fam")
    assert bob is not carol and bob.copy is carol.copy  # a store per reader (their files), one copy
    assert fam.copy is not bob.copy and len(_copies(wb)) == 2
    assert bob.files_dir != carol.files_dir
    admin = _view(wb, "root")
    assert fam.copy is admin.copy is _view(wb, "boss").copy  # nothing hidden from any of them
    del bob, carol, fam, admin  # held here, a copy the write below replaces would be kept
    wb.set_groups("carol", join=["group:family"])
    carol_now = wb._readable("carol")  # she may see every source now: her Workbench reads the store
    assert isinstance(carol_now, ViewStore) and carol_now.copy is _view(wb, "root").copy is not _view(wb, "bob").copy
    assert len(_copies(wb)) == 2


def test_a_write_replaces_the_view_and_its_folder_goes(wb: Workbench, tmp_path: Path) -> None:
    before = _view(wb, "bob")
    old = before.copy.directory
    assert _view(wb, "bob") is before and _view(wb, "carol").copy is before.copy  # no write: the same
    del before
    file = tmp_path / "public.jsonl"
    file.write_text(json.dumps({**PRIVATE[1], "id": "pub-1", "visible_to": [], "source": {"id": "pub-src", "said_by": "me"}}) + "\n")
    wb.import_files([file])
    after = _view(wb, "bob")
    assert after.copy.directory != old and after.built_from == wb.store.version()
    assert "pub-1" in {r.id for r in wb.seen_by("bob").records()}
    _view(wb, "carol")  # carol's old Workbench let go of the old view too
    assert old is not None and not old.exists()
    assert _copies(wb) == [after.copy.directory]


def test_evicted_views_go_too(wb: Workbench) -> None:
    views = wb._shared.views()
    views.size = 1
    bob = _view(wb, "bob").copy.directory
    _view(wb, "root")
    assert bob is not None and not bob.exists()
    assert len(_copies(wb)) == 1


def test_close_removes_every_view(wb: Workbench) -> None:
    _view(wb, "bob")
    _view(wb, "root")
    assert len(_copies(wb)) == 2
    wb.close()
    assert not list((wb.store.files_dir / "views").glob("copies.*"))


def test_views_never_closed_go_when_collected(wb: Workbench) -> None:
    views = Views(wb.store)
    folder = views.view(viewer(wb.store, "bob")).copy.directory
    assert folder is not None and folder.exists()
    del views
    gc.collect()
    assert not folder.exists() and not folder.parent.exists()


def test_a_dead_process_s_views_are_removed_a_live_one_s_kept(wb: Workbench) -> None:
    views = wb.store.files_dir / "views"
    dead, live = views / "copies.dead", views / "copies.live"
    for folder in (dead, live):
        (folder / "abc-123-1").mkdir(parents=True)
    held = os.open(live, os.O_RDONLY)  # as another process holding its folder
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        _view(wb, "bob")
        assert not dead.exists() and live.exists()
    finally:
        os.close(held)


def test_a_candidate_for_another_audience_restricts_its_reader(tmp_path: Path) -> None:
    """No hidden source, yet a queued candidate names an audience without bob: he gets a view."""
    with Workbench.open(tmp_path / "s", create=True, user="root", clock=lambda: FIXED_NOW) as wb:
        wb.init()  # not the sample: it holds a family source
        wb.add_user("root", ["admin"])
        wb.add_user("bob", ["viewer"])
        wb.add_user("fam", ["viewer"])
        wb.set_groups("fam", join=["group:family"])
        queued = tmp_path / "candidates.jsonl"
        queued.write_text(json.dumps({**PRIVATE[1], "id": "c-new", "source": {"id": "not-yet-imported", "said_by": "me"}}) + "\n")
        wb.import_candidates(queued)
        assert "c-new" not in {c.id for c in wb.seen_by("bob").candidates(status=None)}
        assert "c-new" in {c.id for c in wb.seen_by("fam").candidates(status=None)}


def test_a_scratch_store_keeps_its_views_in_memory(tmp_path: Path) -> None:
    wb = Workbench(MemoryStore(), user="root", clock=lambda: FIXED_NOW)
    wb.init()
    file = tmp_path / "private.jsonl"
    file.write_text(json.dumps(PRIVATE[0]) + "\n")
    wb.import_files([file])
    wb.add_user("root", ["admin"])
    wb.add_user("bob", ["viewer"])
    view = wb.seen_by("bob").store
    assert isinstance(view, ViewStore) and view.copy.directory is None
    assert not list((wb.store.files_dir / "views").glob("copies.*/*"))
    assert "p-van-1" not in {r.id for r in wb.seen_by("bob").records()}


def test_copy_into_gives_every_quad(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every backend's copy, and the dump-through-a-file one in slices much smaller than the data."""
    g = ox.NamedNode("urn:wb:graph:test")
    quads = [ox.Quad(ox.NamedNode(f"urn:x:{i}"), ox.NamedNode("urn:p"), ox.Literal(f"v {i}\nline"), g)
             for i in range(50)]
    store.apply(insert=quads)
    monkeypatch.setattr(store_base, "COPY_SLICE", 100)
    for copy in (store.copy_into(tmp_path / "own"), Store.copy_into(store, tmp_path / "dumped")):
        assert set(copy.quads_for_pattern(None, None, None, g)) == set(quads)


def test_a_view_is_never_copied_from_a_write_in_progress(tmp_path: Path) -> None:
    """An import lands its content before its metadata (the sources' visibility): a copy taken in
    between would show a restricted record's triples. The copy waits for the write."""
    from workbench.store import Batch, EmbeddedStore

    store = EmbeddedStore(tmp_path / "s", create=True)
    content = ox.Quad(ox.NamedNode("urn:x"), ox.NamedNode("urn:p"), ox.Literal("secret"), ox.NamedNode("urn:g"))
    metadata = ox.Quad(ox.NamedNode("urn:g"), ox.NamedNode("urn:p"), ox.Literal("visible to few"),
                       ox.NamedNode("urn:meta"))
    in_check, release = threading.Event(), threading.Event()

    def check() -> list[ox.Quad]:
        in_check.set()
        release.wait(10)
        return [metadata]

    writer = threading.Thread(target=store.write, args=(Batch(quads=[content]),), kwargs={"check": check})
    writer.start()
    assert in_check.wait(10)
    copied: list[ox.Store] = []
    copier = threading.Thread(target=lambda: copied.append(store.copy_into(tmp_path / "copy")))
    copier.start()
    copier.join(0.5)
    assert copier.is_alive() and not copied  # waits while the content is in without its metadata
    release.set()
    writer.join(10)
    copier.join(10)
    assert set(copied[0]) == {content, metadata}
    copied.clear()  # closes the copy
    store.close()


def test_current_gives_a_built_view_and_never_builds_one(wb: Workbench, tmp_path: Path) -> None:
    views = wb._shared.views()
    bob = viewer(wb.store, "bob")
    assert views.current(bob) is None and not _copies(wb)  # nothing built yet: nothing built by asking
    assert wb.readable_now("bob") is None and wb.readable_now(None) is wb.store  # the owner reads the store itself
    built = _view(wb, "bob")
    assert views.current(bob) is built and wb.readable_now("bob") is built
    assert views.current(viewer(wb.store, "fam")) is None  # another set of what is hidden: not built yet
    file = tmp_path / "public.jsonl"
    file.write_text(json.dumps({**PRIVATE[1], "id": "pub-2", "visible_to": [], "source": {"id": "pub-src-2", "said_by": "me"}}) + "\n")
    wb.import_files([file])
    assert views.current(bob) is None and wb.readable_now("bob") is None  # the store moved on: reading would build again
    assert _view(wb, "bob") is not built and views.current(bob) is not None
    views.close()
    assert views.current(bob) is None


@pytest.mark.parametrize("speaker", ["Grandma Ines", "model:family-extractor"], ids=["a person", "a model"])
def test_an_agent_only_hidden_records_name_is_not_in_the_view(wb: Workbench, tmp_path: Path, speaker: str) -> None:
    """A person or model named only by a family record (as its source's speaker) is gone from an
    outsider's view, with its label, and kept in the family's; agents that visible things name stay."""
    file = tmp_path / "grandma.jsonl"
    record = {**PRIVATE[1], "id": "p-grandma", "source": {"id": "fam-chat-9", "said_by": speaker}}
    file.write_text(json.dumps(record) + "\n")
    wb.import_files([file])
    everything = "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }"
    outside, inside = (wb.seen_by(name).sparql(everything, format="tsv").decode() for name in ("bob", "fam"))
    label = speaker.split(":")[-1]
    assert label in inside and label not in outside
    assert "urn:wb:agent:root" in outside  # the admin who imported it acts in visible records too


def test_a_reader_is_kept_until_the_users_change(wb: Workbench) -> None:
    bob = viewer(wb.store, "bob")
    assert viewer(wb.store, "bob") is bob and bob.agents == frozenset({"bob"})  # every read asks: asked once
    assert viewer(wb.store, "boss").sees_all and viewer(wb.store, "nobody").agents == frozenset({"nobody"})
    wb.set_groups("bob", join=["group:family"])
    assert viewer(wb.store, "bob").agents == frozenset({"bob", "group:family"})  # read again after the change
    assert wb.readable_now("bob") is None  # what bob may see changed: his view is to build


def test_kinds_a_walk_kept_for_one_reader_are_never_another_s(wb: Workbench, tmp_path: Path) -> None:
    """Kept walks (rules/walked) belong to the store they were read from: an edge only the family
    may see, walked for the store's owner, never reaches bob's answers, nor his walks the owner's."""
    hidden = [{"id": "p-kind-1", "statement": "A vehicle is a kind of machine; machines need lubricant.",
               "type": "observation", "about": ["vehicle"], "visible_to": ["group:family"],
               "source": {"id": "fam-chat-9", "said_by": "me", "captured_at": "2026-05-01T10:00:00Z"},
               "triples": [["vehicle", "kind of", "machine"], ["machine", "needs", "lubricant"]]}]
    file = tmp_path / "kind.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in hidden))
    wb.import_files([file])
    assert "lubricant" in wb.ask("my car", "needs").values  # the owner walked car -> vehicle -> machine
    bob = wb.seen_by("bob")
    assert "lubricant" not in bob.ask("my car", "needs").values
    assert "lubricant" in wb.seen_by("fam").ask("my car", "needs").values
    assert "lubricant" not in bob.ask("my car", "needs").values  # asked again: his own kept walk
    assert "lubricant" in wb.ask("my car", "needs").values
    vehicle, key = ox.NamedNode("urn:wb:entity:vehicle"), ("http://www.w3.org/2000/01/rdf-schema#subClassOf", True)
    assert Walked.of(wb.store).get(wb.store.version(), key, [vehicle], frozenset())[0][vehicle]  # -> machine
    assert Walked.of(bob.store).get(bob.store.version(), key, [vehicle], frozenset())[0] == {vehicle: []}
