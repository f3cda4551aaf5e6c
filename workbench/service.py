"""The one Workbench API. The CLI, the server, the UI and notebooks all call these methods.

>>> import tempfile, pathlib
>>> wb = Workbench.open(pathlib.Path(tempfile.mkdtemp()) / "memory", create=True, user="alice")
>>> wb.init()  # the ontology; init(sample=True) also loads data/
[]
>>> wb.add_entity("Paris").value
'urn:wb:entity:paris'
>>> wb.resolve("  PARIS ").outcome
'bound'
>>> wb.resolve("Paris Hilton").outcome
'unknown'
>>> wb.close()
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from workbench import backup, entities, lifecycle, records, sparqlcheck
from workbench.access.views import Views, ViewStore, viewer
from workbench.access.writes import Writer, everything
from workbench.errors import Forbidden, Invalid, Unsupported
from workbench.guess.memory import RecordVectors
from workbench.guess.names import NameIndex
from workbench.guess.things import Things
from workbench.guesses import Guesses
from workbench.ids import ONTOLOGY_GRAPH
from workbench.imports.common import ProgressFactory, write_batch
from workbench.imports.landing import import_rdf
from workbench.imports.rdf import RdfOptions
from workbench.imports.records import RecordsPlanner
from workbench.model import Entity, ImportReport, Record, RecordType, Resolution, Status, Tombstone
from workbench.questions import Questions
from workbench.relations import Relations
from workbench.resources import DATA_DIR, RULES_DIR, ontology_triples
from workbench.reviewing import Reviewing
from workbench.rulereview import RuleReview
from workbench.rules.model import RuleSet
from workbench.store import Batch, Store, open_store

Clock = Callable[[], dt.datetime]

RESULT_FORMATS = {
    "json": ox.QueryResultsFormat.JSON,
    "xml": ox.QueryResultsFormat.XML,
    "csv": ox.QueryResultsFormat.CSV,
    "tsv": ox.QueryResultsFormat.TSV,
}
GRAPH_FORMATS = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "jsonld": ox.RdfFormat.JSON_LD,
    "xml": ox.RdfFormat.RDF_XML,
}


def sparql_formats(format: str) -> tuple[ox.QueryResultsFormat, ox.RdfFormat]:
    """What a format name means for a SPARQL answer: the serialisation of results (SELECT/ASK)
    and of a graph (CONSTRUCT/DESCRIBE). Raises Invalid for an unknown name."""
    if format not in RESULT_FORMATS and format not in GRAPH_FORMATS:
        known = ", ".join(sorted(set(RESULT_FORMATS) | set(GRAPH_FORMATS)))
        raise Invalid(f"unknown format {format!r}; use one of {known}")
    return RESULT_FORMATS.get(format, ox.QueryResultsFormat.JSON), GRAPH_FORMATS.get(format, ox.RdfFormat.TURTLE)


def default_user() -> str:
    """Who acts on a local store: $WORKBENCH_USER, else the login name."""
    return os.environ.get("WORKBENCH_USER") or getpass.getuser()


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Workbench(Questions, Guesses, Reviewing, RuleReview):
    """A memory store and everything people do with it."""

    def __init__(
        self,
        store: Store,
        *,
        user: str | None = None,
        clock: Clock = _utc_now,
        rules_dir: Path = RULES_DIR,
        encoder: str | None = None,
    ) -> None:
        self.store = store
        self.encoder_spec = encoder
        self._vectors: RecordVectors | None = None
        self._names: NameIndex | None = None
        self._things: Things | None = None
        self.user = user or default_user()
        self._clock = clock
        self.rules_dir = Path(rules_dir)
        self._rules: RuleSet | None = None
        self._relation_labels: Relations | None = None
        self._views: Views | None = None
        self._seen: dict[str, Workbench] = {}
        self.reader: str | None = None  # who reads (see seen_by); None: the store's owner, everything

    @classmethod
    def open(
        cls,
        location: str | os.PathLike[str],
        *,
        create: bool = False,
        user: str | None = None,
        clock: Clock = _utc_now,
        timeout: float = 30.0,
        encoder: str | None = None,
    ) -> Workbench:
        """Open a store: a directory (embedded) or the URL of a SPARQL 1.1 server. ``encoder``
        names the encoder for recall's index (see :mod:`workbench.guesses`).

        Raises NotFound when there is no store there (unless ``create``), StoreUnavailable when
        another process holds it or the server does not answer.
        """
        return cls(open_store(location, create=create, timeout=timeout), user=user, clock=clock, encoder=encoder)

    # ------------------------------------------------------------------ who reads

    def seen_by(self, name: str | None) -> Workbench:
        """This Workbench as ``name`` may see it (access follows the source: see
        :mod:`workbench.access.views`). Someone who may see every source gets a Workbench on this
        store, acting as them, sharing this one's caches; anyone else one that reads a view
        without what they may not see, so that every answer, count, recall bundle, guess and
        error reflects only that. None is the store's owner on this machine: everything.
        Write through ``self``, never through a restricted view (it refuses)."""
        if name is None:
            return self
        reader = viewer(self.store, name)
        found: Workbench | None
        if not self._viewed().restricted(reader):
            found = self.acting_as(name)
        else:
            views = self._viewed()
            view = views.view(reader)
            found = self._seen.get(reader.key)
            if found is None or found.store is not view:
                found = Workbench(view, user=name, clock=self._clock, rules_dir=self.rules_dir,
                                  encoder=self.encoder_spec)
                found.reader = name
                self._seen[reader.key] = found
            self._let_go(views)
        # Rules come from files and the rules graph, the same for every reader; each use checks
        # them against the store, so whichever Workbench loaded them last serves the others.
        if found._rules is not None and self._rules is None:
            self._rules, self._rules_key = found._rules, found._rules_key
        found._rules, found._rules_key = self._rules, self._rules_key
        return found

    def readable_store(self, name: str | None) -> Store:
        """The store a SPARQL query or an export by ``name`` reads. For a named reader always a view
        (no token hashes; for a restricted reader, nothing they may not see), so that ``GRAPH
        ?g``, ``FROM`` and the Protocol's dataset parameters cannot reach past it; for the
        store's owner (None) the store itself."""
        if name is None or isinstance(self.store, ViewStore):
            return self.store
        view = self._viewed().view(viewer(self.store, name))
        self._let_go(self._viewed())
        return view

    def _viewed(self) -> Views:
        if self._views is None:
            self._views = Views(self.store)
        return self._views

    def _let_go(self, views: Views) -> None:
        """Forget readers' Workbenches on views that a newer one replaced or that were evicted,
        so that nothing holds those any more and their folders go."""
        stale = [k for k, w in list(self._seen.items()) if isinstance(w.store, ViewStore) and not views.live(w.store)]
        for key in stale:
            self._seen.pop(key, None)
        views.sweep()

    def acting_as(self, name: str | None) -> Workbench:
        """This store and this Workbench's caches, with ``name`` acting (the one writes are
        attributed to): what it marks stale (after an approval) is this one's own index. It
        reads everything: let only those who may see every source read through it, and check
        what a write names against :meth:`seen_by` first."""
        if name is None:
            return self
        acting: Workbench | None = self._seen.get("=" + name)
        if acting is None:
            acting = Workbench(self.store, user=name, clock=self._clock, rules_dir=self.rules_dir,
                               encoder=self.encoder_spec)
            acting._vectors, acting._names, acting._things = self.record_vectors(), self.name_index(), self.things()
            acting._views = self._viewed()
            acting.reader = name
            self._seen["=" + name] = acting
        acting._rules, acting._rules_key = self._rules, self._rules_key
        return acting

    def _writer(self) -> Writer:
        """Who writes through this Workbench, with the store as they may see it: what a write
        names is looked up there, so it answers as if what they may not see did not exist
        (:mod:`workbench.access.writes`). The store's owner (no reader) sees everything."""
        if self.reader is None or isinstance(self.store, ViewStore):
            return everything(self.store)
        reader = viewer(self.store, self.reader)
        views = self._viewed()
        if not views.restricted(reader):
            return everything(self.store)
        seen = views.view(reader)
        self._let_go(views)
        return Writer(self.store, seen)

    def now(self) -> str:
        return self._clock().astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")

    def close(self) -> None:
        self._seen.clear()
        if self._views is not None:
            self._views.close()
        self.store.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ setting up

    def init(
        self, *, sample: bool = False, proposals: bool = False, progress: ProgressFactory | None = None
    ) -> list[ImportReport]:
        """Load the ontology (idempotent); with ``sample``, also the sample data in data/ (and its proposals)."""
        self._relation_labels = None
        quads = [ox.Quad(t.subject, t.predicate, t.object, ONTOLOGY_GRAPH) for t in ontology_triples()]
        self.store.write(Batch(quads=quads))
        return self.load_sample(proposals=proposals, progress=progress) if sample else []

    def load_sample(self, *, proposals: bool = False, progress: ProgressFactory | None = None) -> list[ImportReport]:
        """The sample data: admitted common sense, memories, and the aliases the user registered; with
        ``proposals``, also facts and a rule version proposed for review (:mod:`workbench.sample`)."""
        from workbench import sample

        return sample.load(self, DATA_DIR, progress=progress, proposals=proposals)

    # ------------------------------------------------------------------ import / export

    def import_files(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        record_type: RecordType | str | None = None,
        source: str | None = None,
        said_by: str | None = None,
        statement: str | None = None,
        visible_to: Sequence[str] = (),
        progress: ProgressFactory | None = None,
        used: Sequence[str] | None = None,
    ) -> ImportReport:
        """Import memory records (.jsonl) or RDF files, atomically: all of it lands or nothing.

        RDF options (``record_type``, ``source``, ``said_by``, ``statement``, ``visible_to``)
        describe where plain RDF data came from; JSON Lines records carry their own. ``used``
        is what the import's provenance names instead of the paths, when the files only carry
        the data (an upload over HTTP, a SPARQL update).
        Raises Invalid/ParseError naming file, line and field; Ambiguous for a name that matches
        several entities; Conflict for a changed record under a taken id.
        """
        files = [Path(p) for p in paths]
        if not files:
            raise Invalid("name at least one file to import")
        self._relation_labels = None  # an import may bring relation labels
        for f in files:
            if not f.is_file():
                raise Invalid(f"no such file: {f}")
        jsonl = [f for f in files if f.suffix.lower() == ".jsonl"]
        rdf = [f for f in files if f.suffix.lower() != ".jsonl"]
        if jsonl and rdf:
            raise Invalid("import JSON Lines records and RDF files in separate imports")
        now = self.now()
        writer = self._writer()
        if rdf:
            rtype = RecordType.parse(record_type) if isinstance(record_type, str) else record_type
            options = RdfOptions(
                actor=self.user,
                now=now,
                record_type=rtype or RecordType.OBSERVATION,
                source_id=source,
                said_by=said_by,
                statement=statement,
                visible_to=tuple(visible_to),
                used=tuple(used or ()),
                hidden_graphs=writer.hidden_graphs(),
                hidden_sources=writer.hidden_sources(),
            )
            landed = import_rdf(self.store, rdf, options, progress)
            if landed.plan.records_added:
                self._records_changed()
            return ImportReport(
                files=tuple(str(p) for p in rdf),
                records_added=landed.plan.records_added,
                records_unchanged=landed.plan.records_unchanged,
                entities_created=0,
                quads_added=landed.quads_added,
                activity=landed.plan.activity.value if landed.quads_added else "",
            )
        plan = RecordsPlanner(self.store, actor=self.user, now=now, writer=writer).plan(jsonl, used=used)
        if len(plan.batch):
            write_batch(self.store, plan.batch, progress, len(plan.batch.quads))
            self._records_changed()
        return ImportReport(
            files=plan.files,
            records_added=plan.records_added,
            records_unchanged=plan.records_unchanged,
            entities_created=len(plan.new_entities),
            quads_added=len(plan.batch.quads),
            activity=plan.activity.value if len(plan.batch) else "",
            new_entities=tuple(plan.new_entities),
        )

    def restore(self, path: str | os.PathLike[str], *, progress: ProgressFactory | None = None) -> ImportReport:
        """Restore a Workbench export (the TriG, N-Quads or JSON-LD :meth:`export` writes) into
        this store, which must be empty (at most its ontology loaded): every graph comes back as
        it was, Workbench's own too (users, record metadata, the audit, the queue, rules). An
        import never writes those (:mod:`workbench.access.writes`), so a backup comes back this
        way, and only by the store's owner on this machine: not as a user (``--as``,
        $WORKBENCH_USER), not over HTTP, since an export says who may do and see what.

        Raises Forbidden (not the owner), Conflict (the store is not empty), Invalid (not an
        export), ParseError naming the file.
        """
        if self.reader is not None:
            raise Forbidden(f"{self.reader} cannot restore an export: only the store's owner on this machine "
                            "restores one (without --as or $WORKBENCH_USER), into an empty store")
        report = backup.restore(self.store, Path(path), actor=self.user, now=self.now(), progress=progress)
        self._relation_labels = None
        self._records_changed()
        return report

    def export(self, path: str | os.PathLike[str]) -> int:
        """Write the store to a file; the format comes from the extension. Returns the quads written.

        TriG, N-Quads and JSON-LD keep everything (every graph, all provenance; not the store's
        revision token, which only its vector indexes use) and come back with :meth:`restore`.
        Turtle, N-Triples and RDF/XML hold no graphs: they get the triples of the active records
        only, without provenance. A named reader's export is their view: no token hashes, nothing
        they may not see. Raises Invalid for an unknown extension or a missing directory.
        """
        return backup.export(self.readable_store(self.reader), Path(path))

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
        iri = entities.add(self.store, name, actor=self.user, now=self.now(), lang=lang)
        self._names_changed()
        return iri

    def add_alias(self, ref: str, alias: str, *, lang: str | None = None) -> ox.NamedNode:
        """Register an alias. Raises Conflict when another entity already has that name."""
        iri = entities.add_alias(self.store, ref, alias, actor=self.user, now=self.now(), lang=lang,
                                 seen=self._writer().seen)
        self._names_changed()
        return iri

    def merge(self, keep: str, other: str, *, reason: str) -> ox.NamedNode:
        iri = entities.merge(self.store, keep, other, actor=self.user, now=self.now(), reason=reason,
                             seen=self._writer().seen)
        self._names_changed()
        return iri

    def split(self, ref: str, *, reason: str) -> ox.NamedNode:
        iri = entities.split(self.store, ref, actor=self.user, now=self.now(), reason=reason, seen=self._writer().seen)
        self._names_changed()
        return iri

    # ------------------------------------------------------------------ records and time

    def record(self, record_id: str) -> Record:
        return records.get(self.store, record_id)

    def records(
        self,
        *,
        as_of: str | None = None,
        status: Status | None = Status.ACTIVE,
        record_type: RecordType | str | None = None,
        about: str | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        """Active records by default; ``as_of`` gives what was effective on that date."""
        rtype = RecordType.parse(record_type) if isinstance(record_type, str) else record_type
        about_iri = entities.entity_ref(self.store, about) if about else None
        return records.find(self.store, as_of=as_of, status=status, record_type=rtype, about=about_iri, limit=limit)

    def history(self, record_id: str) -> list[Record | Tombstone]:
        """The audit view of a record: its whole supersession chain, erased links as tombstones."""
        return records.chain(self.store, record_id)

    def supersede(self, old_id: str, new_id: str, *, reason: str) -> None:
        lifecycle.supersede(self.store, old_id, new_id, actor=self.user, now=self.now(), reason=reason,
                            seen=self._writer().seen)
        self._records_changed()

    def retract(self, record_id: str, *, reason: str) -> None:
        lifecycle.retract(self.store, record_id, actor=self.user, now=self.now(), reason=reason,
                          seen=self._writer().seen)
        self._records_changed()

    def erase(self, record_id: str, *, reason: str) -> Tombstone:
        """Remove a record and every copy the store manages (its vector, summaries' text and
        digest, readers' views and their indexes included); leave a content-free tombstone.
        Then the store's files are rewritten so that nothing of it can be read back from the
        disk (an embedded store; a SPARQL server's files are its operator's to compact:
        docs/decisions/20261201-erasure-reaches-the-disk.md).

        Raises NotFound, Invalid (no reason); StoreUnavailable when the rewrite could not be done
        now (the record is erased; the next open of the store rewrites its files).
        """
        from workbench.access.views import purge as purge_views

        with self.store.purging():  # one rewrite for everything the erasure writes
            stone = lifecycle.erase(self.store, record_id, actor=self.user, now=self.now(), reason=reason,
                                    seen=self._writer().seen)
            self._record_erased(record_id)
        # Views made before it hold the record's bytes (hard links to the old files): gone now.
        self._seen = {k: w for k, w in self._seen.items() if not isinstance(w.store, ViewStore)}
        purge_views(self.store)
        return stone

    # ------------------------------------------------------------------ SPARQL and stats

    def sparql(
        self,
        query: str,
        *,
        format: str = "json",
        default_graph: Sequence[str] | None = None,
        named_graphs: Sequence[str] | None = None,
        evaluate: sparqlcheck.Evaluator | None = None,
    ) -> bytes:
        """A SPARQL query's answer serialised: json, xml, csv, tsv (SELECT/ASK) or turtle,
        ntriples, jsonld, xml (CONSTRUCT/DESCRIBE). Updates are refused here, and so is what
        :func:`workbench.sparqlcheck.check_query` refuses (SERVICE, a query too long or nested
        too deep for the engine), before any parser sees the text.

        ``default_graph`` / ``named_graphs`` (graph IRIs) give the query's dataset as the SPARQL
        1.1 Protocol's ``default-graph-uri`` / ``named-graph-uri`` do: they replace the query's
        FROM / FROM NAMED, and giving one leaves the other empty. ``evaluate`` runs the checked
        query on the store (:func:`workbench.sparqlcheck.evaluate`, on a big stack, by default;
        the server's runs it in a worker process it can stop).

        Raises Unsupported for an update, Invalid for an unknown format or graph IRI or a query
        refused by the check (naming its limit), ParseError for a malformed query.
        """
        if sparqlcheck.query_form(query) in sparqlcheck.UPDATE_FORMS:  # friendlier than the parser's word
            raise Unsupported("SPARQL Update is not accepted here; change the store through imports and commands")
        sparqlcheck.check_query(query)
        results, graph = sparql_formats(format)

        def _graph_iri(text: str) -> ox.NamedNode:
            try:
                return ox.NamedNode(text)
            except ValueError as exc:
                raise Invalid(f"{text!r} is not a graph IRI: {exc}") from exc

        return (evaluate or sparqlcheck.evaluate)(
            self.readable_store(self.reader),
            query,
            results=results,
            graph=graph,
            default_graph=None if default_graph is None else [_graph_iri(g) for g in default_graph],
            named_graphs=None if named_graphs is None else [_graph_iri(g) for g in named_graphs],
        )

    def stats(self) -> dict[str, Any]:
        """Counts of records by type and status, sources, entities, quads."""
        backend = self.store.base if isinstance(self.store, ViewStore) else self.store
        return {"backend": backend.capabilities.name, **records.stats(self.store)}

