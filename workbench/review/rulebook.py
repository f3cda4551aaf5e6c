"""The rule lifecycle: propose, test, sign off, retire, history and export of rule versions.

Rule versions live in the store (graph ``urn:wb:graph:rules``), one node per version
(``urn:wb:rule:{id}/v{n}``) holding the exact Turtle text it was proposed with, its author (from
the file), its status and the acts on it: who proposed it, who signed it off (with a comment) or
retired it, and when. An edit is a new version: the text of a stored version never changes,
only its status moves on (proposed -> active -> retired).

Which rules answer questions (:func:`effective`): the files in ``rules/`` as before, except
that once a version of a rule has been signed off in the store, the store decides for that rule:
its active version answers, or, when every signed version was retired, none does. Proposed and
draft versions never answer.

Four eyes: a version is signed off by a reviewer who is neither its author nor its proposer,
with all its test cases passing, while it is still proposed at the moment of the write
(:mod:`workbench.review.claims` makes that check and the write one step).
"""

from __future__ import annotations

import difflib
import functools
import re
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyoxigraph as ox

from workbench.access.users import Role, require, user
from workbench.errors import Conflict, Forbidden, Invalid, NotFound, WorkbenchError
from workbench.ids import RULES_GRAPH, id_from_iri
from workbench.records.acts import activity
from workbench.review.claims import holding
from workbench.review.queue import Proposal
from workbench.rules.check import CaseResult, run_tests
from workbench.rules.load import check_set, load_file
from workbench.store import Store
from workbench.store.files import write_atomically
from workbench.values.rules import Rule, RuleSet
from workbench.vocab import DCTERMS, PREFIXES, PROV, RDF, SH, WB, WB_NS, XSD

RULE_PREFIX = "urn:wb:rule:"
STATUS = {WB.Draft.value: "draft", WB.Proposed.value: "proposed", WB.Active.value: "active",
          WB.Retired.value: "retired"}
# What a file may say (the loader knows Active, Draft and Retired; a proposal is a draft there).
FILE_STATUS = {"active": "Active", "retired": "Retired", "proposed": "Draft", "draft": "Draft"}


def rule_node(rule_id: str) -> ox.NamedNode:
    """The rule as a whole, across its versions (claims for a change are made on it)."""
    return ox.NamedNode(RULE_PREFIX + quote(rule_id, safe="-._~"))


def version_node(rule_id: str, version: int) -> ox.NamedNode:
    return ox.NamedNode(f"{rule_node(rule_id).value}/v{version}")


@dataclass(frozen=True)
class Act:
    """Who did something to a rule version, when, and what they said."""

    who: str
    when: str
    comment: str = ""

    def to_json(self) -> dict[str, str]:
        return {"who": self.who, "when": self.when, "comment": self.comment}


@dataclass(frozen=True)
class Version:
    """One stored rule version and what people did to it."""

    id: str
    version: int
    iri: str
    status: str  # "draft" | "proposed" | "active" | "retired"
    author: str
    text: str
    proposed: Act
    signed_off: Act | None = None
    retired: Act | None = None

    @property
    def label(self) -> str:
        return f"{self.id} v{self.version}"

    def to_json(self, *, text: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "version": self.version, "iri": self.iri, "status": self.status, "author": self.author,
            "proposed": self.proposed.to_json(),
            "signed_off": self.signed_off.to_json() if self.signed_off else None,
            "retired": self.retired.to_json() if self.retired else None,
        }
        if text:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class Proposed:
    """What a proposal did with one rule of the file: stored it, or found it stored already."""

    id: str
    version: int
    outcome: str  # "proposed" | "unchanged"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "outcome": self.outcome}


# ---------------------------------------------------------------------- reading the store


def stamp(store: Store) -> tuple[tuple[str, str], ...]:
    """Every stored version with its status: what answering depends on, cheap to compare."""
    rows = store.select(f"SELECT ?v ?s WHERE {{ GRAPH {RULES_GRAPH} {{ ?v {WB.ruleStatus} ?s }} }}")
    return tuple(sorted((str(r["v"]), str(r["s"])) for r in rows))


def versions(store: Store, rule_id: str | None = None) -> list[Version]:
    """Stored versions (of one rule, or all), by id and version."""
    only = f"VALUES ?id {{ {ox.Literal(rule_id)} }}" if rule_id is not None else ""
    rows = store.select(PREFIXES + f"""SELECT ?v ?id ?n ?author ?status ?text ?pa ?pwhen WHERE {{ {only}
        GRAPH {RULES_GRAPH} {{ ?v a wb:Rule ; dcterms:identifier ?id ; wb:ruleVersion ?n ; dcterms:creator ?author ;
            wb:ruleStatus ?status ; wb:ruleText ?text ; prov:wasGeneratedBy ?p .
            ?p prov:wasAssociatedWith ?pa ; prov:startedAtTime ?pwhen }} }}""")
    acts = store.select(PREFIXES + f"""SELECT ?v ?kind ?a ?when ?why WHERE {{
        GRAPH {RULES_GRAPH} {{ ?act prov:used ?v ; a ?kind ; prov:wasAssociatedWith ?a ; prov:startedAtTime ?when .
            OPTIONAL {{ ?act wb:reason ?why }} FILTER(?kind IN (wb:SignOff, wb:RuleRetirement)) }} }}""")
    done: dict[tuple[str, str], Act] = {}
    for a in sorted(acts, key=lambda r: (str(r["when"]), str(r["a"]))):
        key = (str(a["v"]), "signed" if a["kind"] == WB.SignOff else "retired")
        done.setdefault(key, Act(id_from_iri(a["a"]), _value(a["when"]), _value(a["why"])))  # type: ignore[arg-type]
    out = [
        Version(
            id=_value(r["id"]), version=int(_value(r["n"])), iri=r["v"].value,  # type: ignore[union-attr]
            status=STATUS.get(_value(r["status"]), "draft"), author=_value(r["author"]), text=_value(r["text"]),
            proposed=Act(id_from_iri(r["pa"]), _value(r["pwhen"])),  # type: ignore[arg-type]
            signed_off=done.get((str(r["v"]), "signed")), retired=done.get((str(r["v"]), "retired")),
        )
        for r in rows
    ]
    return sorted({v.iri: v for v in out}.values(), key=lambda v: (v.id, v.version))


def _value(term: object) -> str:
    if term is None:
        return ""
    if isinstance(term, ox.NamedNode):
        return term.value
    return str(getattr(term, "value", term))


def find(store: Store, rule_id: str, version: int | None, *, default: str = "proposed") -> Version:
    """A stored version; without ``version`` the latest with status ``default`` (else the latest).
    Raises NotFound naming what there is."""
    found = versions(store, rule_id)
    if not found:
        raise NotFound(f"no stored version of rule {rule_id!r}; propose one with `workbench rules propose FILE`")
    if version is None:
        wanted = [v for v in found if v.status == default]
        return (wanted or found)[-1]
    for v in found:
        if v.version == version:
            return v
    have = ", ".join(f"v{v.version} ({v.status})" for v in found)
    raise NotFound(f"rule {rule_id} has no version {version}; stored: {have}")


# ---------------------------------------------------------------------- texts and rules


@functools.lru_cache(maxsize=256)
def parse_text(text: str, where: str, relations: frozenset[str]) -> tuple[Rule, ...]:
    """The rules in a stored Turtle text, through the same loader and checks as the files."""
    with tempfile.TemporaryDirectory(prefix="workbench-rule-") as tmp:
        path = Path(tmp) / "rule.ttl"
        path.write_text(text, encoding="utf-8")
        try:
            rules = load_file(path, relations=relations)
        except WorkbenchError as exc:
            raise type(exc)(exc.message, where=(exc.where or "").replace(str(path), where) or where) from None
    return tuple(replace(r, file=where) for r in rules)


def version_rule(v: Version, relations: frozenset[str]) -> Rule:
    """A stored version as a rule the engine can use, with the store's status (a proposal is a
    draft: never used)."""
    for r in parse_text(v.text, v.iri, relations):
        if r.id == v.id and r.version == v.version:
            status = {"active": "active", "retired": "retired"}.get(v.status, "draft")
            return replace(r, status=status)
    raise Invalid(f"the stored text of {v.label} holds no rule {v.id} version {v.version}", where=v.iri)


def same_rule(a: Rule, b: Rule) -> bool:
    """Whether two rules say the same, whatever their status and where they were read from."""
    return replace(a, status="", file="") == replace(b, status="", file="")


def effective(files: RuleSet, stored: Sequence[Version], relations: frozenset[str]) -> RuleSet:
    """The rules that answer: the files, except rules the store has signed off (their active
    version, or none when every signed version was retired)."""
    governed = {v.id for v in stored if v.status in ("active", "retired")}
    rules = [r for r in files.rules if r.id not in governed]
    rules += [version_rule(v, relations) for v in stored if v.status == "active"]
    ruleset = RuleSet(tuple(sorted(rules, key=lambda r: (r.id, r.version))))
    check_set(ruleset)
    return ruleset


def with_version(rules: RuleSet, rule: Rule) -> RuleSet:
    """``rules`` with ``rule`` active in place of every other version of its id."""
    others = [r for r in rules.rules if r.id != rule.id]
    return RuleSet(tuple(sorted([*others, replace(rule, status="active")], key=lambda r: (r.id, r.version))))


def without(rules: RuleSet, rule_id: str) -> RuleSet:
    return RuleSet(tuple(r for r in rules.rules if r.id != rule_id))


def _texts(path: Path, rules: Sequence[Rule]) -> dict[str, str]:
    """Each rule's text: the file as it is when it holds one rule; otherwise the rule's own
    triples (its shape, itself, its test cases), written out as Turtle."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(f"a rule file must be UTF-8: {exc}", where=str(path)) from None
    if len(rules) == 1:
        return {rules[0].iri: text}
    triples = [q.triple for q in ox.parse(text, format=ox.RdfFormat.TURTLE)]
    prefixes = {"sh": "http://www.w3.org/ns/shacl#", "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
                "rdfs": "http://www.w3.org/2000/01/rdf-schema#", "wb": WB_NS, "dcterms": "http://purl.org/dc/terms/",
                "xsd": "http://www.w3.org/2001/XMLSchema#", "rule": RULE_PREFIX}
    out = {}
    for rule in rules:
        node = next(t.subject for t in triples if str(t.subject) == rule.iri)
        shapes = {t.subject for t in triples if t.predicate == SH.rule and t.object == node}
        keep = [t for t in triples if t.subject == node
                or (t.subject in shapes and (t.predicate != SH.rule or t.object == node))]
        reached = {t.object for t in keep if isinstance(t.object, ox.BlankNode)}
        while reached:
            more = [t for t in triples if t.subject in reached and t not in keep]
            keep += more
            reached = {t.object for t in more if isinstance(t.object, ox.BlankNode)}
        out[rule.iri] = (ox.serialize(keep, format=ox.RdfFormat.TURTLE, prefixes=prefixes) or b"").decode()
    return out


# ---------------------------------------------------------------------- acts


def may_propose(store: Store, actor: str) -> None:
    """Raises Forbidden unless ``actor`` may propose rules: a curator, reviewer or admin."""
    found = user(store, actor)
    if found is None or not (found.may(Role.CURATOR) or found.may(Role.REVIEWER)):
        require(store, actor, Role.CURATOR, "propose rules")  # raises, in the usual words


def propose(
    store: Store, path: Path, *, actor: str, now: str, relations: frozenset[str], files: RuleSet,
    via: Proposal | None = None, check_role: bool = True,
) -> list[Proposed]:
    """Store each rule of the file as a new version, proposed. Proposing a version that is
    stored already with the same content changes nothing. ``via`` names an extraction the
    rules came from: the proposal records its input, model and prompt version. Without
    ``check_role`` the proposer need not be a user (the sample's stand-in model).

    Raises ParseError/Invalid naming file, rule, line and column; Forbidden unless ``actor``
    is a curator, reviewer or admin; Conflict for a version that is not above every stored
    one (an edit is a new version)."""
    if check_role:
        may_propose(store, actor)
    if not path.is_file():
        raise Invalid(f"no such rule file: {path}")
    rules = load_file(path, relations=relations)
    seen: set[tuple[str, int]] = set()
    for r in rules:
        if (r.id, r.version) in seen:
            raise Invalid(f"rule {r.id} version {r.version} is defined twice in the file", where=str(path))
        seen.add((r.id, r.version))
    texts = _texts(path, rules)
    with ExitStack() as stack:
        for rid in sorted({r.id for r in rules}):
            stack.enter_context(holding(store, rule_node(rid), f"rule {rid}"))
        stored = versions(store)
        report, new = [], []
        for r in rules:
            outcome = placed(r, [v for v in stored if v.id == r.id], files, relations)
            report.append(Proposed(r.id, r.version, outcome))
            if outcome == "proposed":
                new.append(r)
        if new:
            act, quads = activity("rule-proposal", WB.RuleProposal, actor=actor, now=now, graph=RULES_GRAPH)
            quads.append(ox.Quad(act, PROV.used, ox.Literal(via.input if via else path.name), RULES_GRAPH))
            if via and via.model:
                quads.append(ox.Quad(act, WB.extractedBy, ox.NamedNode(f"urn:wb:agent:model:{via.model}"),
                                     RULES_GRAPH))
            if via and via.prompt_version:
                quads.append(ox.Quad(act, WB.promptVersion, ox.Literal(via.prompt_version), RULES_GRAPH))
            if via and via.input_digest:
                quads.append(ox.Quad(act, WB.recordDigest, ox.Literal(via.input_digest), RULES_GRAPH))
            for r in new:
                v = version_node(r.id, r.version)
                quads += [ox.Quad(v, p, o, RULES_GRAPH) for p, o in (
                    (RDF.type, WB.Rule), (DCTERMS.identifier, ox.Literal(r.id)),
                    (WB.ruleVersion, ox.Literal(str(r.version), datatype=XSD.integer)),
                    (DCTERMS.creator, ox.Literal(r.author)), (WB.ruleStatus, WB.Proposed),
                    (WB.ruleText, ox.Literal(texts[r.iri])), (PROV.wasGeneratedBy, act))]
            store.apply(insert=quads)
    return report


def placed(rule: Rule, stored: Sequence[Version], files: RuleSet, relations: frozenset[str]) -> str:
    """Where a proposed rule goes: "unchanged" when that version is stored with the same
    content, "proposed" when it is above every other. Raises Conflict otherwise."""
    for v in stored:
        if v.version == rule.version:
            if same_rule(version_rule(v, relations), rule):
                return "unchanged"
            raise Conflict(f"version {rule.version} of {rule.id} exists; an edit is a new version "
                           f"(v{max(x.version for x in stored) + 1})")
    shipped = [r for r in files.rules if r.id == rule.id]
    if any(r.version == rule.version and not same_rule(r, rule) for r in shipped):
        raise Conflict(f"version {rule.version} of {rule.id} exists in the rules directory; an edit is a new "
                       f"version (v{max(r.version for r in shipped) + 1})")
    higher = [v.version for v in stored if v.version > rule.version]
    if higher:
        raise Conflict(f"version {max(higher)} of {rule.id} exists; an edit is a new version "
                       f"(v{max(higher) + 1}), not v{rule.version}")
    return "proposed"


def run_version_tests(
    store: Store, rule_id: str, version: int | None, *, relations: frozenset[str], files: RuleSet
) -> tuple[str, list[CaseResult]]:
    """Run the test cases of a stored version (default: the latest), or of the rule in the
    files when the store has none. Returns the version's label and each case's result."""
    if version is None and not versions(store, rule_id):
        rule = files.get(rule_id)
    else:
        rule = version_rule(find(store, rule_id, version, default=""), relations)
    return rule.label, run_tests(RuleSet((rule,)))


def signoff(
    store: Store, rule_id: str, version: int | None, *, actor: str, comment: str, now: str,
    relations: frozenset[str], files: RuleSet,
) -> Version:
    """Sign off a proposed version (default: the latest proposed): it becomes active, and the
    version active before it retires.

    Raises Forbidden unless ``actor`` is a reviewer who is neither the author nor the proposer;
    Invalid when a test case fails (naming each) or the comment is blank; Conflict when the
    version is not proposed any more, also when another reviewer signed it off a moment ago."""
    require(store, actor, Role.REVIEWER, "sign off rules")
    if not comment.strip():
        raise Invalid("a sign-off needs a comment: what you checked, in a few words")
    v = find(store, rule_id, version)
    _still_proposed(v)
    if actor == v.author:
        raise Forbidden(f"{actor} cannot sign off their own rule {v.label}: a reviewer other than its author must")
    if actor == v.proposed.who:
        raise Forbidden(f"{actor} proposed {v.label}, so cannot sign it off: a reviewer other than its author "
                        "and its proposer must")
    rule = version_rule(v, relations)
    failed = [c for c in run_tests(RuleSet((rule,))) if not c.passed]
    if failed:
        listed = "; ".join(f"{c.case!r} (expected, not concluded: {list(c.missing)}; concluded, must not "
                           f"follow: {list(c.unwanted)})" for c in failed)
        raise Invalid(f"{v.label} fails {len(failed)} of its {len(rule.tests)} test case(s), so it cannot be "
                      f"signed off: {listed}", failed=[c.case for c in failed])
    with holding(store, rule_node(rule_id), f"rule {rule_id}"):
        current = versions(store, rule_id)
        now_v = next(x for x in current if x.iri == v.iri)
        _still_proposed(now_v)
        check_set(with_version(effective(files, current, relations), rule))
        node = ox.NamedNode(v.iri)
        act, quads = activity("signoff", WB.SignOff, actor=actor, now=now, graph=RULES_GRAPH, reason=comment)
        quads += [ox.Quad(act, PROV.used, node, RULES_GRAPH), ox.Quad(node, WB.ruleStatus, WB.Active, RULES_GRAPH)]
        removals = [ox.Quad(node, WB.ruleStatus, WB.Proposed, RULES_GRAPH)]
        for old in (x for x in current if x.status == "active"):
            more, gone = _retiring(old, actor=actor, now=now, reason=f"superseded by {v.label}")
            quads += more
            removals += gone
        store.apply(insert=quads, delete=removals)
    return find(store, rule_id, v.version)


def _still_proposed(v: Version) -> None:
    if v.status == "proposed":
        return
    if v.signed_off:
        by = f" (signed off by {v.signed_off.who} at {v.signed_off.when})"
    elif v.retired:
        by = f" (retired by {v.retired.who} at {v.retired.when})"
    else:
        by = ""
    raise Conflict(f"{v.label} is {v.status}{by}, not proposed: only a proposed version can be signed off, and "
                   "signed versions never change; an edit is a new version")


def _retiring(v: Version, *, actor: str, now: str, reason: str) -> tuple[list[ox.Quad], list[ox.Quad]]:
    node = ox.NamedNode(v.iri)
    act, quads = activity("rule-retirement", WB.RuleRetirement, actor=actor, now=now, graph=RULES_GRAPH,
                          reason=reason)
    quads += [ox.Quad(act, PROV.used, node, RULES_GRAPH), ox.Quad(node, WB.ruleStatus, WB.Retired, RULES_GRAPH),
              ox.Quad(node, PROV.invalidatedAtTime, ox.Literal(now, datatype=XSD.dateTime), RULES_GRAPH)]
    old = {"active": WB.Active, "proposed": WB.Proposed, "draft": WB.Draft}[v.status]
    return quads, [ox.Quad(node, WB.ruleStatus, old, RULES_GRAPH)]


def retire(store: Store, rule_id: str, version: int | None, *, actor: str, reason: str, now: str) -> Version:
    """Withdraw the active version of a rule (or a named proposed one) from answering.

    Raises Forbidden unless ``actor`` is a reviewer or admin; Invalid for a blank reason;
    NotFound when the store has no such version; Conflict when it is retired already."""
    require(store, actor, Role.REVIEWER, "retire rules")
    if not reason.strip():
        raise Invalid("retiring a rule needs a reason")
    with holding(store, rule_node(rule_id), f"rule {rule_id}"):
        v = find(store, rule_id, version, default="active")
        if version is None and v.status != "active":
            raise NotFound(f"rule {rule_id} has no active version in the store to retire (the latest, {v.label}, "
                           f"is {v.status}); a rule only in the rules directory is retired by signing off a "
                           "stored version and retiring that, or by removing its file")
        if v.status == "retired":
            raise Conflict(f"{v.label} is retired already")
        quads, removals = _retiring(v, actor=actor, now=now, reason=reason)
        store.apply(insert=quads, delete=removals)
    return find(store, rule_id, v.version)


# ---------------------------------------------------------------------- history and export


@dataclass(frozen=True)
class Entry:
    """One version in a rule's history, with what changed since the version before it."""

    version: Version
    diff: str

    def to_json(self) -> dict[str, Any]:
        return {**self.version.to_json(), "diff": self.diff}


def history(store: Store, rule_id: str) -> list[Entry]:
    """Every stored version, oldest first, each with a unified diff against the one before."""
    found = versions(store, rule_id)
    if not found:
        raise NotFound(f"no stored version of rule {rule_id!r}")
    out, before, name = [], "", "/dev/null"
    for v in found:
        diff = "".join(difflib.unified_diff(before.splitlines(keepends=True), _eol(v.text).splitlines(keepends=True),
                                            fromfile=name, tofile=v.label))
        out.append(Entry(v, diff))
        before, name = _eol(v.text), v.label
    return out


def _eol(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def export(store: Store, directory: Path) -> list[Path]:
    """Write each stored rule back as ``DIR/{id}.ttl``: its active version if it has one (the
    reviewed rule, as the rules directory holds them), else its latest, with the status the
    store gives it. Proposing such a file again changes nothing."""
    by_id: dict[str, list[Version]] = {}
    for v in versions(store):
        by_id.setdefault(v.id, []).append(v)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rid, found in sorted(by_id.items()):
        v = next((x for x in found if x.status == "active"), found[-1])
        text, n = re.subn(r"(wb:ruleStatus\s+)wb:[A-Za-z]+", rf"\1wb:{FILE_STATUS[v.status]}", v.text)
        if n != 1:
            text = v.text  # a status written some other way: the text as it was stored
        target = directory / f"{quote(rid, safe='-._~')}.ttl"
        write_atomically(target, _eol(text).encode("utf-8"))
        written.append(target)
    return written
