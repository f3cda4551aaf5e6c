"""The recall commands: ``recall`` (a question in words -> a bundle of records, or "no memory"),
``index`` (the vector indexes beside the store: status, rebuild), ``guess-kinds`` and
``guesses train`` (the guesser's model, learned from the store) and ``guesses propose`` (its
proposals into the review queue)."""

from __future__ import annotations

import click

from workbench.cli import _emit, _progress, command, main
from workbench.recall.bundles import PURPOSES
from workbench.service import Workbench


@command(main)
@click.argument("question")
@click.option("--limit", type=int, metavar="K", help="At most K records (default: set by --purpose).")
@click.option("--budget-chars", type=int, metavar="N", help="At most N characters of statements.")
@click.option("--purpose", type=click.Choice(sorted(PURPOSES)), default="default", show_default=True,
              help="Budget preset: writing (more context) or decision (few, exact).")
@click.option("--json", "as_json", is_flag=True, help="Print the bundle as JSON.")
def recall(wb: Workbench, question: str, limit: int | None, budget_chars: int | None, purpose: str,
           as_json: bool) -> None:
    """Recall the records that bear on QUESTION, or say "no memory".

    Names in the question bind exactly (names and registered aliases) and scope the search to
    what is recorded about them; records are ranked by shared words and vectors. With no name
    bound, what similarity finds is labelled a model guess. A name that binds nothing gets "did
    you mean" suggestions, never a binding.

    \b
    Examples:
      workbench recall "what does Ravi work on?"
      workbench recall "what was the name of my friend who works on chips?"
      workbench recall "where does Project Atlas keep customer data?" --purpose decision --json
    """
    bundle = wb.recall(question, purpose=purpose, limit=limit, budget_chars=budget_chars, progress=_progress)
    if as_json:
        _emit(bundle.to_json())
    else:
        click.echo(bundle.text())


@main.group()
def index() -> None:
    """The vector indexes kept beside the store (records, names, things)."""


@command(index, "status")
def index_status(wb: Workbench) -> None:
    """What each index holds and which encoder built it."""
    _emit(wb.index_status())


@command(index, "rebuild", writes=True)
@click.option("--encoder", "encoder_spec", metavar="NAME", help="Rebuild with this encoder (hashing, minilm, ...).")
def index_rebuild(wb: Workbench, encoder_spec: str | None) -> None:
    """Drop the indexes and build them again from the store (the store is not touched)."""
    _emit(wb.rebuild_index(encoder_spec=encoder_spec, progress=_progress))


@command(main, "guess-kinds")
@click.argument("name")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True, help="How many kinds to show.")
@click.option("--json", "as_json", is_flag=True, help="Print the ranking as JSON.")
def guess_kinds(wb: Workbench, name: str, top: int, as_json: bool) -> None:
    """Rank kinds for NAME by its graph vector: a model guess, never a fact.

    NAME's vector is computed from what is recorded about it (its kinds, their super-kinds,
    its facts) and compared with each kind's own vector.

    \b
    Example:
      workbench guess-kinds Sparky
    """
    ranked = wb.guess_kinds(name, top=top)
    if as_json:
        _emit({"tier": "guessed" if ranked else "no_evidence", "name": name,
               "kinds": [g.to_json() for g in ranked]})
        return
    if not ranked:
        click.echo(f"[no evidence] no basis for a guess: nothing recorded of {name} is known to the model")
        return
    click.echo(f"[guessed] kinds for {name}, likeliest first (model guess, not a fact; {ranked[0].model}):")
    for g in ranked:
        chance = "  n/a" if g.chance is None else f"{g.chance:4.0%}"
        click.echo(f"  {chance}  {g.label}")
    click.echo("  (chance: how often guesses like this were right on held-out facts; n/a: not measured)")


@main.group()
def guesses() -> None:
    """The guesser's model: learned offline from the store's facts and common sense."""


@command(guesses, "train")
@click.option("--json", "as_json", is_flag=True, help="Print what was measured as JSON.")
def guesses_train(wb: Workbench, as_json: bool) -> None:
    """Learn the guesser's model from the store now, and measure what its scores mean.

    A tenth of the store's subjects is held out; something true of each is hidden and guessed
    back, and the share right at each score becomes the chance every guess states. Guessing
    learns by itself after the store changes; this does it ahead of time, with a progress bar.
    `workbench eval guesses` prints the figures.

    \b
    Example:
      workbench guesses train && workbench eval guesses
    """
    from workbench.cli.evaluate import guess_lines

    meta = wb.train_guesses(progress=_progress)
    if as_json:
        _emit({k: v for k, v in meta.items() if k != "up"})
    else:
        click.echo("\n".join(guess_lines(meta)))


@command(guesses, "propose", writes=True)
@click.option("--top", type=click.IntRange(min=1), default=3, show_default=True, metavar="K",
              help="At most K kinds proposed for one entity.")
@click.option("--min-chance", type=click.FloatRange(0, 1), default=0.5, show_default=True, metavar="P",
              help="Propose a kind only when such guesses were right at least this often (0: also "
                   "guesses whose chance was not measured).")
@click.option("--json", "as_json", is_flag=True, help="Print the queued candidates as JSON.")
def guesses_propose(wb: Workbench, top: int, min_chance: float, as_json: bool) -> None:
    """Queue the guesser's proposals for a curator: likely kinds, likely merges.

    For each entity no record gives a kind, its likely kinds ("X is a K"); for two entities
    whose names are spelled alike and whose own facts mostly agree, a possible merge. Each is a
    candidate in the review queue, labelled as a model proposal with the model's version, score,
    stated chance and the things it rests on; nothing is typed or merged until a curator
    approves it (`workbench review approve ID`, or the Review page). The guesser reads only
    what every reader may see. What was proposed before is not proposed again.

    \b
    Examples:
      workbench guesses propose
      workbench guesses propose --min-chance 0.8 --top 1
      workbench candidates list
    """
    from workbench.review.guessed import basis_lines

    new = wb.propose_guesses(top=top, min_chance=min_chance, progress=_progress)
    found = [wb.candidate(i) for i in new]
    if as_json:
        _emit([c.to_json() for c in found])
        return
    if not found:
        click.echo(f"Nothing new to propose. A kind is proposed only when such guesses were right at least "
                   f"{min_chance:.0%} of the time (`workbench eval guesses` shows what was measured; "
                   "--min-chance 0 also proposes guesses whose chance was not measured), a merge only for "
                   "two entities named alike whose facts agree, and nothing proposed before is proposed again.")
        return
    click.echo(f"Queued {len(found)} model proposal(s) for review:")
    for c in found:
        click.echo(f"  {c.id}  {c.record.get('statement')}  [{basis_lines(c.guess or {})[0]}]")
    click.echo("Review them with `workbench candidates show ID` or on the Review page.")
