"""A newcomer's store shows the curation flow: `workbench init --sample` and `workbench up` on a
new store also queue the sample's proposals (workbench/service/sample.py, data/proposals.jsonl and
data/proposed-rule.ttl): three candidate facts from a stand-in model, each with the problem a
curator must see, and one rule version by that model that the first admin may sign off. The
Python calls leave them out unless asked (``proposals=True``), so every other test's sample is as
it was; and loading again changes nothing."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import dump
from tests.test_server import Server
from tests.ui_server import UiServer
from tests.uitest import errors, page, texts
from workbench.cli import main
from workbench.cli import up as up_module
from workbench.errors import Forbidden
from workbench.ids import RULES_GRAPH
from workbench.resources import DATA_DIR
from workbench.service import Workbench, sample
from workbench.values.answers import Tier
from workbench.vocab import PREFIXES

HUSBAND, WEDDING, CAR = "c-sample-husband", "c-sample-wedding", "c-sample-car"
RULE = "friends-both-ways"


def cli(store: Path, *args: str, user: str = "ada", code: int = 0) -> Result:
    result = CliRunner().invoke(main, ["--store", str(store), "--as", user, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output + result.stderr
    return result


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A new store made as a newcomer makes it: `workbench init --sample`."""
    path = tmp_path / "memory"
    out = cli(path, "init", "--sample").output
    assert "memories.jsonl: 20 records added" in out
    assert ("sample proposals: 3 candidate facts wait for a curator (workbench candidates list), 1 rule "
            "version(s) for a reviewer (workbench rules list)") in out
    return path


@pytest.fixture
def wb(store: Path) -> Iterator[Workbench]:
    with Workbench.open(store, user="ada") as opened:
        yield opened


# ---------------------------------------------------------------------- the candidate facts


def test_the_queue_holds_the_sample_proposals_labelled_as_a_sample_models(wb: Workbench) -> None:
    found = wb.candidates()
    assert sorted(c.id for c in found) == [CAR, HUSBAND, WEDDING]
    for c in found:
        assert (c.status, c.model, c.prompt_version, c.proposed_by) == (
            "pending", "sample-extractor", "sample-v1", "model:sample-extractor")
        assert c.span and c.span in c.record["source"]["text"]  # taken from the words said
    # The proposal activity in PROV-O: an extraction by the stand-in model, from the sample's file.
    rows = wb.store.select(PREFIXES + """SELECT ?kind ?used ?digest WHERE { GRAPH ?c {
        ?c prov:wasGeneratedBy ?act . ?act wb:proposalKind ?kind ; prov:used ?used ; wb:recordDigest ?digest ;
        wb:extractedBy <urn:wb:agent:model:sample-extractor> ; wb:promptVersion "sample-v1" } }""")
    assert {(r["kind"].value, r["used"].value) for r in rows} == {("extraction", "sample: proposals.jsonl")}
    # Nothing in the queue is a fact: the sample's records are as they were.
    assert wb.stats()["records"] == 21
    assert wb.count("wedding", about="me", year="2026").count == 3


def test_each_candidate_shows_the_problem_it_is_there_for(wb: Workbench) -> None:
    husband = wb.check_candidate(HUSBAND)
    assert husband.valid and husband.unbound == ["my sister's husband"]
    assert (husband.duplicates, husband.conflicts) == ((), ())
    wedding = wb.check_candidate(WEDDING)
    assert wedding.valid and wedding.duplicates == ("m-wedding-1",)
    assert (wedding.unbound, wedding.conflicts) == ([], ())
    car = wb.check_candidate(CAR)
    assert car.valid and (car.unbound, car.duplicates) == ([], ())
    assert car.names == {"my car": ("urn:wb:entity:my-car",), "petrol car": ("urn:wb:entity:petrol-car",)}


def test_the_car_candidate_conflicts_with_the_recorded_car(wb: Workbench) -> None:
    assert wb.check_candidate(CAR).conflicts == ("record m-car-1 says my car is a petrol car",)


def test_candidates_show_says_each_problem(store: Path) -> None:
    assert "'my sister's husband': binds nothing" in cli(store, "candidates", "show", HUSBAND).output.replace(
        '"', "'")
    assert "duplicate of record m-wedding-1" in cli(store, "candidates", "show", WEDDING).output
    shown = json.loads(cli(store, "candidates", "show", CAR, "--json").output)
    assert shown["checks"]["valid"] and shown["checks"]["unbound"] == []


def test_a_curator_works_through_them(store: Path) -> None:
    cli(store, "users", "add", "ada", "--role", "admin")
    refused = cli(store, "review", "approve", HUSBAND, code=1)
    assert "'my sister's husband' binds no entity" in refused.stderr.replace('"', "'")
    cli(store, "review", "approve", HUSBAND, "--create", "my sister's husband")
    cli(store, "review", "merge", "m-wedding-1", WEDDING)
    cli(store, "review", "reject", CAR, "--reason", "the model took 'it' for my car: it was Sparky")
    with Workbench.open(store, user="ada") as wb:
        record = wb.record(HUSBAND)
        assert record.confirmed_by == "ada" and record.extracted_by == "model:sample-extractor"
        assert wb.candidates() == [] and wb.count("wedding", about="me", year="2026").count == 3
        before = dump(wb.store)
    cli(store, "init", "--sample")  # the decisions stand: nothing is queued again
    with Workbench.open(store, user="ada") as wb:
        assert dump(wb.store) == before


# ---------------------------------------------------------------------- the rule version


def test_the_rule_version_waits_for_a_reviewer_other_than_its_author(store: Path) -> None:
    with Workbench.open(store, user="ada") as wb:
        [v] = wb.rule_versions()
        assert (v.id, v.version, v.status, v.author, v.proposed.who) == (
            RULE, 1, "proposed", "model:sample-extractor", "model:sample-extractor")
        rows = wb.store.select(PREFIXES + f"""SELECT ?used WHERE {{ GRAPH {RULES_GRAPH} {{ <{v.iri}>
            prov:wasGeneratedBy ?act . ?act a wb:RuleProposal ; prov:used ?used ;
            wb:extractedBy <urn:wb:agent:model:sample-extractor> ; wb:promptVersion "sample-v1" }} }}""")
        assert [r["used"].value for r in rows] == ["sample: proposed-rule.ttl"]
        label, cases = wb.run_rule_tests(RULE)
        assert label == f"{RULE} v1" and cases and all(c.passed for c in cases)
        assert [a.text for a in wb.dry_run_rule(RULE).added] == ["me friend of Ravi"]
        # Proposed versions never answer; there is no reviewer yet.
        assert wb.ask("me", "friend of").tier is Tier.NO_EVIDENCE
        with pytest.raises(Forbidden):
            wb.signoff_rule(RULE, comment="no users yet")
    cli(store, "users", "add", "ada", "--role", "admin")  # the first admin, as `workbench up` adds them
    out = cli(store, "rules", "signoff", RULE, "--comment", "friendship goes both ways; tests and dry run").output
    assert f"{RULE} v1 [active]" in out and "signed off by ada" in out
    with Workbench.open(store, user="ada") as wb:
        answer = wb.ask("me", "friend of")
        assert answer.tier is Tier.DERIVED and [f.label for f in answer.findings] == ["Ravi"]


# ---------------------------------------------------------------------- loading again, and leaving them out


def test_loading_again_changes_nothing(store: Path) -> None:
    with Workbench.open(store, user="ada") as wb:
        before = dump(wb.store)
    out = cli(store, "init", "--sample").output
    assert "0 records added" in out and "3 candidate facts wait" in out
    with Workbench.open(store, user="ada") as wb:
        wb.load_sample(proposals=True)
        assert sample.propose(wb, DATA_DIR) == ([], False)
        assert dump(wb.store) == before


def test_the_python_calls_leave_the_proposals_out_unless_asked(tmp_path: Path) -> None:
    with Workbench.open(tmp_path / "a", create=True, user="ada") as wb:
        wb.init(sample=True)
        assert wb.candidates(status=None) == [] and wb.rule_versions() == []
        wb.load_sample()
        assert wb.candidates(status=None) == [] and wb.rule_versions() == []
        wb.load_sample(proposals=True)  # asked for: the same as `init --sample`
        assert len(wb.candidates()) == 3 and [v.id for v in wb.rule_versions()] == [RULE]
    with Workbench.open(tmp_path / "b", create=True, user="ada") as wb:
        assert len(wb.init(sample=True, proposals=True)) == 2  # the import reports, as before
        assert sample.waiting(wb) == (3, 1)
    out = cli(tmp_path / "c", "init", "--sample", "--no-proposals").output
    assert "sample proposals" not in out
    with Workbench.open(tmp_path / "c", user="ada") as wb:
        assert wb.candidates(status=None) == [] and wb.rule_versions() == []


# ---------------------------------------------------------------------- `workbench up`


def _prepare(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], bytes]:
    """What `workbench --as ada up` does to the store before serving it."""
    with Workbench.open(path, create=True, user="ada") as wb:
        up_module._prepare(wb, "http://127.0.0.1:8501")
        return capsys.readouterr().out.splitlines(), dump(wb.store)


def test_up_on_a_new_store_queues_them_and_on_an_existing_store_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, first = _prepare(tmp_path / "store", capsys)
    assert out[0] == (f"created a store at {tmp_path / 'store'} with the sample data (2 files) and its proposals: "
                      "3 candidate facts in the review queue, 1 rule version(s) to sign off")
    assert out[1] == "added ada as the store's first admin; their token, shown only now:"
    with Workbench.open(tmp_path / "store", user="ada") as wb:
        assert sample.waiting(wb) == (3, 1)
        assert wb.signoff_rule(RULE, comment="checked").status == "active"  # the first admin may
        signed = dump(wb.store)
    again, second = _prepare(tmp_path / "store", capsys)
    assert not any("created" in line for line in again) and second == signed != first


# ---------------------------------------------------------------------- the browser workbench


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    """A real `workbench serve` over a store made as `workbench --as ada up` makes it, and ada's token."""
    path = tmp_path_factory.mktemp("newcomer") / "store"
    printed = io.StringIO()
    with Workbench.open(path, create=True, user="ada") as wb, contextlib.redirect_stdout(printed):
        up_module._prepare(wb, "http://127.0.0.1:8501")
    token = next(m.group(1) for line in printed.getvalue().splitlines() if (m := re.match(r"^  (wb_[\w-]+)$", line)))
    ui = UiServer(Server(path), path, {"ada": token})
    yield ui
    ui.stop()


def test_the_review_page_of_a_newcomer_shows_the_proposals(newcomer: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(newcomer, "review", "ada", monkeypatch)
    assert errors(at) == []
    said = texts(at)
    assert "Nothing to review here." not in said and "3 candidate(s) pending" in said
    assert "proposed by model sample-extractor (sample-v1)" in said
    assert at.session_state["review.current"] in (CAR, HUSBAND, WEDDING)


def test_the_signoff_page_of_a_newcomer_lets_the_first_admin_sign_off(
    newcomer: UiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(newcomer, "signoff", "ada", monkeypatch)
    assert errors(at) == []
    said = texts(at)
    assert "No rule version waits for sign-off." not in said and f"{RULE} v1" in said
    assert "me friend of Ravi" in said  # its dry run on this store
    [button] = [b for b in at.button if b.label == "Sign off"]
    assert not button.disabled


def test_the_overview_of_a_newcomer_counts_work_waiting(newcomer: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(newcomer, "overview", "ada", monkeypatch)
    assert errors(at) == []
    assert "Nothing has been proposed yet." not in texts(at)
    assert [m.value for m in at.metric if m.label == "Waiting for a curator"] == ["3"]
