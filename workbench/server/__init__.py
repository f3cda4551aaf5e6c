"""The HTTP layer: the SPARQL 1.1 Protocol endpoint at ``/sparql`` (and, later, the JSON API).

Thin over :class:`workbench.service.Workbench`: these modules parse HTTP requests, decide who is
asking and what they may see, call the service, and write responses. No SPARQL is evaluated
here; the store's engine does that. ``workbench serve`` runs :func:`create_app` under uvicorn.
"""

from __future__ import annotations

from workbench.server.app import create_app

__all__ = ["create_app"]
