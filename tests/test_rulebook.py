"""The rule lifecycle: propose -> sign off (active) -> retire, versions kept in the store.

Four eyes (a reviewer who is neither the author nor the proposer signs off), test cases that must
pass, two reviewers at once (one wins, the other gets a Conflict, the store holds one sign-off),
what answers (a signed-off store version overrides rules/, a proposed one never does), the dry
run (added and removed conclusions with reasons, contradictions with recorded negative facts),
bad input that changes nothing, history, export, and the CLI. Tests taking ``wb``/``sample`` run
on both backends: the embedded store and a real oxigraph server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FIXED_NOW, ROOT, dump
from tests.test_bad_input import write_jsonl
from workbench.access.users import Role, add
from workbench.cli import main
from workbench.errors import Conflict, Forbidden, Invalid, NotFound, ParseError
from workbench.ids import RULES_GRAPH
from workbench.review import rulebook
from workbench.rules import load_rules
from workbench.service import Workbench
from workbench.store import Store, open_store
from workbench.values.answers import Tier

IK = (ROOT / "rules" / "inherit-kind.ttl").read_text(encoding="utf-8")
NOW = "2026-11-30T12:00:00Z"
NARROW_FROM = "FILTER(?p IN (wb:has, wb:usedFor, wb:dependsOn, wb:needs))"
NARROW_TO = "FILTER(?p IN (wb:has, wb:usedFor, wb:dependsOn))"

OWNER_NEEDS = """@prefix sh:      <http://www.w3.org/ns/shacl#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix wb:      <https://w3id.org/workbench/ns#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix rule:    <urn:wb:rule:> .

rule:owner-needs a sh:NodeShape ;
    sh:targetSubjectsOf wb:owns ;
    sh:rule rule:owner-needs-v1 .

rule:owner-needs-v1 a sh:SPARQLRule ;
    dcterms:identifier "owner-needs" ;
    wb:ruleVersion 1 ;
    dcterms:creator "alice" ;
    wb:ruleStatus wb:Draft ;
    wb:reading "If X owns T and T needs Y, then X needs Y." ;
    sh:construct \"\"\"
PREFIX wb: <https://w3id.org/workbench/ns#>
CONSTRUCT { $this wb:needs ?y } WHERE { $this wb:owns ?t . ?t wb:needs ?y }\"\"\" ;
    wb:testCase [
        rdfs:label "an owner needs what the thing owned needs" ;
        wb:given \"\"\"e:me wb:owns e:car . e:car wb:needs e:gas .\"\"\" ;
        wb:expect \"\"\"e:me wb:needs e:gas .\"\"\" ;
        wb:expectNot \"\"\"e:car wb:needs e:me .\"\"\" ] .
"""


def swap(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def inherit_kind(version: int, *, author: str = "alice", narrower: bool = False, failing: bool = False) -> str:
    """rules/inherit-kind.ttl as version ``version`` by ``author``; ``narrower`` drops wb:needs
    from what it inherits, ``failing`` expects a conclusion it does not draw."""
    text = swap(IK, "wb:ruleVersion 1", f"wb:ruleVersion {version}")
    text = text.replace("inherit-kind-v1", f"inherit-kind-v{version}")
    text = swap(text, 'dcterms:creator "workbench-maintainers"', f'dcterms:creator "{author}"')
    text = swap(text, "wb:ruleStatus wb:Active", "wb:ruleStatus wb:Draft")
    if narrower:
        text = swap(text, NARROW_FROM, NARROW_TO)
        text = swap(text, "wb:usedFor e:transport ; wb:needs e:charging .", "wb:usedFor e:transport .")
    if failing:
        text = swap(text, "e:sparky wb:has e:wheels ;", "e:sparky wb:has e:wheels , e:wings ;")
    return text


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def people(store: Store) -> Callable[[str], Workbench]:
    """root (admin), alice and dave (curators), bob and carol (reviewers); a Workbench acting as
    any of them (or as anyone, known or not) on the same store."""
    add(store, "root", [Role.ADMIN], actor="root", now=NOW)
    for name, role in (("alice", Role.CURATOR), ("dave", Role.CURATOR), ("bob", Role.REVIEWER),
                       ("carol", Role.REVIEWER)):
        add(store, name, [role], actor="root", now=NOW)
    return lambda name: Workbench(store, user=name, clock=lambda: FIXED_NOW)


@pytest.fixture
def as_(sample: Workbench) -> Callable[[str], Workbench]:
    return people(sample.store)


def signoffs(store: Store, rule_id: str, version: int) -> int:
    v = rulebook.version_node(rule_id, version)
    rows = store.select(f"SELECT ?a WHERE {{ GRAPH {RULES_GRAPH} {{ ?a a <https://w3id.org/workbench/ns#SignOff> ; "
                        f"<http://www.w3.org/ns/prov#used> {v} }} }}")
    return len(rows)


def unchanged(store: Store, act: Callable[[], object], kind: type[Exception], *needles: str) -> str:
    """``act`` raises ``kind`` with every needle in its words, and the store is exactly as before."""
    before = dump(store)
    with pytest.raises(kind) as info:
        act()
    assert dump(store) == before, "a refused act changed the store"
    text = str(info.value)
    for needle in needles:
        assert needle in text, f"{needle!r} not in {text!r}"
    return text


# ---------------------------------------------------------------------- the flow


def test_propose_signoff_retire_flow(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    alice, bob = as_("alice"), as_("bob")
    path = write(tmp_path, "ik.ttl", inherit_kind(2, narrower=True))
    assert [p.to_json() for p in alice.propose_rules(path)] == [
        {"id": "inherit-kind", "version": 2, "outcome": "proposed"}]
    v = alice.rule_versions("inherit-kind")[0]
    assert (v.status, v.author, v.proposed.who, v.proposed.when, v.text) == (
        "proposed", "alice", "alice", NOW, path.read_text(encoding="utf-8"))

    signed = bob.signoff_rule("inherit-kind", comment="narrower body; tests read and pass")
    assert signed.status == "active"
    assert signed.signed_off == rulebook.Act("bob", NOW, "narrower body; tests read and pass")
    assert signoffs(bob.store, "inherit-kind", 2) == 1
    # The list says which version answers: the stored one, read in words; the file's is superseded.
    listed = {(r["id"], r["version"], r["where"] == "store"): r for r in bob.rule_list()}
    assert listed[("inherit-kind", 2, True)]["answers"] and listed[("inherit-kind", 2, True)]["reading"]
    assert listed[("inherit-kind", 1, False)]["status"] == "superseded"
    assert not listed[("inherit-kind", 1, False)]["answers"]

    retired = bob.retire_rule("inherit-kind", reason="too narrow after all")
    assert retired.status == "retired" and retired.retired == rulebook.Act("bob", NOW, "too narrow after all")
    assert retired.signed_off == signed.signed_off  # the sign-off stays on record


def test_signing_off_a_new_version_retires_the_one_before(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    alice, bob = as_("alice"), as_("bob")
    alice.propose_rules(ROOT / "rules" / "inherit-kind.ttl")  # the shipped rule, imported
    bob.signoff_rule("inherit-kind", comment="the shipped rule")
    alice.propose_rules(write(tmp_path, "ik2.ttl", inherit_kind(2, narrower=True)))
    bob.signoff_rule("inherit-kind", comment="narrower")
    v1, v2 = alice.rule_versions("inherit-kind")
    assert (v1.status, v2.status) == ("retired", "active")
    assert v1.retired == rulebook.Act("bob", NOW, "superseded by inherit-kind v2")
    # a signed version never changes: not signed again, not edited under the same number
    unchanged(bob.store, lambda: as_("carol").signoff_rule("inherit-kind", version=2, comment="again"), Conflict,
              "inherit-kind v2 is active", "signed off by bob")
    unchanged(alice.store, lambda: alice.propose_rules(write(tmp_path, "edit.ttl", inherit_kind(2))), Conflict,
              "version 2 of inherit-kind exists; an edit is a new version")


def test_proposing_the_same_text_again_changes_nothing(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    alice = as_("alice")
    path = write(tmp_path, "ik.ttl", inherit_kind(2))
    alice.propose_rules(path)
    before = dump(alice.store)
    assert [p.outcome for p in as_("carol").propose_rules(path)] == ["unchanged"]
    assert dump(alice.store) == before


# ---------------------------------------------------------------------- four eyes


def test_four_eyes(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    store = as_("root").store
    as_("alice").propose_rules(write(tmp_path, "by-bob.ttl", inherit_kind(2, author="bob")))
    # the author cannot, even as a reviewer
    text = unchanged(store, lambda: as_("bob").signoff_rule("inherit-kind", comment="mine"), Forbidden)
    assert text == "bob cannot sign off their own rule inherit-kind v2: a reviewer other than its author must"
    # nor can the one who proposed it
    as_("carol").propose_rules(write(tmp_path, "by-alice.ttl", inherit_kind(3)))
    unchanged(store, lambda: as_("carol").signoff_rule("inherit-kind", version=3, comment="ok"), Forbidden,
              "carol proposed inherit-kind v3, so cannot sign it off")
    # a curator without the reviewer role cannot; an admin's name that is no user cannot
    unchanged(store, lambda: as_("dave").signoff_rule("inherit-kind", version=2, comment="ok"), Forbidden,
              "dave cannot sign off rules: that needs the reviewer role")
    unchanged(store, lambda: as_("mallory").signoff_rule("inherit-kind", version=2, comment="ok"), Forbidden,
              "'mallory' is not a user of this store")
    unchanged(store, lambda: as_("mallory").propose_rules(tmp_path / "by-alice.ttl"), Forbidden, "mallory")
    # someone else may
    assert as_("carol").signoff_rule("inherit-kind", version=2, comment="read it").status == "active"


def test_a_rule_whose_tests_fail_cannot_be_signed_off(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    as_("alice").propose_rules(write(tmp_path, "ik.ttl", inherit_kind(2, failing=True)))
    label, results = as_("bob").run_rule_tests("inherit-kind")
    assert label == "inherit-kind v2" and [c.passed for c in results] == [False, True]
    text = unchanged(as_("bob").store, lambda: as_("bob").signoff_rule("inherit-kind", comment="ok"), Invalid,
                     "inherit-kind v2 fails 1 of its 2 test case(s), so it cannot be signed off",
                     "a thing of two kinds inherits from both", "urn:wb:entity:wings")
    assert "nothing is inherited without a kind" not in text
    assert as_("bob").rule_versions("inherit-kind")[0].status == "proposed"


# ---------------------------------------------------------------------- two reviewers at once


def sign_at_once(location: str, store: Store | None, version: int, names: tuple[str, ...]) -> list[str]:
    """Each name signs off ``version`` in its own thread, all released at once; what each got.
    With ``store`` None each opens its own client of the server at ``location``."""
    barrier = threading.Barrier(len(names))
    outcomes: list[str] = []

    def sign(name: str) -> None:
        reviewer = Workbench(store or open_store(location), user=name, clock=lambda: FIXED_NOW)
        barrier.wait()
        try:
            reviewer.signoff_rule("inherit-kind", version=version, comment=f"{name} read it")
            outcomes.append("signed")
        except Conflict as exc:
            outcomes.append("conflict" if "inherit-kind" in str(exc) else str(exc))

    threads = [threading.Thread(target=sign, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(outcomes)


def test_two_reviewers_signing_off_at_once_one_wins(wb: Workbench, tmp_path: Path) -> None:
    as_ = people(wb.store)
    remote = wb.store.location.startswith("http")  # then two clients of one server; else one store, two threads
    for version in (2, 3, 4):  # a few rounds: the race is real, not staged
        as_("alice").propose_rules(write(tmp_path, f"v{version}.ttl", inherit_kind(version)))
        outcomes = sign_at_once(wb.store.location, None if remote else wb.store, version, ("bob", "carol"))
        assert outcomes == ["conflict", "signed"]
        assert signoffs(wb.store, "inherit-kind", version) == 1
    statuses = [(v.version, v.status) for v in wb.rule_versions("inherit-kind")]
    assert statuses == [(2, "retired"), (3, "retired"), (4, "active")]
    node = rulebook.version_node("inherit-kind", 4)
    assert len(wb.store.select(f"SELECT ?s WHERE {{ GRAPH {RULES_GRAPH} {{ {node} "
                               "<https://w3id.org/workbench/ns#ruleStatus> ?s } }")) == 1
    assert not wb.store.ask(f"ASK {{ GRAPH {RULES_GRAPH} {{ ?r <https://w3id.org/workbench/ns#claim> ?c }} }}")


def test_a_signoff_that_lands_between_the_checks_and_the_write_wins(
    as_: Callable[[str], Workbench], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interleaved by hand: carol signs off while bob's test cases run; bob gets a Conflict."""
    as_("alice").propose_rules(write(tmp_path, "ik.ttl", inherit_kind(2)))
    real, done = rulebook.run_tests, []

    def meanwhile(rules: object) -> object:
        if not done:
            done.append(True)
            as_("carol").signoff_rule("inherit-kind", comment="first")
        return real(rules)  # type: ignore[arg-type]

    monkeypatch.setattr(rulebook, "run_tests", meanwhile)
    store = as_("bob").store
    before = dump(store)
    with pytest.raises(Conflict, match="signed off by carol"):
        as_("bob").signoff_rule("inherit-kind", comment="second")
    assert signoffs(store, "inherit-kind", 2) == 1 and dump(store) != before  # carol's, and only hers


# ---------------------------------------------------------------------- what answers


def test_a_signed_off_version_changes_the_answer_and_a_proposed_one_never_does(
    as_: Callable[[str], Workbench], tmp_path: Path
) -> None:
    alice, bob = as_("alice"), as_("bob")
    assert alice.ask("my car", "needs", "gas").tier is Tier.DERIVED  # rules/inherit-kind.ttl v1
    alice.propose_rules(write(tmp_path, "ik.ttl", inherit_kind(2, narrower=True)))
    assert bob.ask("my car", "needs", "gas").tier is Tier.DERIVED  # proposed: not used
    bob.signoff_rule("inherit-kind", comment="narrower")
    for w in (alice, bob):  # the Workbench that signed, and one that only reads the store
        assert w.ask("my car", "needs", "gas").tier is Tier.NO_EVIDENCE
        assert w.ask("Sparky", "has", "wheels").tier is Tier.DERIVED
        assert [r.label for r in w.rules.active() if r.id == "inherit-kind"] == ["inherit-kind v2"]
    # retired, and none active: the store has taken the rule over, so it answers nothing
    bob.retire_rule("inherit-kind", reason="too narrow")
    assert alice.ask("Sparky", "has", "wheels").tier is Tier.NO_EVIDENCE
    assert "inherit-kind" not in {r.id for r in alice.rules.rules}


def test_retiring_a_new_rule_changes_the_answer_back(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    alice, bob = as_("alice"), as_("bob")
    assert alice.ask("me", "needs", "gasoline").tier is Tier.NO_EVIDENCE
    alice.propose_rules(write(tmp_path, "owner-needs.ttl", OWNER_NEEDS))
    assert alice.ask("me", "needs", "gasoline").tier is Tier.NO_EVIDENCE
    bob.signoff_rule("owner-needs", comment="owners need what their things need")
    answer = alice.ask("me", "needs", "gasoline")
    assert answer.tier is Tier.DERIVED and "owner-needs v1" in answer.text()
    bob.retire_rule("owner-needs", reason="too broad")
    assert alice.ask("me", "needs", "gasoline").tier is Tier.NO_EVIDENCE


# ---------------------------------------------------------------------- dry run


def test_dry_run_lists_what_changes_with_reasons_and_writes_nothing(
    as_: Callable[[str], Workbench], tmp_path: Path
) -> None:
    alice = as_("alice")
    alice.propose_rules(write(tmp_path, "ik.ttl", inherit_kind(2, narrower=True)))
    before = dump(alice.store)
    run = as_("bob").dry_run_rule("inherit-kind")
    assert dump(alice.store) == before
    assert (run.rule, run.against) == ("inherit-kind v2", "inherit-kind v1")
    removed = {c.text for c in run.removed}
    assert {"my car needs gasoline", "Sparky needs charging"} <= removed
    assert run.added_count == 0 and run.removed_count == len(run.removed) == run.before - run.after
    gas = next(c for c in run.removed if c.text == "my car needs gasoline")
    assert "[rule inherit-kind v1]" in gas.proof[0]
    assert any("my car is a petrol car" in line and "said by me" in line for line in gas.proof)
    data = run.to_json()
    assert data["counts"] == {"before": run.before, "after": run.after, "added": 0, "removed": run.removed_count}
    assert "my car needs gasoline" in run.text()


def test_dry_run_shows_a_contradiction_with_a_recorded_negative_fact(
    as_: Callable[[str], Workbench], tmp_path: Path
) -> None:
    alice = as_("alice")
    alice.import_files([write_jsonl(tmp_path / "no.jsonl", [{
        "id": "n-me-charging", "statement": "I do not need charging.", "type": "observation", "about": ["me"],
        "source": {"id": "chat-n", "said_by": "me"}, "triples": [["me", "not needs", "charging"]]}])])
    alice.propose_rules(write(tmp_path, "owner-needs.ttl", OWNER_NEEDS))
    run = as_("bob").dry_run_rule("owner-needs")
    assert run.against is None and run.removed_count == 0 and run.added_count == run.after - run.before > 0
    added = {c.text: c for c in run.added}
    assert {"me needs gasoline", "me needs charging"} <= set(added)
    assert any("me owns Sparky" in line for line in added["me needs charging"].proof)
    assert [(x.conclusion.text, x.record, x.new) for x in run.contradictions] == [
        ("me needs charging", "n-me-charging", True)]
    assert "said by me" in run.contradictions[0].said
    assert "record n-me-charging says it is not so" in run.text()


# ---------------------------------------------------------------------- bad input


def test_bad_input_changes_nothing(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    alice = as_("alice")
    store = alice.store
    broken = write(tmp_path, "broken.ttl", swap(inherit_kind(2), "wb:ruleVersion 2 ;", "wb:ruleVersion 2 2 ;"))
    text = unchanged(store, lambda: alice.propose_rules(broken), ParseError, str(broken), "line")
    assert "column" in text
    unchanged(store, lambda: alice.propose_rules(tmp_path / "missing.ttl"), Invalid, "no such rule file")
    alice.propose_rules(write(tmp_path, "v3.ttl", inherit_kind(3)))
    unchanged(store, lambda: alice.propose_rules(write(tmp_path, "v2.ttl", inherit_kind(2, narrower=True))), Conflict,
              "version 3 of inherit-kind exists; an edit is a new version")
    unchanged(store, lambda: alice.propose_rules(write(tmp_path, "v1.ttl", inherit_kind(1, narrower=True))),
              Conflict, "an edit is a new version")
    bob = as_("bob")
    for act in (lambda: bob.signoff_rule("no-such-rule", comment="ok"), lambda: bob.dry_run_rule("no-such-rule"),
                lambda: bob.retire_rule("no-such-rule", reason="x"), lambda: bob.rule_history("no-such-rule"),
                lambda: bob.signoff_rule("inherit-kind", version=9, comment="ok")):
        unchanged(store, act, NotFound)
    unchanged(store, lambda: bob.signoff_rule("inherit-kind", comment="  "), Invalid, "needs a comment")
    unchanged(store, lambda: bob.retire_rule("inherit-kind", reason="x"), NotFound, "no active version")


# ---------------------------------------------------------------------- history and export


def test_history_has_every_version_its_acts_and_its_diff(as_: Callable[[str], Workbench], tmp_path: Path) -> None:
    alice, bob = as_("alice"), as_("bob")
    alice.propose_rules(write(tmp_path, "v2.ttl", inherit_kind(2)))
    bob.signoff_rule("inherit-kind", comment="same body, new author")
    alice.propose_rules(write(tmp_path, "v3.ttl", inherit_kind(3, narrower=True)))
    first, second = bob.rule_history("inherit-kind")
    assert (first.version.status, second.version.status) == ("active", "proposed")
    assert first.to_json()["signed_off"] == {"who": "bob", "when": NOW, "comment": "same body, new author"}
    assert first.diff.startswith("--- /dev/null\n+++ inherit-kind v2")
    assert f"-  {NARROW_FROM}\n" in second.diff and f"+  {NARROW_TO}\n" in second.diff
    assert "--- inherit-kind v2\n+++ inherit-kind v3" in second.diff


def test_export_writes_the_reviewed_rules_and_proposing_them_again_changes_nothing(
    as_: Callable[[str], Workbench], tmp_path: Path
) -> None:
    alice, bob = as_("alice"), as_("bob")
    alice.propose_rules(write(tmp_path, "v2.ttl", inherit_kind(2, narrower=True)))
    bob.signoff_rule("inherit-kind", comment="narrower")
    alice.propose_rules(write(tmp_path, "v3.ttl", inherit_kind(3)))
    alice.propose_rules(write(tmp_path, "owner-needs.ttl", OWNER_NEEDS))
    out = tmp_path / "exported"
    assert sorted(p.name for p in bob.export_rules(out)) == ["inherit-kind.ttl", "owner-needs.ttl"]
    loaded = {(r.id, r.version): r.status for r in load_rules(out.glob("*.ttl"), relations=alice.relations()).rules}
    assert loaded == {("inherit-kind", 2): "active", ("owner-needs", 1): "draft"}
    before = dump(alice.store)
    for path in sorted(out.glob("*.ttl")):
        assert [p.outcome for p in alice.propose_rules(path)] == ["unchanged"]
    assert dump(alice.store) == before


# ---------------------------------------------------------------------- the command line


def test_the_cli_end_to_end(tmp_path: Path) -> None:
    store = tmp_path / "memory"
    runner = CliRunner()

    def run(user: str, *args: str, code: int = 0) -> str:
        result = runner.invoke(main, ["--store", str(store), "--as", user, *args], catch_exceptions=False)
        assert result.exit_code == code, result.output + result.stderr
        return result.output if code == 0 else result.stderr

    run("root", "init", "--sample")
    with Workbench.open(store, user="root") as w:
        people(w.store)
    path = write(tmp_path, "ik.ttl", inherit_kind(2, narrower=True))
    assert "inherit-kind v2: proposed" in run("alice", "rules", "propose", str(path))
    assert json.loads(run("alice", "rules", "propose", str(path), "--json")) == [
        {"id": "inherit-kind", "outcome": "unchanged", "version": 2}]
    assert run("bob", "rules", "test", "inherit-kind").count("ok   inherit-kind v2") == 2
    dry = json.loads(run("bob", "rules", "dry-run", "inherit-kind", "--json"))
    assert dry["against"] == "inherit-kind v1" and dry["counts"]["removed"] >= 2
    assert "my car needs gasoline" in run("bob", "rules", "dry-run", "inherit-kind", "--version", "2")
    assert "needs the reviewer role" in run("alice", "rules", "signoff", "inherit-kind", "--comment", "x", code=1)
    out = run("bob", "rules", "signoff", "inherit-kind", "--comment", "narrower; tests pass")
    assert "inherit-kind v2 [active]" in out and "signed off by bob" in out
    assert json.loads(run("bob", "ask", "my car", "needs", "gas", "--json"))["tier"] == "no_evidence"
    history = json.loads(run("bob", "rules", "history", "inherit-kind", "--json"))
    assert [(h["version"], h["status"]) for h in history] == [(2, "active")]
    assert "retired by bob" in run("bob", "rules", "retire", "inherit-kind", "--reason", "too narrow")
    assert "inherit-kind.ttl" in run("bob", "rules", "export", str(tmp_path / "out"))
    broken = write(tmp_path, "broken.ttl", "@prefix wb: <https://w3id.org/workbench/ns#> .\nwb:x wb:y .\n")
    err = run("alice", "rules", "propose", str(broken), code=1)
    assert err.startswith("error: ") and str(broken) in err and "line 2" in err


def test_rule_commands_have_help() -> None:
    runner = CliRunner()
    for name in ("propose", "test", "dry-run", "signoff", "retire", "history", "export"):
        result = runner.invoke(main, ["rules", name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, name


def test_rules_list_shows_stored_versions_and_which_answer(tmp_path: Path) -> None:
    """`rules list` names where each version lives and whether it answers now."""
    from click.testing import CliRunner

    from workbench.cli import main

    store = str(tmp_path / "m")
    run = CliRunner().invoke
    assert run(main, ["--store", store, "init", "--sample"]).exit_code == 0
    assert run(main, ["--store", store, "--as", "root", "users", "add", "root", "--role", "admin"]).exit_code == 0
    rule = tmp_path / "owner-needs.ttl"
    rule.write_text(OWNER_NEEDS, encoding="utf-8")
    assert run(main, ["--store", store, "--as", "root", "rules", "propose", str(rule)]).exit_code == 0
    rows = {(r["id"], r["where"]): r for r in json.loads(run(main, ["--store", store, "rules", "list", "--json"]).output)}
    assert rows[("owner-needs", "store")]["status"] == "proposed" and not rows[("owner-needs", "store")]["answers"]
    assert [r["answers"] for (i, w), r in rows.items() if i == "inherit-kind"] == [True]  # the shipped file
