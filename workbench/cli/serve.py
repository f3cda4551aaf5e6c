"""``workbench serve``: the HTTP server over the store.

The server process owns an embedded store (one process at a time may open it); other programs
reach the store through the server's URL.
"""

from __future__ import annotations

import signal
from types import FrameType

import click

from workbench.cli import command, main
from workbench.service import Workbench


@command(main, writes=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default).")
@click.option("--port", default=7000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--query-timeout", default=30.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds a query may run before it is answered 503.")
@click.option("--result-limit", default=100_000, show_default=True, type=click.IntRange(min=1),
              help="Most rows or triples in one answer (more: 413, add LIMIT).")
@click.option("--max-body", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Largest request body in bytes (more: 413).")
@click.option("--query-workers", default=None, type=click.IntRange(min=0), envvar="WORKBENCH_QUERY_WORKERS",
              show_envvar=True, help="Processes SPARQL queries on readers' views run in, stopped at the "
              "deadline (default 4; 0: threads, which cannot stop a query).")
def serve(wb: Workbench, host: str, port: int, query_timeout: float, result_limit: int, max_body: int,
          query_workers: int | None) -> None:
    """Serve the store over HTTP: the SPARQL 1.1 Protocol at /sparql (a query editor for
    browsers; updates from curators as imports), the JSON API under /api/ (its OpenAPI document
    at /api/openapi.json). Every request runs on the store as its token's user may see it.

    Example: workbench --store memory serve --port 7000
    then: curl 'http://127.0.0.1:7000/sparql?query=ASK%7B%7D'
    """
    import uvicorn

    from workbench.server import create_app
    from workbench.server.lane import protocol

    app = create_app(wb, max_body=max_body, query_timeout=query_timeout, result_limit=result_limit,
                     query_workers=query_workers)
    click.echo(f"serving {wb.store.location} at http://{host}:{port}/sparql (Ctrl-C stops)", err=True)
    # httptools and uvloop: uvicorn's C parser and event loop, measured to halve its per-request
    # cost against the pure-Python h11 and asyncio (docs/benchmarks.md, "Serving"); the httptools
    # protocol answers the quick lane itself, before ASGI (workbench.server.lane).
    # uvicorn raises the signal it stopped on again once it has shut down; SIGTERM's default action
    # would end the process there, before the store and its views (folders on disk) are closed.
    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, http=protocol(app),
                    loop="uvloop")
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)  # through the `with` that closes the store, as every command ends
