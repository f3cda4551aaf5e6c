"""The ``workbench bench`` command group."""

from __future__ import annotations

import click


@click.group()
def bench() -> None:
    """Benchmarks with their peers side by side (not tests: figures for docs/benchmarks.md)."""
