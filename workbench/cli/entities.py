"""The ``entities`` commands: list, add, alias, merge, split and resolve the names of things."""

from __future__ import annotations

import click

from workbench.cli import _emit, command, main
from workbench.service import Workbench


@main.group()
def entities() -> None:
    """Entities and their names: list, add, alias, merge, split, resolve."""


@command(entities, "list")
@click.option("--json", "as_json", is_flag=True)
def entities_list(wb: Workbench, as_json: bool) -> None:
    """List registered entities with their names and aliases."""
    found = wb.entities()
    if as_json:
        _emit([e.to_json() for e in found])
        return
    for e in found:
        aliases = ", ".join(f"{a}@{lang}" if lang else a for a, lang in e.aliases)
        merged = f"  (merged into {e.merged_into})" if e.merged_into else ""
        click.echo(f"{e.iri}  {' / '.join(e.names)}" + (f"  aliases: {aliases}" if aliases else "") + merged)


@command(entities, "add", writes=True)
@click.argument("name")
@click.option("--lang", help="Language tag of the name, e.g. en, zh.")
def entities_add(wb: Workbench, name: str, lang: str | None) -> None:
    """Register a new entity under NAME (even if another has it: the name becomes ambiguous)."""
    click.echo(wb.add_entity(name, lang=lang).value)


@command(entities, "alias", writes=True)
@click.argument("entity")
@click.argument("alias")
@click.option("--lang", help="Language tag of the alias, e.g. zh.")
def entities_alias(wb: Workbench, entity: str, alias: str, lang: str | None) -> None:
    """Register ALIAS as a name of ENTITY (a name or an IRI).

    Example: workbench entities alias Paris 巴黎 --lang zh
    """
    iri = wb.add_alias(entity, alias, lang=lang)
    click.echo(f"{alias!r} now names {iri.value}")


@command(entities, "merge", writes=True)
@click.argument("keep")
@click.argument("other")
@click.option("--reason", required=True, help="Why they are the same.")
def entities_merge(wb: Workbench, keep: str, other: str, reason: str) -> None:
    """State that OTHER is the same entity as KEEP (reversible with split)."""
    click.echo(f"merged; act {wb.merge(keep, other, reason=reason).value}")


@command(entities, "split", writes=True)
@click.argument("entity")
@click.option("--reason", required=True, help="Why they are not the same after all.")
def entities_split(wb: Workbench, entity: str, reason: str) -> None:
    """Undo the merge that folded ENTITY into another."""
    click.echo(f"split; act {wb.split(entity, reason=reason).value}")


@command(entities, "resolve")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
def entities_resolve(wb: Workbench, name: str, as_json: bool) -> None:
    """Say which entity NAME binds to: exactly one, ambiguous, or unknown. Never a guess."""
    res = wb.resolve(name)
    if as_json:
        _emit(res.to_json())
        return
    if res.outcome == "bound":
        click.echo(f"{name!r} -> {res.entities[0]}")
    elif res.outcome == "ambiguous":
        click.echo(f"{name!r} is ambiguous: {', '.join(res.entities)}")
    else:
        click.echo(f"{name!r} names no entity")
