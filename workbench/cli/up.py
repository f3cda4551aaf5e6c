"""``workbench up``: the server and the browser workbench together, on this machine.

One process owns an embedded store, so this one does: it serves the store over HTTP (the same
application as ``workbench serve``, under uvicorn in a thread) and runs the Streamlit app as a
child process that talks to that server through the Python client (``$WORKBENCH_URL``). Both
listen on loopback only. Ctrl-C or SIGTERM stops both; the child is in its own process group
(Ctrl-C reaches this process only, which stops the child in order) and, on Linux, is told to
stop if this process dies without cleaning up (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import errno
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import click

import workbench
from workbench.cli import Context, _progress, children, main
from workbench.errors import WorkbenchError
from workbench.service import Workbench, sample

HOST = "127.0.0.1"
APP = Path(__file__).resolve().parent.parent / "ui" / "launch" / "streamlit_app.py"
START_TIMEOUT = 60.0  # seconds for each of the two to answer
# Run in the child before it becomes Streamlit: ask Linux to send SIGTERM when the parent dies
# (PR_SET_PDEATHSIG survives exec), give up if the parent is already gone, then exec Streamlit.
CHILD = """\
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(0)
os.execv(sys.executable, [sys.executable, "-m", "streamlit", *sys.argv[2:]])
"""


@main.command()
@click.option("--port", default=7000, show_default=True, type=click.IntRange(1, 65535),
              help="The server's port (/sparql and the JSON API under /api/).")
@click.option("--ui-port", default=8501, show_default=True, type=click.IntRange(1, 65535),
              help="The browser workbench's port.")
@click.pass_obj
def up(ctx: Context, port: int, ui_port: int) -> None:
    """Start the Workbench server and the browser workbench on this machine; Ctrl-C stops both.

    With no store yet, creates one with the sample data and its proposals (candidate facts in the
    review queue, a rule version to sign off); with no users yet, adds you (--as, else
    $WORKBENCH_USER or your login name) as the first admin and prints your token, this once:
    sign in with it. Needs the browser extras: pip install -e '.[ui]'.

    Example: workbench up, then open http://127.0.0.1:8501
    """
    try:
        # Everything that can fail at once is checked before a store is created or opened.
        if port == ui_port:
            raise WorkbenchError(f"--port and --ui-port are both {port}; give them different ports")
        for module in ("streamlit", "uvicorn"):
            if importlib.util.find_spec(module) is None:
                raise WorkbenchError(f"the browser workbench needs {module}, which is not installed: "
                                     "pip install -e '.[ui]'")
        server_socket = _bind(port, "--port")
        try:
            _bind(ui_port, "--ui-port").close()  # free now; Streamlit binds it itself
            with ctx.open(create=True) as wb:  # one process owns the store: this one
                _prepare(wb, f"http://{HOST}:{ui_port}")
                _run(wb, server_socket, port, ui_port)
        finally:
            server_socket.close()
    except WorkbenchError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def _bind(port: int, option: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise WorkbenchError(f"port {port} on {HOST} is in use (another `workbench up` or `serve`?); "
                                 f"choose another with {option}") from None
        raise WorkbenchError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    return sock


def _prepare(wb: Workbench, ui_url: str) -> None:
    """A new embedded store gets the sample data and its proposals (work for a curator and a
    reviewer, from a stand-in model: see :mod:`workbench.service.sample`); a store without users its
    first admin, who may sign off the sample's rule version, since they neither wrote nor
    proposed it. A store that exists is left as it is."""
    location = str(wb.store.location)
    if not location.startswith(("http://", "https://")) and not wb.store.graph_names():
        reports = wb.init(sample=True, proposals=True, progress=_progress)
        facts, rules = sample.waiting(wb)
        click.echo(f"created a store at {location} with the sample data ({len(reports)} files) and its proposals: "
                   f"{facts} candidate facts in the review queue, {rules} rule version(s) to sign off")
    if wb.users():
        click.echo(f"sign in at {ui_url} with your token (an admin adds users: workbench --as ADMIN users add "
                   "NAME --role viewer|curator|reviewer|admin)")
        return
    token = wb.add_user(wb.user, ["admin"])
    click.echo(f"added {wb.user} as the store's first admin; their token, shown only now:")
    click.echo(f"  {token}")
    click.echo(f"sign in at {ui_url} with it, and keep it: it is not shown again")


def _run(wb: Workbench, server_socket: socket.socket, port: int, ui_port: int) -> None:
    import uvicorn

    from workbench.server import create_app
    from workbench.server.lane import protocol

    app = create_app(wb)
    config = uvicorn.Config(app, log_level="warning", access_log=False, http=protocol(app), loop="uvloop")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [server_socket]}, name="workbench-server",
                              daemon=True)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, _stopper(stop)) for sig in (signal.SIGINT, signal.SIGTERM)}
    child: subprocess.Popen[bytes] | None = None
    server_url, ui_url = f"http://{HOST}:{port}", f"http://{HOST}:{ui_port}"
    try:
        thread.start()
        _wait(lambda: server.started, lambda: None if thread.is_alive() else "it stopped", "the server", stop)
        child = _streamlit(server_url, ui_port)
        _wait(lambda: _answers(f"{ui_url}/_stcore/health"), lambda: _exited(child), "the browser workbench", stop)
        if stop.is_set():
            return
        click.echo(f"Workbench is up: {ui_url}  (the browser workbench)")
        click.echo(f"  server: {server_url}/sparql and {server_url}/api/ over {wb.store.location}")
        click.echo("  Ctrl-C stops both")
        while not stop.wait(0.5):
            if (why := _exited(child)) or not thread.is_alive():
                raise WorkbenchError(f"the browser workbench {why}" if why else "the server stopped")
    finally:
        children.stop(child)
        server.should_exit = True
        thread.join(timeout=10)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if stop.is_set():
            click.echo("stopped", err=True)


def _stopper(stop: threading.Event) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return handle


def _streamlit(server_url: str, ui_port: int) -> subprocess.Popen[bytes]:
    """Streamlit running the app, told where the server is; the same workbench package is found
    first on its path."""
    env = dict(os.environ, WORKBENCH_URL=server_url)
    root = str(Path(workbench.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    args = ["run", str(APP), "--server.port", str(ui_port), "--server.address", HOST, "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
            "--client.toolbarMode", "minimal", "--logger.level", "warning"]  # its start-up chatter is not ours
    if sys.platform.startswith("linux"):
        command = [sys.executable, "-c", CHILD, str(os.getpid()), *args]
    else:
        command = [sys.executable, "-m", "streamlit", *args]
    # Its own process group: a terminal's Ctrl-C reaches this process, which stops the child in order.
    return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            process_group=0)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _exited(child: subprocess.Popen[bytes]) -> str | None:
    code = child.poll()
    return None if code is None else f"stopped (exit status {code}; its messages are above)"


def _wait(ready: Callable[[], bool], failed: Callable[[], str | None], what: str, stop: threading.Event) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not ready():
        if stop.is_set():
            return
        if why := failed():
            raise WorkbenchError(f"{what} did not start: {why}")
        if time.monotonic() > deadline:
            raise WorkbenchError(f"{what} did not answer within {START_TIMEOUT:.0f} s")
        stop.wait(0.1)


