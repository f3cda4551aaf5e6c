"""The rule lifecycle commands, in the ``rules`` group: propose, test, dry-run, signoff, retire,
history, export.

Who acts is the global ``--as USER`` on a local store. Each command is options, one service call
and printing; ``--json`` prints data where there is data.
"""

from __future__ import annotations

import sys

import click

from workbench.cli import _emit, command
from workbench.cli.questions import JSON, rules
from workbench.review.rulebook import Version
from workbench.service import Workbench

VERSION = click.option("--version", "version", type=click.IntRange(min=1), metavar="N",
                       help="Which version (default: the latest proposed).")


def _line(v: Version) -> str:
    out = f"{v.label} [{v.status}] by {v.author}, proposed by {v.proposed.who} at {v.proposed.when}"
    if v.signed_off:
        out += f"; signed off by {v.signed_off.who} at {v.signed_off.when}: {v.signed_off.comment}"
    if v.retired:
        out += f"; retired by {v.retired.who} at {v.retired.when}: {v.retired.comment}"
    return out


@command(rules, "propose", writes=True)
@click.argument("file", type=click.Path(dir_okay=False))
@JSON
def rules_propose(wb: Workbench, file: str, as_json: bool) -> None:
    """Store each rule in FILE as a new version, proposed for sign-off (the import of rule files).

    The file is checked like rules/ (syntax with line and column, shape, allowed constructs);
    its wb:ruleVersion must be above every stored version of the rule: an edit is a new version.
    Proposing the same text again changes nothing. Needs the curator or reviewer role.

    Example: workbench --as alice rules propose my-rules/inherit-kind.ttl
    """
    report = wb.propose_rules(file)
    if as_json:
        _emit([p.to_json() for p in report])
        return
    for p in report:
        click.echo(f"{p.id} v{p.version}: {'proposed' if p.outcome == 'proposed' else 'already stored, unchanged'}")


@command(rules, "test")
@click.argument("rule")
@VERSION
@JSON
def rules_test(wb: Workbench, rule: str, version: int | None, as_json: bool) -> None:
    """Run the test cases of RULE's latest stored version (or --version N; the file's when the
    store has none). Exit 1 if any fails."""
    label, results = wb.run_rule_tests(rule, version)
    failed = [c for c in results if not c.passed]
    if as_json:
        _emit({"rule": label, "passed": not failed, "cases": [
            {"case": c.case, "passed": c.passed, "missing": list(c.missing), "unwanted": list(c.unwanted)}
            for c in results]})
    else:
        for c in results:
            click.echo(f"{'ok  ' if c.passed else 'FAIL'} {label}: {c.case}")
            for t in c.missing:
                click.echo(f"       expected, not concluded: {t}")
            for t in c.unwanted:
                click.echo(f"       concluded, must not follow: {t}")
    if failed:
        click.echo(f"{len(failed)} test case(s) of {label} failed", err=True)
        sys.exit(1)


@command(rules, "dry-run")
@click.argument("rule")
@VERSION
@JSON
def rules_dry_run(wb: Workbench, rule: str, version: int | None, as_json: bool) -> None:
    """What RULE's proposed version would derive on this store, against the version in use:
    conclusions added and removed (counts, samples with reasons) and any that a recorded
    negative fact says is not so. Writes nothing."""
    run = wb.dry_run_rule(rule, version)
    if as_json:
        _emit(run.to_json())
    else:
        click.echo(run.text())


def _show(v: Version, as_json: bool) -> None:
    """A rule version as JSON, or as its one line."""
    if as_json:
        _emit(v.to_json())
    else:
        click.echo(_line(v))


@command(rules, "signoff", writes=True)
@click.argument("rule")
@VERSION
@click.option("--comment", required=True, help="What you checked, in a few words (kept with the sign-off).")
@JSON
def rules_signoff(wb: Workbench, rule: str, version: int | None, comment: str, as_json: bool) -> None:
    """Sign off RULE's proposed version: it answers from now on; the version before it retires.

    Needs the reviewer role, a reviewer other than the rule's author and its proposer, and
    every test case passing; a version someone else signed off a moment ago is a conflict.

    Example: workbench --as bob rules signoff inherit-kind --comment "narrower body, tests read"
    """
    _show(wb.signoff_rule(rule, comment=comment, version=version), as_json)


@command(rules, "retire", writes=True)
@click.argument("rule")
@click.option("--version", "version", type=click.IntRange(min=1), metavar="N",
              help="Which version (default: the active one).")
@click.option("--reason", required=True, help="Why it no longer answers.")
@JSON
def rules_retire(wb: Workbench, rule: str, version: int | None, reason: str, as_json: bool) -> None:
    """Withdraw RULE's active version from answering (kept for the audit). Needs the reviewer
    or admin role."""
    _show(wb.retire_rule(rule, reason=reason, version=version), as_json)


@command(rules, "history")
@click.argument("rule")
@JSON
def rules_history(wb: Workbench, rule: str, as_json: bool) -> None:
    """Every stored version of RULE: status, author, proposer, sign-off, and what changed."""
    entries = wb.rule_history(rule)
    if as_json:
        _emit([e.to_json() for e in entries])
        return
    for e in entries:
        click.echo(_line(e.version))
        for line in e.diff.splitlines():
            click.echo(f"    {line}")


@command(rules, "export")
@click.argument("directory", type=click.Path(file_okay=False))
def rules_export(wb: Workbench, directory: str) -> None:
    """Write the stored rules to DIRECTORY, one Turtle file per rule: its active version, else
    its latest, with the store's status. `rules propose` of such a file changes nothing."""
    for path in wb.export_rules(directory):
        click.echo(f"wrote {path}")
