"""The one Workbench API. The CLI, the server, the UI and notebooks all call these methods.

One class, no mixins: longer bodies live in this package's modules by what they do; what the
Workbenches on one store share is one explicit object (:mod:`workbench.service.shared`).

>>> import tempfile, pathlib
>>> wb = Workbench.open(pathlib.Path(tempfile.mkdtemp()) / "memory", create=True, user="alice")
>>> wb.init()  # the ontology; init(sample=True) also loads data/
[]
>>> wb.add_entity("Paris").value
'urn:wb:entity:paris'
>>> wb.resolve("  PARIS ").outcome
'bound'
>>> wb.close()
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench import records, sparqlcheck
from workbench.access import policy, users
from workbench.access.users import Role, User
from workbench.access.views import Viewer, ViewStore, viewer
from workbench.access.writes import Writer, everything
from workbench.errors import Forbidden, Invalid
from workbench.extraction import prompts
from workbench.extraction.run import ExtractReport
from workbench.ids import ONTOLOGY_GRAPH
from workbench.imports.common import ProgressFactory
from workbench.names import entities
from workbench.recall.bundles import Bundle
from workbench.records import audit, backup, lifecycle
from workbench.records.audit import Event
from workbench.resources import DATA_DIR, RULES_DIR, ontology_triples
from workbench.review import queue, rulebook, summaries
from workbench.review.queue import Candidate, Checks, Proposal
from workbench.review.ruledryrun import DryRun
from workbench.review.summaries import Summary
from workbench.rules.check import CaseResult
from workbench.service import guessing, importing, questions, rulereview, sample
from workbench.service import reasoning as reasoned
from workbench.service.shared import Clock, Indexes, Shared
from workbench.store import Batch, Store, open_store
from workbench.values.answers import Answer
from workbench.values.guesses import Guess
from workbench.values.records import Entity, ImportReport, Record, RecordType, Resolution, Status, Tombstone
from workbench.values.rules import RuleSet
from workbench.vectors.kept import Bar


def default_user() -> str:
    """Who acts on a local store: $WORKBENCH_USER, else the login name."""
    return os.environ.get("WORKBENCH_USER") or getpass.getuser()


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Workbench:
    """A memory store and everything people do with it: ``store`` what it reads, ``user`` who acts,
    ``reader`` the named user it reads as (None: the store's owner, who sees and may do everything)."""

    def __init__(self, store: Store, *, user: str | None = None, clock: Clock = _utc_now,
                 rules_dir: Path = RULES_DIR, encoder: str | None = None) -> None:
        self._shared = Shared(store, clock=clock, rules_dir=Path(rules_dir), encoder_spec=encoder)
        self._indexes = self._shared.indexes
        self.store, self.user = store, user or default_user()
        self.reader: str | None = None

    @classmethod
    def _handed(cls, shared: Shared, store: Store, name: str, indexes: Indexes) -> Workbench:
        wb = cls.__new__(cls)
        wb._shared, wb._indexes, wb.store, wb.user, wb.reader = shared, indexes, store, name, name
        return wb

    @classmethod
    def open(cls, location: str | os.PathLike[str], *, create: bool = False, user: str | None = None,
             clock: Clock = _utc_now, timeout: float = 30.0, encoder: str | None = None,
             update_endpoint: str | None = None) -> Workbench:
        """A store directory or SPARQL server URL (and see docs/deployment.md). NotFound, StoreUnavailable."""
        store = open_store(location, create=create, timeout=timeout, update_endpoint=update_endpoint)
        return cls(store, user=user, clock=clock, encoder=encoder)

    @property
    def rules_dir(self) -> Path:  # where the rules are read from
        return self._shared.rules_dir

    @rules_dir.setter
    def rules_dir(self, directory: Path) -> None:  # for every Workbench on this store: the rules are shared
        self._shared.rules_dir = Path(directory)

    # ------------------------------------------------------------------ who reads

    def seen_by(self, name: str | None) -> Workbench:
        """This Workbench as ``name`` may see it (:mod:`workbench.access.views`): on the store for someone who may
        see every source, else on a view without what they may not see, so every answer, count, bundle, guess and
        error reflects only that. None: the owner, who sees everything. Write through :meth:`acting_as`."""
        return self if name is None else self._seen_as(viewer(self._shared.store, name), name)

    def readable_now(self, name: str | None) -> Store | None:
        """The store a query by ``name`` reads if that builds nothing first (their view is current), else None."""
        return self._shared.readable_now(name)

    def _seen_as(self, reader: Viewer, name: str) -> Workbench:
        shared = self._shared
        view = shared.seen(reader)
        if view is None:
            return self.acting_as(name)
        found = shared.handed.get(reader.key)
        if found is None or found.store is not view:
            indexes = Indexes(view, self._indexes.encoder_spec)
            found = shared.handed[reader.key] = self._handed(shared, view, name, indexes)
        shared.let_go()
        return found

    def acting_as(self, name: str | None) -> Workbench:
        """This store, with ``name`` acting (writes are attributed to them and checked against
        their roles, :mod:`workbench.access.policy`), sharing this Workbench's caches. It reads
        everything: let only those who may see every source read through it; what a write names
        is looked up as they may see it (:mod:`workbench.access.writes`)."""
        if name is None:
            return self
        shared = self._shared
        found = shared.handed.get("=" + name)
        if found is None:
            found = shared.handed["=" + name] = self._handed(shared, shared.store, name, shared.indexes)
        return found

    def _readable(self, name: str | None) -> Store:
        return self.store if isinstance(self.store, ViewStore) else self._shared.readable(name)

    def _writer(self) -> Writer:
        return everything(self.store) if isinstance(self.store, ViewStore) else self._shared.writer(self.reader)

    def _allow(self, act: str) -> None:
        policy.allow(self._shared.store, self.reader, act)

    def _now(self) -> str:
        return self._shared.clock().astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")

    def close(self) -> None:
        self._shared.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ setting up, import, export

    def init(self, *, sample: bool = False, proposals: bool = False,
             progress: ProgressFactory | None = None) -> list[ImportReport]:
        """Load the ontology (idempotent); with ``sample``, also the sample data in data/ (and its proposals)."""
        quads = [ox.Quad(t.subject, t.predicate, t.object, ONTOLOGY_GRAPH) for t in ontology_triples()]
        self.store.write(Batch(quads=quads))
        self._indexes.changed()
        return self.load_sample(proposals=proposals, progress=progress) if sample else []

    def load_sample(self, *, proposals: bool = False, progress: ProgressFactory | None = None) -> list[ImportReport]:
        """The sample data (:mod:`workbench.service.sample`); with ``proposals``, facts and a rule to review."""
        return sample.load(self, DATA_DIR, progress=progress, proposals=proposals)

    def import_files(self, paths: Sequence[str | os.PathLike[str]], *, record_type: RecordType | str | None = None,
                     source: str | None = None, said_by: str | None = None, statement: str | None = None,
                     visible_to: Sequence[str] = (), progress: ProgressFactory | None = None,
                     used: Sequence[str] | None = None) -> ImportReport:
        """Import memory records (.jsonl) or RDF files, all or nothing. The RDF options say where plain RDF came from
        (records carry their own); ``used`` is what provenance names instead of the paths (an upload, an update).
        Raises Invalid/ParseError naming file, line and field, Ambiguous, Conflict (a taken id), Forbidden."""
        return importing.import_files(self, [Path(p) for p in paths], record_type=record_type, source=source,
                                      said_by=said_by, statement=statement, visible_to=visible_to,
                                      progress=progress, used=used)

    def restore(self, path: str | os.PathLike[str], *, progress: ProgressFactory | None = None) -> ImportReport:
        """Restore an export (TriG, N-Quads, JSON-LD) into this empty store, every graph as it was, by the store's
        owner only (not ``--as``, not over HTTP). Raises Forbidden, Conflict (not empty), Invalid, ParseError."""
        if self.reader is not None:
            raise Forbidden(f"{self.reader} cannot restore an export: only the store's owner on this machine "
                            "restores one (without --as or $WORKBENCH_USER), into an empty store")
        report = backup.restore(self.store, Path(path), actor=self.user, now=self._now(), progress=progress)
        self._indexes.changed(records=True)
        return report

    def export(self, path: str | os.PathLike[str]) -> int:
        """Write the store as this reader may see it, in the extension's format; the quads written. TriG,
        N-Quads and JSON-LD keep every graph (:meth:`restore` reads them), the rest active records' triples."""
        return backup.export(self._readable(self.reader), Path(path))

    # ------------------------------------------------------------------ entities and names

    def resolve(self, name: str) -> Resolution:
        """Bind a name exactly (NFC, case folding, white space): bound, ambiguous or unknown."""
        return entities.resolve(self.store, name)

    def entities(self) -> list[Entity]:
        return entities.describe(self.store)

    def entity(self, ref: str) -> Entity:
        iri = entities.entity_ref(self.store, ref)
        found = entities.describe(self.store, [iri.value])
        return found[0] if found else Entity(iri=iri.value, names=())

    def add_entity(self, name: str, *, lang: str | None = None) -> ox.NamedNode:
        self._allow("add entities")
        iri = entities.add(self.store, name, actor=self.user, now=self._now(), lang=lang)
        self._indexes.changed(names=True)
        return iri

    def add_alias(self, ref: str, alias: str, *, lang: str | None = None) -> ox.NamedNode:
        """Register an alias. Raises Conflict when another entity already has that name."""
        self._allow("register aliases")
        iri = entities.add_alias(self.store, ref, alias, actor=self.user, now=self._now(), lang=lang,
                                 seen=self._writer().seen)
        self._indexes.changed(names=True)
        return iri

    def merge(self, keep: str, other: str, *, reason: str) -> ox.NamedNode:
        self._allow("merge entities")
        iri = entities.merge(self.store, keep, other, actor=self.user, now=self._now(), reason=reason,
                             seen=self._writer().seen)
        self._indexes.changed(names=True)
        return iri

    def split(self, ref: str, *, reason: str) -> ox.NamedNode:
        self._allow("split entities")
        iri = entities.split(self.store, ref, actor=self.user, now=self._now(), reason=reason, seen=self._writer().seen)
        self._indexes.changed(names=True)
        return iri

    # ------------------------------------------------------------------ records and time

    def record(self, record_id: str) -> Record:
        return records.get(self.store, record_id)

    def records(self, *, as_of: str | None = None, status: Status | None = Status.ACTIVE,
                record_type: RecordType | str | None = None, about: str | None = None,
                limit: int | None = None) -> list[Record]:
        """Active records by default; ``as_of`` gives what was effective on that date."""
        rtype = RecordType.parse(record_type) if isinstance(record_type, str) else record_type
        about_iri = entities.entity_ref(self.store, about) if about else None
        return records.find(self.store, as_of=as_of, status=status, record_type=rtype, about=about_iri, limit=limit)

    def history(self, record_id: str) -> list[Record | Tombstone]:
        """The audit view of a record: its whole supersession chain, erased links as tombstones."""
        return records.chain(self.store, record_id)

    def supersede(self, old_id: str, new_id: str, *, reason: str) -> None:
        self._allow("supersede records")
        lifecycle.supersede(self.store, old_id, new_id, actor=self.user, now=self._now(), reason=reason,
                            seen=self._writer().seen)
        self._indexes.changed(records=True)

    def retract(self, record_id: str, *, reason: str) -> None:
        self._allow("retract records")
        lifecycle.retract(self.store, record_id, actor=self.user, now=self._now(), reason=reason,
                          seen=self._writer().seen)
        self._indexes.changed(records=True)

    def erase(self, record_id: str, *, reason: str) -> Tombstone:
        """Remove a record and every copy the store manages (its vector, summaries, readers' views
        and indexes), leave a content-free tombstone, and rewrite an embedded store's files so no
        file holds it (docs/decisions/20261201-erasure-reaches-the-disk.md). Raises NotFound,
        Invalid (no reason), Forbidden (not an admin), StoreUnavailable (rewritten at next open)."""
        from workbench.access.views import purge as purge_views

        self._allow("erase records")
        with self.store.purging():  # one rewrite for everything the erasure writes
            stone = lifecycle.erase(self.store, record_id, actor=self.user, now=self._now(), reason=reason,
                                    seen=self._writer().seen)
            self._indexes.changed(erased=record_id)
        # Views made before it hold the record's bytes (hard links to the old files): gone now.
        self._shared.forget_views()
        purge_views(self.store)
        return stone

    # ------------------------------------------------------------------ questions and rules

    def ask(self, subject: str, relation: str, obj: str | None = None, *, as_of: str | None = None,
            guess: bool = False) -> Answer:
        """Does ``subject relation obj`` hold, or what does ``subject relation``? Names and the
        relation are written as people write them. Answers recorded, derived (with proofs),
        no_evidence, conflicting, ambiguous or unknown_entity; never a bare value. With
        ``guess``, a genuine gap (no_evidence, asked about now) is answered ``guessed``: model
        guesses ranked by similar things, apart from any value, never stored.
        Raises Invalid for an unknown relation or a malformed date."""
        return questions.ask(self, subject, relation, obj, as_of=as_of, guess=guess)

    def count(self, event_type: str, *, about: str | None = None, year: int | str | None = None,
              start: str | None = None, end: str | None = None, as_of: str | None = None) -> Answer:
        """How many events of a kind (``wedding``), optionally about someone, in a year
        (``"this"`` for the clock's year) or a date range, as of a date. Counted by code;
        undated events that cannot be placed give "at least N". Raises Invalid for an
        impossible period."""
        return questions.count(self, event_type, about=about, year=year, start=start, end=end, as_of=as_of)

    def current(self, subject: str, state: str, *, as_of: str | None = None) -> Answer:
        """The current value of a changing state (``me``, ``weight``), with its history."""
        return questions.current(self, subject, state, as_of=as_of)

    def decision(self, scope: str, *, as_of: str | None = None) -> Answer:
        """Which decision governs a scope (a project, a setting) now or as of a date: who decided
        it, its source, what it superseded and why."""
        return questions.decision(self, scope, as_of=as_of)

    @property
    def rules(self) -> RuleSet:
        """The rules that answer: those in ``rules_dir``, except where the store holds a
        signed-off version of a rule (its active version answers, or none once retired; see
        :mod:`workbench.review.rulebook`). Loaded and checked (syntax, shape, allowed constructs,
        test cases) again only when the files' place or the stored versions change. Raises
        ParseError/Invalid naming file, rule and line."""
        return self._shared.rules()

    def rule_files(self) -> RuleSet:
        """Every rule in ``rules_dir``, checked (syntax, shape, constructs), drafts included, test cases not run."""
        return self._shared.rule_files()

    def relations(self) -> frozenset[str]:
        """IRIs of the relations rules may conclude: those the store knows and the ontology's."""
        return self._shared.relations()

    # ------------------------------------------------------------------ recall and guesses

    def recall(self, question: str, *, purpose: str = "default", limit: int | None = None,
               budget_chars: int | None = None, progress: Bar | None = None) -> Bundle:
        """The records that bear on a question in words, a bundle within a budget (``purpose`` default,
        writing or decision), or "no memory"; names bind exactly first, else similarity's finds are a
        guess. Raises Invalid, EncoderMismatch; a missing or corrupt index is rebuilt (``progress``)."""
        return guessing.recall(self, question, purpose=purpose, limit=limit, budget_chars=budget_chars,
                               progress=progress)

    def guess(self, subject_iri: str, predicate_iri: str, *, top: int = 5) -> tuple[Guess, ...]:
        """Guesses for a gap, each with its stated chance; () for no basis (docs/guesses.md)."""
        return self._indexes.things().guess(subject_iri, predicate_iri, top=top)

    def guess_kinds(self, name: str, *, top: int = 5) -> tuple[Guess, ...]:
        return guessing.guess_kinds(self, name, top=top)  # NotFound/Ambiguous if the name does not bind

    def train_guesses(self, *, progress: Bar | None = None) -> dict[str, Any]:
        return self._indexes.things().train(progress)  # what the held-out tenth measured

    def guess_report(self, *, progress: Bar | None = None) -> dict[str, Any]:
        return self._indexes.things().ready(progress)[1]

    def propose_guesses(self, *, top: int = 3, min_chance: float = 0.5, progress: Bar | None = None) -> list[str]:
        """Queue the guesser's proposals for curators (kinds, merges: docs/guesses.md); the new ids."""
        return guessing.propose(self, top=top, min_chance=min_chance, progress=progress)

    def index_status(self) -> dict[str, Any]:
        return self._indexes.status()  # what each vector index holds and what built it

    def rebuild_index(self, *, encoder_spec: str | None = None, progress: Bar | None = None) -> dict[str, Any]:
        self._indexes.rebuild(encoder_spec, progress)  # the records' index again (another encoder if given)
        return self.index_status()

    # ------------------------------------------------------------------ users

    def add_user(self, name: str, roles: Iterable[Role | str], *, groups: Iterable[str] = ()) -> str:
        """Add a user (``groups``: ``group:atlas``); their token, shown once. The first, an admin, adds the rest."""
        parsed = [r if isinstance(r, Role) else Role.parse(r) for r in roles]
        return users.add(self.store, name, parsed, actor=self.user, now=self._now(), groups=groups)

    def set_groups(self, name: str, *, join: Iterable[str] = (), leave: Iterable[str] = ()) -> User:
        """Put a user in groups and out of others (an admin's act); returns the user as they are now."""
        return users.set_groups(self.store, name, join=join, leave=leave, actor=self.user, now=self._now())

    def users(self) -> list[User]:
        """Every user, their roles and groups (an admin's list)."""
        self._allow("list users")
        return users.users(self._shared.store)

    # ------------------------------------------------------------------ candidates

    def import_candidates(self, path: str | os.PathLike[str]) -> list[str]:
        """Queue a JSON Lines file's candidate records (each may carry ``span``), all or none; the new ids."""
        file = Path(path)
        if not file.is_file():
            raise Invalid(f"no such file: {file}")
        return self.propose(queue.parse_file(file), Proposal("import", str(file)))

    def propose(self, candidates: Sequence[dict[str, Any]], via: Proposal) -> list[str]:
        """Queue checked candidate records (from an extractor); see :func:`workbench.review.queue.propose`."""
        return queue.propose(self.store, candidates, via, actor=self.user, now=self._now(), seen=self._writer().seen)

    def extract(self, paths: Sequence[str | os.PathLike[str]], *, llm_url: str, model: str,
                api_key: str | None = None, prompt: str = prompts.DEFAULT, timeout: float = 60.0) -> ExtractReport:
        """Queue what a model (OpenAI-compatible) proposes from transcripts, all or none (extraction.run)."""
        from workbench.extraction import run as extraction

        chat = extraction.connect(llm_url, model, api_key=api_key, timeout=timeout)
        return extraction.run(self.store, [Path(p) for p in paths], chat=chat, prompt=prompt, propose=self.propose,
                              actor=self.user, now=self._now(), rule_relations=self.relations(),
                              rule_files=self.rule_files())

    def candidates(self, *, status: str | None = "pending", text: str | None = None) -> list[Candidate]:
        return queue.list_candidates(self.store, status=status, text=text)

    def candidate(self, candidate_id: str) -> Candidate:
        return queue.get(self.store, candidate_id)

    def check_candidate(self, candidate_id: str) -> Checks:
        """What a curator sees before approving: validation, duplicates, conflicts, name bindings."""
        return queue.checks(self.store, queue.get(self.store, candidate_id))

    def approve(self, ids: Sequence[str], *, edits: Mapping[str, Mapping[str, Any]] | None = None,
                create: Iterable[str] = ()) -> list[str]:
        """Approve candidates (all or none), attributed to source, proposer and curator; the record ids."""
        done = queue.approve(self.store, ids, actor=self.user, now=self._now(), edits=edits, create=create,
                             seen=self._writer().seen)
        self._indexes.changed(records=True)
        return done

    def reject(self, ids: Sequence[str], *, reason: str) -> None:
        queue.reject(self.store, ids, reason=reason, actor=self.user, now=self._now(), seen=self._writer().seen)

    def merge_candidates(self, keep: str, others: Sequence[str]) -> None:
        queue.merge(self.store, keep, others, actor=self.user, now=self._now(), seen=self._writer().seen)

    def summaries(self, *, of: str | None = None, include_stale: bool = False) -> list[Summary]:
        """Fresh approved summaries (their records active, unchanged); ``include_stale``: the rest too, with why."""
        return summaries.summaries(self.store, of=of, include_stale=include_stale)

    def audit(self, record_id: str) -> list[Event]:
        """Every attributed act on a record and the candidate it came from, oldest first."""
        return audit.trail(self.store, record_id)

    # ------------------------------------------------------------------ rule review (:mod:`workbench.review.rulebook`)

    def propose_rules(self, path: str | os.PathLike[str]) -> list[rulebook.Proposed]:
        """Store each rule in the file as a new version, proposed. Raises ParseError/Invalid (file,
        line, column), Forbidden (not a curator or reviewer), Conflict (a version not above the rest)."""
        return rulebook.propose(self.store, Path(path), actor=self.user, now=self._now(),
                                relations=self.relations(), files=self.rule_files())

    def rule_list(self) -> list[dict[str, Any]]:
        """Each rule file's rule (drafts too) and stored version: where, whether it answers (``rules list``)."""
        return rulereview.rule_list(self)

    def rule_versions(self, rule_id: str | None = None) -> list[rulebook.Version]:
        """Stored versions of a rule (or of every rule), oldest first."""
        return rulebook.versions(self.store, rule_id)

    def run_rule_tests(self, rule_id: str, version: int | None = None) -> tuple[str, list[CaseResult]]:
        """Run a version's test cases (default: the latest stored, else the file's)."""
        return rulebook.run_version_tests(self.store, rule_id, version, relations=self.relations(),
                                          files=self.rule_files())

    def dry_run_rule(self, rule_id: str, version: int | None = None) -> DryRun:
        """What a version (default: the latest proposed) would derive against the one in use, writing
        nothing: added and removed conclusions with proofs, contradictions with negative facts."""
        from workbench.review.ruledryrun import dry_run

        found = rulebook.find(self.store, rule_id, version)
        return dry_run(self.store, self.rules, rulebook.version_rule(found, self.relations()))

    def signoff_rule(self, rule_id: str, *, comment: str, version: int | None = None) -> rulebook.Version:
        """Sign off a proposed version as the acting reviewer: it answers now, the one before retires."""
        return rulebook.signoff(self.store, rule_id, version, actor=self.user, comment=comment, now=self._now(),
                                relations=self.relations(), files=self.rule_files())

    def retire_rule(self, rule_id: str, *, reason: str, version: int | None = None) -> rulebook.Version:
        """Withdraw a rule's active version (or a named proposed one) from answering."""
        return rulebook.retire(self.store, rule_id, version, actor=self.user, reason=reason, now=self._now())

    def rule_history(self, rule_id: str) -> list[rulebook.Entry]:
        """Every stored version: status, author, proposer, sign-off, retirement, and its diff."""
        return rulebook.history(self.store, rule_id)

    def export_rules(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write the stored rules back as Turtle files, one per rule (``propose_rules`` is the import)."""
        return rulebook.export(self.store, Path(directory))

    # ------------------------------------------------------------------ SPARQL and stats

    def sparql(self, query: str, *, format: str = "json", default_graph: Sequence[str] | None = None,
               named_graphs: Sequence[str] | None = None, evaluate: sparqlcheck.Evaluator | None = None,
               reasoning: bool = False, proof_base: str | None = None, deadline: float | None = None) -> bytes:
        """A query's answer as json, xml, csv, tsv (SELECT/ASK) or turtle, ntriples, jsonld, xml (CONSTRUCT/DESCRIBE),
        over what this reader may see; ``default_graph`` / ``named_graphs`` the Protocol's; ``reasoning``: with the
        rules' conclusions (:mod:`~workbench.service.reasoning`), in graph urn:wb:graph:derived, not past ``deadline``
        (monotonic). Raises Unsupported, Invalid, ParseError, StoreUnavailable (the deadline)."""
        return reasoned.sparql(self, query, format=format, default_graph=default_graph, named_graphs=named_graphs,
                               evaluate=evaluate, reasoning=reasoning, proof_base=proof_base, deadline=deadline)

    def proof(self, subject: str, relation: str, obj: str | None = None) -> Answer:
        """Whether ``subject relation obj`` (IRIs) holds, with its proof: a conclusion's ``wb:proof``."""
        return reasoned.proof(self, subject, relation, obj)

    def stats(self) -> dict[str, Any]:  # counts of records by type and status, sources, entities, quads
        return {"backend": self._shared.store.capabilities.name, **records.stats(self.store)}
