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
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if "workbench.extraction.llm" in _imported_modules(p)
    )
    assert importers == ["extraction/run.py"]


# ---------------------------------------------------------------------- the layer order

# Dependencies run one way: a module may import its own layer and the layers before it. The
# package's own __init__ (the public names) stands with the edges.
LAYERS = [
    ("base", {"errors", "vocab", "vocabgen", "ids", "limits", "formats", "progress", "resources", "values"}),
    ("store", {"store", "sparqlcheck", "sparqlbounded"}),
    ("core", {"names", "records", "rules", "imports", "vectors", "access"}),
    ("answers", {"answers", "recall", "guesses"}),
    ("review", {"review", "extraction"}),
    ("service", {"service"}),
    ("presentation", {"presentation", "client"}),
    ("edges", {"cli", "server", "ui", "__init__"}),
]
RANK = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}


def _unit(path: Path) -> str:
    """The part of the package a file belongs to: its subpackage, or its own name at the top."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports_up(path: Path) -> list[str]:
    """Each import in ``path`` of a later layer, as ``line: module (layer -> layer)``. A value's
    ``_repr_html_`` may reach the presentation lazily: nothing else may run up the order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy_html = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "_repr_html_"
                 for n in ast.walk(f)}
    mine = _unit(path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [f"{node.module}.{a.name}" for a in node.names] if node.module == "workbench" else [node.module]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if parts[0] != "workbench" or len(parts) < 2 or parts[1] not in RANK:
                continue
            theirs = parts[1]
            if RANK[theirs] > RANK[mine] and not (theirs == "presentation" and id(node) in lazy_html):
                out.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {module} ({LAYERS[RANK[mine]][0]} -> "
                           f"{LAYERS[RANK[theirs]][0]})")
    return out


def test_every_part_of_the_package_has_a_layer() -> None:
    units = {_unit(p) for p in PACKAGE.rglob("*.py")}
    assert units - set(RANK) == set()


def test_dependencies_run_one_way() -> None:
    """values -> store -> names, records, rules, imports, vectors, access -> answers, recall,
    guesses -> review, extraction -> service -> presentation -> CLI, server, UI."""
    assert [edge for p in sorted(PACKAGE.rglob("*.py")) for edge in _imports_up(p)] == []


def test_at_most_a_dozen_modules_at_the_top() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 12, top
