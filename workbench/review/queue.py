"""The candidate queue: proposed memory records wait here for a curator. Nothing in the queue is
a fact: each candidate lives in a graph of its own (``urn:wb:candidate:ID``), as the record
proposed (JSON, exactly as it came) with its provenance, the decisions on it and who may see it
(:mod:`workbench.records.candidates`), and answering never reads those graphs.

A curator approves a candidate (possibly edited): it is imported like any memory record, with
the same validation, attributed to its source, to the extractor, and to the curator who
confirmed it; rejects it with a reason (kept for the audit); or merges duplicates. Every
decision is a PROV activity. A decision checks that the candidates are still pending and writes,
while holding a short claim on the queue, so two curators deciding the same candidate at once get one winner and one
Conflict, and nothing is lost or written twice.

Names in a candidate bind exactly, as in any import; a name that binds nothing must be named in
``create`` (a new entity, made explicitly) or in ``bind`` (an existing entity) before approval:
never a fuzzy match.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench.access.users import Role, require
from workbench.access.writes import Writer, taken
from workbench.errors import Conflict, Invalid, NotFound, WorkbenchError
from workbench.ids import QUEUE_GRAPH, candidate_iri, id_from_iri, record_iri, summary_iri
from workbench.imports.records import RecordsPlanner
from workbench.names import entities
from workbench.names.keys import name_key
from workbench.records import candidates as graphs
from workbench.records import jsonl, unsuperseded
from workbench.records.acts import activity
from workbench.review import guessed, summaries
from workbench.review.claims import holding
from workbench.store import Store
from workbench.store.base import data_block
from workbench.vocab import PREFIXES, PROV, RDF, WB

STATUSES = {"pending": WB.Pending, "approved": WB.Approved, "rejected": WB.Rejected, "merged": WB.Merged}
CANDIDATE_ONLY = ("span", "guess")  # fields a candidate may carry beyond a memory record


@dataclass(frozen=True)
class Proposal:
    """Where candidates came from: an extraction (model, prompt version, input), an import of
    another pipeline's output (the file), or the guesser's proposals (model and version)."""

    kind: str  # "extraction" | "import" | "model"
    input: str  # the transcript or file, as named by whoever proposed
    model: str | None = None
    prompt_version: str | None = None
    input_digest: str | None = None


@dataclass(frozen=True)
class Candidate:
    id: str
    status: str
    record: dict[str, Any]
    span: str | None
    proposed_at: str
    proposed_by: str  # the agent: a model ("model:NAME") or a person
    proposal: str  # the proposal activity's IRI
    model: str | None = None
    prompt_version: str | None = None
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    approved_as: str | None = None
    merged_into: str | None = None
    guess: dict[str, Any] | None = None  # a model proposal's basis (:mod:`workbench.review.guessed`)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}

    def _repr_html_(self) -> str:
        """Jupyter's rich view: what is proposed, from which text, by whom (:mod:`workbench.presentation.notebook`)."""
        from workbench.presentation.notebook import candidate_html

        return candidate_html(self)


@dataclass(frozen=True)
class Checks:
    """What a curator sees before approving: validation, exact duplicates already recorded,
    conflicts with active records, and how each name binds."""

    candidate: str
    valid: bool
    problems: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = ()  # ids of active records that say the same
    conflicts: tuple[str, ...] = ()  # plain words: which record, which fact
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> entities it binds to (0, 1 or more)

    @property
    def unbound(self) -> list[str]:
        return sorted(n for n, e in self.names.items() if len(e) != 1)

    def to_json(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "valid": self.valid, "problems": list(self.problems),
                "duplicates": list(self.duplicates), "conflicts": list(self.conflicts),
                "names": {n: list(e) for n, e in sorted(self.names.items())}, "unbound": self.unbound}


# ---------------------------------------------------------------------- proposing


def _canonical(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def parse(lines: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Candidate records from (where, JSON value) pairs, each checked as a memory record (a
    candidate may also carry ``span``, the text it was taken from). Raises Invalid naming where."""
    out = []
    for where, raw in lines:
        if not isinstance(raw, dict):
            raise Invalid("a candidate must be a JSON object (a memory record)", where=where)
        if summaries.is_summary(raw) or guessed.is_merge(raw):
            out.append(summaries.check(raw, where) if summaries.is_summary(raw) else guessed.check_merge(raw, where))
            continue
        rec = {k: v for k, v in raw.items() if k not in CANDIDATE_ONLY}
        if "id" not in rec:
            rec["id"] = "c-" + hashlib.sha256(_canonical(rec).encode()).hexdigest()[:12]
        span = raw.get("span")
        if span is not None and (not isinstance(span, str) or not span.strip()):
            raise Invalid("'span' must be the text the candidate was taken from", where=where)
        jsonl.parse_text(json.dumps(rec, ensure_ascii=False), where)  # the memory-record checks, field by field
        basis = {"guess": guessed.check_guess(raw["guess"], where)} if "guess" in raw else {}
        out.append({**rec, **({"span": span} if span else {}), **basis})
    return out


def parse_file(path: Path) -> list[dict[str, Any]]:
    """A JSON Lines file of candidate records. Raises Invalid/ParseError naming file and line."""
    lines = [(where, raw) for where, _, raw in jsonl.json_lines(jsonl.read_text(path), str(path))]
    if not lines:
        raise Invalid("no candidates in the file", where=str(path))
    return parse(lines)


def propose(
    store: Store, candidates: Sequence[dict[str, Any]], via: Proposal, *, actor: str, now: str,
    seen: Store | None = None,
) -> list[str]:
    """Put checked candidate records in the queue, all or none. A candidate already queued with
    the same content is left as it is; different content under a taken id is a Conflict. A
    summary must summarise records the proposer may see. What they name is looked up in
    ``seen``, the store as the proposer may see it (default: all of it); an id a candidate they
    may not see holds is taken, whatever the content. Returns the ids newly queued."""
    seen = seen or store
    ids = [c["id"] for c in candidates]
    existing = {c.id: c for c in list_candidates(seen, ids=ids)}
    if seen is not store:
        for cid in sorted({c.id for c in list_candidates(store, ids=ids)} - set(existing)):
            raise taken("candidate", cid, None)
    for cand in candidates:
        if summaries.is_summary(cand):
            summaries.check_rests_on(seen, cand)
    agent = f"model:{via.model}" if via.kind in ("extraction", "model") and via.model else actor
    act, run = activity("proposal", WB.Proposal, actor=agent, now=now, graph=QUEUE_GRAPH)  # copied beside each
    run += [ox.Quad(act, WB.proposalKind, ox.Literal(via.kind), QUEUE_GRAPH),
            ox.Quad(act, PROV.used, ox.Literal(via.input), QUEUE_GRAPH)]
    if via.model:
        run.append(ox.Quad(act, WB.extractedBy, ox.NamedNode(f"urn:wb:agent:model:{via.model}"), QUEUE_GRAPH))
    if via.prompt_version:
        run.append(ox.Quad(act, WB.promptVersion, ox.Literal(via.prompt_version), QUEUE_GRAPH))
    if via.input_digest:
        run.append(ox.Quad(act, WB.recordDigest, ox.Literal(via.input_digest), QUEUE_GRAPH))
    new, quads = [], []
    for cand in candidates:
        rec = {k: v for k, v in cand.items() if k not in CANDIDATE_ONLY}
        old = existing.get(cand["id"])
        if old is not None:
            if _canonical(old.record) != _canonical(rec):
                raise Conflict(f"candidate {cand['id']!r} is already queued with other content")
            continue
        node = candidate_iri(cand["id"])
        quads += [
            ox.Quad(node, RDF.type, WB.Candidate, node),
            ox.Quad(node, ox.NamedNode("http://purl.org/dc/terms/identifier"), ox.Literal(cand["id"]), node),
            ox.Quad(node, WB.payload, ox.Literal(_canonical(rec)), node),
            ox.Quad(node, WB.candidateStatus, WB.Pending, node),
            ox.Quad(node, PROV.wasGeneratedBy, act, node),
            ox.Quad(node, PROV.generatedAtTime, ox.Literal(now, datatype=ox.NamedNode(
                "http://www.w3.org/2001/XMLSchema#dateTime")), node),
            *graphs.beside(run, [node]), *graphs.audience(node, rec),
        ]
        if cand.get("span"):
            quads.append(ox.Quad(node, WB.sourceSpan, ox.Literal(cand["span"]), node))
        if cand.get("guess"):
            quads += guessed.basis_quads(node, cand["guess"], node)
        new.append(cand["id"])
    if new:
        store.update(PREFIXES + f"INSERT DATA {{ {data_block(quads)} }}")
    return new


# ---------------------------------------------------------------------- reading


def list_candidates(
    store: Store, *, status: str | None = None, ids: Iterable[str] | None = None, text: str | None = None
) -> list[Candidate]:
    """Candidates, oldest first; filtered by status, ids, or words in their statement."""
    if status is not None and status not in STATUSES:
        raise Invalid(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
    want = list(ids) if ids is not None else None
    if want == []:
        return []
    values = f"VALUES ?c {{ {' '.join(str(candidate_iri(i)) for i in want)} }}" if want else ""  # each its graph
    # (the decision's ?u = ?c is a filter: Virtuoso 7 reads ?c in that OPTIONAL as unbound, and a
    # proposal's prov:used "FILE" would pass for a decision)
    status_filter = f"?c wb:candidateStatus {STATUSES[status]} ." if status else ""
    rows = store.select(
        PREFIXES + f"""SELECT ?c ?payload ?st ?at ?act ?agent ?span ?model ?pv ?who ?when ?why ?as ?into ?basis WHERE {{
        {values} GRAPH ?c {{
          ?c a wb:Candidate ; wb:payload ?payload ; wb:candidateStatus ?st ; prov:generatedAtTime ?at ;
             prov:wasGeneratedBy ?act . ?act prov:wasAssociatedWith ?agent . {status_filter}
          OPTIONAL {{ ?c wb:sourceSpan ?span }} OPTIONAL {{ ?act wb:extractedBy ?model }}
          OPTIONAL {{ ?act wb:promptVersion ?pv }} OPTIONAL {{ ?c wb:guessBasis ?basis }}
          OPTIONAL {{ ?d prov:used ?u ; prov:wasAssociatedWith ?who ; prov:startedAtTime ?when . FILTER(?u = ?c)
                     OPTIONAL {{ ?d wb:reason ?why }} }}
          OPTIONAL {{ ?c wb:approvedAs ?as }} OPTIONAL {{ ?c wb:mergedInto ?into }} }} }}
        ORDER BY ?at ?c"""
    )
    names = {v.value: k for k, v in STATUSES.items()}
    out: dict[str, Candidate] = {}
    for r in rows:
        record = json.loads(r["payload"].value)  # type: ignore[union-attr]
        if text and text.casefold() not in str(record.get("statement", "")).casefold():
            continue
        cid = id_from_iri(r["c"])  # type: ignore[arg-type]
        model = r["model"]
        out.setdefault(cid, Candidate(
            id=cid, status=names[r["st"].value], record=record,  # type: ignore[union-attr]
            span=r["span"].value if r["span"] else None, proposed_at=r["at"].value,  # type: ignore[union-attr]
            proposed_by=id_from_iri(r["agent"]), proposal=r["act"].value,  # type: ignore[arg-type, union-attr]
            model=id_from_iri(model).removeprefix("model:") if model else None,  # type: ignore[arg-type]
            prompt_version=r["pv"].value if r["pv"] else None,
            decided_by=id_from_iri(r["who"]) if r["who"] else None,  # type: ignore[arg-type]
            decided_at=r["when"].value if r["when"] else None,
            reason=r["why"].value if r["why"] else None,
            approved_as=id_from_iri(r["as"]) if r["as"] else None,  # type: ignore[arg-type]
            merged_into=r["into"].value if r["into"] else None,
            guess=json.loads(r["basis"].value) if r["basis"] else None,
        ))
    return list(out.values())


def get(store: Store, candidate_id: str) -> Candidate:
    found = list_candidates(store, ids=[candidate_id])
    if not found:
        raise NotFound(f"no candidate {candidate_id!r} in the queue")
    return found[0]


def _names(record: Mapping[str, Any]) -> list[str]:
    if summaries.is_summary(record) or guessed.is_merge(record):
        return []  # a summary points at records by id, a merge at entities by IRI: neither binds names
    out = [n for key in ("about", "applies_to") for n in record.get(key, []) if isinstance(n, str)]
    out += [record["decided_by"]] if isinstance(record.get("decided_by"), str) else []
    for t in record.get("triples", []):
        if isinstance(t, list) and len(t) == 3:
            out += [x for x in (t[0], t[2]) if isinstance(x, str) and not (x.startswith("<") and x.endswith(">"))]
    return sorted(set(out))


def checks(store: Store, candidate: Candidate) -> Checks:
    """Validation (the import's own checks, run as a plan that is not written), exact duplicates
    among active records, conflicts with recorded negative facts, and the name bindings."""
    rec = candidate.record
    if summaries.is_summary(rec):
        try:
            summaries.plan_approval(store, rec, ox.NamedNode("urn:wb:check"), candidate_iri(candidate.id))
        except Conflict as exc:
            return Checks(candidate.id, False, (exc.message,))
        return Checks(candidate.id, True)
    if guessed.is_merge(rec):
        failing = guessed.merge_problems(store, rec)
        return Checks(candidate.id, not failing, tuple(failing))
    bound = entities.resolve_keys(store, {name_key(n) for n in _names(rec)})
    names = {n: bound.get(name_key(n), ()) for n in _names(rec)}
    problems: list[str] = []
    try:
        _plan(store, store, rec, actor="check", now="2000-01-01T00:00:00Z", candidate=candidate.id)
    except Invalid as exc:
        problems.append(exc.message)
    dup_rows = store.select(
        PREFIXES + f"""SELECT DISTINCT ?id WHERE {{ GRAPH ?m {{ ?r wb:status wb:Active ;
        dcterms:identifier ?id ; wb:statement ?s . FILTER(LCASE(STR(?s)) = {ox.Literal(str(rec.get('statement',
        '')).casefold())}) }} {unsuperseded("?r")} }}"""
    )
    duplicates = sorted({r["id"].value for r in dup_rows})  # type: ignore[union-attr]
    taken = store.ask(PREFIXES + f"ASK {{ GRAPH ?m {{ {record_iri(candidate.id)} a wb:Assertion }} }}")
    if taken:
        duplicates = sorted({*duplicates, candidate.id})
    conflicts = _conflicts(store, rec, names)
    return Checks(candidate.id, not problems, tuple(problems), tuple(duplicates), tuple(conflicts), names)


def _conflicts(store: Store, rec: Mapping[str, Any], names: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Facts of the candidate that an active record says do not hold (a recorded negative fact),
    and negative facts of the candidate (a relation "not ...") that an active record states."""
    from workbench.names.relations import Relations, negated

    relations = Relations.load(store)
    out = []
    for t in rec.get("triples", []):
        if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)):
            continue
        s, o = names.get(t[0], ()), names.get(t[2], ())
        rest = negated(t[1])
        p = relations.get(t[1] if rest is None else rest)
        if p is None or len(s) != 1 or len(o) != 1:
            continue
        if rest is None:
            fact = (f"?n a owl:NegativePropertyAssertion ; owl:sourceIndividual <{s[0]}> ; "
                    f"owl:assertionProperty {p} ; owl:targetIndividual <{o[0]}>")
            says = f"{t[0]} does not {t[1]} {t[2]}"
        else:
            fact, says = f"<{s[0]}> {p} <{o[0]}>", f"{t[0]} {rest} {t[2]}"
        rows = store.select(
            PREFIXES + f"""SELECT DISTINCT ?id WHERE {{ GRAPH ?g {{ {fact} }}
            GRAPH ?m {{ ?g wb:status wb:Active ; dcterms:identifier ?id }} {unsuperseded("?g")} }}"""
        )
        out += [f"record {r['id'].value} says {says}" for r in rows]  # type: ignore[union-attr]
    return out


# ---------------------------------------------------------------------- deciding


def _plan(store: Store, seen: Store, record: Mapping[str, Any], *, actor: str, now: str, candidate: str = "") -> Any:
    """The import plan of one record, through the same checks as ``workbench import`` by a
    writer who sees ``seen``; its provenance says it used the candidate, not the temporary file
    that carried it."""
    with tempfile.TemporaryDirectory(prefix="workbench-candidate-") as tmp:
        path = Path(tmp) / "candidate.jsonl"
        path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        planner = RecordsPlanner(store, actor=actor, now=now, writer=Writer(store, seen))
        try:
            return planner.plan([path], used=[f"candidate {record.get('id')}"])
        except WorkbenchError as exc:
            if not exc.where or not exc.where.startswith(str(path)):
                raise
            # The temporary file means nothing to the curator: the candidate is named instead.
            named = type(exc).__new__(type(exc))
            WorkbenchError.__init__(named, exc.message, where=f"candidate {candidate}", **exc.data)
            raise named from None


def _pending(store: Store, ids: Sequence[str], doing: str) -> list[Candidate]:
    found = {c.id: c for c in list_candidates(store, ids=ids)}
    for cid in ids:
        if cid not in found:
            raise NotFound(f"no candidate {cid!r} in the queue")
        c = found[cid]
        if c.status != "pending":
            by = f" by {c.decided_by}" + (f" on {c.decided_at}" if c.decided_at else "") if c.decided_by else ""
            raise Conflict(f"cannot {doing} candidate {cid}: it was already {c.status}{by}")
    return [found[cid] for cid in ids]


def _decide(store: Store, ids: Sequence[str], act: ox.NamedNode, status: ox.NamedNode, quads: list[ox.Quad],
            removals: Sequence[ox.Quad] = ()) -> None:
    """Write a decision on candidates that are all still pending, as one update, while holding
    the queue's claim: Oxigraph does not stop two concurrent conditional updates from both
    landing (see :mod:`workbench.review.claims`), so the check and the write happen inside the
    claim, and of two curators deciding at once exactly one wins."""
    nodes = [candidate_iri(i) for i in ids]
    pending = [ox.Quad(n, WB.candidateStatus, WB.Pending, n) for n in nodes]
    quads = quads + [ox.Quad(n, WB.candidateStatus, status, n) for n in nodes]
    with holding(store, QUEUE_GRAPH, "the candidate queue", QUEUE_GRAPH):
        _pending(store, ids, "decide on")  # again, now that no one else can decide
        store.update(PREFIXES + f"DELETE DATA {{ {data_block([*pending, *removals])} }} ; "
                     f"INSERT DATA {{ {data_block(quads)} }}")


def approve(
    store: Store,
    ids: Sequence[str],
    *,
    actor: str,
    now: str,
    edits: Mapping[str, Mapping[str, Any]] | None = None,
    create: Iterable[str] = (),
    seen: Store | None = None,
) -> list[str]:
    """Approve candidates (optionally edited) as records, all or none. Returns the record ids.
    What they name (candidates, records, names) is looked up in ``seen``, the store as the
    curator may see it (default: all of it).

    Raises Forbidden without the curator role; NotFound/Conflict for a candidate that is not
    pending; Invalid when an edited record is malformed, the import's checks fail, or a name binds
    nothing and is not in ``create`` (bind it first with an alias, or create it explicitly).
    """
    require(store, actor, Role.CURATOR, "approve candidates")
    seen = seen or store
    if not ids:
        raise Invalid("name at least one candidate to approve")
    cands = _pending(seen, ids, "approve")
    act, said = activity("approval", WB.Approval, actor=actor, now=now, graph=QUEUE_GRAPH)  # copied beside each
    quads: list[ox.Quad] = []
    removals: list[ox.Quad] = []
    done = []
    for c in cands:
        rec = dict((edits or {}).get(c.id) or c.record)
        node = candidate_iri(c.id)
        quads += graphs.beside([*said, ox.Quad(act, PROV.used, node, QUEUE_GRAPH)], [node])
        if summaries.is_summary(rec):
            rec = parse([(f"edit of {c.id}", rec)])[0] if edits and c.id in edits else rec
            quads += summaries.plan_approval(seen, rec, act, node)
            quads.append(ox.Quad(node, WB.approvedAs, summary_iri(rec["id"]), node))
        elif guessed.is_merge(rec):
            rec = parse([(f"edit of {c.id}", rec)])[0] if edits and c.id in edits else rec
            merge_act, merged = guessed.merge_quads(seen, rec, c.id, actor=actor, now=now, model=c.model)
            quads += [*merged, ox.Quad(node, WB.approvedAs, merge_act, node)]
        else:
            rec = _as_record(seen, c, rec, edited=bool(edits and c.id in edits), create=create, actor=actor)
            plan = _plan(store, seen, rec, actor=actor, now=now, candidate=c.id)
            if plan.batch.files:
                raise Invalid(f"candidate {c.id} cannot be approved as a file import")
            if not plan.records_added:
                raise Conflict(f"candidate {c.id}: record {rec['id']!r} is already recorded")
            quads += plan.batch.quads
            removals += plan.batch.removals
            made = record_iri(rec["id"])
            home = next(q.graph_name for q in plan.batch.quads if q.subject == made and q.predicate == WB.status)
            quads += [ox.Quad(node, WB.approvedAs, made, node), ox.Quad(node, WB.restsOn, made, node),
                      ox.Quad(made, WB.fromCandidate, node, home)]  # beside the record's metadata
        done.append(rec["id"])
    _decide(store, [c.id for c in cands], act, WB.Approved, quads, removals)
    return done


def _as_record(
    store: Store, c: Candidate, rec: dict[str, Any], *, edited: bool, create: Iterable[str], actor: str
) -> dict[str, Any]:
    """The record a candidate becomes: checked again if edited, its names bound (or created as
    asked), attributed to the extractor and the approving curator."""
    if edited:
        checked = parse([(f"edit of {c.id}", {**rec, "id": rec.get("id", c.record["id"])})])[0]
        rec = {k: v for k, v in checked.items() if k != "span"}
    allowed = {name_key(n) for n in create}
    names = entities.resolve_keys(store, {name_key(n) for n in _names(rec)})
    missing = sorted(n for n in _names(rec) if not names.get(name_key(n)) and name_key(n) not in allowed)
    if missing:
        raise Invalid(f"candidate {c.id}: {', '.join(repr(n) for n in missing)} binds no entity; bind each "
                      "to an existing entity (register an alias) or create it explicitly (--create NAME)")
    if c.model and "extracted_by" not in rec:
        rec["extracted_by"] = {"model": c.model, **({"prompt_version": c.prompt_version} if c.prompt_version else {})}
    rec["confirmed_by"] = actor
    return rec


def reject(
    store: Store, ids: Sequence[str], *, reason: str, actor: str, now: str, seen: Store | None = None
) -> None:
    """Reject candidates with a reason, kept for the audit. Raises Forbidden, NotFound, Conflict,
    Invalid (a blank reason). The candidates are looked up in ``seen`` (see :func:`approve`)."""
    require(store, actor, Role.CURATOR, "reject candidates")
    if not ids:
        raise Invalid("name at least one candidate to reject")
    _pending(seen or store, ids, "reject")
    act, said = activity("rejection", WB.Rejection, actor=actor, now=now, graph=QUEUE_GRAPH, reason=reason)
    quads = [q for i in ids for q in graphs.beside([*said, ox.Quad(act, PROV.used, candidate_iri(i), QUEUE_GRAPH)],
                                                    [candidate_iri(i)])]
    _decide(store, ids, act, WB.Rejected, quads)


def merge(store: Store, keep: str, others: Sequence[str], *, actor: str, now: str, seen: Store | None = None) -> None:
    """Fold duplicate candidates into ``keep`` (a candidate or a recorded record's id): they are
    marked merged into it. Raises Forbidden, NotFound, Conflict, Invalid. What it names is looked
    up in ``seen`` (see :func:`approve`)."""
    require(store, actor, Role.CURATOR, "merge candidates")
    seen = seen or store
    others = [o for o in others if o != keep]
    if not others:
        raise Invalid("name the candidates to merge into the one kept")
    _pending(seen, others, "merge")
    target = candidate_iri(keep)
    if not list_candidates(seen, ids=[keep]):
        if not seen.ask(PREFIXES + f"ASK {{ GRAPH ?m {{ {record_iri(keep)} a wb:Assertion }} }}"):
            raise NotFound(f"no candidate or record {keep!r} to merge into")
        target = record_iri(keep)
    act, said = activity("merge", WB.CandidateMerge, actor=actor, now=now, graph=QUEUE_GRAPH,
                         reason=f"duplicates of {keep}")
    quads = []
    for o in map(candidate_iri, others):  # each then seen only by whoever sees it and what it was merged into
        quads += [*graphs.beside([*said, ox.Quad(act, PROV.used, o, QUEUE_GRAPH)], [o]),
                  ox.Quad(o, WB.mergedInto, target, o), *graphs.inherited(store, o, target)]
    _decide(store, others, act, WB.Merged, quads)
