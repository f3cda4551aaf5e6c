"""Child processes Workbench starts (the browser workbench of ``workbench up``, the servers of
``workbench bench serve``): stopping them without leaving one behind."""

from __future__ import annotations

import subprocess


def stop(child: subprocess.Popen[bytes] | None, *, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; nothing for a child already gone (or None)."""
    if child is None or child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
