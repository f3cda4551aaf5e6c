"""Running a benchmark child under a time budget and a memory cap, and knowing its peak RSS.

Peers such as pySHACL or owlrl materialise everything in memory and can run for hours at sizes
Workbench takes in its stride; :func:`run_limited` stops such a child when its wall time or its
resident set passes the budget and says which, so a report can say "gave up at 100k" instead of
waiting forever. The child's own peak RSS comes from the kernel (``wait4``), so it is that
process's alone, whichever way it ended.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

POLL_SECONDS = 0.2


def vmhwm_mib(pid: int | str) -> float | None:
    """The peak resident set of process ``pid`` ("self" for this one) since its last exec, in MiB
    (Linux's VmHWM), or None where /proc does not tell it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 2**10
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def peak_rss_mib() -> float:
    """This process's peak resident set so far, in MiB: VmHWM where Linux gives it, since
    ``ru_maxrss`` of a child started by fork or vfork starts from its parent's resident set (the
    kernel carries it over at exec), so a child of a big bench process would look as big."""
    hwm = vmhwm_mib("self")
    if hwm is not None:
        return hwm
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


@dataclass(frozen=True)
class Finished:
    """How a child ended: its exit code (None when it was stopped), wall seconds, peak RSS, and
    why it was stopped ('' if it was not: 'time' or 'memory')."""

    returncode: int | None
    seconds: float
    peak_rss_mib: float
    stopped: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.stopped


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def run_limited(command: list[str], *, stdout: Path, stderr: Path | None = None, timeout: float | None = None,
                memory_mib: float | None = None, env: Mapping[str, str] | None = None) -> Finished:
    """Run ``command`` with its output in ``stdout`` (and ``stderr``; None: this process's stderr,
    so progress bars show) and environment ``env`` (None: this process's); stop it (SIGKILL) once it
    has run ``timeout`` seconds or its resident set passes ``memory_mib``. Never raises for the
    child's failure: the caller reads ``Finished``."""
    from benchmarks.serve_http import _die_with_parent

    err = open(stderr, "wb") if stderr else None  # noqa: SIM115 - closed below
    try:
        with open(stdout, "wb") as out:
            start = time.monotonic()
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=env, preexec_fn=_die_with_parent())
            status, usage, stopped, hwm = _watch(proc, start, timeout, memory_mib)
            seconds = time.monotonic() - start
    finally:
        if err is not None:
            err.close()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; tell Popen so
    # wait4's ru_maxrss counts the parent's resident set at exec and the child's own children:
    # only a fallback where /proc has no VmHWM.
    peak = hwm or (usage.ru_maxrss / 2**20 if sys.platform == "darwin" else usage.ru_maxrss / 2**10)
    return Finished(None if stopped else proc.returncode, seconds, peak, stopped)


def _watch(proc: subprocess.Popen[bytes], start: float, timeout: float | None,
           memory_mib: float | None) -> tuple[int, resource.struct_rusage, str, float]:
    """Wait for ``proc``, killing it past its budget: (wait status, its rusage, why it was stopped,
    the highest VmHWM seen: a high-water mark, so it misses at most the last poll's growth)."""
    stopped, hwm = "", 0.0
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                return status, usage, stopped, hwm
            hwm = max(hwm, vmhwm_mib(proc.pid) or 0.0)
            if timeout is not None and time.monotonic() - start > timeout:
                stopped = "time"
            elif memory_mib is not None and _rss_mib(proc.pid) > memory_mib:
                stopped = "memory"
            if stopped:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                return status, usage, stopped, hwm
            time.sleep(POLL_SECONDS)
    except BaseException:  # Ctrl-C or an error here: the child must not outlive the bench
        proc.kill()
        proc.wait()
        raise
