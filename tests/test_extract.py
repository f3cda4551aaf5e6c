"""Extraction against a real HTTP server on loopback that speaks OpenAI chat completions.

Each test tells the server how to answer (good JSON, broken JSON, a schema it does not follow,
HTTP 500, silence, a body dribbled past the deadline) and checks that bad answers are refused
with their reason and leave the store byte for byte as it was, and that good ones land in the
review queue only: never in the fact store, never in an answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import FIXED_NOW, dump, free_port, in_queue
from tests.test_rulebook import OWNER_NEEDS as RULEBOOK_OWNER_NEEDS
from tests.test_rulebook import people
from workbench.cli import main
from workbench.errors import Forbidden, Invalid, ModelUnavailable, NotFound
from workbench.extraction import prompts
from workbench.extraction import run as extraction
from workbench.ids import RULES_GRAPH
from workbench.names.relations import Relations
from workbench.review import rulebook
from workbench.service import Workbench
from workbench.values.records import RecordType
from workbench.vocab import PREFIXES, WB_NS

Behaviour = Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]

CHAT = [
    {"speaker": "Dana Okafor", "time": "2026-06-01T11:00:00Z",
     "text": "We decided that Project Atlas will keep customer data in the EU region."},
    {"speaker": "Ravi", "time": "2026-06-01T11:01:00Z", "text": "Fine by me. I also bought a bike last week."},
]
DECISION = {"statement": "Project Atlas keeps customer data in the EU region.", "type": "decision",
            "about": ["Project Atlas"], "triples": [["Project Atlas", "setting", {"value": "data region: EU"}]],
            "effective_from": "2026-06-01", "scope": ["Project Atlas"],
            "span": "Project Atlas will keep   customer data in the EU region."}
BIKE = {"statement": "Ravi owns a bike.", "type": "state", "about": ["Ravi"], "triples": [["Ravi", "owns", "bike"]],
        "span": "I also bought a bike last week."}
# A rule as facts-v2 asks for it, except that it claims a human author (the model's claim must not stand).
OWNER_NEEDS = RULEBOOK_OWNER_NEEDS.replace('dcterms:creator "alice"', 'dcterms:creator "Dana Okafor"')
RULE = {"turtle": OWNER_NEEDS, "reading": "whoever owns a thing needs what it needs"}


# ---------------------------------------------------------------------- the server


def _send(h: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str = "application/json") -> None:
    h.send_response(status)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def completion(content: str) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}).encode()


def says(answer: Any) -> Behaviour:
    """Answer with this content (a string as it is, anything else as JSON)."""
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return lambda h, body: _send(h, 200, completion(text))


def status(code: int, text: str) -> Behaviour:
    return lambda h, body: _send(h, code, text.encode(), "text/plain")


def raw(data: bytes) -> Behaviour:
    return lambda h, body: _send(h, 200, data)


class ChatServer:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 with a free port."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.behaviours: list[Behaviour] = [says({"facts": []})]
        self.release = threading.Event()  # set at teardown: sleeping handlers stop waiting
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802  (the stdlib's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                todo = server.behaviours[min(len(server.requests), len(server.behaviours)) - 1]
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up first
                    todo(self, body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def answer(self, *behaviours: Behaviour) -> None:
        """Answer request i with behaviour i; the last one answers every request after it."""
        self.behaviours = list(behaviours)

    def sleep(self, seconds: float) -> Behaviour:
        def run(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
            self.release.wait(seconds)
            _send(h, 200, completion(json.dumps({"facts": []})))
        return run

    def dribble(self, seconds: float) -> Behaviour:
        """Headers at once, then the body a byte at a time, slower than any deadline."""
        def run(h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
            data = completion(json.dumps({"facts": []}))
            h.send_response(200)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.flush()
            for byte in data:
                if self.release.wait(seconds / len(data)):
                    return
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
        return run

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def llm() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.close()


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workbench]:
    """A fresh embedded store with the sample data, and no model settings from the environment."""
    for name in ("WORKBENCH_LLM_KEY", "WORKBENCH_LLM_URL", "WORKBENCH_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    wb = Workbench.open(tmp_path / "store", create=True, user="tester", clock=lambda: FIXED_NOW)
    wb.init(sample=True)
    yield wb
    wb.close()


def chat_file(tmp_path: Path, turns: list[dict[str, Any]] = CHAT, name: str = "chat.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    return path


def extract(wb: Workbench, server: ChatServer, *paths: Path, **options: Any) -> Any:
    return wb.extract(list(paths), llm_url=server.url, model=options.pop("model", "extractor-small"), **options)


def _new_quads(before: bytes, after: bytes) -> list[bytes]:
    old = set(before.splitlines())
    assert old <= set(after.splitlines()), "extraction removed or changed something in the store"
    return [q for q in after.splitlines() if q not in old]


# ---------------------------------------------------------------------- good answers


def test_good_answer_is_queued_not_recorded(bench: Workbench, llm: ChatServer, tmp_path: Path) -> None:
    llm.answer(says({"facts": [DECISION, BIKE], "rules": []}))
    path = chat_file(tmp_path)
    records = [r.to_json() for r in bench.records()]
    asked = bench.ask("Ravi", "owns").to_json()
    before = dump(bench.store)

    report = extract(bench, llm, path, api_key="sekrit")

    assert report.ok and report.rejected == () and len(report.queued) == 2 and report.chunks == 1
    assert report.rules == report.rules_proposed == report.rules_rejected == ()
    assert report.to_json()["rules_proposed"] == [] and "0 rule versions proposed" in report.summary()
    # Only the queue grew: no fact, no record, no answer changed.
    assert all(in_queue(q) for q in _new_quads(before, dump(bench.store)))
    assert [r.to_json() for r in bench.records()] == records
    assert bench.ask("Ravi", "owns").to_json() == asked

    cands = {c.record["statement"]: c for c in bench.candidates()}
    assert set(cands) == {DECISION["statement"], BIKE["statement"]} and sorted(report.queued) == sorted(
        c.id for c in cands.values())
    dana = cands[DECISION["statement"]]
    assert dana.status == "pending" and dana.model == "extractor-small" and dana.prompt_version == "facts-v2"
    assert dana.span == DECISION["span"] and dana.proposed_by == "model:extractor-small"
    assert dana.record["source"] == {"id": "chat.jsonl#1", "said_by": "Dana Okafor", "captured_at":
                                     "2026-06-01T11:00:00Z", "text": CHAT[0]["text"], "locator": "chat.jsonl:1"}
    assert dana.record["applies_to"] == ["Project Atlas"] and dana.record["effective_from"] == "2026-06-01"
    assert cands[BIKE["statement"]].record["source"]["said_by"] == "Ravi"

    # The request: model, the prompt version's text, temperature 0, JSON output, the bearer key.
    (req,) = llm.requests
    assert req["path"] == "/v1/chat/completions" and req["headers"]["Authorization"] == "Bearer sekrit"
    body = req["body"]
    assert body["model"] == "extractor-small" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"} and body["stream"] is False
    version = prompts.load(prompts.DEFAULT)
    types = ", ".join(t.value for t in RecordType)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == version.system.replace("{types}", types)
    user = body["messages"][1]["content"]
    assert Relations.load(bench.store).labels() in user and "[2] Ravi (2026-06-01T11:01:00Z): Fine by me." in user

    # PROV-O: the proposal names the model, the prompt version, the input and its SHA-256.
    rows = bench.store.select(PREFIXES + """SELECT DISTINCT ?used ?pv ?digest ?model ?at WHERE { GRAPH ?c {
        ?act a wb:Proposal ; prov:used ?used ; wb:promptVersion ?pv ; wb:recordDigest ?digest ;
             wb:extractedBy ?model ; prov:startedAtTime ?at } }""")
    assert [(r["used"].value, r["pv"].value, r["digest"].value, r["model"].value, r["at"].value)  # type: ignore[union-attr]
            for r in rows] == [(str(path), "facts-v2", hashlib.sha256(path.read_bytes()).hexdigest(),
                                "urn:wb:agent:model:extractor-small", "2026-11-30T12:00:00Z")]

    again = extract(bench, llm, path, api_key="sekrit")  # the same answer again: nothing new, no conflict
    assert again.ok and again.queued == () and sorted(again.facts) == sorted(report.queued)

    llm.answer(says({"facts": [DECISION, {**BIKE, "type": "event"}]}))  # the same id, other content: all or nothing
    queued = dump(bench.store)
    clash = extract(bench, llm, path)
    assert clash.rejected == (f"candidate {cands[BIKE['statement']].id} is already queued (pending) with other content",)
    assert clash.queued == () and dump(bench.store) == queued


def test_good_answer_on_every_backend(sample: Workbench, llm: ChatServer, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_LLM_KEY", "from-env")
    llm.answer(says({"facts": [BIKE]}))
    report = extract(sample, llm, chat_file(tmp_path))
    assert report.ok and [c.id for c in sample.candidates()] == list(report.queued)
    assert llm.requests[0]["headers"]["Authorization"] == "Bearer from-env"


def test_text_and_markdown_transcripts(bench: Workbench, llm: ChatServer, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Standup\n\nRavi works on the compiler now.\nHe started in May.\n\n"
                                       "Nothing else.\n", encoding="utf-8")
    (tmp_path / "call.txt").write_text("Ravi said the new bike is blue.\n", encoding="utf-8")
    llm.answer(
        says({"facts": [{"statement": "Ravi works on the compiler.", "type": "state", "about": ["Ravi"],
                         "triples": [["Ravi", "works on", "compiler"]], "span": "works on the compiler now. He"}]}),
        says({"facts": [{"statement": "Ravi's bike is blue.", "type": "observation", "about": ["Ravi"],
                         "span": "the new bike is blue"}]}),
    )
    report = extract(bench, llm, tmp_path / "notes.md", tmp_path / "call.txt")
    assert report.ok and len(report.queued) == 2 and report.chunks == 2
    sources = sorted((c.record["source"]["id"], c.record["source"]["said_by"], c.record["source"]["locator"])
                     for c in bench.candidates())
    assert sources == [("call.txt#1", "unknown", "call.txt:1"), ("notes.md#2", "unknown", "notes.md:3")]
    assert llm.requests[0]["body"]["messages"][1]["content"].count("Ravi works on the compiler now.\nHe started") == 1


def test_facts_from_one_turn_share_its_source_and_all_approve(bench: Workbench, llm: ChatServer,
                                                              tmp_path: Path) -> None:
    llm.answer(says({"facts": [{**BIKE, "span": "Fine by me."}, BIKE]}))
    report = extract(bench, llm, chat_file(tmp_path))
    assert report.ok and len(report.queued) == 2
    bench.add_user("tester", ["admin", "curator"])
    assert len(bench.approve(list(report.queued), create=["bike"])) == 2


def test_long_transcripts_are_cut_at_turns_and_one_bad_chunk_queues_nothing(
    bench: Workbench, llm: ChatServer, tmp_path: Path
) -> None:
    turns = [{"speaker": "Ravi", "text": f"Turn {i}: " + "words " * 70 + "end."} for i in range(40)]
    path = chat_file(tmp_path, turns)
    llm.answer(says({"facts": [{**BIKE, "span": "Turn 0: words"}]}), says("{\"facts\": [}"), says({"facts": []}))
    before = dump(bench.store)
    report = extract(bench, llm, path)
    assert report.chunks == len(llm.requests) >= 3 and report.queued == ()
    assert report.rejected == (f"{path} chunk 2: the answer is not JSON (Expecting value at line 1, column 12)",)
    assert dump(bench.store) == before
    shown = [r["body"]["messages"][1]["content"] for r in llm.requests]
    assert all(len(s) < 6000 + 1000 for s in shown)
    for t in turns:  # every turn whole, in exactly one request
        assert sum(t["text"] in s for s in shown) == 1


def test_one_bad_transcript_queues_nothing_from_the_run(bench: Workbench, llm: ChatServer, tmp_path: Path) -> None:
    good, bad = chat_file(tmp_path, name="a.jsonl"), chat_file(tmp_path, name="b.jsonl")
    llm.answer(says({"facts": [BIKE]}), says({"facts": [{**BIKE, "span": "I sold my bike"}]}))
    before = dump(bench.store)
    report = extract(bench, llm, good, bad)
    assert not report.ok and report.queued == () and dump(bench.store) == before
    assert report.rejected == (f"{bad} chunk 1: facts[0]: its span is not in the transcript it was shown: "
                               "'I sold my bike'",)


# ---------------------------------------------------------------------- rules: proposed by a person, authored by the model


def test_rules_become_proposed_versions_by_the_model(bench: Workbench, llm: ChatServer, tmp_path: Path) -> None:
    as_ = people(bench.store)  # root (admin), alice (curator), bob (reviewer), ...
    alice = as_("alice")
    llm.answer(says({"facts": [BIKE], "rules": [RULE]}))
    path = chat_file(tmp_path)
    asked = alice.ask("me", "needs").to_json()
    before = dump(bench.store)

    report = extract(alice, llm, path)

    assert report.ok and report.rules_proposed == (("owner-needs", 1),) and report.rules_rejected == ()
    assert report.to_json()["rules"] == [{"from": f"{path} chunk 1", **RULE}]
    assert "1 rule versions proposed" in report.summary() and "  owner-needs v1" in report.summary()
    new = _new_quads(before, dump(bench.store))
    assert all(in_queue(q) or f"{RULES_GRAPH}".encode() in q for q in new)
    # The fact is a pending candidate; the rule a proposed version by the model, proposed by alice.
    (cand,) = alice.candidates()
    assert cand.status == "pending" and cand.record["statement"] == BIKE["statement"]
    (v,) = alice.rule_versions("owner-needs")
    assert (v.status, v.author, v.proposed.who) == ("proposed", "model:extractor-small", "alice")
    assert 'dcterms:creator "model:extractor-small"' in v.text and "Dana Okafor" not in v.text
    rows = bench.store.select(f"""PREFIX wb: <https://w3id.org/workbench/ns#> PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?model ?pv ?used ?digest WHERE {{ GRAPH {RULES_GRAPH} {{ <{v.iri}> prov:wasGeneratedBy ?act .
        ?act a wb:RuleProposal ; wb:extractedBy ?model ; wb:promptVersion ?pv ; prov:used ?used ;
             wb:recordDigest ?digest }} }}""")
    assert [(r["model"].value, r["pv"].value, r["used"].value, r["digest"].value) for r in rows] == [  # type: ignore[union-attr]
        ("urn:wb:agent:model:extractor-small", "facts-v2", str(path), hashlib.sha256(path.read_bytes()).hexdigest())]
    # Proposed: not used by answers.
    assert "owner-needs" not in [r.id for r in alice.rules.active()]
    assert alice.ask("me", "needs").to_json() == asked

    # The same answer again: nothing new.
    again = extract(alice, llm, path)
    assert again.ok and again.queued == () and again.rules_proposed == ()

    # Four eyes: neither the proposer nor the model signs off; a reviewer does, and then it answers.
    with pytest.raises(Forbidden, match="cannot sign off"):
        alice.signoff_rule("owner-needs", comment="mine")
    as_("root").add_user("model:extractor-small", ["reviewer"])
    with pytest.raises(Forbidden, match="cannot sign off their own rule owner-needs v1"):
        as_("model:extractor-small").signoff_rule("owner-needs", comment="looks right to me")
    signed = as_("bob").signoff_rule("owner-needs", comment="read the test case and the dry run")
    assert signed.status == "active" and signed.signed_off is not None and signed.signed_off.who == "bob"
    bob = as_("bob")
    assert "owner-needs" in [r.id for r in bob.rules.active()]
    assert bob.ask("me", "needs").to_json() != asked


BAD_RULES = [
    (OWNER_NEEDS.replace("rule:owner-needs-v1 .", "rule:owner-needs-v1", 1), "Turtle syntax error"),
    (OWNER_NEEDS.replace("WHERE { $this wb:owns ?t .", "WHERE { $this wb:owns ?t . OPTIONAL { ?t wb:has ?z } ."),
     "OPTIONAL"),
    (OWNER_NEEDS[:OWNER_NEEDS.index("    wb:testCase")].rstrip().removesuffix(";") + " .\n", "a rule needs test cases"),
    (OWNER_NEEDS.replace("CONSTRUCT { $this wb:needs ?y }", "CONSTRUCT { $this wb:craves ?y }"),
     "not a relation rules may conclude"),
    (OWNER_NEEDS.replace('"owner-needs" ;', '"inherit-kind" ;'), "version 1 of inherit-kind exists in the rules"),
]


@pytest.mark.parametrize(("turtle", "reason"), BAD_RULES, ids=["syntax", "optional", "no-tests", "relation", "taken"])
def test_a_bad_rule_rejects_the_run(bench: Workbench, llm: ChatServer, tmp_path: Path, turtle: str,
                                    reason: str) -> None:
    alice = people(bench.store)("alice")
    llm.answer(says({"facts": [BIKE], "rules": [RULE, {"turtle": turtle, "reading": "x"}]}))
    path = chat_file(tmp_path)
    before = dump(bench.store)
    report = extract(alice, llm, path)
    assert not report.ok and report.queued == () and report.rules_proposed == ()
    assert len(report.rejected) == len(report.rules_rejected) == 1 and report.rejected == report.rules_rejected
    assert report.rejected[0].startswith(f"{path} chunk 1: rules[1]") and reason in report.rejected[0], report.rejected
    assert dump(bench.store) == before and alice.candidates() == [] and alice.rule_versions() == []


def test_two_different_rules_under_one_version_reject_the_run(bench: Workbench, llm: ChatServer,
                                                              tmp_path: Path) -> None:
    alice = people(bench.store)("alice")
    other = {"turtle": OWNER_NEEDS.replace("Y, then X needs Y.", "Y, X needs Y too."), "reading": "x"}
    llm.answer(says({"facts": [], "rules": [RULE, RULE, other]}))
    before = dump(bench.store)
    report = extract(alice, llm, chat_file(tmp_path))
    assert report.rules_rejected == (f"{tmp_path / 'chat.jsonl'} chunk 1: rules[2]: rule owner-needs version 1 is "
                                     "given twice with different content",)
    assert dump(bench.store) == before


@pytest.mark.parametrize("who", ["tester", "viewer"])
def test_rules_need_a_proposer_who_may_propose(bench: Workbench, llm: ChatServer, tmp_path: Path, who: str) -> None:
    as_ = people(bench.store)
    as_("root").add_user("viewer", ["viewer"])
    llm.answer(says({"facts": [BIKE], "rules": [RULE]}))
    before = dump(bench.store)
    with pytest.raises(Forbidden, match="propose rules") as err:
        extract(as_(who), llm, chat_file(tmp_path))
    assert ("needs the curator role" in err.value.message) == (who == "viewer")
    assert dump(bench.store) == before
    llm.answer(says({"facts": [BIKE]}))  # without rules, anyone may run an extraction, as before
    assert extract(as_(who), llm, chat_file(tmp_path)).queued


def test_authored_replaces_a_claimed_author_and_adds_a_missing_one() -> None:
    model = "model:m"
    plain = OWNER_NEEDS.replace('    dcterms:creator "Dana Okafor" ;\n', "")
    assert rulebook.parse_text(extraction.authored(plain, model), "x", frozenset({WB_NS + "needs"}))[0].author == model
    for claim in ('dcterms:creator """Dana"""', "dcterms:creator 'Dana'@en", 'dcterms:creator "Da\\"na"'):
        text = extraction.authored(OWNER_NEEDS.replace('dcterms:creator "Dana Okafor"', claim), model)
        assert "Dana" not in text and rulebook.parse_text(text, "x", frozenset({WB_NS + "needs"}))[0].author == model
    commented = OWNER_NEEDS.replace("rule:owner-needs a", '# dcterms:creator "Dana" is in a comment\nrule:owner-needs a')
    assert '# dcterms:creator "Dana" is in a comment' in extraction.authored(commented, model)
    assert extraction.authored("not turtle", model) == "not turtle"


# ---------------------------------------------------------------------- bad answers: rejected, nothing changes


@pytest.mark.parametrize(("answer", "reason"), [
    ("{'facts': []}", "the answer is not JSON (Expecting property name enclosed in double quotes"),
    ("[]", "the answer must be a JSON object with 'facts'"),
    ({"items": [BIKE]}, "the answer has no 'facts' (it has: 'items')"),
    ({"facts": BIKE}, "'facts' must be a list"),
    ({"facts": [BIKE], "notes": "x"}, "the answer has unknown field 'notes'"),
    ({"facts": [{k: v for k, v in BIKE.items() if k != "span"}]}, "facts[0] has no 'span'"),
    ({"facts": [{**BIKE, "span": "Ravi bought a car"}]}, "facts[0]: its span is not in the transcript"),
    ({"facts": [{**BIKE, "span": "[2] Ravi (2026-06-01T11:01:00Z): Fine"}]}, "facts[0]: its span is not in the transcript"),
    ({"facts": [{**BIKE, "type": "rumour"}]}, "facts[0]: field 'type': unknown record type 'rumour'"),
    ({"facts": [{**BIKE, "confidence": 0.9}]}, "facts[0] has unknown field 'confidence'"),
    ({"facts": [{**BIKE, "triples": [["Ravi", "adores", "bike"]]}]}, "facts[0]: triples[0]: unknown relation 'adores'"),
    ({"facts": [{**BIKE, "effective_from": "last week"}]}, "facts[0]: field 'effective_from' must be an ISO 8601 date"),
    ({"facts": [{**BIKE, "about": "Ravi", "triples": None}]}, "facts[0]: field 'about' must be a list"),
    ({"facts": [BIKE, {**BIKE, "span": "Ravi bought a car"}]}, "facts[1]: its span is not in the transcript"),
    ({"facts": [BIKE, {**BIKE, "type": "event"}]}, "facts[1]: the same statement and span as an earlier fact"),
    ({"facts": [], "rules": [{"reading": "x"}]}, "rules[0] has no 'turtle'"),
])
def test_bad_answers_are_rejected_with_their_reason(
    bench: Workbench, llm: ChatServer, tmp_path: Path, answer: Any, reason: str
) -> None:
    llm.answer(says(answer))
    path = chat_file(tmp_path)
    before = dump(bench.store)
    report = extract(bench, llm, path)
    assert not report.ok and report.queued == () and bench.candidates() == []
    assert any(r.startswith(f"{path} chunk 1: {reason}") for r in report.rejected), report.rejected
    assert dump(bench.store) == before


def test_cut_off_answer_says_so(bench: Workbench, llm: ChatServer, tmp_path: Path) -> None:
    body = json.dumps({"choices": [{"message": {"content": '{"facts": [{"statement": "Ra'}, "finish_reason": "length"}]})
    llm.answer(raw(body.encode()))
    report = extract(bench, llm, chat_file(tmp_path))
    assert "the model stopped at its length limit" in report.rejected[0]


# ---------------------------------------------------------------------- a failing server: an error, nothing changes


@pytest.mark.parametrize(("behaviour", "message"), [
    (status(500, "model crashed: out of memory " + "x" * 400), "the model server answered HTTP 500: model crashed: "
                                                              "out of memory " + "x" * 171 + "..."),
    (status(401, '{"error": "invalid api key"}'), 'answered HTTP 401: {"error": "invalid api key"}'),
    (raw(b"<html>gateway</html>"), "the model server's answer is not JSON: <html>gateway</html>"),
    (raw(b'{"choices": []}'), "the model server's answer has no choices[0].message.content"),
    (raw(json.dumps({"choices": [{"message": {"content": None, "refusal": "no"}}]}).encode()), "no choices[0]"),
])
def test_server_failures_are_errors(bench: Workbench, llm: ChatServer, tmp_path: Path, behaviour: Behaviour,
                                    message: str) -> None:
    llm.answer(behaviour)
    path = chat_file(tmp_path)
    before = dump(bench.store)
    with pytest.raises(ModelUnavailable) as err:
        extract(bench, llm, path)
    assert message in err.value.message and err.value.where == llm.url + "/chat/completions"
    assert f"(extracting {path}, chunk 1 of 1; nothing was queued)" in err.value.message
    assert err.value.status == 502 and dump(bench.store) == before


@pytest.mark.parametrize("how", ["silent", "dribble"])
def test_timeouts_count_the_whole_answer(bench: Workbench, llm: ChatServer, tmp_path: Path, how: str) -> None:
    llm.answer(llm.sleep(5) if how == "silent" else llm.dribble(5))
    before = dump(bench.store)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"did not answer within 0\.5 seconds"):
        extract(bench, llm, chat_file(tmp_path), timeout=0.5)
    assert time.monotonic() - started < 2.5
    assert dump(bench.store) == before


@pytest.mark.parametrize(("url", "message"), [
    (None, "connection refused: is the model server running at this URL?"),
    ("http://no-such-host.invalid/v1", "cannot find the model server's host"),
    ("ftp://127.0.0.1/v1", "the model server URL must be http(s)://"),
])
def test_unreachable_servers(bench: Workbench, tmp_path: Path, url: str | None, message: str) -> None:
    before = dump(bench.store)
    with pytest.raises((ModelUnavailable, Invalid), match=message.replace("(", r"\(").replace(")", r"\)")):
        bench.extract([chat_file(tmp_path)], llm_url=url or f"http://127.0.0.1:{free_port()}/v1", model="m",
                      timeout=5)
    assert dump(bench.store) == before


# ---------------------------------------------------------------------- bad transcripts and prompts: nothing asked


@pytest.mark.parametrize(("content", "name", "where", "message"), [
    ('{"speaker": "a", "text": "hi"}\n{"speaker": "b", "text": "oops"\n', "t.jsonl", "t.jsonl:2", "not JSON"),
    ('\n{"speaker": "a", "said": "hi"}\n', "t.jsonl", "t.jsonl:2", "unknown field 'said'"),
    ('{"speaker": "a", "text": "hi", "time": "yesterday"}\n', "t.jsonl", "t.jsonl:1", "field 'time' must be"),
    ('["hi"]\n', "t.jsonl", "t.jsonl:1", "a turn must be a JSON object"),
    ("\n\n  \n", "t.txt", "t.txt", "the transcript has no text"),
    ("hello", "t.pdf", "t.pdf", "not a transcript"),
])
def test_bad_transcripts_ask_nothing(bench: Workbench, llm: ChatServer, tmp_path: Path, content: str, name: str,
                                     where: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    before = dump(bench.store)
    with pytest.raises(Invalid, match=message) as err:
        extract(bench, llm, chat_file(tmp_path), path)
    assert err.value.where == str(tmp_path / where) and llm.requests == [] and dump(bench.store) == before


def test_prompt_versions_are_fixed(bench: Workbench, llm: ChatServer, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotFound, match="no prompt version 'facts-v9'; known: facts-v1, facts-v2"):
        extract(bench, llm, chat_file(tmp_path), prompt="facts-v9")
    edited = tmp_path / "prompts"
    edited.mkdir()
    text = (prompts.PROMPTS_DIR / "facts-v1.md").read_text(encoding="utf-8")
    (edited / "facts-v1.md").write_text(text.replace("Only what is said.", "Anything goes."), encoding="utf-8")
    monkeypatch.setattr(prompts, "PROMPTS_DIR", edited)
    with pytest.raises(Invalid, match="prompt facts-v1 was edited"):
        extract(bench, llm, chat_file(tmp_path), prompt="facts-v1")
    assert llm.requests == []


# ---------------------------------------------------------------------- the command


def _store(tmp_path: Path) -> Path:
    with Workbench.open(tmp_path / "cli-store", create=True, user="tester") as wb:
        wb.init(sample=True)
    return tmp_path / "cli-store"


def test_cli_extract_json(llm: ChatServer, tmp_path: Path) -> None:
    store, path = _store(tmp_path), chat_file(tmp_path)
    llm.answer(says({"facts": [DECISION]}))
    args = ["--store", str(store), "--as", "tester", "extract", str(path), "--json"]
    env = {"WORKBENCH_LLM_URL": llm.url, "WORKBENCH_LLM_MODEL": "small", "WORKBENCH_LLM_KEY": "k1"}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["ok"] and len(out["queued"]) == 1 and out["model"] == "small" and out["prompt_version"] == "facts-v2"
    assert out["rules"] == out["rules_proposed"] == out["rules_rejected"] == []
    assert llm.requests[0]["headers"]["Authorization"] == "Bearer k1"
    with Workbench.open(store, user="tester") as wb:
        assert [c.id for c in wb.candidates()] == out["queued"]

    llm.answer(status(500, "boom"))
    failed = CliRunner().invoke(main, [*args, "--llm-url", llm.url, "--model", "m", "--api-key", "k2"], env=env)
    assert failed.exit_code == 1 and "HTTP 500: boom" in failed.stderr
    assert llm.requests[-1]["headers"]["Authorization"] == "Bearer k2"

    llm.answer(says({"facts": [{**BIKE, "span": "not said"}]}))
    rejected = CliRunner().invoke(main, args[:-1], env=env)
    assert rejected.exit_code == 1 and "rejected, nothing was queued" in rejected.stdout
    assert "its span is not in the transcript" in rejected.stdout and "nothing was queued" in rejected.stderr
