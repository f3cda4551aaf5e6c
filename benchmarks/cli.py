"""The benchmarks' command group: ``python -m benchmarks ...`` from a checkout, which
``workbench bench ...`` hands its arguments to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from benchmarks.load import DEFAULT_SIZES, Size, parse_size


@click.group()
def bench() -> None:
    """Benchmarks with their peers side by side (not tests: figures for docs/benchmarks.md)."""


def _sizes(ctx: click.Context, param: click.Parameter, value: str) -> list[Size]:
    try:
        return [parse_size(s) for s in value.split(",") if s.strip()]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> Size | None:
    return _sizes(ctx, param, value)[0] if value else None


F = TypeVar("F", bound=Callable[..., Any])


def _seed(of: str) -> Callable[[F], F]:
    """``--seed``, default 0: the seed of ``of``."""
    return click.option("--seed", default=0, show_default=True, help=f"Seed of {of}.")


def _workdir(kept: str = "the files and stores") -> Callable[[F], F]:
    """``--workdir``: where to keep ``kept`` instead of a temporary directory."""
    return click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
                        help=f"Keep {kept} here (default: a temporary directory, removed afterwards).")


@bench.command("load")
@click.option("--sizes", default=DEFAULT_SIZES, show_default=True, callback=_sizes,
              help="Comma-separated sizes in relations (10k, 1.27M, 2500) or worlds (3w).")
@_seed("the synthetic worlds")
@_workdir()
@click.option("--rdflib-max", callback=_size, metavar="SIZE",
              help="Skip rdflib above this size (default: run it at every size).")
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(min=1),
              help="Runs per contender; the table shows the median seconds.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results into the '## Load' section of this Markdown file.")
def load(sizes: list[Size], seed: int, workdir: Path | None, rdflib_max: Size | None, repeat: int,
         markdown: Path | None) -> None:
    """Import 10k, 100k and 1.27M synthetic relations: rdflib, the bare pyoxigraph floor and
    Workbench (with provenance), each in its own process; print seconds, peak RSS and ratios.

    Example: workbench bench load --sizes 10k,100k --markdown docs/benchmarks.md
    """
    from benchmarks.load import main

    main(sizes, seed=seed, workdir=workdir, rdflib_max=rdflib_max, repeat=repeat, markdown=markdown,
         echo=click.echo)


@bench.command("ask")
@click.option("--sizes", default=DEFAULT_SIZES, show_default=True, callback=_sizes,
              help="Comma-separated sizes in relations (10k, 1.27M, 2500) or worlds (3w).")
@click.option("--questions", default=200, show_default=True, type=click.IntRange(min=1),
              help="Questions per tier (recorded, derived, derived every value, no evidence) at each size.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1),
              help="Timed passes over the questions; each question's time is its median over them.")
@_seed("the synthetic worlds and of the questions")
@_workdir()
@click.option("--pyshacl-max", default="10k", show_default=True, callback=_size, metavar="SIZE",
              help="Run pySHACL's materialisation only up to this size (it takes minutes per 10k relations).")
@click.option("--no-pyshacl", is_flag=True, help="Do not run pySHACL at any size.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("bench-ask.json"),
              show_default=True, help="Write the results, every sample included, as JSON here.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results into the '## Ask' section of this Markdown file.")
@click.option("--profile", "profile_to", type=click.Path(dir_okay=False, path_type=Path),
              help="cProfile the derived tier's Workbench.ask at the largest size; stats to this file.")
@click.option("--backends", default="embedded", show_default=True,
              type=click.Choice(["embedded", "remote", "embedded,remote"]),
              help="remote: the same questions over a real `oxigraph serve` beside the embedded store (round trips "
                   "per question, their cost), into '## Remote backend' and OUT's stem + '-remote.json'.")
def ask(sizes: list[Size], questions: int, repeat: int, seed: int, workdir: Path | None, pyshacl_max: Size | None,
        no_pyshacl: bool, out: Path, markdown: Path | None, profile_to: Path | None, backends: str) -> None:
    """Questions at question time, with proofs: Workbench.ask, the answer layer, the engine, the
    bare SPARQL floor and pySHACL's materialisation, at 10k, 100k and 1.27M synthetic relations;
    print p50/p99 per tier and the ratios. With --backends remote, Workbench.ask over a real
    oxigraph serve beside the embedded one: p50/p99, round trips per question and their cost.

    Example: workbench bench ask --sizes 10k,100k --markdown docs/benchmarks.md
    """
    from benchmarks.ask import main as ask_main
    from benchmarks.ask_remote import main as remote_main

    if "embedded" in backends.split(","):
        ask_main(sizes, questions=questions, repeat=repeat, seed=seed, workdir=workdir,
                 pyshacl_max=None if no_pyshacl else pyshacl_max, out=out, markdown=markdown, profile_to=profile_to,
                 echo=click.echo)
    if "remote" in backends.split(","):
        remote_main(sizes, questions=questions, repeat=repeat, seed=seed, workdir=workdir,
                    out=out.with_name(out.stem + "-remote.json"), markdown=markdown, echo=click.echo)


@bench.command("audit")
@click.option("--size", type=click.Choice(["small", "full"]), default="full", show_default=True,
              help="full: the essay's 1,800 worlds, about 1.27M relations (a few minutes); small: 30 worlds (seconds).")
@_seed("the synthetic worlds, the new things and the held-out facts")
@click.option("--cases", default=16, show_default=True, type=click.IntRange(min=1),
              help="New things X, each known only as 'X is a K' (the essay asked about 16).")
@click.option("--multi", default=4, show_default=True, type=click.IntRange(min=0),
              help="How many of the X are of two kinds from different trees (an electric car: a car and an appliance).")
@click.option("--held-out", default=40, show_default=True, type=click.IntRange(min=1),
              help="True facts left out of the system, asked by both paths (the essay asked about 40).")
@_workdir("the worlds and the store")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the counts, every wrong answer included, as JSON here.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the table into the '## Results' section of this Markdown file (docs/audit.md).")
@click.pass_context
def audit(ctx: click.Context, size: str, seed: int, cases: int, multi: int, held_out: int, workdir: Path | None,
          out: Path | None, markdown: Path | None) -> None:
    """The essay's audit with Workbench's own parts: the synthetic worlds imported as common
    sense, the inheritance rule proposed and signed off, new things X recorded as "X is a K";
    then (a) is the right kind ranked first, (b) does X inherit the facts written for K, (c) what
    of true facts left out, each by the guesser (beside the graph vectors it replaced) and by the
    rule (Workbench.ask: derived with reasons, or no evidence). Prints the essay's table with
    this run's counts. Exits 1 if the rule path got any answer wrong.

    Example: workbench bench audit --size full --seed 0 --markdown docs/audit.md
    """
    from benchmarks.audit import main as audit_main

    if multi > cases:
        raise click.BadParameter(f"{multi} is more than the {cases} cases", param_hint="--multi")
    run = audit_main(size, seed=seed, cases=cases, multi=multi, held_out=held_out, workdir=workdir, markdown=markdown,
                     out=out, echo=click.echo)
    wrong = sum(len(r.wrong) for r in run.rows.values()) + (run.written_back != 0)
    if wrong:
        click.echo(f"error: the rule path got {wrong} answers wrong or wrote to the store (see above)", err=True)
        ctx.exit(1)


def _counts(ctx: click.Context, param: click.Parameter, value: str) -> list[tuple[str, int]]:
    from benchmarks.recall import parse_count

    try:
        return [(s.strip(), parse_count(s)) for s in value.split(",") if s.strip()]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


@bench.command("recall")
@click.option("--sizes", default="10k", show_default=True, callback=_counts,
              help="Comma-separated numbers of vectors (10k, 100k, 1M, 2500).")
@click.option("--full", is_flag=True, help="All three sizes: 10k,100k,1M (takes tens of minutes).")
@click.option("--queries", default=1000, show_default=True, type=click.IntRange(min=1),
              help="Questions put to every index at every size, one search call each.")
@_seed("the synthetic statements and questions")
@_workdir("the vectors and indexes")
@click.option("--no-hnsw", is_flag=True, help="Do not build HNSW at any size.")
@click.option("--hnsw-all", is_flag=True, help="Build HNSW above 100k vectors too (minutes and GiBs at 1M).")
@click.option("--no-minilm", is_flag=True, help="Skip the 10k sample encoded with MiniLM.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results, every latency sample included, as JSON here.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results into the '## Recall index' and '## Recall quality' sections of this Markdown "
                   "file, and the latency chart as bench-recall.svg beside it.")
@click.option("--encoders", default="hashing,minilm", show_default=True,
              help="Encoders the quality half runs the development set with (those that cannot load are skipped).")
@click.option("--no-quality", is_flag=True, help="Only the index half.")
@click.option("--quality-only", is_flag=True, help="Only the quality half: the dev set, Workbench vs plain RAG.")
@click.option("--extrapolate", metavar="N",
              help="Instead of both halves: the FAISS candidates for N vectors (e.g. 10M) measured at --sizes and "
                   "extrapolated, into '## FAISS at 10M vectors' (MiniLM up to 100k).")
def recall(sizes: list[tuple[str, int]], full: bool, queries: int, seed: int, workdir: Path | None, no_hnsw: bool,
           hnsw_all: bool, no_minilm: bool, out: Path | None, markdown: Path | None, encoders: str,
           no_quality: bool, quality_only: bool, extrapolate: str | None) -> None:
    """Recall, measured. The index half: exact (flat), IVF (what Workbench switches to above its
    exact limit) and HNSW (the peer) over synthetic record statements; build time and peak RSS,
    p50/p99 of single queries, recall@10 against exact, size on disk and load time. The quality
    half: the development set through Workbench's recall and the plain vector-RAG recipe side by
    side (hit@1/5/10, abstention, stale records, context size), plain and with distractors.

    Example: workbench bench recall --full --markdown docs/benchmarks.md
    Or: workbench bench recall --sizes 100k,300k,1M --extrapolate 10M --markdown docs/benchmarks.md
    """
    from benchmarks.recall import FULL_SIZES, parse_count
    from benchmarks.recall import main as recall_main
    from benchmarks.recall_quality import main as quality_main

    if no_hnsw and hnsw_all:
        raise click.UsageError("--no-hnsw and --hnsw-all contradict each other")
    if extrapolate:
        from benchmarks.recall_scale import main as scale_main

        try:
            target = parse_count(extrapolate)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--extrapolate") from exc
        if len(sizes) < 2:
            raise click.BadParameter("give at least two sizes to extrapolate from", param_hint="--sizes")
        scale_main(sizes, target, n_queries=queries, seed=seed, workdir=workdir, minilm=not no_minilm,
                   hnsw="none" if no_hnsw else "all" if hnsw_all else "default", markdown=markdown, out=out,
                   echo=click.echo)
        return
    if full:
        sizes = [(s, parse_count(s)) for s in FULL_SIZES.split(",")]
    if not no_quality:
        quality_main([e.strip() for e in encoders.split(",") if e.strip()], markdown=markdown, echo=click.echo)
    if quality_only:
        return
    recall_main(sizes, n_queries=queries, seed=seed, workdir=workdir,
                hnsw="none" if no_hnsw else "all" if hnsw_all else "default", minilm=not no_minilm, full=full,
                markdown=markdown, out=out, echo=click.echo)


def _client_counts(ctx: click.Context, param: click.Parameter, value: str) -> list[int]:
    try:
        counts = [int(s) for s in value.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"not a list of client counts: {value!r} (use e.g. 1,8)") from None
    if not counts or any(n < 1 for n in counts):
        raise click.BadParameter(f"client counts must be 1 or more: {value!r}")
    return sorted(set(counts))


@bench.command("serve")
@click.option("--relations", default="100k", show_default=True, callback=_size, metavar="SIZE",
              help="Synthetic relations in the store (10k, 100k, 2500) or worlds (3w).")
@click.option("--full", is_flag=True, help="1.27M relations, the essay's size (overrides --relations).")
@click.option("--requests", default=5000, show_default=True, type=click.IntRange(min=1),
              help="Requests per cell (server x query x clients), each on a different subject.")
@click.option("--clients", default="1,8", show_default=True, callback=_client_counts,
              help="Comma-separated numbers of concurrent clients (threads with a keep-alive connection each).")
@click.option("--warmup", default=200, show_default=True, type=click.IntRange(min=0),
              help="Warm-up requests per server and query, on subjects the cells do not use.")
@_seed("the synthetic worlds and of the subjects")
@_workdir("the files, stores and server logs")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results, every latency sample included, as JSON here.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results into the '## Serving' section of this Markdown file.")
@click.option("--profile", "profile_to", type=click.Path(dir_okay=False, path_type=Path),
              help="After the cells, sample workbench serve with py-spy under point queries at the most clients; "
                   "collapsed stacks to this file, the top functions printed.")
@click.pass_context
def serve(ctx: click.Context, relations: Size | None, full: bool, requests: int, clients: list[int], warmup: int,
          seed: int, workdir: Path | None, out: Path | None, markdown: Path | None, profile_to: Path | None) -> None:
    """workbench serve under load beside a bare oxigraph serve over the same quads: p50/p99
    latency, req/s and errors of a point query and an inheritance query, each request on a
    different subject, at 1 and 8 concurrent clients; Workbench with access control on (a
    viewer's token, a restricted record in the data). Exits 1 if any request failed.

    Example: workbench bench serve --markdown docs/benchmarks.md
    """
    from benchmarks.serve import main as serve_main

    result = serve_main(relations, full=full, requests=requests, clients=clients, warmup=warmup, seed=seed,
                        workdir=workdir, markdown=markdown, out=out, profile_to=profile_to, echo=click.echo)
    if result.errors:
        click.echo(f"error: {result.errors:,} requests were not answered 200 (see ERRORS above)", err=True)
        ctx.exit(1)


def _skip(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from benchmarks.all import PARTS

    skip = [s.strip() for s in value.split(",") if s.strip()]
    unknown = [s for s in skip if s not in PARTS]
    if unknown:
        raise click.BadParameter(f"no part called {', '.join(unknown)}: use some of {', '.join(PARTS)}")
    return skip


@bench.command("all")
@click.option("--sizes", default="10k,100k", show_default=True, callback=_sizes,
              help="Comma-separated sizes in relations (10k, 100k, 1.27M, 2500) or worlds (3w).")
@click.option("--full", is_flag=True, help="10k,100k,1.27M, the essay's size last (overrides --sizes).")
@_seed("the synthetic worlds, questions and subjects")
@_workdir("every part's files, stores and logs")
@click.option("--questions", default=100, show_default=True, type=click.IntRange(min=1),
              help="ask: questions per tier at each size, the same for Workbench, the floor and the peers.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1),
              help="ask: timed passes over the questions; each question's time is its median.")
@click.option("--peer-timeout", default=300.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              metavar="SECONDS", help="Wall time pySHACL and owlrl each get at a size (start-up, parsing and "
              "materialising included); past it one is stopped, reported as 'gave up at SIZE' and not tried larger.")
@click.option("--peer-memory", default=8.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              metavar="GIB", help="Resident memory pySHACL and owlrl each get; past it, as past --peer-timeout.")
@click.option("--requests", default=2000, show_default=True, type=click.IntRange(min=1),
              help="serve: requests per cell (server x clients), each on a different subject.")
@click.option("--queries", default=500, show_default=True, type=click.IntRange(min=1),
              help="recall: single searches put to every index at every size.")
@click.option("--skip", default="", callback=_skip, metavar="PARTS",
              help="Comma-separated parts not to run: load, ask (Workbench and the floor), peers (pySHACL and "
                   "owlrl), recall, serve.")
@click.option("--markdown-dir", default=Path("docs"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Write bench-all.md and bench-all.svg here.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the summary rows and the peers' figures as JSON here.")
def all_(sizes: list[Size], full: bool, seed: int, workdir: Path | None, questions: int, repeat: int,
         peer_timeout: float, peer_memory: float, requests: int, queries: int, skip: list[str], markdown_dir: Path,
         out: Path | None) -> None:
    """Every benchmark at the chosen sizes in one run, the peers side by side, ratios printed:
    load (Workbench's import with provenance, pyoxigraph's bare bulk load, rdflib's parse), ask
    (Workbench.ask, the bare SPARQL floor, pySHACL's and owlrl's materialisation under a time
    budget, "gave up at SIZE" past it), serve (workbench serve beside oxigraph serve), recall
    (FAISS exact / IVF / HNSW at as many vectors as relations; Workbench's recall beside plain
    vector RAG), peak RSS of each. Prints one summary table; writes bench-all.md and a log-log
    chart, bench-all.svg, into --markdown-dir.

    How long, on a shared 2-core machine: about 25 minutes for 10k,100k, half of it the peers
    (pySHACL materialises 10k in about 2 minutes; at 100k both spend their whole --peer-timeout);
    --full about 40 minutes (the peers are not tried again past the size where they gave up).

    Example: workbench bench all --sizes 10k,100k
    """
    from benchmarks.all import FULL_SIZES, PARTS
    from benchmarks.all import main as all_main
    from benchmarks.load import parse_size

    if full:
        sizes = [parse_size(s) for s in FULL_SIZES.split(",")]
    try:
        all_main(sizes, seed=seed, workdir=workdir, parts=[p for p in PARTS if p not in skip], questions=questions,
                 repeat=repeat, peer_timeout=peer_timeout, peer_memory_gib=peer_memory, requests=requests,
                 queries=queries, markdown_dir=markdown_dir, out=out, echo=click.echo)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


@bench.command("conversations")
@click.option("--seed", default=None, type=int, help="Seed (default: the shipped benchmark's).")
def conversations(seed: int | None) -> None:
    """Write the development benchmark for recall (workbench/resources/data/eval/conversations)."""
    from benchmarks import conversations as c

    counts = c.write(seed=c.SEED if seed is None else seed)
    click.echo(", ".join(f"{k} {v}" for k, v in counts.items()))


@bench.command("gate")
@click.option("--encoder", "encoder_spec", default=None,
              help="The encoder to fit for (default: Workbench's default, minilm; or hashing, minilm-torch).")
@click.option("--budget", default=0.05, show_default=True,
              help="Recall's false abstention allowed, out of fold, with what it abstains on before the gate.")
@click.option("--benchmark", "directory", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A benchmark of your own memories and questions (default: data/eval/conversations).")
def gate(encoder_spec: str | None, budget: float, directory: Path | None) -> None:
    """Refit recall's calibrated gate on the development benchmark (workbench/resources/data/recall-gate.json)."""
    from benchmarks import gate as g
    from workbench.service.memories import BENCHMARK

    rows, name = g.collect(encoder_spec, directory or BENCHMARK)
    result = g.refit(rows, name, budget)
    g.write(result)
    cv = result["cross_validated"]
    click.echo(f"{name}: {cv['rows']} of {cv['questions']} questions reached the gate; threshold "
               f"{result['gate']['threshold']}; out of fold, over every question: false abstention "
               f"{cv['false_abstention']:.1%}, \"no memory\" on no-memory questions {cv['no_memory']:.1%} "
               f"(the gate stopped {cv['no_memory_stopped']:.1%} of those it judged); ECE {cv['ece']}")
    for r in cv["reliability"]:
        click.echo(f"  {r['from']:.1f}-{r['to']:.1f}: {r['questions']:4} questions, stated {r['stated']:.2f}, "
                   f"held {r['held']:.2f}")


@bench.command("encoders")
def encoders() -> None:
    """Recall's encoders side by side: all-MiniLM-L6-v2 on ONNX Runtime (the default), the same
    model on torch (the 'vectors' extra), hashing. Load time, ms per sentence in batches, one
    question's p50, cosine to the torch model's vectors (docs/decisions/20261202-default-encoder.md)."""
    from benchmarks.encoders import main

    main(click.echo)


@bench.command("recall-speed")
@click.option("--records", "sizes", default="250,100k", show_default=True, callback=_counts,
              help="Comma-separated memory sizes in records (the smallest is one conversation and its distractor).")
@click.option("--encoder", "encoder_spec", default=None, help="The encoder (default: Workbench's default, minilm).")
def recall_speed(sizes: list[tuple[str, int]], encoder_spec: str | None) -> None:
    """Workbench's recall beside the plain vector recipe (same encoder, top 10 by cosine over
    every record, encoding included), p50/p99 per question and their ratio, on a conversation's
    memory and on one grown to 100,000 records with other people's conversations."""
    from benchmarks.recall_speed import main

    main([n for _, n in sizes], encoder_spec, click.echo)


def _access_backends(ctx: click.Context, param: click.Parameter, value: str) -> str:
    known = ("embedded", "embedded-rewrite", "remote")
    picked = [b.strip() for b in value.split(",") if b.strip()]
    unknown = [b for b in picked if b not in known]
    if not picked or unknown:
        raise click.BadParameter(f"{', '.join(unknown) or 'none given'}: choose from {', '.join(known)}")
    return ",".join(picked)


@bench.command("access")
@click.option("--relations", "size", default="10M", show_default=True, callback=_size,
              help="Size in relations (1.27M, 10M) or worlds (3w).")
@click.option("--backends", default="embedded,remote", show_default=True, callback=_access_backends,
              help="Comma-separated: embedded (restricted readers on views), embedded-rewrite (on the store "
                   "through the rewrite), remote (a RemoteStore on a real `oxigraph serve` holding the same quads).")
@click.option("--questions", default=50, show_default=True, type=click.IntRange(min=1),
              help="Steady questions per tier, per reader.")
@click.option("--writes", default=2, show_default=True, type=click.IntRange(min=0),
              help="Writes (a public record each); every reader's first answer after each is timed.")
@_seed("the synthetic worlds and of the questions")
@_workdir()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("bench-access.json"),
              show_default=True, help="Write the results as JSON here.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results into the '## Restricted readers at scale' section of this Markdown file.")
@click.option("--admin-by-name", is_flag=True,
              help="Find the admin by name at each question, as each restricted reader is (and as the server finds "
                   "whoever sends a request), not as the process's own user.")
def access(size: Size, backends: str, questions: int, writes: int, seed: int, workdir: Path | None, out: Path,
           markdown: Path | None, admin_by_name: bool) -> None:
    """Two restricted readers and an admin, on the embedded store and over `oxigraph serve`: each
    reader's first answer after a write, steady p50/p99 per tier, round trips, the process's memory.

    Example: workbench bench access --relations 1.27M --writes 1 --markdown docs/benchmarks.md
    """
    from benchmarks.access import main

    main(size, backends=backends.split(","), per_tier=questions, writes=writes, seed=seed, workdir=workdir,
         out=out, markdown=markdown, echo=click.echo, admin_by_name=admin_by_name)
