"""The Rules and Sign-off pages, with ``streamlit.testing.v1.AppTest``, against a real `workbench serve`.

A curator edits a rule in the browser (the plain text box: AppTest cannot type into the Ace
editor, a JavaScript component), sees syntax errors with their line and column, runs the test
cases and a dry run, and proposes the version; a reviewer other than its author signs it off; a
reviewer's own version cannot be signed off; a viewer sees neither page. Also the client's
``propose_rule_text``, which the editor proposes with.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui_server import UiServer, start
from workbench.errors import Conflict, Forbidden, ParseError
from workbench.ui import rulecheck

ROOT = Path(__file__).resolve().parent.parent
KIND_OF = (ROOT / "rules" / "kind-of.ttl").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    server = start(tmp_path_factory.mktemp("ui-rules"))
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _server_url(ui: UiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_URL", ui.url)


def _texts(at: AppTest, *kinds: str) -> str:
    return "\n".join(str(e.value) for kind in kinds for e in getattr(at, kind))


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _plain(at: AppTest, text: str | None = None) -> AppTest:
    """Switch the editor to the plain text box and (optionally) type ``text`` into it."""
    _ok(at.toggle(key="rules.plain").set_value(True).run())
    if text is not None:
        _ok(at.text_area(key="rules.area").input(text).run())
    return at


def test_the_client_proposes_rule_text(ui: UiServer) -> None:
    cora = ui.client("cora")
    text = rulecheck.TEMPLATE.format(author="cora").replace("my-rule", "owner-needs")
    done = cora.propose_rule_text(text, name="owner-needs.ttl")
    assert [(p.id, p.version, p.outcome) for p in done] == [("owner-needs", 1, "proposed")]
    assert [p.outcome for p in cora.propose_rule_text(text)] == ["unchanged"]
    with pytest.raises(ParseError) as bad:
        cora.propose_rule_text(text.replace("wb:ruleVersion 1 ;", "wb:ruleVersion 1 ;;; x"), name="bad.ttl")
    assert bad.value.where == "bad.ttl" and "line 13 column 26" in bad.value.message
    with pytest.raises(Conflict):
        cora.propose_rule_text(text.replace("an owner needs", "owners need"))
    with pytest.raises(Forbidden):
        ui.client("vic").propose_rule_text(text.replace("wb:ruleVersion 1", "wb:ruleVersion 2"))


def test_the_list_shows_status_and_version(ui: UiServer) -> None:
    at = _ok(ui.page("rules", "cora"))
    table = at.dataframe[0].value
    rows = {r["rule"]: r for r in table.to_dict("records")}
    assert {"inherit-kind", "kind-of", "advisor-university", "current-decision"} <= set(rows)
    assert rows["inherit-kind"]["version"] == 1 and rows["inherit-kind"]["status"] == "active"
    assert rows["inherit-kind"]["answers now"] and rows["inherit-kind"]["where"] == "rules directory"


def test_a_syntax_error_shows_its_line_and_column(ui: UiServer) -> None:
    at = _plain(ui.page("rules", "cora"))
    text = str(at.text_area(key="rules.area").value)
    lines = text.splitlines()
    number = next(i for i, line in enumerate(lines) if "wb:ruleVersion" in line)
    lines[number] = lines[number].replace(";", ";;; x", 1)
    _ok(at.text_area(key="rules.area").input("\n".join(lines)).run())
    column = lines[number].index("x") + 1
    assert f"Line {number + 1}, column {column}" in _texts(at, "error")  # as you type, without a button
    assert "Turtle syntax error" in _texts(at, "error")
    # a SPARQL error inside sh:construct points at the line of the file, not of the query
    broken = text.replace("CONSTRUCT {", "CONSTRUC {")
    _ok(at.text_area(key="rules.area").input(broken).run())
    line = next(i for i, x in enumerate(broken.splitlines(), 1) if "CONSTRUC {" in x)
    assert f"Line {line}, column 1" in _texts(at, "error") and "SPARQL syntax error" in _texts(at, "error")


def test_check_runs_the_test_cases(ui: UiServer) -> None:
    at = _plain(ui.page("rules", "cora"))
    _ok(at.button(key="rules.check").click().run())
    assert "my-rule v1: all 1 test case(s) pass." in _texts(at, "success")
    failing = str(at.text_area(key="rules.area").value).replace('wb:expect """e:ann wb:needs e:fuel', 'wb:expect """e:ann wb:needs e:ann')
    _ok(at.text_area(key="rules.area").input(failing).run())
    _ok(at.button(key="rules.check").click().run())
    assert "my-rule v1: 1 of 1 test case(s) fail." in _texts(at, "error")
    assert "urn:wb:entity:ann" in str(at.dataframe[-1].value["expected, not concluded"][0])


def test_edit_and_propose_then_tests_dry_run_and_history(ui: UiServer) -> None:
    at = _ok(ui.page("rules", "cora"))
    _ok(at.selectbox(key="rules.rule").select("advisor-university").run())
    _ok(at.button(key="rules.next").click().run())  # "Start version 2"
    _plain(at)
    draft = str(at.text_area(key="rules.area").value)
    assert "wb:ruleVersion 2" in draft and 'dcterms:creator "cora"' in draft and "wb:Draft" in draft
    edited = draft.replace("then U is X's advisor's university", "then U is the university of X's advisor")
    _ok(at.text_area(key="rules.area").input(edited).run())
    _ok(at.button(key="rules.propose").click().run())
    assert "advisor-university v2: proposed" in _texts(at, "success")
    stored = ui.client("root").rule_versions("advisor-university")
    assert [(v.version, v.status, v.author, v.proposed.who) for v in stored] == [(2, "proposed", "cora", "cora")]
    assert "the university of X's advisor" in stored[0].text
    # proposing the same version with other words is refused, naming the version to use
    _ok(at.text_area(key="rules.area").input(edited.replace("the university", "a university")).run())
    _ok(at.button(key="rules.propose").click().run())
    assert "an edit is a new version (v3)" in _texts(at, "error")
    # the test cases and a dry run of the stored version
    _ok(at.button(key="rules.run_tests").click().run())
    assert "advisor-university v2: all 1 test case(s) pass." in _texts(at, "success")
    _ok(at.button(key="rules.dry_run").click().run())
    assert "advisor-university v2 against advisor-university v1, the version in use" in _texts(at, "caption")
    assert [m.label for m in at.metric] == ["Conclusions before", "After", "Added", "Removed"]
    assert "No recorded fact says any of its conclusions is not so." in _texts(at, "info")
    # its history: the diff against the rules directory's version
    diffs = [c.value for c in at.code if c.language == "diff"]
    assert any("--- advisor-university v1 (rules directory)" in d and "+    wb:ruleVersion 2 ;" in d for d in diffs)


def test_a_reviewer_signs_off_another_persons_version(ui: UiServer) -> None:
    cora = ui.client("cora")
    text = rulecheck.next_version(KIND_OF, "kind-of", 1, 2, "cora").replace("directly or", "at once or")
    cora.propose_rule_text(text, name="kind-of.ttl")
    at = _ok(ui.page("signoff", "rita"))
    _ok(at.selectbox(key="signoff.pick").select("kind-of v2").run())
    diff = next(c.value for c in at.code if c.language == "diff")
    assert "--- kind-of v1 (rules directory)" in diff and "+++ kind-of v2" in diff
    assert "kind-of v2: all" in _texts(at, "success")  # its test cases
    assert "kind-of v2 against kind-of v1, the version in use" in _texts(at, "caption")  # the dry run
    assert not at.button(key="signoff.sign_go.urn:wb:rule:kind-of/v2").disabled
    at.button(key="signoff.sign_go.urn:wb:rule:kind-of/v2").click().run()
    assert "Please say what you checked" in _texts(at, "error")
    at.text_input(key="signoff.comment.urn:wb:rule:kind-of/v2").input("read the diff and the dry run")
    _ok(at.button(key="signoff.sign_go.urn:wb:rule:kind-of/v2").click().run())
    assert "Signed off kind-of v2: it answers from now on." in _texts(at, "success")
    v2 = ui.client("root").rule_versions("kind-of")[-1]
    assert v2.status == "active" and v2.signed_off is not None
    assert (v2.signed_off.who, v2.signed_off.comment) == ("rita", "read the diff and the dry run")


def test_ones_own_version_cannot_be_signed_off(ui: UiServer) -> None:
    rita = ui.client("rita")
    text = rulecheck.TEMPLATE.format(author="rita").replace("my-rule", "rita-rule")
    rita.propose_rule_text(text)
    at = _ok(ui.page("signoff", "rita"))
    _ok(at.selectbox(key="signoff.pick").select("rita-rule v1").run())
    button = at.button(key="signoff.sign_go.urn:wb:rule:rita-rule/v1")
    assert button.disabled
    assert "You wrote rita-rule v1: a reviewer other than its author signs it off." in _texts(at, "caption")
    with pytest.raises(Forbidden):  # the service refuses too
        rita.signoff_rule("rita-rule", comment="looks fine to me")
    assert ui.client("root").rule_versions("rita-rule")[-1].status == "proposed"


def test_send_back_withdraws_the_version_with_the_comment(ui: UiServer) -> None:
    text = rulecheck.TEMPLATE.format(author="cora").replace("my-rule", "send-me-back")
    ui.client("cora").propose_rule_text(text)
    at = _ok(ui.page("signoff", "rita"))
    _ok(at.selectbox(key="signoff.pick").select("send-me-back v1").run())
    at.text_input(key="signoff.reason.urn:wb:rule:send-me-back/v1").input("add a test with two owners")
    _ok(at.button(key="signoff.back_go.urn:wb:rule:send-me-back/v1").click().run())
    assert "Sent back send-me-back v1" in _texts(at, "success")
    v = ui.client("root").rule_versions("send-me-back")[-1]
    assert v.status == "retired" and v.retired is not None
    assert (v.retired.who, v.retired.comment) == ("rita", "sent back: add a test with two owners")
    assert "send-me-back v1" not in [o for o in at.selectbox(key="signoff.pick").options]


@pytest.mark.parametrize("module", ["rules", "signoff"])
def test_a_viewer_is_refused(ui: UiServer, module: str) -> None:
    at = _ok(ui.page(module, "vic"))
    assert "needs the" in _texts(at, "warning")
    assert not at.button and not at.dataframe


def test_a_viewer_does_not_see_the_curation_pages(ui: UiServer) -> None:
    """In the whole app, the navigation holds the pages the user's roles allow."""
    import workbench

    def pages(who: str) -> set[str]:
        at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=60)
        client = workbench.connect(ui.url, ui.tokens[who])
        at.session_state["workbench.client"] = client
        at.session_state["workbench.user"] = client.me()
        _ok(at.run())
        return {str(info.get("url_pathname")) for info in at._registered_pages.values()}

    assert {"review", "rules", "signoff"} & pages("vic") == set()
    assert {"review", "rules"} <= pages("cora") and "signoff" not in pages("cora")
    assert "signoff" in pages("rita")
