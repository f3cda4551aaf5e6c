"""Users and the candidate queue: models and pipelines propose, curators decide, everything is
attributed, and nothing reaches the fact store without a person."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXED_NOW, dump
from workbench.access import users
from workbench.access.users import Role
from workbench.cli import main
from workbench.errors import Conflict, Forbidden, Invalid, NotFound
from workbench.review.queue import Proposal
from workbench.service import Workbench


def cand(cid: str, statement: str, about: list[str], triples: list[list[Any]] | None = None, **more: Any) -> dict[str, Any]:
    return {"id": cid, "statement": statement, "type": "observation", "about": about,
            "source": {"id": f"chat-{cid}", "said_by": "me"}, **({"triples": triples} if triples else {}), **more}


def jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def as_user(wb: Workbench, name: str) -> Workbench:
    return Workbench(wb.store, user=name, clock=lambda: FIXED_NOW)


@pytest.fixture
def team(sample: Workbench) -> Workbench:
    """The sample store with an admin (root), a curator (cora), a reviewer (rex) and a viewer (vic)."""
    root = as_user(sample, "root")
    root.add_user("root", ["admin"])
    root.add_user("cora", ["curator"])
    root.add_user("rex", ["reviewer"])
    root.add_user("vic", ["viewer"])
    return sample


# ---------------------------------------------------------------------- users


def test_the_first_user_must_be_an_admin_and_then_only_admins_add(sample: Workbench) -> None:
    with pytest.raises(Forbidden, match="first user"):
        as_user(sample, "cora").add_user("cora", ["curator"])
    token = as_user(sample, "root").add_user("root", ["admin"])
    assert token.startswith("wb_") and len(token) > 30
    with pytest.raises(Forbidden, match="admin"):
        as_user(sample, "nobody").add_user("eve", ["admin"])
    with pytest.raises(Conflict):
        as_user(sample, "root").add_user("root", ["viewer"])
    with pytest.raises(Invalid):
        as_user(sample, "root").add_user("x", [])


def test_tokens_are_kept_only_as_hashes(sample: Workbench) -> None:
    root = as_user(sample, "root")
    token = root.add_user("root", ["admin"])
    cora_token = root.add_user("cora", ["curator"])
    assert token.encode() not in dump(sample.store) and cora_token.encode() not in dump(sample.store)
    assert users.by_token(sample.store, cora_token).name == "cora"
    with pytest.raises(Forbidden):
        users.by_token(sample.store, cora_token + "x")


# ---------------------------------------------------------------------- the queue


def test_candidates_are_queued_apart_and_never_answer(team: Workbench, tmp_path: Path) -> None:
    cora = as_user(team, "cora")
    before = {
        "records": [r.id for r in team.records()],
        "ask": team.ask("Ravi", "located in").to_json(),
        "recall": team.recall("Where is Ravi?").to_json(),
    }
    path = jsonl(tmp_path / "c.jsonl", [cand("c-ravi", "Ravi lives in Paris.", ["Ravi"], [["Ravi", "located in", "Paris"]],
                                              span="Ravi lives in Paris now")])
    assert cora.import_candidates(path) == ["c-ravi"]
    assert [r.id for r in team.records()] == before["records"]
    assert team.ask("Ravi", "located in").to_json() == before["ask"]
    assert team.recall("Where is Ravi?").to_json() == before["recall"]
    (c,) = team.candidates()
    assert (c.id, c.status, c.span, c.proposed_by) == ("c-ravi", "pending", "Ravi lives in Paris now", "cora")
    assert cora.import_candidates(path) == []  # the same again: nothing new
    jsonl(path, [cand("c-ravi", "Ravi lives in Rome.", ["Ravi"])])
    with pytest.raises(Conflict):
        cora.import_candidates(path)


def test_a_bad_candidate_file_queues_nothing(team: Workbench, tmp_path: Path) -> None:
    before = dump(team.store)
    bad = jsonl(tmp_path / "bad.jsonl", [cand("c-1", "fine", ["Ravi"]), "{not json", cand("c-3", "x", ["Ravi"])])
    with pytest.raises(Invalid, match=r"bad.jsonl:2"):
        team.import_candidates(bad)
    wrong = jsonl(tmp_path / "wrong.jsonl", [cand("c-1", "fine", ["Ravi"]), {**cand("c-2", "x", ["Ravi"]), "type": "gossip"}])
    with pytest.raises(Invalid, match=r"wrong.jsonl:2"):
        team.import_candidates(wrong)
    with pytest.raises(Invalid, match="span"):
        team.import_candidates(jsonl(tmp_path / "s.jsonl", [{**cand("c-4", "x", ["Ravi"]), "span": ""}]))
    assert dump(team.store) == before


def test_approval_makes_an_attributed_record(team: Workbench) -> None:
    cora = as_user(team, "cora")
    via = Proposal("extraction", "chat.txt", model="tiny-llm", prompt_version="facts-v1", input_digest="abc")
    cora.propose([cand("c-ravi", "Ravi lives in Paris.", ["Ravi"], [["Ravi", "located in", "Paris"]], span="in Paris")],
                 via)
    (c,) = team.candidates()
    assert (c.model, c.prompt_version, c.proposed_by) == ("tiny-llm", "facts-v1", "model:tiny-llm")
    assert cora.approve(["c-ravi"]) == ["c-ravi"]
    rec = team.record("c-ravi")
    assert rec.confirmed_by == "cora" and rec.source.id == "chat-c-ravi"
    assert rec.extracted_by == "model:tiny-llm" and rec.prompt_version == "facts-v1"
    assert team.ask("Ravi", "located in").values == ["Paris"]
    c = team.candidate("c-ravi")
    assert (c.status, c.decided_by, c.approved_as) == ("approved", "cora", "c-ravi")
    audit = json.loads(team.sparql(
        "PREFIX wb: <https://w3id.org/workbench/ns#> PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT ?who WHERE { GRAPH ?g { ?a a wb:Approval ; prov:wasAssociatedWith ?who ; prov:used ?c } "
        "GRAPH ?m { <urn:wb:record:c-ravi> wb:fromCandidate ?c } }"))
    assert [b["who"]["value"] for b in audit["results"]["bindings"]] == ["urn:wb:agent:cora"]
    with pytest.raises(Conflict, match="already approved by cora"):
        cora.approve(["c-ravi"])


def test_only_curators_decide(team: Workbench) -> None:
    as_user(team, "cora").propose([cand("c-1", "Ravi likes tea.", ["Ravi"])], Proposal("import", "x"))
    before = dump(team.store)
    for who in ("rex", "vic", "stranger"):
        with pytest.raises(Forbidden, match="curator"):
            as_user(team, who).approve(["c-1"])
        with pytest.raises(Forbidden):
            as_user(team, who).reject(["c-1"], reason="no")
    assert dump(team.store) == before
    as_user(team, "root").approve(["c-1"])  # an admin may do what a curator may


def test_names_that_bind_nothing_need_an_explicit_entity(team: Workbench) -> None:
    cora = as_user(team, "cora")
    cora.propose([cand("c-1", "Ravi visited Berlin.", ["Ravi", "Berlin"])], Proposal("import", "x"))
    assert team.check_candidate("c-1").unbound == ["Berlin"]
    before = dump(team.store)
    with pytest.raises(Invalid, match="'Berlin' binds no entity"):
        cora.approve(["c-1"])
    assert dump(team.store) == before
    # a look-alike never binds: "Paris Hilton" is not a way to reach Paris
    cora.add_alias("Paris", "Paree")
    cora.approve(["c-1"], create=["Berlin"])
    assert team.resolve("Berlin").outcome == "bound"


def test_edit_then_approve_and_reject_with_reason(team: Workbench) -> None:
    cora = as_user(team, "cora")
    cora.propose([cand("c-1", "Ravi lives in Pariss.", ["Ravi"]), cand("c-2", "Spam.", ["Ravi"])], Proposal("import", "x"))
    edited = {**team.candidate("c-1").record, "statement": "Ravi lives in Paris.",
              "triples": [["Ravi", "located in", "Paris"]]}
    cora.approve(["c-1"], edits={"c-1": edited})
    assert team.record("c-1").statement == "Ravi lives in Paris."
    with pytest.raises(Invalid):
        cora.reject(["c-2"], reason="  ")
    cora.reject(["c-2"], reason="not a fact")
    c = team.candidate("c-2")
    assert (c.status, c.reason, c.decided_by) == ("rejected", "not a fact", "cora")
    with pytest.raises(NotFound):
        team.record("c-2")


def test_checks_show_duplicates_and_conflicts(team: Workbench, tmp_path: Path) -> None:
    team.import_files([jsonl(tmp_path / "neg.jsonl", [cand("m-no", "Ravi does not own Sparky.", ["Ravi"],
                                                            [["Ravi", "not owns", "Sparky"]])])])
    cora = as_user(team, "cora")
    cora.propose([cand("c-dup", "Paris is a city in France.", ["Paris"]),
                  cand("c-own", "Ravi owns Sparky.", ["Ravi"], [["Ravi", "owns", "Sparky"]])], Proposal("import", "x"))
    assert team.check_candidate("c-dup").duplicates == ("m-paris-1",)
    (conflict,) = team.check_candidate("c-own").conflicts
    assert "m-no" in conflict


def test_merge_duplicates(team: Workbench) -> None:
    cora = as_user(team, "cora")
    cora.propose([cand("c-1", "Ravi likes tea.", ["Ravi"]), cand("c-2", "Ravi likes tea!", ["Ravi"])],
                 Proposal("import", "x"))
    cora.merge_candidates("c-1", ["c-2"])
    c2 = team.candidate("c-2")
    assert c2.status == "merged" and c2.merged_into == "urn:wb:candidate:c-1"
    assert [c.id for c in team.candidates()] == ["c-1"]


@pytest.mark.parametrize("round_", range(4))
def test_curators_deciding_at_once_one_wins(team: Workbench, round_: int) -> None:
    root = as_user(team, "root")
    root.add_user("cleo", ["curator"])
    root.add_user("cruz", ["curator"])
    as_user(team, "cora").propose([cand("c-1", "Ravi likes tea.", ["Ravi"])], Proposal("import", "x"))
    barrier = threading.Barrier(3)
    outcomes: dict[str, str] = {}

    def act(name: str, how: str) -> None:
        wb = as_user(team, name)
        barrier.wait()
        try:
            if how == "approve":
                wb.approve(["c-1"])
            else:
                wb.reject(["c-1"], reason="dup")
            outcomes[name] = "won"
        except Conflict:
            outcomes[name] = "conflict"

    plan = [("cora", "approve"), ("cleo", "reject"), ("cruz", "approve")]
    threads = [threading.Thread(target=act, args=p) for p in plan[round_ % 3:] + plan[: round_ % 3]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes.values()) == ["conflict", "conflict", "won"]
    c = team.candidate("c-1")
    winner = next(n for n, o in outcomes.items() if o == "won")
    assert c.decided_by == winner
    acts = json.loads(team.sparql("PREFIX wb: <https://w3id.org/workbench/ns#> "
                                  "SELECT (COUNT(?a) AS ?n) WHERE { GRAPH ?g { ?a a ?k FILTER(?k IN "
                                  "(wb:Approval, wb:Rejection)) } }"))
    assert acts["results"]["bindings"][0]["n"]["value"] == "1"
    assert (c.status == "approved") == (len([r for r in team.records() if r.id == "c-1"]) == 1)
    assert not team.store.ask("ASK { GRAPH ?g { ?x <https://w3id.org/workbench/ns#claim> ?c } }")


def test_erasing_an_approved_record_erases_its_candidate_copy(team: Workbench) -> None:
    cora = as_user(team, "cora")
    cora.propose([cand("c-1", "Ravi's secret is 42.", ["Ravi"], span="secret is 42")], Proposal("import", "x"))
    cora.approve(["c-1"])
    team.erase("c-1", reason="asked to forget")
    assert b"secret is 42" not in dump(team.store) and b"Ravi's secret" not in dump(team.store)


# ---------------------------------------------------------------------- nothing without a person


ACTIONS = st.lists(st.tuples(st.sampled_from(["propose", "approve", "reject", "merge"]),
                             st.sampled_from(["cora", "rex", "vic", "model", "root"]),
                             st.integers(0, 4)), min_size=1, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ACTIONS)
def test_model_output_never_reaches_the_facts_without_a_person(tmp_path_factory: pytest.TempPathFactory,
                                                              actions: list[tuple[str, str, int]]) -> None:
    wb = Workbench.open(tmp_path_factory.mktemp("q") / "m", create=True, user="root", clock=lambda: FIXED_NOW)
    try:
        wb.init()
        wb.add_user("root", ["admin"])
        wb.add_user("cora", ["curator"])
        wb.add_user("rex", ["reviewer"])
        wb.add_user("vic", ["viewer"])
        wb.add_entity("Ravi")
        for verb, who, n in actions:
            actor = as_user(wb, who)
            try:
                if verb == "propose":
                    actor.propose([cand(f"c-{n}", f"Ravi fact {n}.", ["Ravi"])],
                                  Proposal("extraction", "t.txt", model="m", prompt_version="facts-v1"))
                elif verb == "approve":
                    actor.approve([f"c-{n}"])
                elif verb == "reject":
                    actor.reject([f"c-{n}"], reason="no")
                else:
                    actor.merge_candidates(f"c-{(n + 1) % 5}", [f"c-{n}"])
            except (Forbidden, Conflict, NotFound, Invalid):
                pass
        curators = {u.name for u in wb.users() if u.may(Role.CURATOR)}
        for rec in wb.records(status=None):
            assert rec.confirmed_by in curators, rec  # every record here came through a curator
            assert wb.candidate(rec.id).status == "approved"
            assert wb.candidate(rec.id).decided_by == rec.confirmed_by
    finally:
        wb.close()


# ---------------------------------------------------------------------- the command line


def test_cli_review_flow(tmp_path: Path) -> None:
    store = str(tmp_path / "m")
    run = CliRunner().invoke
    assert run(main, ["--store", store, "init", "--sample", "--no-proposals"]).exit_code == 0
    out = run(main, ["--store", store, "--as", "root", "users", "add", "root", "--role", "admin"])
    assert out.exit_code == 0 and "wb_" in out.output
    assert run(main, ["--store", store, "--as", "root", "users", "add", "cora", "--role", "curator"]).exit_code == 0
    path = jsonl(tmp_path / "c.jsonl", [cand("c-1", "Ravi likes tea.", ["Ravi"], span="likes tea"),
                                        cand("c-2", "Ravi visited Oslo.", ["Ravi", "Oslo"])])
    assert "queued 2" in run(main, ["--store", store, "--as", "cora", "candidates", "import", str(path)]).output
    listed = json.loads(run(main, ["--store", store, "candidates", "list", "--json"]).output)
    assert [c["id"] for c in listed] == ["c-1", "c-2"]
    shown = run(main, ["--store", store, "candidates", "show", "c-2"]).output
    assert "'Oslo': binds nothing" in shown
    denied = run(main, ["--store", store, "--as", "vic", "review", "approve", "c-1"])
    assert denied.exit_code == 1 and "not a user" in denied.output
    refused = run(main, ["--store", store, "--as", "cora", "review", "approve", "--all"])
    assert refused.exit_code == 1 and "Oslo" in refused.output  # all or nothing
    assert run(main, ["--store", store, "--as", "cora", "review", "approve", "c-1"]).exit_code == 0
    assert run(main, ["--store", store, "--as", "cora", "review", "approve", "c-2", "--create", "Oslo"]).exit_code == 0
    path3 = jsonl(tmp_path / "c3.jsonl", [cand("c-3", "Prof. Lin moved.", ["Prof. Lin"])])
    assert run(main, ["--store", store, "--as", "cora", "candidates", "import", str(path3)]).exit_code == 0
    bound = run(main, ["--store", store, "--as", "cora", "review", "approve", "c-3", "--bind", "Prof. Lin=Professor Lin"])
    assert bound.exit_code == 0, bound.output
    assert "urn:wb:entity:professor-lin" in run(main, ["--store", store, "entities", "resolve", "Prof. Lin"]).output
    assert "approved" in run(main, ["--store", store, "candidates", "list", "--status", "all"]).output
    again = run(main, ["--store", store, "--as", "cora", "review", "reject", "c-1", "--reason", "x"])
    assert again.exit_code == 1 and "already approved" in again.output


# ---------------------------------------------------------------------- summaries


def test_a_summary_is_fresh_until_a_record_it_rests_on_changes(team: Workbench, tmp_path: Path) -> None:
    cora = as_user(team, "cora")
    summary = {"id": "s-atlas", "summary": "Atlas keeps customer data in the EU or UK.", "of": ["d-atlas-region-2"],
               "about": ["Project Atlas"]}
    cora.import_candidates(jsonl(tmp_path / "s.jsonl", [summary]))
    assert team.check_candidate("s-atlas").valid
    derived = team.ask("Project Atlas", "governed by").to_json()
    assert cora.approve(["s-atlas"]) == ["s-atlas"]
    (s,) = team.summaries()
    assert s.fresh and s.of == ("d-atlas-region-2",)
    assert team.ask("Project Atlas", "governed by").to_json() == derived  # never evidence
    team.import_files([jsonl(tmp_path / "d3.jsonl", [{
        "id": "d-atlas-region-3", "statement": "Project Atlas stores customer data in the EU only again.",
        "type": "decision", "about": ["Project Atlas"], "supersedes": "d-atlas-region-2",
        "source": {"id": "issue-ATL-200", "said_by": "Dana Okafor"}}])])
    assert team.summaries() == []
    (stale,) = team.summaries(include_stale=True)
    assert not stale.fresh and stale.why_stale == ("d-atlas-region-2 is superseded",)


def test_a_summary_of_an_inactive_record_cannot_be_approved_and_erasure_takes_its_text(
        team: Workbench, tmp_path: Path) -> None:
    cora = as_user(team, "cora")
    cora.import_candidates(jsonl(tmp_path / "s.jsonl", [
        {"id": "s-old", "summary": "Atlas was EU only.", "of": ["d-atlas-region-1"]},
        {"id": "s-pref", "summary": "Writes in Australian English.", "of": ["m-pref-1"]}]))
    assert not team.check_candidate("s-old").valid
    with pytest.raises(Conflict, match="superseded"):
        cora.approve(["s-old"])
    cora.approve(["s-pref"])
    team.erase("m-pref-1", reason="forget my writing habits")
    assert b"Writes in Australian English" not in dump(team.store)
    assert team.summaries(include_stale=True)[0].why_stale == ("m-pref-1 is erased",)


def test_a_malformed_summary_is_refused(team: Workbench, tmp_path: Path) -> None:
    with pytest.raises(Invalid, match="'of'"):
        team.import_candidates(jsonl(tmp_path / "s.jsonl", [{"id": "s-1", "summary": "x", "of": []}]))
    with pytest.raises(Invalid, match="unknown field"):
        team.import_candidates(jsonl(tmp_path / "s.jsonl", [{"id": "s-1", "summary": "x", "of": ["a"], "extra": 1}]))


# ---------------------------------------------------------------------- the audit


def test_the_audit_shows_every_act_on_a_record(team: Workbench) -> None:
    cora = as_user(team, "cora")
    cora.propose([cand("c-1", "Ravi likes tea.", ["Ravi"]), cand("c-2", "Ravi likes green tea.", ["Ravi"])],
                 Proposal("extraction", "chat.txt", model="tiny", prompt_version="facts-v1"))
    cora.approve(["c-1"])
    cora.approve(["c-2"])
    cora.supersede("c-1", "c-2", reason="more precise")
    trail = [(e.what, e.who) for e in team.audit("c-1")]
    assert trail == [("proposal", "model:tiny"), ("approval", "cora"), ("import", "cora"), ("supersession", "cora")]
    team.erase("c-1", reason="asked to forget")
    # the record's own metadata went with it; the acts on its candidate and the tombstone stay
    trail = [(e.what, e.who) for e in team.audit("c-1")]
    assert trail == [("proposal", "model:tiny"), ("approval", "cora"), ("supersession", "cora"),
                     ("erasure", "tester")]
    proposal = team.audit("c-1")[0]
    assert proposal.who == "model:tiny" and "facts-v1" in proposal.detail and "chat.txt" in proposal.detail
    assert all("workbench-candidate" not in e.detail for e in team.audit("c-2"))
    with pytest.raises(NotFound):
        team.audit("never-was")


def test_a_decision_landing_in_the_middle_of_another_loses(team: Workbench, monkeypatch: pytest.MonkeyPatch) -> None:
    """Force the race: while cora's approval is between its check and its write, cleo rejects.
    Without the queue's claim both would land (Oxigraph does not refuse concurrent updates)."""
    from workbench.review import claims

    monkeypatch.setattr(claims, "ATTEMPTS", 3)
    as_user(team, "root").add_user("cleo", ["curator"])
    as_user(team, "cora").propose([cand("c-1", "Ravi likes tea.", ["Ravi"])], Proposal("import", "x"))
    store = team.store
    real_update = type(store).update
    cleo: list[str] = []

    def update(self: Any, text: str) -> None:
        if "INSERT DATA" in text and "Approval" in text and not cleo:
            cleo.append("tried")
            try:
                as_user(team, "cleo").reject(["c-1"], reason="dup")
                cleo.append("won")
            except Conflict:
                cleo.append("conflict")
        real_update(self, text)

    monkeypatch.setattr(type(store), "update", update)
    as_user(team, "cora").approve(["c-1"])
    assert cleo == ["tried", "conflict"]
    assert team.candidate("c-1").status == "approved" and team.record("c-1").confirmed_by == "cora"
