"""The shape of the code: generated vocabulary in step with the ontology, core free of UI and HTTP."""

from __future__ import annotations

import ast
from pathlib import Path

import pyoxigraph as ox
import pytest

from workbench import vocab, vocabgen

PACKAGE = Path(__file__).resolve().parent.parent / "workbench"
# Thin layers over the service; everything else is core.
EDGES = {"cli", "server", "ui"}
FORBIDDEN = {"click", "typer", "starlette", "fastapi", "uvicorn", "streamlit", "tqdm", "httpx", "requests"}


def test_vocab_module_is_generated_from_the_ontology() -> None:
    assert (PACKAGE / "vocab.py").read_text(encoding="utf-8") == vocabgen.render(), (
        "workbench/vocab.py is stale: run python -m workbench.vocabgen"
    )


def test_vocabulary_is_closed() -> None:
    with pytest.raises(AttributeError):
        vocab.WB.usedfor  # noqa: B018  (a typo must fail)


def test_every_wb_term_is_documented() -> None:
    labels: dict[str, set[str]] = {}
    for path in (PACKAGE.parent / "ontology").glob("*.ttl"):
        for q in ox.parse(path=str(path), format=ox.RdfFormat.TURTLE):
            if q.subject.value.startswith(vocab.WB_NS):  # type: ignore[union-attr]
                labels.setdefault(q.subject.value, set()).add(q.predicate.value)  # type: ignore[union-attr]
    label, comment = "http://www.w3.org/2000/01/rdf-schema#label", "http://www.w3.org/2000/01/rdf-schema#comment"
    undocumented = sorted(t for t, preds in labels.items() if not {label, comment} <= preds)
    assert undocumented == []


def _core_modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in EDGES]


def test_core_imports_no_ui_or_http_framework() -> None:
    offenders = []
    for path in _core_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(PACKAGE)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_only_the_store_package_knows_the_backends() -> None:
    offenders = []
    for path in _core_modules():
        if path.relative_to(PACKAGE).parts[0] == "store":
            continue
        text = path.read_text(encoding="utf-8")
        if "EmbeddedStore" in text or "RemoteStore" in text:
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def test_modules_stay_small() -> None:
    sizes = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")
    }
    assert {k: v for k, v in sizes.items() if v > 500 and k != "vocab.py"} == {}


def _imported_modules(path: Path) -> set[str]:
    """Every module a file imports, relative imports resolved, ``from a import b`` as ``a.b`` too."""
    package = ".".join(("workbench", *path.relative_to(PACKAGE).parent.parts))
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


def test_only_extraction_imports_the_model_client() -> None:
    """No model call at answer time: the LLM client is reachable only through extraction."""
    importers = sorted(
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if "workbench.review.llm" in _imported_modules(p)
    )
    assert importers == ["review/extract.py"]
