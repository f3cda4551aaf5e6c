"""Benchmarks: each runs its peers side by side in the same run and prints ratios; figures go to
docs/benchmarks.md with the command that reproduces them. They live beside the package, not in it
(the wheel holds ``workbench`` only): run them from a checkout, ``python -m benchmarks ask ...``
or ``workbench bench ask ...``. They import the installed ``workbench``; it never imports them.

Children (each contender in its own process) run as ``python -m benchmarks.<module>`` with
:func:`child_env`, so they find the benchmarks whatever the working directory.

>>> (ROOT / "benchmarks" / "__init__.py").is_file()
True
>>> child_env()["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)
True
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the checkout: benchmarks/ and workbench/ side by side


def child_env() -> dict[str, str]:
    """This process's environment with the checkout first on ``PYTHONPATH``: a child started with
    ``python -m benchmarks.<module>`` imports the same benchmarks (and workbench) as its parent."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
    return env


def progress(**options: Any) -> Any:
    """A progress bar on standard error, drawn only when that is a terminal: a run written to a
    log or a pipe gets its results, not a bar redrawn every second."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, disable=None, dynamic_ncols=True, **options)
