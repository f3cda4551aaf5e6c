"""The Python floor of ``workbench bench serve``: the least a Python server can do per request.

uvicorn with httptools and uvloop, as ``workbench serve`` runs, and one pyoxigraph query per
request on the bare server's store opened read-only: no access control, no checks, no framework,
no hand-off to a thread. What lies between this and ``oxigraph serve`` is the price of answering
HTTP from Python at all, on this machine; what lies between Workbench and this is Workbench's
own. Started by the bench as ``python benchmarks/serve_floor.py --location DIR --port N``.
"""

from __future__ import annotations

import argparse
import urllib.parse
from typing import Any

import pyoxigraph as ox

JSON = ox.QueryResultsFormat.JSON


def application(store: ox.Store) -> Any:
    """The ASGI app: ``GET /query?query=...`` answered as SPARQL results in JSON; 400 otherwise."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        status, body = 400, b"send GET /query?query=...\n"
        found = urllib.parse.parse_qs(scope["query_string"].decode("utf-8"))
        if scope["path"] == "/query" and "query" in found:
            try:
                answer = store.query(found["query"][0])
            except SyntaxError as exc:
                body = f"{exc}\n".encode()
            else:
                if isinstance(answer, ox.QuerySolutions | ox.QueryBoolean):  # the bench sends SELECT only
                    status, body = 200, answer.serialize(format=JSON) or b""
        media = b"application/sparql-results+json" if status == 200 else b"text/plain"
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", media)]})
        await send({"type": "http.response.body", "body": body})

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--location", required=True, help="a pyoxigraph store directory (opened read-only)")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    import uvicorn

    uvicorn.run(application(ox.Store.read_only(args.location)), host="127.0.0.1", port=args.port,
                log_level="warning", access_log=False, http="httptools", loop="uvloop", lifespan="off")


if __name__ == "__main__":
    main()
