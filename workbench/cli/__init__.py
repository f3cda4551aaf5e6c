"""The ``workbench`` command: each command is options, one service call, and printing.

Errors print one plain line on stderr (``error: where: what``) and exit with status 1;
usage mistakes exit with status 2.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from workbench import limits
from workbench.errors import WorkbenchError
from workbench.service import Workbench
from workbench.values.records import Record, RecordType, Status, Tombstone

DEFAULT_STORE = "memory"
F = TypeVar("F", bound=Callable[..., Any])


def _progress(desc: str, total: int) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="B" if desc.startswith("checking") else "it",
        unit_scale=True,
        leave=False,
        disable=None,
        file=sys.stderr,
    )


class Context:
    def __init__(
        self, store: str | None, endpoint: str | None, user: str | None, timeout: float, encoder: str | None = None,
        update_endpoint: str | None = None,
    ) -> None:
        self.location = endpoint or store or os.environ.get("WORKBENCH_STORE") or DEFAULT_STORE
        self.update_endpoint = update_endpoint
        self.user = user
        self.reader = user or os.environ.get("WORKBENCH_USER") or None  # named readers see what they may
        self.timeout = timeout
        self.encoder = encoder

    def open(self, *, create: bool = False) -> Workbench:
        return Workbench.open(
            self.location, create=create, user=self.user, timeout=self.timeout, encoder=self.encoder,
            update_endpoint=self.update_endpoint,
        )


def _emit(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True))


def command(group: click.Group, name: str | None = None, *, writes: bool = False) -> Callable[[F], F]:
    """A subcommand that opens the store, maps Workbench errors to one stderr line, and closes.

    A command that only reads runs on the store as the person named by ``--as`` (or
    $WORKBENCH_USER) may see it: access follows the source, here as over HTTP. Without either,
    the store's owner on this machine reads everything. ``writes`` commands act on the store as
    that person: what they name is looked up as they may see it (``Workbench.acting_as``).
    """

    def wrap(fn: F) -> F:
        @group.command(name=name, help=fn.__doc__)
        @click.pass_obj
        @functools.wraps(fn)
        def run(ctx: Context, *args: Any, **kwargs: Any) -> None:
            try:
                with ctx.open(create=fn.__name__ == "init") as wb:
                    fn(wb.acting_as(ctx.reader) if writes else wb.seen_by(ctx.reader), *args, **kwargs)
            except WorkbenchError as exc:
                click.echo(f"error: {exc}", err=True)
                sys.exit(1)

        run.__doc__ = fn.__doc__
        return run  # type: ignore[return-value]

    return wrap


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--store",
    type=click.Path(file_okay=False),
    help=f"Store directory (default: $WORKBENCH_STORE or ./{DEFAULT_STORE}).",
)
@click.option(
    "--endpoint", metavar="URL", help="A SPARQL 1.1 server instead of a local store: its base URL (Oxigraph: "
    "http://127.0.0.1:7878) or its query URL (Virtuoso: http://127.0.0.1:8890/sparql)."
)
@click.option(
    "--update-endpoint", metavar="URL", help="Where that server takes SPARQL updates, if not where Workbench looks "
    "(URL/update for a base URL, .../update beside .../query, the same URL for .../sparql)."
)
@click.option("--as", "user", metavar="USER", help="Who acts (default: $WORKBENCH_USER or your login name).")
@click.option("--timeout", default=30.0, show_default=True, help="Seconds to wait for a remote store.")
@click.option(
    "--encoder",
    metavar="NAME",
    help="Encoder for recall's index: minilm (all-MiniLM-L6-v2 on ONNX Runtime), hashing (no model), "
    "minilm-torch or sentence-transformers:PATH (the 'vectors' extra). Default: $WORKBENCH_ENCODER, "
    "else the one the index was built with, else minilm.",
)
@click.pass_context
def main(
    ctx: click.Context, store: str | None, endpoint: str | None, update_endpoint: str | None, user: str | None,
    timeout: float, encoder: str | None,
) -> None:
    """Workbench: a memory that says how it knows.

    Facts are RDF with PROV-O provenance in an embedded store on disk (or any SPARQL 1.1 server).

    \b
    Start here:
      workbench init --sample          create ./memory with the sample data
      workbench stats                  what is in it
      workbench entities resolve Paris
      workbench records --type decision
      workbench ask "my car" needs gas
      workbench count wedding --about me --year this
      workbench recall "what does Ravi work on?"
    """
    if store and endpoint:
        raise click.UsageError("give --store or --endpoint, not both")
    if update_endpoint and not endpoint:
        raise click.UsageError("--update-endpoint goes with --endpoint")
    ctx.obj = Context(store, endpoint, user, timeout, encoder, update_endpoint)


# ---------------------------------------------------------------------- setting up, import, export


@command(main, writes=True)
@click.option("--sample", is_flag=True, help="Also load the sample data in data/, with its proposals for review.")
@click.option("--no-proposals", is_flag=True, help="With --sample: leave the review queue and sign-off empty.")
@click.option("--json", "as_json", is_flag=True, help="Print the import reports as JSON.")
def init(wb: Workbench, sample: bool, no_proposals: bool, as_json: bool) -> None:
    """Create the store (or bring its ontology up to date); --sample loads the sample data and its proposals.

    Example: workbench --store memory init --sample
    """
    reports = wb.init(sample=sample, proposals=not no_proposals, progress=_progress)
    if as_json:
        _emit([r.to_json() for r in reports])
        return
    click.echo(f"store ready: {wb.store.capabilities.name} at {wb.store.location}")
    for r in reports:
        click.echo(f"  {Path(r.files[0]).name}: {r.summary()}")
    if sample and not no_proposals:
        from workbench.service.sample import waiting
        click.echo("  sample proposals: {} candidate facts wait for a curator (workbench candidates list), {} rule "
                   "version(s) for a reviewer (workbench rules list)".format(*waiting(wb)))


@command(main, "import", writes=True)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--type",
    "record_type",
    type=click.Choice([t.value for t in RecordType]),
    help="Record type of plain RDF data (default: observation).",
)
@click.option("--source", help="Source id for plain RDF data (default: the file name).")
@click.option("--said-by", help="Who said the RDF data (default: you).")
@click.option("--statement", help="The statement the RDF data records, in plain words.")
@click.option("--visible-to", multiple=True, help="A person or group who may see the RDF data (repeatable).")
@click.option("--json", "as_json", is_flag=True)
def import_(
    wb: Workbench,
    files: tuple[str, ...],
    record_type: str | None,
    source: str | None,
    said_by: str | None,
    statement: str | None,
    visible_to: tuple[str, ...],
    as_json: bool,
) -> None:
    """Import memory records (.jsonl) or RDF (.ttl .trig .nt .nq .jsonld .rdf); all of it or nothing.

    Example: workbench import data/memories.jsonl
    """
    report = wb.import_files(
        list(files),
        record_type=record_type,
        source=source,
        said_by=said_by,
        statement=statement,
        visible_to=visible_to,
        progress=_progress,
    )
    if as_json:
        _emit(report.to_json())
    else:
        click.echo(report.summary())


@command(main, writes=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
def restore(wb: Workbench, file: str, as_json: bool) -> None:
    """Restore an export (.trig/.nq/.jsonld from `workbench export`) into an empty store, as it was.

    Only the store's owner restores (not --as someone): an export carries users, roles and
    every record's metadata, which an import never writes.

    Example: workbench --store copy init && workbench --store copy restore backup.trig
    """
    report = wb.restore(file, progress=_progress)
    if as_json:
        _emit(report.to_json())
    else:
        click.echo(f"restored {report.records_added} records from {file}")


@command(main)
@click.argument("file", type=click.Path(dir_okay=False))
def export(wb: Workbench, file: str) -> None:
    """Export the store; the format comes from the extension (.trig/.nq/.jsonld keep provenance).

    Example: workbench export backup.trig
    """
    n = wb.export(file)
    click.echo(f"wrote {n} quads to {file}")


# ---------------------------------------------------------------------- records and time


def _show(rec: Record | Tombstone) -> str:
    if isinstance(rec, Tombstone):
        return f"[erased] {rec.iri}: {rec.kind}, erased by {rec.erased_by} at {rec.erased_at} ({rec.reason})"
    when = f" effective {rec.effective_from}" if rec.effective_from else ""
    until = f" to {rec.effective_to}" if rec.effective_to else ""
    link = f" supersedes {', '.join(rec.supersedes)}" if rec.supersedes else ""
    return (
        f"[{rec.status.value}] {rec.id} ({rec.type.value}{when}{until}{link}): {rec.statement}\n"
        f"    source {rec.source.id}, said by {rec.source.said_by}"
        + (f", at {rec.source.locator}" if rec.source.locator else "")
        + (f", captured {rec.source.captured_at}" if rec.source.captured_at else "")
    )


@command(main)
@click.option("--as-of", metavar="DATE", help="What was effective on this date (YYYY-MM-DD).")
@click.option("--type", "record_type", type=click.Choice([t.value for t in RecordType]))
@click.option("--about", metavar="NAME", help="Only records about this entity.")
@click.option("--all", "everything", is_flag=True, help="Every status: active, superseded, retracted.")
@click.option("--limit", type=click.IntRange(min=1, max=limits.MAX_COUNT), help="At most this many records.")
@click.option("--json", "as_json", is_flag=True)
def records(
    wb: Workbench,
    as_of: str | None,
    record_type: str | None,
    about: str | None,
    everything: bool,
    limit: int | None,
    as_json: bool,
) -> None:
    """List records: active ones, or what was effective --as-of a date.

    Example: workbench records --type decision --as-of 2026-03-01
    """
    found = wb.records(
        as_of=as_of, record_type=record_type, about=about, status=None if everything else Status.ACTIVE, limit=limit
    )
    if as_json:
        _emit([r.to_json() for r in found])
    else:
        for r in found:
            click.echo(_show(r))


@command(main)
@click.argument("record_id")
@click.option("--json", "as_json", is_flag=True)
def show(wb: Workbench, record_id: str, as_json: bool) -> None:
    """Show one record with its provenance and triples."""
    rec = wb.record(record_id)
    if as_json:
        _emit(rec.to_json())
        return
    click.echo(_show(rec))
    for s, p, o in rec.triples:
        click.echo(f"    {s} {p} {o}")


@command(main)
@click.argument("record_id")
@click.option("--json", "as_json", is_flag=True)
def history(wb: Workbench, record_id: str, as_json: bool) -> None:
    """The audit chain of a record: everything linked by SUPERSEDES, oldest first."""
    chain = wb.history(record_id)
    if as_json:
        _emit([c.to_json() for c in chain])
    else:
        for c in chain:
            click.echo(_show(c))


@command(main, writes=True)
@click.argument("old")
@click.option("--by", "new", required=True, metavar="NEW_ID", help="The recorded correction.")
@click.option("--reason", required=True)
def supersede(wb: Workbench, old: str, new: str, reason: str) -> None:
    """Mark record OLD as superseded by record NEW (history is kept).

    Example: workbench supersede d-1 --by d-2 --reason "the UK customer signed"
    """
    wb.supersede(old, new, reason=reason)
    click.echo(f"{old} is superseded by {new}")


@command(main, writes=True)
@click.argument("record_id")
@click.option("--reason", required=True)
def retract(wb: Workbench, record_id: str, reason: str) -> None:
    """Withdraw a record with no replacement; the audit keeps it."""
    wb.retract(record_id, reason=reason)
    click.echo(f"{record_id} retracted")


@command(main, writes=True)
@click.argument("record_id")
@click.option("--reason", required=True, help="Why it is erased (kept on the tombstone).")
def erase(wb: Workbench, record_id: str, reason: str) -> None:
    """Erase a record and every copy the store manages; a content-free tombstone remains."""
    stone = wb.erase(record_id, reason=reason)
    click.echo(f"erased {record_id}; tombstone: {stone.kind}, by {stone.erased_by} at {stone.erased_at}")
    if not wb.store.capabilities.erases_from_disk:
        click.echo("note: the SPARQL server's own files may still hold it until its operator rewrites them "
                   "(docs/decisions/20261201-erasure-reaches-the-disk.md)", err=True)


# ---------------------------------------------------------------------- SPARQL and stats


@command(main)
@click.argument("query")
@click.option(
    "--format",
    "fmt",
    default="json",
    show_default=True,
    type=click.Choice(["json", "csv", "tsv", "xml", "turtle", "ntriples", "jsonld"]),
)
@click.option("--reasoning", is_flag=True, help="Also the rules' conclusions, in <urn:wb:graph:derived>; never stored.")
def sparql(wb: Workbench, query: str, fmt: str, reasoning: bool) -> None:
    """Run a SPARQL query. QUERY is the text, @FILE, or - for standard input.

    Facts live in named graphs (one per record); their metadata in their source's graph; with
    --reasoning, the rules' conclusions for the query in <urn:wb:graph:derived> (docs/server.md).

    \b
    Example:
      workbench sparql 'SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 5' --format csv
    """
    if query == "-":
        query = sys.stdin.read()
    elif query.startswith("@"):
        query = Path(query[1:]).read_text(encoding="utf-8")
    sys.stdout.buffer.write(wb.sparql(query, format=fmt, reasoning=reasoning))
    sys.stdout.flush()


@command(main)
@click.option("--json", "as_json", is_flag=True)
def stats(wb: Workbench, as_json: bool) -> None:
    """Counts: records by type and status, sources, entities, tombstones, quads."""
    data = wb.stats()
    if as_json:
        _emit(data)
        return
    click.echo(f"{data['records']} records ({', '.join(f'{v} {k}' for k, v in data['by_status'].items())})")
    for k, v in data["by_type"].items():
        click.echo(f"  {k}: {v}")
    click.echo(
        f"{data['sources']} sources, {data['entities']} entities, {data['tombstones']} tombstones, "
        f"{data['quads']} quads ({data['backend']})"
    )


import workbench.cli.entities  # noqa: E402, F401  (registers entities)
import workbench.cli.evaluate  # noqa: E402, F401  (registers eval)
import workbench.cli.extract  # noqa: E402, F401  (registers extract)
import workbench.cli.questions  # noqa: E402, F401  (registers ask, count, current, decision, rules)
import workbench.cli.recall  # noqa: E402, F401  (registers recall, index)
import workbench.cli.review  # noqa: E402, F401  (registers users, candidates, review)
import workbench.cli.rulebook  # noqa: E402, F401  (registers rules propose, test, dry-run, signoff...)
import workbench.cli.serve  # noqa: E402, F401  (registers serve)
import workbench.cli.up  # noqa: E402, F401  (registers up)


def _checkout() -> Path | None:
    """The repository this package runs from, if it holds the benchmarks: the parent of the
    ``workbench`` package directory, with ``benchmarks/`` in it. None for an installed package."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "benchmarks" / "__init__.py").is_file() else None


class _Benchmarks(click.Group):
    """The benchmarks' own group (``benchmarks.cli.bench``), imported only when ``workbench bench``
    runs: its commands, options and help are theirs. They are not in the wheel, only in a checkout."""

    def _group(self, ctx: click.Context) -> click.Group:
        root = _checkout()
        if root is None:
            click.echo("error: the benchmarks are not part of the installed package: run them from a checkout of "
                       "the repository with `python -m benchmarks ...`", err=True)
            ctx.exit(1)
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        from benchmarks.cli import bench

        return bench

    def list_commands(self, ctx: click.Context) -> list[str]:
        return self._group(ctx).list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._group(ctx).get_command(ctx, cmd_name)


main.add_command(_Benchmarks("bench", help="Benchmarks with their peers side by side (not tests: figures for "
                             "docs/benchmarks.md). From a checkout: they live in benchmarks/, beside the package."))
