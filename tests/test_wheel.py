"""The installed package is the whole product: a wheel built from this checkout, installed into a
fresh virtual environment (its dependencies from the package index, nothing from the checkout),
creates the sample store, answers a derived question, checks its rules, serves SPARQL over HTTP
and brings up the browser workbench. Every command runs outside the checkout, so nothing can be
found there by accident."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port


@dataclass
class Installed:
    venv: Path
    work: Path  # a folder outside the checkout: the commands' working directory

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "workbench"), *args], cwd=self.work, capture_output=True,
                              text=True, timeout=timeout)

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen([str(self.venv / "bin" / "workbench"), *args], cwd=self.work,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-w",
                    str(dist), "--quiet", "--disable-pip-version-check"], check=True, capture_output=True, timeout=600)
    [wheel] = dist.glob("workbench-*.whl")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", f"{wheel}[ui]"],
                   check=True, capture_output=True, timeout=1800)
    work = root / "work"
    work.mkdir()
    return Installed(venv, work)


def test_the_package_comes_from_the_wheel(installed: Installed) -> None:
    done = subprocess.run([str(installed.venv / "bin" / "python"), "-c", "import workbench; print(workbench.__file__)"],
                          cwd=installed.work, capture_output=True, text=True, check=True)
    assert done.stdout.strip().startswith(str(installed.venv))


def test_the_sample_store_answers_and_its_rules_check(installed: Installed) -> None:
    init = installed.run("--store", "memory", "init", "--sample")
    assert init.returncode == 0, init.stderr
    assert "memories.jsonl: 20 records added" in init.stdout
    ask = installed.run("--store", "memory", "ask", "my car", "needs", "gas", "--json")
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert answer["tier"] == "derived" and "gasoline" in answer["values"]
    rules = installed.run("--store", "memory", "rules", "check")
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert "inherit-kind v1" in rules.stdout
    # Recall with the default encoder: the model package and the shipped tokenizer, from the wheel.
    recall = installed.run("--store", "memory", "recall", "what was the name of my friend who works on chips?",
                           "--json")
    assert recall.returncode == 0, recall.stderr
    assert json.loads(recall.stdout)["records"][0]["id"] == "m-friend-1"
    status = json.loads(installed.run("--store", "memory", "index", "status").stdout)
    assert status["records"]["encoder"].startswith("minilm-onnx/")


def _wait_for(url: str, timeout: float = 60) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return bytes(r.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


@pytest.fixture
def store(installed: Installed) -> Iterator[str]:
    name = f"served-{free_port()}"
    assert installed.run("--store", name, "init", "--sample").returncode == 0
    yield name


def test_serve_answers_sparql_over_http(installed: Installed, store: str) -> None:
    port = free_port()
    server = installed.start("--store", store, "serve", "--port", str(port))
    try:
        query = urllib.parse.quote("ASK { GRAPH ?g { ?s ?p ?o } }")
        answer = json.loads(_wait_for(f"http://127.0.0.1:{port}/sparql?query={query}"))
        assert answer == {"head": {}, "boolean": True}
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_up_brings_the_browser_workbench(installed: Installed) -> None:
    port, ui_port = free_port(), free_port()
    up = installed.start("--store", "newcomer", "--as", "ada", "up", "--port", str(port), "--ui-port", str(ui_port))
    try:
        page = _wait_for(f"http://127.0.0.1:{ui_port}/", timeout=120)
        assert b"<html" in page.lower() or b"streamlit" in page.lower()
        assert json.loads(_wait_for(f"http://127.0.0.1:{port}/api/openapi.json", timeout=30))["openapi"].startswith("3.")
    finally:
        up.terminate()
        up.wait(timeout=60)
