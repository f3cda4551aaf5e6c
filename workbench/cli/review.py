"""The review commands: ``users`` (who may act, with which role), ``candidates`` (the queue of
proposed records) and ``review`` (a curator approves, edits, rejects or merges). The global
``--as USER`` says who acts on a local store.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from workbench.access.users import Role
from workbench.cli import _emit, command, main
from workbench.errors import Invalid
from workbench.review.guessed import basis_lines
from workbench.review.queue import STATUSES, Candidate
from workbench.service import Workbench


@main.group()
def users() -> None:
    """Users, their roles (viewer, curator, reviewer, admin) and their groups.

    A source imported with visible_to (people or groups such as group:atlas) is seen only by
    those people, members of those groups, and admins; a source with none by everyone."""


@command(users, "add", writes=True)
@click.argument("name")
@click.option("--role", "roles", multiple=True, required=True, type=click.Choice([r.value for r in Role]),
              help="A role to grant (repeat for several).")
@click.option("--group", "groups", multiple=True, metavar="GROUP",
              help="A group they belong to, such as group:atlas (repeatable): they see its sources.")
def users_add(wb: Workbench, name: str, roles: tuple[str, ...], groups: tuple[str, ...]) -> None:
    """Add a user and print their API token, this once (only its hash is kept).

    The first user of a store must be an admin; after that only an admin (--as) adds users.

    \b
    Examples:
      workbench --as root users add root --role admin
      workbench --as root users add cora --role curator --group group:atlas
    """
    token = wb.add_user(name, roles, groups=groups)
    click.echo(f"added {name} ({', '.join(roles)}); their token, shown only now:")
    click.echo(token)


@command(users, "list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def users_list(wb: Workbench, as_json: bool) -> None:
    """Every user and their roles."""
    found = wb.users()
    if as_json:
        _emit([u.to_json() for u in found])
        return
    for u in found:
        groups = f"; groups: {', '.join(sorted(u.groups))}" if u.groups else ""
        click.echo(f"{u.name}: {', '.join(sorted(r.value for r in u.roles))}{groups}")


@command(users, "groups", writes=True)
@click.argument("name")
@click.option("--join", multiple=True, metavar="GROUP", help="Add them to this group (repeatable).")
@click.option("--leave", multiple=True, metavar="GROUP", help="Take them out of this group (repeatable).")
def users_groups(wb: Workbench, name: str, join: tuple[str, ...], leave: tuple[str, ...]) -> None:
    """Change which groups a user is in (an admin's act, attributed), and print them.

    \b
    Example:
      workbench --as root users groups cora --join group:family --leave group:atlas
    """
    found = wb.set_groups(name, join=join, leave=leave)
    click.echo(f"{found.name}: groups {', '.join(sorted(found.groups)) or '(none)'}")


@main.group()
def candidates() -> None:
    """The queue of proposed records: never facts until a curator approves them."""


def _line(c: Candidate) -> str:
    by = f" by {c.decided_by}" if c.decided_by else ""
    src = f" (model {' '.join(x for x in (c.model, c.prompt_version) if x)})" if c.model else f" (from {c.proposed_by})"
    return f"{c.id} [{c.status}{by}] {c.record.get('statement', '')}{src}"


@command(candidates, "import", writes=True)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def candidates_import(wb: Workbench, file: Path) -> None:
    """Queue the candidate records of FILE (JSON Lines in the memory-record format; a line may
    carry "span", the text it was taken from). All or nothing."""
    new = wb.import_candidates(file)
    click.echo(f"queued {len(new)} candidate{'s' if len(new) != 1 else ''}" + (f": {', '.join(new)}" if new else ""))


@command(candidates, "list")
@click.option("--status", type=click.Choice([*STATUSES, "all"]), default="pending", show_default=True)
@click.option("--text", metavar="WORDS", help="Only candidates whose statement contains these words.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def candidates_list(wb: Workbench, status: str, text: str | None, as_json: bool) -> None:
    """The queue, oldest first."""
    found = wb.candidates(status=None if status == "all" else status, text=text)
    if as_json:
        _emit([c.to_json() for c in found])
        return
    for c in found:
        click.echo(_line(c))
    if not found:
        click.echo(f"no {status if status != 'all' else ''} candidates".replace("  ", " "))


@command(candidates, "show")
@click.argument("candidate_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def candidates_show(wb: Workbench, candidate_id: str, as_json: bool) -> None:
    """A candidate with what a curator checks first: validation, duplicates, conflicts, names."""
    c = wb.candidate(candidate_id)
    checks = wb.check_candidate(candidate_id)
    if as_json:
        _emit({"candidate": c.to_json(), "checks": checks.to_json()})
        return
    click.echo(_line(c))
    if c.span:
        click.echo(f"  from: \"{c.span}\"")
    if c.guess:
        click.echo("\n".join(f"  guess: {line}" for line in basis_lines(c.guess)))
    click.echo(f"  record: {json.dumps(c.record, ensure_ascii=False)}")
    click.echo("  valid" if checks.valid else "  NOT valid: " + "; ".join(checks.problems))
    for n, e in sorted(checks.names.items()):
        click.echo(f"  name {n!r}: " + ("binds " + e[0] if len(e) == 1 else "ambiguous: " + ", ".join(e) if e
                                        else "binds nothing (--create it, or register an alias)"))
    for d in checks.duplicates:
        click.echo(f"  duplicate of record {d}")
    for x in checks.conflicts:
        click.echo(f"  conflict: {x}")


@main.group()
def review() -> None:
    """A curator decides on candidates: approve (as they are or edited), reject, merge."""


def _chosen(wb: Workbench, ids: tuple[str, ...], all_: bool, text: str | None) -> list[str]:
    if all_ == bool(ids):
        raise Invalid("name candidates, or give --all (with --text to filter), not both")
    return list(ids) if ids else [c.id for c in wb.candidates(status="pending", text=text)]


@command(review, "approve", writes=True)
@click.argument("ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every pending candidate (with --text: those matching).")
@click.option("--text", metavar="WORDS", help="With --all: only candidates whose statement contains these words.")
@click.option("--create", multiple=True, metavar="NAME", help="Create a new entity for a name that binds nothing.")
@click.option("--bind", multiple=True, metavar="NAME=ENTITY",
              help="Bind a name to an existing entity first, by registering it as the entity's alias.")
@click.option("--edit", type=click.Path(dir_okay=False, path_type=Path),
              help="With one ID: approve this JSON record (the candidate, edited) instead.")
def review_approve(wb: Workbench, ids: tuple[str, ...], all_: bool, text: str | None, create: tuple[str, ...],
                   bind: tuple[str, ...], edit: Path | None) -> None:
    """Approve candidates: each becomes a record, attributed to its source, the extractor and you.
    All or nothing. A name that binds nothing stops the approval until you --create it (or an
    alias binds it): never a fuzzy match.

    \b
    Examples:
      workbench --as cora review approve c-1a2b3c
      workbench --as cora review approve --all --text Atlas
      workbench --as cora review approve c-1a2b3c --edit fixed.json --create Berlin
      workbench --as cora review approve c-1a2b3c --bind "Prof. Lin=Professor Lin"
    """
    chosen = _chosen(wb, ids, all_, text)
    for pair in bind:
        name, sep, entity = pair.partition("=")
        if not sep or not name.strip() or not entity.strip():
            raise Invalid(f"--bind takes NAME=ENTITY, not {pair!r}")
        wb.add_alias(entity.strip(), name.strip())  # an attributed act of its own, before the approval
    edits = None
    if edit is not None:
        if len(chosen) != 1:
            raise Invalid("--edit goes with exactly one candidate")
        try:
            edits = {chosen[0]: json.loads(edit.read_text(encoding="utf-8"))}
        except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise Invalid(f"cannot read the edited record: {exc!s:.300}", where=str(edit)) from None
    done = wb.approve(chosen, edits=edits, create=create)
    click.echo(f"approved {len(done)}: {', '.join(done)}" if done else "nothing to approve")


@command(review, "reject", writes=True)
@click.argument("ids", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every pending candidate (with --text: those matching).")
@click.option("--text", metavar="WORDS", help="With --all: only candidates whose statement contains these words.")
@click.option("--reason", required=True, help="Why; kept for the audit.")
def review_reject(wb: Workbench, ids: tuple[str, ...], all_: bool, text: str | None, reason: str) -> None:
    """Reject candidates, with a reason kept for the audit."""
    chosen = _chosen(wb, ids, all_, text)
    wb.reject(chosen, reason=reason)
    click.echo(f"rejected {len(chosen)}: {', '.join(chosen)}")


@command(review, "merge", writes=True)
@click.argument("keep")
@click.argument("others", nargs=-1, required=True)
def review_merge(wb: Workbench, keep: str, others: tuple[str, ...]) -> None:
    """Fold duplicate candidates OTHERS into KEEP (a candidate or a record id)."""
    wb.merge_candidates(keep, list(others))
    click.echo(f"merged {', '.join(others)} into {keep}")


@command(main, "summaries")
@click.option("--of", "of", metavar="ID", help="Only summaries resting on this record.")
@click.option("--all", "all_", is_flag=True, help="Stale summaries too, each with why it went stale.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def summaries_cmd(wb: Workbench, of: str | None, all_: bool, as_json: bool) -> None:
    """Approved summaries that are still fresh: every record they summarise active and unchanged.
    A summary is context, never evidence for an answer."""
    found = wb.summaries(of=of, include_stale=all_)
    if as_json:
        _emit([s.to_json() for s in found])
        return
    for s in found:
        state = "fresh" if s.fresh else "STALE: " + "; ".join(s.why_stale)
        click.echo(f"{s.id} [{state}] of {', '.join(s.of)}\n  {s.text}")
    if not found:
        click.echo("no summaries" if all_ else "no fresh summaries (--all shows stale ones)")


@command(main, "audit")
@click.argument("record_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def audit_cmd(wb: Workbench, record_id: str, as_json: bool) -> None:
    """Every attributed act on RECORD_ID and the candidate it came from: proposed (by which model,
    prompt version, input), approved, imported, superseded, retracted, erased."""
    events = wb.audit(record_id)
    if as_json:
        _emit([e.to_json() for e in events])
        return
    for e in events:
        click.echo(f"{e.when}  {e.what:<13} {e.who}" + (f"  ({e.detail})" if e.detail else ""))
