"""`workbench up` as a real child process on free loopback ports: a new store gets the sample data
and its first admin (the token printed once), the server and the browser workbench both answer,
and Ctrl-C (SIGINT), SIGTERM, or the death of `workbench up` itself leave no Streamlit behind.
Errors a person can act on come before anything is created."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

import workbench
from tests.conftest import ROOT, free_port
from tests.test_server import Server
from workbench.access.users import Role
from workbench.cli import main
from workbench.cli import up as up_module
from workbench.values.answers import Tier

TOKEN = re.compile(r"^  (wb_[\w-]+)$")


class Up:
    """`workbench --store STORE --as ada up` on free ports, its output read line by line."""

    def __init__(self, store: Path, stderr: Path) -> None:
        self.port, self.ui_port = free_port(), free_port()
        self.url, self.ui_url = f"http://127.0.0.1:{self.port}", f"http://127.0.0.1:{self.ui_port}"
        self.stderr = stderr.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "workbench.cli", "--store", str(store), "--as", "ada", "up",
             "--port", str(self.port), "--ui-port", str(self.ui_port)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.out: list[str] = []

    def _read(self) -> None:
        assert self.process.stdout
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_up(self, timeout: float = 90) -> list[str]:
        """The lines printed until both answer ("Ctrl-C stops both")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            self.out.append(line)
            if "Ctrl-C stops both" in line:
                return self.out
        raise AssertionError(f"workbench up did not come up: {self.out}, exit {self.process.poll()}")

    def streamlit(self) -> list[psutil.Process]:
        return [p for p in psutil.Process(self.process.pid).children(recursive=True)
                if "streamlit" in " ".join(p.cmdline())]

    def stop(self, sig: int = signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.kill()

    def kill(self) -> None:
        """Make sure it is gone and its pipes closed (after a test that failed, too)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=10)
        if self.process.stdout:
            self.process.stdout.close()
        self.stderr.close()


def gone(process: psutil.Process, timeout: float = 15) -> bool:
    """Whether the process ended within ``timeout`` (a zombie no one reaped counts as ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def answers(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Up]:
    up = Up(tmp_path / "store", tmp_path / "stderr.txt")
    yield up
    up.kill()


def test_a_new_store_comes_up_with_the_sample_data_and_its_first_admin(started: Up, tmp_path: Path) -> None:
    out = started.wait_up()
    assert out[0].startswith(f"created a store at {tmp_path / 'store'} with the sample data")
    assert out[1] == "added ada as the store's first admin; their token, shown only now:"
    tokens = [m.group(1) for line in out if (m := TOKEN.match(line))]
    assert len(tokens) == 1
    assert f"sign in at {started.ui_url} with it" in out[3]
    assert out[4] == f"Workbench is up: {started.ui_url}  (the browser workbench)"
    assert started.url in out[5]
    # Both answer: the browser workbench, and the server with the sample data, to the admin's token.
    assert answers(f"{started.ui_url}/_stcore/health") == (200, b"ok")
    status, page = answers(started.ui_url)
    assert status == 200 and b"<html" in page.lower()
    client = workbench.connect(started.url, tokens[0])
    me = client.me()
    assert me is not None and me.name == "ada" and me.may(Role.ADMIN)
    assert client.record("m-car-1").source.id == "chat-2026-01-04#2"
    assert client.ask("my car", "needs", "gas").tier is Tier.DERIVED
    with pytest.raises(workbench.errors.Forbidden):
        workbench.connect(started.url).stats()  # a store with a user wants a token
    # Ctrl-C stops both; no Streamlit remains, both ports are free again.
    [child] = started.streamlit()
    assert started.stop(signal.SIGINT) == 0
    assert gone(child)
    assert port_free(started.port) and port_free(started.ui_port)


def test_a_second_start_keeps_the_store_and_its_users_and_sigterm_stops_it(tmp_path: Path) -> None:
    first = Up(tmp_path / "store", tmp_path / "first.txt")
    try:
        token = next(m.group(1) for line in first.wait_up() if (m := TOKEN.match(line)))
    finally:
        assert first.stop() == 0
    again = Up(tmp_path / "store", tmp_path / "again.txt")
    try:
        out = again.wait_up()
        assert not any(TOKEN.match(line) for line in out) and not any("created" in line for line in out)
        assert out[0].startswith(f"sign in at {again.ui_url} with your token")
        assert workbench.connect(again.url, token).me() is not None  # the same admin, the same token
        [child] = again.streamlit()
        assert again.stop(signal.SIGTERM) == 0
        assert gone(child)
    finally:
        again.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_streamlit_does_not_outlive_a_killed_workbench_up(started: Up) -> None:
    started.wait_up()
    [child] = started.streamlit()
    started.process.kill()  # no chance to clean up
    started.process.wait()
    assert gone(child)


def test_a_port_in_use_is_said_before_anything_is_created(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for args, option in ((["--port", str(port), "--ui-port", str(free_port())], "--port"),
                             (["--port", str(free_port()), "--ui-port", str(port)], "--ui-port")):
            done = subprocess.run([sys.executable, "-m", "workbench.cli", "--store", str(store), "up", *args],
                                  cwd=ROOT, capture_output=True, text=True, timeout=60)
            assert done.returncode == 1
            assert done.stderr == (f"error: port {port} on 127.0.0.1 is in use (another `workbench up` or "
                                   f"`serve`?); choose another with {option}\n")
    assert not store.exists()


def test_a_store_another_process_owns_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with workbench.open(store, create=True) as wb:
        wb.init()
    server = Server(store)
    try:
        done = subprocess.run([sys.executable, "-m", "workbench.cli", "--store", str(store), "up", "--port",
                               str(free_port()), "--ui-port", str(free_port())],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
    finally:
        server.stop()
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: the store at {store} is open in another process; if a Workbench server "
                                  "owns it, use its URL")


def test_without_streamlit_it_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = up_module.importlib.util.find_spec
    monkeypatch.setattr(up_module.importlib.util, "find_spec", lambda name, *a: None if name == "streamlit"
                        else real(name, *a))
    done = CliRunner().invoke(main, ["--store", str(tmp_path / "store"), "up", "--port", str(free_port()),
                                     "--ui-port", str(free_port())])
    assert done.exit_code == 1
    assert done.output == ("error: the browser workbench needs streamlit, which is not installed: "
                           "pip install -e '.[ui]'\n")
    assert not (tmp_path / "store").exists()


def test_the_two_ports_must_differ(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["--store", str(tmp_path / "store"), "up", "--port", "7000", "--ui-port", "7000"])
    assert done.exit_code == 1 and "give them different ports" in done.output


def test_the_child_is_told_to_stop_with_its_parent() -> None:
    """The bootstrap the child runs before it becomes Streamlit: PR_SET_PDEATHSIG, then exec."""
    assert "prctl(1, signal.SIGTERM)" in up_module.CHILD and "os.execv" in up_module.CHILD
    assert os.path.basename(up_module.APP) == "streamlit_app.py"  # beside no pages/ directory
    assert not (Path(up_module.APP).parent / "pages").exists()
