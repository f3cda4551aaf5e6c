"""The ``workbench bench`` command group."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.bench.load import DEFAULT_SIZES, Size, parse_size


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


@bench.command("load")
@click.option("--sizes", default=DEFAULT_SIZES, show_default=True, callback=_sizes,
              help="Comma-separated sizes in relations (10k, 1.27M, 2500) or worlds (3w).")
@click.option("--seed", default=0, show_default=True, help="Seed of the synthetic worlds.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the files and stores here (default: a temporary directory, removed afterwards).")
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
    from workbench.bench.load import main

    main(sizes, seed=seed, workdir=workdir, rdflib_max=rdflib_max, repeat=repeat, markdown=markdown,
         echo=click.echo)


@bench.command("ask")
@click.option("--sizes", default=DEFAULT_SIZES, show_default=True, callback=_sizes,
              help="Comma-separated sizes in relations (10k, 1.27M, 2500) or worlds (3w).")
@click.option("--questions", default=200, show_default=True, type=click.IntRange(min=1),
              help="Questions per tier (recorded, derived, derived every value, no evidence) at each size.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1),
              help="Timed passes over the questions; each question's time is its median over them.")
@click.option("--seed", default=0, show_default=True, help="Seed of the synthetic worlds and of the questions.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the files and stores here (default: a temporary directory, removed afterwards).")
@click.option("--pyshacl-max", default="10k", show_default=True, callback=_size, metavar="SIZE",
              help="Run pySHACL's materialisation only up to this size (it takes minutes per 10k relations).")
@click.option("--no-pyshacl", is_flag=True, help="Do not run pySHACL at any size.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("bench-ask.json"),
              show_default=True, help="Write the results, every sample included, as JSON here.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results into the '## Ask' section of this Markdown file.")
@click.option("--profile", "profile_to", type=click.Path(dir_okay=False, path_type=Path),
              help="cProfile the derived tier's Workbench.ask at the largest size; stats to this file.")
def ask(sizes: list[Size], questions: int, repeat: int, seed: int, workdir: Path | None, pyshacl_max: Size | None,
        no_pyshacl: bool, out: Path, markdown: Path | None, profile_to: Path | None) -> None:
    """Questions at question time, with proofs: Workbench.ask, the answer layer, the engine, the
    bare SPARQL floor and pySHACL's materialisation, at 10k, 100k and 1.27M synthetic relations;
    print p50/p99 per tier and the ratios.

    Example: workbench bench ask --sizes 10k,100k --markdown docs/benchmarks.md
    """
    from workbench.bench.ask import main as ask_main

    ask_main(sizes, questions=questions, repeat=repeat, seed=seed, workdir=workdir,
             pyshacl_max=None if no_pyshacl else pyshacl_max, out=out, markdown=markdown, profile_to=profile_to,
             echo=click.echo)
