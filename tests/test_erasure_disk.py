"""Erasure reaches the disk: after ``erase`` no file under the store's directory holds a byte of
the record (its statement, source text, a literal of its triples, its digest, a summary's text),
not the database's SST files, write-ahead logs or MANIFEST, not a view's checkpoint, not a vector
index. See docs/decisions/20261201-erasure-reaches-the-disk.md.

A plain ``grep -a`` of RocksDB's files is not enough to show absence: SST blocks in the lower
levels are LZ4-compressed (Oxigraph's options: none for levels 0-1, LZ4 below), which can split a
string across back-references, and log records are cut into 32 KiB blocks with headers between
the pieces. So every file is read as bytes *and* as what those bytes hold: each SST data and
index block decompressed, each log's records joined. The reader is checked on the store before
the erasure: it must find every needle there, so that finding none after means something.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXED_NOW
from workbench.service import Workbench
from workbench.store import EmbeddedStore, Store
from workbench.vectors.encoders import HashingEncoder
from workbench.vectors.index import VectorIndex

SST_MAGIC = 0x88E241B785F4CFF7  # RocksDB's block-based table
LOG_BLOCK = 32768
FAMILY_RECORD = "m-family-1"
SUMMARY_TEXT = "Mia and her partner expect their first child next spring; the family is thrilled."
EXTRA = {  # a second family record, whose triples hold a literal
    "id": "m-family-2", "statement": "Mia chose the name Oriane Valtersdottir for the baby.",
    "type": "observation", "about": ["Mia"], "visible_to": ["group:family"],
    "source": {"id": "family-chat-2026-10-21#2", "said_by": "Mia", "text": "We picked Oriane Valtersdottir!"},
    "triples": [["Mia", "rdfs:comment", {"value": "names her daughter Oriane Valtersdottir, middle name Quillon"}]],
}
PRIVATE = {  # visible to root alone: everyone else reads a view
    "id": "p-root-1", "statement": "Root keeps the spare key under the blue pot.", "type": "observation",
    "about": ["blue pot"], "visible_to": ["root"], "source": {"id": "root-note-1", "said_by": "root"},
}


def bug(reason: str) -> pytest.MarkDecorator:
    """Marks a test that once showed a product bug (fixed since); kept as a regression test."""
    return pytest.mark.regression(reason)


# ---------------------------------------------------------------------- reading RocksDB's files


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def lz4_block(src: bytes) -> bytes:
    """Decompress one raw LZ4 block (the format RocksDB's kLZ4Compression writes)."""
    out = bytearray()
    i = 0
    while i < len(src):
        token = src[i]
        i += 1
        length = token >> 4
        if length == 15:
            while True:
                length += src[i]
                i += 1
                if src[i - 1] != 255:
                    break
        out += src[i : i + length]
        i += length
        if i >= len(src):
            break
        offset = src[i] | src[i + 1] << 8
        i += 2
        length = token & 15
        if length == 15:
            while True:
                length += src[i]
                i += 1
                if src[i - 1] != 255:
                    break
        length += 4
        start = len(out) - offset
        if offset <= 0 or start < 0:
            raise ValueError("not an LZ4 block")
        for k in range(length):  # may overlap what it writes
            out.append(out[start + k])
    return bytes(out)


def _block(data: bytes, offset: int, size: int) -> bytes:
    """A block's content: stored as it is (type 0) or LZ4-compressed (type 4, its size first)."""
    kind = data[offset + size]
    raw = data[offset : offset + size]
    if kind == 0:
        return raw
    if kind == 4:
        _, start = _varint(raw, 0)
        return lz4_block(raw[start:])
    raise ValueError(f"block at {offset}: compression type {kind}, which this test cannot read")


def _entries(block: bytes) -> Iterator[tuple[bytes, bytes]]:
    """The (key, value) entries of a block whose values are written whole (a metaindex)."""
    restarts = struct.unpack("<I", block[-4:])[0] & 0x7FFFFFFF
    end, i, key = len(block) - 4 - 4 * restarts, 0, b""
    while i < end:
        shared, i = _varint(block, i)
        non_shared, i = _varint(block, i)
        size, i = _varint(block, i)
        key = key[:shared] + block[i : i + non_shared]
        i += non_shared
        yield key, block[i : i + size]
        i += size


def _index_handle(data: bytes) -> tuple[int, int, int]:
    """(format version, offset, size) of an SST file's index block, from its 53-byte footer: in
    the footer itself up to format version 5; from 6 on, in the metaindex block just before it."""
    footer = data[-53:]
    if struct.unpack("<Q", footer[-8:])[0] != SST_MAGIC:
        raise ValueError("not a block-based SST file")
    version = struct.unpack("<I", footer[-12:-8])[0]
    if 2 <= version <= 5:
        _, i = _varint(footer, 1)  # metaindex offset
        _, i = _varint(footer, i)  # metaindex size
        offset, i = _varint(footer, i)
        size, _ = _varint(footer, i)
        return version, offset, size
    if version in (6, 7):
        meta_size = struct.unpack("<I", footer[13:17])[0]
        meta_offset = len(data) - 53 - 5 - meta_size
        for key, value in _entries(_block(data, meta_offset, meta_size)):
            if key == b"rocksdb.index":
                offset, i = _varint(value, 0)
                size, _ = _varint(value, i)
                return version, offset, size
        raise ValueError("an SST file without an index block")
    raise ValueError(f"SST format version {version}: this test reads 2 to 7")


def sst_blocks(data: bytes) -> Iterator[bytes]:
    """Every data block of an SST file (format versions 2-7), decompressed, and its index block."""
    version, index_offset, index_size = _index_handle(data)
    index = _block(data, index_offset, index_size)
    yield index
    restarts = struct.unpack("<I", index[-4:])[0] & 0x7FFFFFFF
    end = len(index) - 4 - 4 * restarts
    i, offset, size = 0, 0, 0
    while i < end:
        shared, i = _varint(index, i)
        non_shared, i = _varint(index, i)
        if version < 4:  # the value's length is written (and the value is a whole handle)
            _, i = _varint(index, i)
        i += non_shared  # the key's own bytes
        if shared == 0 or version < 4:
            offset, i = _varint(index, i)
            size, i = _varint(index, i)
        else:  # delta-encoded: the size's difference from the previous block's, zigzag
            delta, i = _varint(index, i)
            offset, size = offset + size + 5, size + ((delta >> 1) ^ -(delta & 1))
        if offset + size + 5 > len(data):
            raise ValueError("an index entry points past the end of the file")
        yield _block(data, offset, size)


def log_records(data: bytes) -> bytes:
    """The payloads of a write-ahead log or MANIFEST, joined: what its 32 KiB blocks cut up
    (recycled logs included: whatever old records follow the new ones are read too)."""
    out = bytearray()
    for start in range(0, len(data), LOG_BLOCK):
        block = data[start : start + LOG_BLOCK]
        i = 0
        while i + 7 <= len(block):
            length = block[i + 4] | block[i + 5] << 8
            kind = block[i + 6]
            if kind == 0 and length == 0:
                break  # the block's padding
            header = 11 if 5 <= kind <= 8 else 7  # recyclable records carry their log's number
            out += block[i + header : i + header + length]
            i += header + length
    return bytes(out)


def readable(path: Path) -> list[bytes]:
    """What a determined reader gets from a file: its bytes and, for RocksDB's own files, what
    they encode."""
    data = path.read_bytes()
    views = [data]
    if path.suffix == ".sst":
        views += list(sst_blocks(data))
    elif path.suffix == ".log" or path.name.startswith("MANIFEST-"):
        views.append(log_records(data))
    return views


def holding(root: Path, needles: list[str]) -> dict[str, list[str]]:
    """For each needle, the files under ``root`` that hold it (as UTF-8, in any reading above)."""
    found: dict[str, list[str]] = {n: [] for n in needles}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            contents = readable(path)
        except FileNotFoundError:  # removed since the listing by an open store's compaction: gone from the disk
            continue
        for needle in needles:
            if any(needle.encode() in c for c in contents):
                found[needle].append(str(path.relative_to(root)))
    return found


# ---------------------------------------------------------------------- the store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """The embedded store only: its files are what this module reads."""
    s = EmbeddedStore(tmp_path / "store", create=True)
    yield s
    s.close()


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def root(sample: Workbench, tmp_path: Path) -> Workbench:
    """The sample, with an extra family record, one private to root, an approved summary of the
    family record, and views built (and recalled through) for two restricted readers: fam (who
    sees the family records) and bob (who does not: his view is a checkpoint of every file all
    the same)."""
    root = Workbench(sample.store, user="root", clock=lambda: FIXED_NOW)
    root.add_user("root", ["admin"])
    root.add_user("cora", ["curator"])
    root.add_user("fam", ["viewer"])
    root.add_user("bob", ["viewer"])
    root.set_groups("cora", join=["group:family"])
    root.set_groups("fam", join=["group:family"])
    root.import_files([_jsonl(tmp_path / "more.jsonl", [EXTRA, PRIVATE])])
    cora = Workbench(sample.store, user="cora", clock=lambda: FIXED_NOW)
    cora.import_candidates(_jsonl(tmp_path / "s.jsonl", [
        {"id": "s-mia", "summary": SUMMARY_TEXT, "of": [FAMILY_RECORD, "m-family-2"]}]))
    assert cora.approve(["s-mia"]) == ["s-mia"]
    root.recall("When is Mia's baby due?")  # the store's own vector indexes
    for name in ("fam", "bob"):
        reader = root.seen_by(name)
        assert reader.store is not root.store  # a view: something is hidden from each
        reader.recall("When is Mia's baby due?")  # their own vector indexes beside the views
    assert FAMILY_RECORD in {r.id for r in root.seen_by("fam").records()}
    assert FAMILY_RECORD not in {r.id for r in root.seen_by("bob").records()}
    return root


def _needles(wb: Workbench, record_id: str) -> list[str]:
    """What of the record must not stay: its statement, source text and id, digest, and every
    literal in its graph (the record's triples)."""
    rec = wb.record(record_id)
    digest = wb.store.select(
        f"SELECT ?d WHERE {{ GRAPH ?m {{ <{rec.iri}> <https://w3id.org/workbench/ns#recordDigest> ?d }} }}"
    )[0]["d"]
    literals = wb.store.select(f"SELECT DISTINCT ?o WHERE {{ GRAPH <{rec.iri}> {{ ?s ?p ?o FILTER(isLiteral(?o)) }} }}")
    assert digest is not None
    out = [rec.statement, rec.source.text or "", rec.source.id, digest.value]
    return [n for n in out + [r["o"].value for r in literals if r["o"] is not None] if n]


@bug("erase left the record's statement, source text, summary text and digest readable with grep -a in the "
     "store's RocksDB files and in views' checkpoints, and the summary basis kept the record's digest")
def test_erasure_leaves_nothing_of_the_record_in_any_file(root: Workbench) -> None:
    folder = root.store.files_dir
    needles = [SUMMARY_TEXT, *_needles(root, FAMILY_RECORD), *_needles(root, "m-family-2")]
    assert "names her daughter Oriane Valtersdottir, middle name Quillon" in needles  # a literal of its triples
    before = holding(folder, needles)
    assert all(before.values()), f"the reader does not find these before the erasure: {before}"
    views = list((folder / "views").glob("copies.*/*"))
    assert views and all(any(str(v.relative_to(folder)) in p for p in before[SUMMARY_TEXT]) for v in views)

    root.erase(FAMILY_RECORD, reason="Mia asked us to forget it")
    root.erase("m-family-2", reason="Mia asked us to forget it")

    assert holding(folder, needles) == {n: [] for n in needles}
    assert not list((folder / "views").glob("copies.*/*"))  # the old views are gone from disk
    (summary,) = root.summaries(include_stale=True)  # the summary's links stay, content-free
    assert summary.of == (FAMILY_RECORD, "m-family-2") and not summary.text
    assert summary.why_stale == (f"{FAMILY_RECORD} is erased", "m-family-2 is erased")
    for meta in folder.rglob("records/meta.json"):  # no records index keeps the vector
        index = VectorIndex(meta.parent, HashingEncoder()).load(any_encoder=True)
        assert FAMILY_RECORD not in index and "m-family-2" not in index
    # Readers get new views, without the record, and the store still answers.
    assert FAMILY_RECORD not in {r.id for r in root.seen_by("fam").records()}
    assert root.record("d-atlas-region-2").statement


def test_the_rewrite_keeps_everything_else(root: Workbench) -> None:
    """A purge copies the store: the same quads and named graphs, in a database that opens."""
    from tests.conftest import dump

    root.store.update("CREATE GRAPH <urn:wb:graph:empty-on-purpose>")
    before, graphs = dump(root.store), root.store.graph_names()
    root.store.purge()
    assert dump(root.store) == before and root.store.graph_names() == graphs
    path = Path(root.store.location)
    root.store.close()
    with EmbeddedStore(path) as again:
        assert dump(again) == before


def test_a_rewrite_cut_short_is_done_on_the_next_open(root: Workbench) -> None:
    """A crash after the erasure, before the rewrite's swap: the next open rewrites the store."""
    from tests.conftest import dump

    store = root.store
    assert isinstance(store, EmbeddedStore)
    path = store.path
    needle = root.record(FAMILY_RECORD).statement
    real = store.purge
    store.purge = lambda: None  # type: ignore[method-assign]  # as if killed before it ran
    root.erase(FAMILY_RECORD, reason="test")
    store.purge = real  # type: ignore[method-assign]
    assert (path / "purge.json").exists() and holding(path / "oxigraph", [needle])[needle]
    (path / "oxigraph.new").mkdir()  # and a copy it had begun
    after = dump(store)
    store.close()
    with EmbeddedStore(path) as again:
        assert dump(again) == after
        assert not (path / "purge.json").exists() and not (path / "oxigraph.new").exists()
        assert holding(path / "oxigraph", [needle]) == {needle: []}


def test_a_complete_copy_left_by_a_crash_replaces_the_database(root: Workbench) -> None:
    """Killed between the copy and the swap: the copy is complete (no write came after it), so
    the next open puts it in place."""
    from tests.conftest import dump

    store = root.store
    assert isinstance(store, EmbeddedStore)
    before, path = dump(store), store.path
    with store._writing:
        ready = store._copied()
    assert ready.is_dir()
    store.close()
    with EmbeddedStore(path) as again:
        assert dump(again) == before
        assert not ready.exists() and not (path / "oxigraph.purged").exists()


def test_no_purge_while_this_thread_reads_the_store(root: Workbench) -> None:
    """A thread iterating the store cannot wait for its own reads: it is told so, and nothing
    changes (the copy is discarded)."""
    from tests.conftest import dump
    from workbench.errors import Conflict

    store = root.store
    before = dump(store)
    reading = store.quads()
    next(reading)
    with pytest.raises(Conflict, match="reading"):
        store.purge()
    reading.close()
    assert dump(store) == before
    assert not any(p.name.startswith("oxigraph.") for p in Path(store.location).iterdir())
    store.purge()  # and once the read is done, it purges
    assert dump(store) == before


def test_a_remote_store_does_not_purge() -> None:
    """A SPARQL server's files are its operator's to compact: purge() is a no-op there."""
    from workbench.store import RemoteStore

    assert not RemoteStore.capabilities.erases_from_disk
    assert EmbeddedStore.capabilities.erases_from_disk
    RemoteStore.purge(object.__new__(RemoteStore))  # does nothing; needs no server
