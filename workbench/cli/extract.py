"""The ``extract`` command: a model proposes candidate facts from transcripts into the review queue."""

from __future__ import annotations

import sys

import click

from workbench.cli import _emit, command, main
from workbench.extraction.prompts import DEFAULT, VERSIONS
from workbench.service import Workbench


@command(main, writes=True)
@click.argument("transcripts", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--llm-url", required=True, envvar="WORKBENCH_LLM_URL", show_envvar=True, metavar="URL",
              help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (llama.cpp), "
              "http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1.")
@click.option("--model", required=True, envvar="WORKBENCH_LLM_MODEL", show_envvar=True, metavar="NAME",
              help="The model name the server knows.")
@click.option("--api-key", envvar="WORKBENCH_LLM_KEY", show_envvar=True, metavar="KEY",
              help="Sent as a bearer token (local servers usually need none).")
@click.option("--prompt", type=click.Choice(sorted(VERSIONS)), default=DEFAULT, show_default=True,
              help="The prompt version; candidates record it.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="S", help="Seconds allowed for each model answer, in total.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def extract(wb: Workbench, transcripts: tuple[str, ...], llm_url: str, model: str, api_key: str | None, prompt: str,
            timeout: float, as_json: bool) -> None:
    """Propose candidate facts and rules from TRANSCRIPT files (.txt, .md, .jsonl) with a model.

    Candidates go to the review queue, never into the fact store; a curator approves them. Rules
    become proposed rule versions authored by the model, with you as proposer (a curator), for a
    reviewer to sign off. Every fact must quote the transcript (its span) and every rule must load;
    one bad answer rejects the run and nothing is queued. Exits 1 when answers were rejected.

    \b
    Example:
      workbench extract chat.jsonl --llm-url http://127.0.0.1:8080/v1 --model qwen2.5-7b-instruct
      workbench candidates list
    """
    report = wb.extract(list(transcripts), llm_url=llm_url, model=model, api_key=api_key, prompt=prompt,
                        timeout=timeout)
    if as_json:
        _emit(report.to_json())
    else:
        click.echo(report.summary())
    if not report.ok:
        click.echo("error: the model's answers were rejected; nothing was queued", err=True)
        sys.exit(1)
