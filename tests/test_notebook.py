"""Workbench in Jupyter: rich HTML for answers, proof trees, recall bundles, records and review
items (escaped, tiers labelled, guesses apart), tables as pandas, and the example notebook
notebooks/tour.ipynb executed by a real kernel (nbclient), on a temporary store and against a
running `workbench serve`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient

from tests.conftest import ROOT
from tests.test_server import Server
from workbench.presentation import notebook
from workbench.recall.bundles import Bundle, Memory
from workbench.review.queue import Candidate
from workbench.service import Workbench
from workbench.values.answers import Answer, Derived, Finding, Recorded, Statement, Tier
from workbench.values.guesses import Guess
from workbench.values.records import Record, RecordType, Source, Status, Tombstone

TOUR = ROOT / "notebooks" / "tour.ipynb"
EVIL = "<script>alert('x')</script>"


def _source(said_by: str = "me") -> Source:
    return Source("chat-1", said_by, "2026-01-04T09:12:00Z", "chats/1", "I drive a petrol car.")


def _leaf(text: str, record: str = "m-car-1", *, admitted: bool = False) -> Recorded:
    return Recorded(Statement("<urn:wb:entity:a>", "<urn:wb:p>", "<urn:wb:entity:b>", text), record,
                    "common_sense" if admitted else "observation", "active", _source(), admitted=admitted)


def _answer(**changes: Any) -> Answer:
    step = Derived(Statement("<a>", "<p>", "<b>", "my car needs gasoline"), "inherit-kind", 2, "If X is a K...",
                   (("this", "my car"),), (_leaf("my car is a petrol car"),
                                           _leaf("petrol car needs gasoline", "cs-1", admitted=True)))
    top = Derived(Statement("<a>", "<p>", "<c>", "my car needs a fuel station"), "fuel", 1, "If X needs fuel...",
                  (), (step,))
    base: dict[str, Any] = {"kind": "ask", "question": "my car needs gas?", "tier": Tier.DERIVED,
                            "summary": "Yes (derived: gasoline).", "findings": (Finding("<b>", "gasoline", (top,)),)}
    return Answer(**{**base, **changes})


def _record(**changes: Any) -> Record:
    base: dict[str, Any] = {
        "id": "m-car-1", "iri": "urn:wb:record:m-car-1", "statement": "My car is a petrol car.",
        "type": RecordType.OBSERVATION, "status": Status.ACTIVE, "source": _source(), "created_at": "2026-11-30",
        "said_by": "me", "extracted_by": "model:extractor-small", "prompt_version": "facts-v1", "confirmed_by": "me",
        "about": ("urn:wb:entity:my-car",), "superseded_by": ("m-car-2",),
        "triples": (("<urn:wb:entity:my-car>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
                     "<urn:wb:entity:petrol-car>"),)}
    return Record(**{**base, **changes})


def _candidate() -> Candidate:
    return Candidate("c-1", "pending", {"statement": "Ravi moved to Berlin.", "type": "observation",
                                        "source": {"id": "chat-9", "said_by": "me"},
                                        "triples": [["Ravi", "lives in", "Berlin"]]},
                     "Ravi moved to Berlin last week!", "2026-11-02T10:00:00Z", "model:extractor-small",
                     "urn:wb:activity:proposal:1", model="extractor-small", prompt_version="facts-v1")


# ---------------------------------------------------------------------- HTML


def test_each_type_has_a_rich_html_view() -> None:
    bundle = Bundle("where?", "recorded", "1 record", (Memory(_record(), 0.7, "recorded", "shares car"),))
    for value, kind in ((_answer(), "answer"), (bundle, "bundle"), (_record(), "record"), (_candidate(), "candidate")):
        html = value._repr_html_()  # type: ignore[attr-defined]
        assert html.startswith(f'<div class="wb wb-{kind}"') and html.endswith("</div>")


def test_the_proof_tree_is_nested_lists_down_to_sources() -> None:
    html = _answer()._repr_html_()
    assert html.count("<details open>") == 2  # one per derived step
    outer, inner = html.index("my car needs a fuel station"), html.index("my car needs gasoline")
    assert outer < inner < html.index("my car is a petrol car") < html.index("</details></li></ul></details>")
    assert "rule <code>inherit-kind</code> v2" in html and "rule <code>fuel</code> v1" in html
    assert "record <code>m-car-1</code>; said by me, chat-1, chats/1, 2026-01-04T09:12:00Z" in html
    assert "common sense, admitted chat-1" in html  # its source, not a person


def test_every_tier_has_its_label_and_colour() -> None:
    seen = set()
    for tier in Tier:
        label = notebook.tier_label(tier)
        words, colour = notebook.TIERS[tier.value]
        assert f">{words}</span>" in label and f"background:{colour}" in label
        seen.add(colour)
    assert notebook.tier_label("guessed").count("model guess") == 1
    assert notebook.TIERS["recorded"][1] != notebook.TIERS["derived"][1] != notebook.GUESS_COLOUR
    assert "no memory" in notebook.tier_label("no_memory")


def test_guesses_stand_apart_labelled_model_guess() -> None:
    answer = _answer(tier=Tier.GUESSED, summary="No evidence; model guesses follow.", findings=(),
                     guesses=(Guess("<urn:wb:entity:garage>", 0.61, ("urn:wb:entity:my-car",), "garage"),))
    html = answer._repr_html_()
    box = html[html.index('<div class="wb-guesses"'):]
    assert "model guess" in box and "garage" in box and "score 0.61" in box and "like my-car" in box
    assert "garage" not in html[:html.index('<div class="wb-guesses"')]  # never among the findings
    assert "wb-finding" not in html
    bundle = Bundle("my friend who works on chips?", "guessed", "1 record found by similarity alone",
                    (Memory(_record(), 0.85, "guessed", "similar"),))
    memory = bundle._repr_html_()
    assert memory.count("model guess") == 2  # the tier, and the memory itself
    assert 'class="wb-memory" style="border-left:3px dashed' in memory


def test_everything_shown_is_escaped() -> None:
    source = Source(EVIL, EVIL, None, EVIL, EVIL)
    record = _record(statement=EVIL, source=source, triples=((EVIL, "<p>", '"a & b"'),))
    answer = _answer(summary=EVIL, question=EVIL,
                     findings=(Finding(EVIL, EVIL, (_leaf(EVIL),), note=EVIL, details=((EVIL, EVIL),)),),
                     guesses=(Guess(EVIL, 0.5, (EVIL,), EVIL),))
    bundle = Bundle(EVIL, "no_memory", EVIL, suggestions=((EVIL, (EVIL,)),), notes=(EVIL,))
    candidate = Candidate(EVIL, EVIL, {"statement": EVIL, "triples": [[EVIL, EVIL, EVIL]], "source": {"id": EVIL}},
                          EVIL, EVIL, EVIL, EVIL)
    for value in (record, answer, bundle, candidate):
        html = value._repr_html_()  # type: ignore[attr-defined]
        assert "<script>" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "&quot;a &amp; b&quot;" in record._repr_html_()


def test_records_and_candidates_show_provenance() -> None:
    html = _record()._repr_html_()
    for shown in ("m-car-1", "chat-1", "said by", "chats/1", "I drive a petrol car.", "model:extractor-small",
                  "facts-v1", "confirmed by", "superseded by", "m-car-2", "<code>my-car</code>", "rdf:type"):
        assert shown in html
    cand = _candidate()._repr_html_()
    assert "candidate: pending" in cand and "not a fact until a curator approves it" in cand
    assert "Ravi moved to Berlin last week!" in cand and "<td" in cand and "extractor-small" in cand


def test_short_names_for_terms() -> None:
    assert notebook.short("<urn:wb:entity:my%20car>") == "my car"
    assert notebook.short("<https://w3id.org/workbench/ns#needs>") == "wb:needs"
    assert notebook.short('"data region: EU"') == '"data region: EU"'


# ---------------------------------------------------------------------- tables


def test_tables_convert_to_pandas() -> None:
    records = notebook.frame([_record(), _record(id="m-car-2", status=Status.SUPERSEDED)])
    assert list(records["id"]) == ["m-car-1", "m-car-2"] and list(records["status"]) == ["active", "superseded"]
    assert records.loc[0, "source"] == "chat-1" and records.loc[0, "about"] == "my-car"
    bundle = Bundle("q", "recorded", "s", (Memory(_record(), 0.7, "recorded", "w"),))
    assert notebook.frame(bundle).loc[0, "score"] == 0.7
    assert notebook.frame([_candidate()]).loc[0, "span"] == "Ravi moved to Berlin last week!"
    mixed = notebook.frame([_record(), Tombstone("urn:wb:record:x", "assertion", "root", "2026", "asked")])
    assert list(mixed.columns[:3]) == ["id", "type", "status"] and mixed.loc[1, "reason"] == "asked"
    assert notebook.frame([]).empty
    with pytest.raises(TypeError, match="cannot make a table row of int"):
        notebook.frame([1])


def test_tables_without_pandas_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[notebook\]'"):
        notebook.frame([_record()])


# ---------------------------------------------------------------------- the example notebook


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A python3 kernelspec for this interpreter, found first: a fresh machine needs no manual
    ``ipykernel install``. The kernel imports this checkout's workbench."""
    write_kernel_spec(tmp_path / "jupyter" / "kernels" / "python3")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("WORKBENCH_URL", raising=False)
    return "python3"


def _run(kernel: str) -> nbformat.NotebookNode:
    nb = nbformat.read(TOUR, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name=kernel, resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb


def _html(nb: nbformat.NotebookNode) -> list[str]:
    return [out["data"]["text/html"] for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if "text/html" in out.get("data", {})]


def _check(nb: nbformat.NotebookNode) -> None:
    html = "\n".join(_html(nb))
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    answer = next(h for h in _html(nb) if 'class="wb wb-answer"' in h and "gasoline" in h)
    assert "<details open><summary>my car needs gasoline" in answer and "rule <code>inherit-kind</code>" in answer
    assert "record <code>m-car-1</code>; said by me" in answer and "common sense, admitted" in answer
    assert "count: <b>at least 3</b>" in html
    assert 'class="wb wb-bundle"' in html and "m-advisor-2" in html and "model guess" in html
    assert 'class="dataframe"' in html and "d-atlas-region-1" in html and "superseded" in html
    assert 'class="wb wb-record"' in html and "issue-ATL-142" in html


def test_the_saved_notebook_has_no_outputs() -> None:
    nb = nbformat.read(TOUR, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


def test_the_tour_runs_on_a_temporary_store(kernel: str) -> None:
    nb = _run(kernel)
    _check(nb)
    assert any('class="wb wb-candidate"' in h and "Ravi moved to Berlin" in h for h in _html(nb))


@pytest.fixture
def sample_server(tmp_path: Path) -> Iterator[Server]:
    path = tmp_path / "store"
    with Workbench.open(path, create=True, user="tester") as wb:
        wb.init(sample=True)
    server = Server(path)
    yield server
    server.stop()


def test_the_tour_runs_against_a_server(kernel: str, sample_server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_URL", f"http://127.0.0.1:{sample_server.port}")
    nb = _run(kernel)
    _check(nb)
    assert "connected to http://127.0.0.1" in "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
