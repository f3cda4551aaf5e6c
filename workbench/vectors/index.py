"""A FAISS index of texts keyed by string ids, persisted in a directory beside the store.

Exact inner-product search (``IndexFlatIP``) up to ``exact_limit`` vectors; above it an
inverted-file index (``IndexIVFFlat``, 128 of 4·√n lists probed), chosen over HNSW because it
supports removal (an erased record's vector must go) and builds in half HNSW's time; its recall
against exact search (0.93 at 1M) is measured by ``workbench bench recall``. Vectors are unit
length, so inner product is cosine. Searches run on one thread: a single query gains nothing
from more, and on two busy cores FAISS's threads made exact search 4-7x slower (measured).

Files: ``index.faiss``, ``ids.json`` (string id -> FAISS id) and ``meta.json`` (encoder, sizes
of the other two, the store fingerprint it was built at), each written to a temporary file and
renamed, meta last: a crash leaves the previous index or a detectably inconsistent one, which
is rebuilt.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from workbench.errors import Invalid
from workbench.progress import Progress
from workbench.store.files import replace_synced, write_atomically
from workbench.vectors.encoders import Encoder

FORMAT = 1
EXACT_LIMIT = 200_000
NPROBE = 128  # recall@10 against exact: 0.93 at 1M (32 gave 0.80), about 3 ms a query
BUILD_THREADS = os.cpu_count() or 1
faiss.omp_set_num_threads(1)
BATCH = 512


class IndexCorrupt(Invalid):
    """The files on disk do not make an index (truncated, edited, half written)."""


class EncoderMismatch(Invalid):
    """The index was built with another encoder than the one asked for."""


class VectorIndex:
    """Texts under string ids, searchable by similarity. Not thread-safe; one writer."""

    def __init__(self, directory: Path, encoder: Encoder, *, exact_limit: int = EXACT_LIMIT) -> None:
        self.directory = Path(directory)
        self.encoder = encoder
        self.exact_limit = exact_limit
        self.fingerprint: str = ""
        self._built_with: str | None = None  # the encoder named on disk, kept when loaded with any_encoder
        self._built_spec: str | None = None
        self._ids: dict[str, int] = {}
        self._back: dict[int, str] = {}
        self._next = 0
        self._index: Any = faiss.IndexIDMap2(faiss.IndexFlatIP(encoder.dim))
        self.nprobe = NPROBE

    # ------------------------------------------------------------------ persistence

    @property
    def exists(self) -> bool:
        return (self.directory / "meta.json").is_file()

    def meta(self) -> dict[str, Any]:
        try:
            meta = json.loads((self.directory / "meta.json").read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexCorrupt(f"the index at {self.directory} is unreadable: {exc}") from None
        if not isinstance(meta, dict):
            raise IndexCorrupt(f"the index at {self.directory} is unreadable: meta.json is not a JSON object")
        return meta

    def load(self, *, any_encoder: bool = False) -> VectorIndex:
        """Read the index from disk. Raises EncoderMismatch (unless ``any_encoder``: enough to
        remove vectors), IndexCorrupt."""
        meta = self.meta()
        if meta.get("encoder") != self.encoder.name and not any_encoder:
            raise EncoderMismatch(
                f"the index at {self.directory} was built with the encoder {meta.get('encoder')!r}, not "
                f"{self.encoder.name!r}; use that encoder, or rebuild with `workbench index rebuild --encoder ...`"
            )
        files = {name: self.directory / name for name in ("index.faiss", "ids.json")}
        try:
            sizes = {name: f.stat().st_size for name, f in files.items()}
        except OSError as exc:
            raise IndexCorrupt(f"the index at {self.directory} is missing a file: {exc}") from None
        if meta.get("format") != FORMAT or sizes != meta.get("sizes"):
            raise IndexCorrupt(f"the index files at {self.directory} do not match their metadata")
        try:
            index = faiss.read_index(str(files["index.faiss"]))
            ids = json.loads(files["ids.json"].read_text("utf-8"))
            known, after = dict(ids["ids"]), int(ids["next"])
        except (RuntimeError, ValueError, OSError, TypeError, KeyError) as exc:
            raise IndexCorrupt(f"the index at {self.directory} is corrupt: {exc}") from None
        fids = set(known.values())
        if not all(isinstance(f, int) and 0 <= f < after for f in fids) or len(fids) != len(known) or (
            hasattr(index, "id_map") and set(faiss.vector_to_array(index.id_map).tolist()) != fids
        ):
            raise IndexCorrupt(f"the ids of the index at {self.directory} do not match its vectors")
        if (index.d != self.encoder.dim and not any_encoder) or index.ntotal != len(known):
            raise IndexCorrupt(f"the index at {self.directory} holds {index.ntotal} vectors for {len(known)} ids")
        self._index, self._ids, self._next = index, known, after
        self._back = {f: i for i, f in self._ids.items()}
        self.fingerprint = str(meta.get("fingerprint", ""))
        self._built_with = str(meta.get("encoder"))
        self._built_spec = str(meta.get("spec", ""))
        return self

    def save(self, fingerprint: str | None = None) -> None:
        if fingerprint is not None:
            self.fingerprint = fingerprint
        self.directory.mkdir(parents=True, exist_ok=True)
        # Written by FAISS straight to a temporary file: serialising to bytes first held two more
        # copies of the index in memory (2.9 GiB at 1M vectors).
        tmp = self.directory / "index.faiss.tmp"
        faiss.write_index(self._index, str(tmp))
        replace_synced(tmp, self.directory / "index.faiss")
        index_size = (self.directory / "index.faiss").stat().st_size
        ids_bytes = json.dumps({"ids": self._ids, "next": self._next}).encode()
        write_atomically(self.directory / "ids.json", ids_bytes)
        meta = {
            "format": FORMAT,
            "encoder": self._built_with or self.encoder.name,
            "spec": self._built_spec or self.encoder.spec,
            "dim": int(self._index.d),  # not the encoder's: removal loads an index with any encoder
            "kind": self.kind,
            "count": len(self),
            "fingerprint": self.fingerprint,
            "sizes": {"index.faiss": index_size, "ids.json": len(ids_bytes)},
        }
        write_atomically(self.directory / "meta.json", json.dumps(meta, indent=1).encode())

    # ------------------------------------------------------------------ contents

    @property
    def kind(self) -> str:
        return "ivf" if isinstance(self._index, faiss.IndexIVF) else "exact"

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._ids

    def ids(self) -> set[str]:
        return set(self._ids)

    def add(self, items: Mapping[str, str], *, progress: Progress | None = None) -> None:
        """Embed and add texts; an id already present is replaced."""
        self.remove([i for i in items if i in self._ids])
        keys = list(items)
        for start in range(0, len(keys), BATCH):
            chunk = keys[start : start + BATCH]
            vectors = self.encoder.encode([items[k] for k in chunk])
            self.add_vectors(chunk, vectors)
            if progress:
                progress(len(chunk))
        self._maybe_grow()

    def add_vectors(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        fids = np.arange(self._next, self._next + len(keys), dtype=np.int64)
        self._next += len(keys)
        for key, fid in zip(keys, fids.tolist(), strict=True):
            self._ids[key] = fid
            self._back[fid] = key
        self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), fids)

    def remove(self, item_ids: Iterable[str]) -> int:
        fids = [self._ids.pop(i) for i in item_ids if i in self._ids]
        for f in fids:
            del self._back[f]
        if fids:
            self._index.remove_ids(np.array(fids, dtype=np.int64))
        return len(fids)

    def _maybe_grow(self) -> None:
        """Switch to an inverted-file index once past the exact limit."""
        if self.kind == "exact" and len(self) > self.exact_limit:
            self.rebuild_ivf()

    def rebuild_ivf(self) -> None:
        """Move the vectors into an inverted-file index. The flat index is let go as soon as its
        vectors are copied out, so the peak holds the vectors about twice, not four times."""
        inner = faiss.downcast_index(self._index.index)
        vectors = inner.reconstruct_n(0, inner.ntotal)
        fids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        dim = self._index.d
        self._index = None
        del inner
        nlist = max(1, int(4 * math.sqrt(len(fids))))
        quantizer = faiss.IndexFlatIP(dim)
        ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        rng = np.random.default_rng(0)  # k-means on a fixed sample: the same data gives the same index
        sample = vectors[rng.choice(len(vectors), size=min(len(vectors), nlist * 64), replace=False)]
        ivf.cp.seed = 0
        faiss.omp_set_num_threads(BUILD_THREADS)  # training and adding do use the cores
        try:
            ivf.train(sample)
            del sample
            for start in range(0, len(fids), 100_000):
                ivf.add_with_ids(vectors[start : start + 100_000], fids[start : start + 100_000])
        finally:
            faiss.omp_set_num_threads(1)
        self._index = ivf

    # ------------------------------------------------------------------ search

    def search(
        self, vector: np.ndarray, k: int, *, within: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest items to a unit ``vector`` (best first), optionally only among ``within``."""
        if not len(self) or k <= 0:
            return []
        sel = None
        if within is not None:
            fids = np.array([self._ids[i] for i in within if i in self._ids], dtype=np.int64)
            if not len(fids):
                return []
            sel = faiss.IDSelectorBatch(fids)
            k = min(k, len(fids))
        # Passed as a dict: faiss's type stubs do not list these keyword arguments.
        options: dict[str, Any] = {"sel": sel} if sel is not None else {}
        params: Any
        if self.kind == "ivf":
            params = faiss.SearchParametersIVF(**{**options, "nprobe": self.nprobe})
        else:
            params = faiss.SearchParameters(**options) if options else None
        k = min(k, len(self))
        scores, found = self._index.search(vector.reshape(1, -1).astype(np.float32), k, params=params)
        return [(self._back[int(f)], float(s)) for s, f in zip(scores[0], found[0], strict=True) if f >= 0]
