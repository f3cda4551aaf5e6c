"""The question commands: ``ask``, ``count``, ``current``, ``decision``, and ``rules``.

Each prints the answer in words with its reasons (``--json`` for the Answer's JSON, with a
top-level ``"tier"``). Names and relations are written as people write them.
"""

from __future__ import annotations

import sys

import click

from workbench.cli import _emit, command, main
from workbench.service import Workbench
from workbench.values.answers import Answer

AS_OF = click.option("--as-of", metavar="DATE", help="Answer from what was effective on this date (YYYY-MM-DD).")
JSON = click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")


def _print(answer: Answer, as_json: bool) -> None:
    if as_json:
        _emit(answer.to_json())
    else:
        click.echo(answer.text())


@command(main)
@click.argument("subject")
@click.argument("relation")
@click.argument("obj", metavar="[OBJECT]", required=False)
@AS_OF
@click.option("--guess", is_flag=True, help="Where there is no evidence, add model guesses ranked by similar things.")
@JSON
def ask(
    wb: Workbench, subject: str, relation: str, obj: str | None, as_of: str | None, guess: bool, as_json: bool
) -> None:
    """Ask whether SUBJECT RELATION OBJECT holds, or what SUBJECT RELATION is.

    The answer says its tier: recorded (with its source), derived (with the chain of
    reasons), no_evidence, conflicting, ambiguous or unknown_entity; with --guess, a genuine
    gap is answered "guessed": candidates with scores, labelled model guesses, never facts.

    \b
    Examples:
      workbench ask "my car" needs gas
      workbench ask Sparky "used for"
      workbench ask me "advisor's university" --json
      workbench ask "Kettle One" "used for" --guess
    """
    _print(wb.ask(subject, relation, obj, as_of=as_of, guess=guess), as_json)


@command(main)
@click.argument("event_type")
@click.option("--about", metavar="NAME", help="Only events tied to this entity (e.g. me).")
@click.option("--year", metavar="YEAR", help="A calendar year, or 'this'.")
@click.option("--from", "start", metavar="DATE", help="Period start (YYYY-MM-DD), inclusive.")
@click.option("--to", "end", metavar="DATE", help="Period end (YYYY-MM-DD), inclusive.")
@AS_OF
@JSON
def count(
    wb: Workbench,
    event_type: str,
    about: str | None,
    year: str | None,
    start: str | None,
    end: str | None,
    as_of: str | None,
    as_json: bool,
) -> None:
    """Count events of a kind, by code: each listed with its source. Undated events that
    cannot be placed in the period give "at least N".

    \b
    Examples:
      workbench count wedding --about me --year this
      workbench count wedding --from 2026-01-01 --to 2026-06-30
    """
    _print(wb.count(event_type, about=about, year=year, start=start, end=end, as_of=as_of), as_json)


@command(main)
@click.argument("subject")
@click.argument("state")
@AS_OF
@JSON
def current(wb: Workbench, subject: str, state: str, as_of: str | None, as_json: bool) -> None:
    """The current value of a changing state, with its history.

    Example: workbench current me weight --as-of 2026-04-15
    """
    _print(wb.current(subject, state, as_of=as_of), as_json)


@command(main)
@click.argument("scope")
@AS_OF
@JSON
def decision(wb: Workbench, scope: str, as_of: str | None, as_json: bool) -> None:
    """Which decision governs SCOPE (a project, a setting): who decided, the source, what it
    superseded and why.

    Example: workbench decision "Project Atlas" --as-of 2026-03-01
    """
    _print(wb.decision(scope, as_of=as_of), as_json)


@main.group()
def rules() -> None:
    """Rules: the reviewed files in rules/ and the versions stored by the lifecycle (propose, dry-run,
    signoff, retire); list them, check them (syntax, shape, test cases)."""


@command(rules, "list")
@JSON
def rules_list(wb: Workbench, as_json: bool) -> None:
    """Each rule, in rules/ and stored versions: id, version, status, author, where it lives, and
    whether it answers questions now (a signed-off stored version takes over from the file)."""
    rows = wb.rule_list()
    if as_json:
        _emit(rows)
        return
    for r in rows:
        where = "store" if r["where"] == "store" else f"{r['kind']}, {r['tests']} tests"
        click.echo(f"{r['id']} v{r['version']} [{r['status']}{', answers' if r['answers'] else ''}] by {r['author']}"
                   f" ({where})" + (f"\n  {r['reading']}" if r["reading"] else ""))


@command(rules, "check")
def rules_check(wb: Workbench) -> None:
    """Load every rule and run its test cases; exit 1 if any fails."""
    from workbench.rules import run_tests

    rules = wb.rule_files()
    failed = 0
    for case in run_tests(rules):
        mark = "ok  " if case.passed else "FAIL"
        click.echo(f"{mark} {case.rule}: {case.case}")
        for t in case.missing:
            click.echo(f"       expected, not concluded: {t}")
        for t in case.unwanted:
            click.echo(f"       concluded, must not follow: {t}")
        failed += not case.passed
    if failed:
        click.echo(f"{failed} test case(s) failed", err=True)
        sys.exit(1)
