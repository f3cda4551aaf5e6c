"""The query editor at ``/sparql``: YASGUI, served by `workbench serve` itself, working offline.

Two real server processes with the sample data: ``open_server`` has no users (queries need no
token), ``token_server`` has one (queries need its token; the page itself does not). A browser's
GET gets the page and its vendored files; a program's GET, and every query, gets what it got
before the editor existed. The last test drives a real headless Chromium through the page, with
every request to another host blocked, when Playwright and Debian's Chromium are installed
(``pip install -e '.[test]'`` and ``scripts/setup-debian.sh``).
"""

from __future__ import annotations

import re
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from tests.conftest import ServerProcess, free_port
from workbench.access import users
from workbench.access.users import Role
from workbench.server import editor
from workbench.service import Workbench

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
SD = "http://www.w3.org/ns/sparql-service-description#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


class Server(ServerProcess):
    """`workbench serve` in a child process on a free loopback port."""

    name = "workbench serve"

    def __init__(self, store: Path) -> None:
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.root}/sparql"
        self.start([sys.executable, "-m", "workbench.cli", "--store", str(store), "serve", "--port", str(self.port)],
                   self.url)


@dataclass
class Served:
    server: Server
    token: str | None  # None: a store with no users

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def _serve(path: Path, with_user: bool) -> tuple[Server, str | None]:
    with Workbench.open(path, create=True, user="ada") as wb:
        wb.init(sample=True)
        token = users.add(wb.store, "ada", [Role.ADMIN], actor="ada", now=wb._now()) if with_user else None
    return Server(path), token


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server, token = _serve(tmp_path_factory.mktemp("editor-open") / "store", with_user=False)
    yield Served(server, token)
    server.stop()


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server, token = _serve(tmp_path_factory.mktemp("editor-token") / "store", with_user=True)
    yield Served(server, token)
    server.stop()


@pytest.fixture(params=["open", "token"])
def served(request: pytest.FixtureRequest) -> Served:
    """Each of the two servers."""
    return request.getfixturevalue(f"{request.param}_server")  # type: ignore[no-any-return]


def _assets(page: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/sparql-editor/[^"]+)"', page)


# ---------------------------------------------------------------------- the page and its files


def test_a_browser_gets_the_editor_without_a_token(served: Served) -> None:
    for path in ("/sparql", "/sparql/"):
        r = httpx.get(served.server.root + path, headers={"Accept": BROWSER})
        assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
        assert "<title>Workbench SPARQL</title>" in r.text and "new Yasgui(" in r.text
        assert f'"endpoint": "{served.server.url}"' in r.text  # absolute, from the request: always /sparql
        assert [a.split("?")[0] for a in _assets(r.text)] == ["/sparql-editor/yasgui.min.css",
                                                             "/sparql-editor/yasgui.min.js"]
        assert 'id="wb-token"' in r.text and "sessionStorage" in r.text and "localStorage" not in r.text
        assert "{{" not in r.text  # every slot of the template filled
        csp = r.headers["content-security-policy"]
        nonce = re.search(r"'nonce-([^']+)'", csp).group(1)  # type: ignore[union-attr]
        assert f'<script nonce="{nonce}">' in r.text and "connect-src 'self'" in csp and "default-src 'none'" in csp
    head = httpx.head(served.server.url, headers={"Accept": BROWSER})
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/html")


def test_the_vendored_files(open_server: Served) -> None:
    root = open_server.server.root
    page = httpx.get(open_server.server.url, headers={"Accept": BROWSER}).text
    types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    for asset in _assets(page):
        r = httpx.get(root + asset)
        assert r.status_code == 200, asset
        assert r.headers["content-type"] == types[Path(asset.split("?")[0]).suffix]
        assert len(r.content) > 10_000 and int(r.headers["content-length"]) == len(r.content)
        assert r.headers["cache-control"] == editor.ASSET_CACHE and r.headers["x-content-type-options"] == "nosniff"
        again = httpx.get(root + asset, headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304 and again.headers["cache-control"] == editor.ASSET_CACHE
    js = httpx.get(root + "/sparql-editor/yasgui.min.js")
    assert js.content == (editor.STATIC / "yasgui.min.js").read_bytes()
    assert b"lov.linkeddata.es" in js.content  # what the page switches off is still in the bundle...
    assert 'name !== "property" && name !== "class"' in page  # ... and is switched off
    licence = httpx.get(root + "/sparql-editor/LICENSE")
    assert licence.status_code == 200 and "MIT License" in licence.text


def test_the_files_route_serves_nothing_else(open_server: Served) -> None:
    root = open_server.server.root
    missing = httpx.get(root + "/sparql-editor/nothing.js")
    assert missing.status_code == 404
    assert missing.json() == {"error": "NotFound", "message": "no such route: /sparql-editor/nothing.js"}
    for raw in ("/sparql-editor/..%2Feditor.py", "/sparql-editor/%2e%2e/editor.py", "/sparql-editor/"):
        r = httpx.get(root + raw)
        assert r.status_code == 404 and b"import" not in r.content, raw
    assert httpx.post(root + "/sparql-editor/yasgui.min.js").status_code == 405


# ---------------------------------------------------------------------- what programs get is unchanged


def _is_service_description(r: httpx.Response, url: str) -> bool:
    if r.status_code != 200 or not r.headers["content-type"].startswith("text/turtle"):
        return False
    triples = {(t.subject, t.predicate, t.object) for t in ox.parse(r.content, ox.RdfFormat.TURTLE)}
    return (ox.NamedNode(url), ox.NamedNode(RDF_TYPE), ox.NamedNode(SD + "Service")) in triples


@pytest.mark.parametrize("accept", ["application/sparql-results+json", "*/*", "text/turtle", None,
                                    "text/html;q=0.5, text/turtle"])
def test_a_program_still_gets_the_service_description(served: Served, accept: str | None) -> None:
    headers = {"Accept": accept} if accept else {}
    r = httpx.get(served.server.url, headers={**headers, **served.auth})
    assert _is_service_description(r, served.server.url), r.text


def test_the_token_rule_is_unchanged_for_programs(token_server: Served) -> None:
    r = httpx.get(token_server.server.url, headers={"Accept": "application/sparql-results+json"})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")


def test_queries_from_a_browser_still_run(served: Served) -> None:
    url = served.server.url
    for r in (httpx.get(url, params={"query": "ASK {}"}, headers={"Accept": BROWSER, **served.auth}),
              httpx.post(url, data={"query": "ASK {}"}, headers={"Accept": BROWSER, **served.auth})):
        # The browser's application/xml;q=0.9 picks SPARQL XML results, as before the editor.
        assert r.status_code == 200 and r.headers["content-type"] == "application/sparql-results+xml"
        assert bool(ox.parse_query_results(r.content, ox.QueryResultsFormat.XML)) is True
    update = httpx.get(url, params={"update": "CLEAR ALL"}, headers={"Accept": BROWSER, **served.auth})
    # The Protocol endpoint refuses it in its own words (text/plain), not the editor page.
    assert 400 <= update.status_code < 500 and update.headers["content-type"].startswith("text/plain")


def test_the_page_cannot_be_broken_out_of() -> None:
    text = editor.page('http://h/</script><script>alert(1)</script>"{{nonce}}', "n0nce")
    assert "<script>alert(1)" not in text and text.count("<script") == 3 and text.count("</script>") == 3
    assert text.count("n0nce") == 1 and text.count("{{nonce}}") == 2  # a value is never read as a slot


# ---------------------------------------------------------------------- a real browser, offline


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    # Both are installed by the README's test command: missing is a failure, never a skip.
    from playwright import sync_api

    assert CHROMIUM.exists(), f"no Chromium at {CHROMIUM}: run scripts/setup-debian.sh"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_a_real_browser_runs_the_default_query_offline(chromium: object, token_server: Served) -> None:
    from playwright.sync_api import Browser, Request, Route, expect

    assert isinstance(chromium, Browser)
    server, token = token_server.server, token_server.token
    assert token is not None
    context = chromium.new_context()
    blocked: list[str] = []
    sent: list[Request] = []
    failures: list[str] = []

    def only_this_server(route: Route) -> None:
        url = urllib.parse.urlsplit(route.request.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.hostname != "127.0.0.1":
            blocked.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", only_this_server)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("request", lambda r: sent.append(r))  # Playwright tags handlers: not a builtin
    page.on("pageerror", lambda exc: failures.append(str(exc)))
    page.goto(server.url)
    run = page.locator(".yasqe_queryButton")
    expect(run).to_be_visible()
    results = page.locator(".yasr")

    run.click()  # no token yet, on a store with users: the server's 401 message is shown
    expect(results).to_contain_text("needs a token")

    page.fill("#wb-token", token)
    run.click()
    expect(results.locator("tbody")).to_contain_text("urn:wb:record:")
    expect(results.locator("tbody")).to_contain_text("wedding")  # a statement of the sample data

    queries = [r for r in sent if r.url == server.url and r.method == "POST"]
    assert len(queries) == 2
    assert "authorization" not in queries[0].headers
    assert queries[1].headers["authorization"] == f"Bearer {token}"
    assert "query=" in (queries[1].post_data or "") and "wb%3Astatement" in (queries[1].post_data or "")
    assert page.evaluate("key => sessionStorage.getItem(key)", "workbench.sparql.token") == token
    assert token not in page.evaluate("() => JSON.stringify(Object.assign({}, localStorage))")
    share = page.evaluate("() => window.workbenchYasgui.getTab().getShareableLink()")
    assert "query=" in share and token not in share
    assert blocked == [] and failures == []
    assert {urllib.parse.urlsplit(r.url).netloc for r in sent if r.url.startswith("http")} == {server.root[7:]}
    context.close()
