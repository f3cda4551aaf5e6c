"""The browser workbench end to end: a real `workbench up` child process, driven by a real headless
Chromium through Playwright, as four people in four browser sessions.

The store is made beforehand (and closed before `up` opens it): the sample data, users root
(admin), cora (curator), rita (reviewer) and vic (viewer), and one candidate fact in the review
queue. The sample data's m-family-1 (about Mia) has a source only group:family may see.

- A curator approves the candidate in the Review queue; the fact is then on record, as hers.
- The curator starts version 2 of the shipped rule inherit-kind on the Rules page, changes its
  reading in the plain text box, checks it and proposes it; a viewer's answer still cites v1.
- A reviewer (another user) signs it off on the Sign-off page.
- A viewer asks "my car needs gas" on the Ask page: derived, with the proof tree naming
  inherit-kind v2 and its new reading, down to the records it rests on.
- A viewer finds nothing of Mia's record (Ask, recall, Entities, Sources and history) and cannot
  reach the Review queue, Rules or Sign-off: not in the navigation, not by their URL (in a new
  tab, or in the signed-in session), while an admin sees the record and the curator the pages.

Screenshots of every page are saved, full page, under ``$WORKBENCH_ARTIFACTS`` (else
``tests/artifacts/``); when a test fails, each of its open pages is saved as ``FAILED-ui_e2e-...png``
with its text, and `workbench up`'s stderr beside them. Chromium (scripts/setup-debian.sh) and
Playwright (pip install -e '.[test]') missing is a failure, never a skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import ROOT, free_port
from workbench.service import Workbench

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
WAIT = 30_000  # ms: Streamlit reruns asynchronously, and a first page load imports a lot
VIEWPORT = {"width": 1280, "height": 900}
ROLES = {"root": "admin", "cora": "curator", "rita": "reviewer", "vic": "viewer"}
REVIEW_PAGES = ("Review queue", "Rules", "Sign-off")
REVIEW_PATHS = ("review", "rules", "signoff")  # their url_path in the app's navigation
CANDIDATE = {"id": "m-ravi-tea-1", "statement": "Ravi drinks green tea every morning.", "type": "observation",
             "about": ["Ravi"], "span": "Ravi has his green tea every morning",
             "source": {"id": "chat-2026-11-03#1", "said_by": "me", "captured_at": "2026-11-03T08:00:00Z"}}
OLD_READING = "If X is a K, and K (or a kind K is a kind of) has, is used for, depends on or needs Y, then so does X."
NEW_READING = "If X is a K, and K or any kind above it has, is used for, depends on or needs Y, then X does too."
FAILED = "FAILED-ui_e2e"  # the prefix of what a failed test here leaves in the artifacts


def artifacts() -> Path:
    where = Path(os.environ.get("WORKBENCH_ARTIFACTS") or ROOT / "tests" / "artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.fixture(scope="module", autouse=True)
def _no_stale_failures() -> None:
    """A failure's files from an earlier run would be mistaken for this run's."""
    for old in artifacts().glob(f"{FAILED}-*"):
        old.unlink()


# ---------------------------------------------------------------------- `workbench up`, for real


@dataclass
class Up:
    """`workbench --store STORE --as root up` on free loopback ports; its output goes to files."""

    process: subprocess.Popen[bytes]
    ui_url: str
    stdout: Path
    stderr: Path

    @classmethod
    def start(cls, store: Path, logs: Path, env: dict[str, str]) -> Up:
        port, ui_port = free_port(), free_port()
        stdout, stderr = logs / "up-stdout.txt", logs / "up-stderr.txt"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "workbench.cli", "--store", str(store), "--as", "root", "up",
                 "--port", str(port), "--ui-port", str(ui_port)],
                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        up = cls(process, f"http://127.0.0.1:{ui_port}", stdout, stderr)
        up.wait_up()
        return up

    def wait_up(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while "Ctrl-C stops both" not in self.stdout.read_text(encoding="utf-8", errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"workbench up did not come up (exit status {self.process.returncode}):\n"
                                     f"{self.stdout.read_text(errors='replace')}\n{self.stderr.read_text(errors='replace')}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # as Ctrl-C: it stops Streamlit, then itself
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _make_store(base: Path) -> dict[str, str]:
    """The sample data, a queued candidate and the four users; closed before `up` opens it."""
    proposed = base / "proposed.jsonl"
    proposed.write_text(json.dumps(CANDIDATE) + "\n", encoding="utf-8")
    with Workbench.open(base / "store", create=True, user="root") as wb:
        wb.init(sample=True)
        assert wb.record("m-family-1").source.visible_to == ("group:family",)
        wb.import_candidates(proposed)
        return {name: wb.add_user(name, [role]) for name, role in ROLES.items()}


@dataclass
class Served:
    up: Up
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("e2e")
    tokens = _make_store(base)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["XDG_CACHE_HOME"] = str(base / "cache")  # never the user's cache
    up = Up.start(base / "store", base, env)
    try:
        yield Served(up, tokens)
    finally:
        up.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    # Both are installed by the README's test command: missing is a failure, never a skip.
    try:
        from playwright import sync_api
    except ImportError:
        pytest.fail("Playwright for Python is not installed: pip install -e '.[test]'")
    assert CHROMIUM.exists(), f"no Chromium at {CHROMIUM}: run scripts/setup-debian.sh"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# ---------------------------------------------------------------------- people in browsers


class People:
    """One browser context per person, signed in through the sign-in form with their token.
    On a failed test, each open page is saved (screenshot and text) with `workbench up`'s stderr."""

    def __init__(self, browser: Browser, served: Served) -> None:
        self.browser, self.served = browser, served
        self.pages: dict[str, Page] = {}

    def page(self, who: str) -> Page:
        if who not in self.pages:
            context = self.browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
            self.pages[who] = context.new_page()
            sign_in(self.pages[who], self.served.up.ui_url, self.served.tokens[who])
        return self.pages[who]

    def new_tab(self, who: str) -> Page:
        """Another tab in ``who``'s browser (a new Streamlit session: signed out)."""
        tab = self.page(who).context.new_page()
        self.pages[f"{who}-tab"] = tab
        return tab

    def save_failure(self, test: str) -> None:
        out = artifacts()
        for who, page in self.pages.items():
            try:
                screenshot(page, f"{FAILED}-{test}-{who}", settled=False)
                (out / f"{FAILED}-{test}-{who}.txt").write_text(f"{page.url}\n\n{page.locator('body').inner_text()}",
                                                             encoding="utf-8")
            except Exception as exc:  # the browser may be what failed: keep going
                print(f"could not save {who}'s page: {exc}")
        shutil.copyfile(self.served.up.stderr, out / f"{FAILED}-{test}-workbench-up-stderr.txt")
        stderr = self.served.up.stderr.read_text(encoding="utf-8", errors="replace")
        print(f"saved the pages and workbench up's stderr under {out}; its stderr ends:\n{stderr[-4000:]}")

    def close(self) -> None:
        for context in {id(p.context): p.context for p in self.pages.values()}.values():
            context.close()


@pytest.fixture
def people(chromium: Browser, served: Served, request: pytest.FixtureRequest) -> Iterator[People]:
    failed_before = request.session.testsfailed
    found = People(chromium, served)
    try:
        yield found
        if request.session.testsfailed > failed_before:  # this test's call failed (counted before teardown)
            found.save_failure(request.node.name)
    finally:
        found.close()


def see(target: Locator) -> None:
    """Wait until ``target`` is visible; if not, fail with what the page shows as an error."""
    from playwright.sync_api import expect

    try:
        expect(target).to_be_visible(timeout=WAIT)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n\nThe page's errors: {page_errors(target.page) or 'none'}") from None


def page_errors(page: Page) -> list[str]:
    """Exceptions and errors Streamlit shows on the page."""
    return [e.inner_text() for e in page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
            .all()]


def sign_in(page: Page, ui_url: str, token: str) -> None:
    page.goto(ui_url)
    page.get_by_label("Your API token", exact=True).fill(token)
    page.get_by_role("button", name="Sign in").click()
    see(page.get_by_role("heading", name="Ask", exact=True))


def go(page: Page, title: str) -> None:
    """Open a page from the navigation (in the sidebar) and wait for its title."""
    page.get_by_role("navigation").get_by_role("link", name=title, exact=True).click()
    see(page.get_by_role("heading", name=title, exact=True, level=1))


def nav(page: Page) -> list[str]:
    """The titles of the pages in the navigation (each link's last line: its icon's name comes first)."""
    return [t.strip().splitlines()[-1] for t in page.get_by_role("navigation").get_by_role("link").all_inner_texts()]


def settle(page: Page) -> None:
    """Streamlit has finished running the script and the page is still."""
    page.locator('.stApp[data-test-script-state="notRunning"]').wait_for(timeout=WAIT)
    page.wait_for_timeout(300)


def screenshot(page: Page, name: str, *, settled: bool = True) -> Path:
    """The whole page (Streamlit scrolls its main area, not the document: the viewport is grown
    to the main area's height, then put back), without hover or focus marks. ``settled=False``
    takes it as it is (after a failure, the app may never settle)."""
    if settled:
        settle(page)
    page.mouse.move(0, 0)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    height = VIEWPORT["height"]
    for _ in range(5):  # until the height holds (tables and charts draw after the script ends)
        needed = int(page.evaluate("() => document.querySelector('[data-testid=stMain]')?.scrollHeight ?? 0"))
        if needed <= height:
            break
        height = needed
        page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
        page.wait_for_timeout(400)
    path = artifacts() / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    page.set_viewport_size(VIEWPORT)  # type: ignore[arg-type]
    return path


def open_by_url_in_session(page: Page, path: str) -> None:
    """Go to ``/path`` inside the signed-in session, as the browser's back and forward buttons do
    (Streamlit follows the address on popstate); a new tab would start a new, signed-out session."""
    page.evaluate("p => { history.pushState({}, '', p); window.dispatchEvent(new PopStateEvent('popstate')); }",
                  f"/{path}")
    settle(page)


def ask(page: Page, subject: str, relation: str, obj: str) -> Locator:
    """Ask a question on the Ask page's Question tab; returns that tab."""
    tab = page.get_by_role("tabpanel", name="Question")
    tab.get_by_role("textbox", name="Subject").fill(subject)
    tab.get_by_role("textbox", name="Relation").fill(relation)
    tab.get_by_role("textbox", name="Object (optional)").fill(obj)
    tab.get_by_role("button", name="Ask").click()
    return tab


def proof_text(page: Page) -> str:
    """Every line of text in the drawn proof graph, joined by spaces."""
    return " ".join(" ".join(page.locator('[data-testid="stGraphVizChart"] svg text').all_text_contents()).split())


def expect_derived_by(page: Page, version: int, reading: str) -> None:
    """The answer to "my car needs gas": derived, with its reasons down to the records."""
    tab = page.get_by_role("tabpanel", name="Question")
    see(tab.get_by_text("Yes (derived: gasoline).", exact=True))
    see(tab.get_by_text("derived", exact=True))  # the tier badge
    see(tab.get_by_role("heading", name="How it knows"))
    see(tab.locator("svg").get_by_text(f"rule inherit-kind v{version}", exact=True))
    drawn = proof_text(page)
    assert " ".join(reading.split()) in drawn, drawn
    assert "record m-car-1" in drawn and "record common-sense-v1" in drawn, drawn
    see(tab.get_by_text("[1] my car is a petrol car — record m-car-1"))  # its source one click away


# ---------------------------------------------------------------------- the scenario


def test_a_fact_and_a_rule_go_through_review_to_a_viewers_answer(people: People) -> None:
    from playwright.sync_api import expect

    # 1. A curator approves the candidate fact in the Review queue.
    cora = people.page("cora")
    assert {"Review queue", "Rules"} <= set(nav(cora)), nav(cora)
    go(cora, "Review queue")
    see(cora.get_by_role("heading", name=str(CANDIDATE["statement"])))
    see(cora.get_by_text("Valid: it imports as a record."))
    see(cora.get_by_text(str(CANDIDATE["span"])))
    screenshot(cora, "review-queue")
    cora.get_by_role("button", name=re.compile(r"^Approve\b(?! with)")).click()  # "Approve" (Shift+A)
    see(cora.get_by_text(f"Approved {CANDIDATE['id']}."))
    see(cora.get_by_text("Nothing to review here."))

    # 2. The curator starts version 2 of inherit-kind, changes its reading, checks and proposes it.
    go(cora, "Rules")
    cora.get_by_role("combobox", name="Rule").click()
    cora.get_by_role("option", name="inherit-kind", exact=True).click()
    cora.get_by_role("button", name="Start version 2").click()
    see(cora.get_by_text("Loads as a rule file: inherit-kind v2"))
    cora.get_by_text("Plain text box", exact=True).click()
    box = cora.get_by_role("textbox", name="Rule (Turtle)")
    expect(box).to_have_value(re.compile(r'dcterms:creator "cora" ;\s+wb:ruleStatus wb:Draft'), timeout=WAIT)
    text = box.input_value()
    assert f'wb:reading "{OLD_READING}"' in text and "rule:inherit-kind-v2 a sh:SPARQLRule" in text
    box.fill(text.replace(OLD_READING, NEW_READING))
    box.press("Control+Enter")  # the box applies the text
    cora.get_by_role("button", name="Check", exact=True).click()
    see(cora.get_by_text(re.compile(r"^inherit-kind v2: all \d+ test case\(s\) pass\.$")))
    cora.get_by_role("button", name="Propose for sign-off").click()
    see(cora.get_by_text("inherit-kind v2: proposed; a reviewer other than you signs it off"))
    screenshot(cora, "rules")

    # Proposed is not yet signed off: a viewer's answer still rests on v1.
    vic = people.page("vic")
    ask(vic, "my car", "needs", "gas")
    expect_derived_by(vic, 1, OLD_READING)
    screenshot(vic, "ask-before-sign-off")

    # 3. A reviewer, another user, signs it off.
    rita = people.page("rita")
    assert "Sign-off" in nav(rita), nav(rita)
    go(rita, "Sign-off")
    see(rita.get_by_role("heading", name="inherit-kind v2"))
    see(rita.get_by_text("proposed by cora", exact=False))
    see(rita.get_by_text(re.compile(r"^inherit-kind v2: all \d+ test case\(s\) pass\.$")))
    see(rita.get_by_text("No recorded fact says any of its conclusions is not so."))  # the dry run ran
    screenshot(rita, "sign-off")
    rita.get_by_role("textbox", name="What you checked").fill("read the diff, the tests and the dry run")
    rita.get_by_role("button", name="Sign off", exact=True).click()
    see(rita.get_by_text("Signed off inherit-kind v2: it answers from now on."))
    see(rita.get_by_text("No rule version waits for sign-off."))

    # 4. The viewer asks again: derived, with the signed-off rule's id, version and reading in the proof.
    vic.get_by_role("tabpanel", name="Question").get_by_role("button", name="Ask").click()
    expect_derived_by(vic, 2, NEW_READING)
    screenshot(vic, "ask")

    # The approved fact is on record, as the curator's act, for everyone to see.
    go(vic, "Sources and history")
    vic.get_by_role("textbox", name="Record id, or words of its statement or source").fill(str(CANDIDATE["id"]))
    vic.keyboard.press("Enter")
    see(vic.get_by_text(str(CANDIDATE["statement"]), exact=True))
    see(vic.get_by_text(re.compile(r"Approval by cora at")))


def test_a_viewer_sees_no_restricted_source_and_no_review_pages(people: People) -> None:
    vic = people.page("vic")
    # Not in the navigation (a curator and a reviewer have them).
    shown = nav(vic)
    assert "Ask" in shown and "Sources and history" in shown, shown
    assert not set(REVIEW_PAGES) & set(shown), shown

    # Mia's record (its source is visible to group:family only) is nowhere.
    secrets = ("m-family-1", "baby", "family-chat-2026-10-20")
    question = ask(vic, "Mia", "is a", "")
    see(question.get_by_text("unknown name", exact=True))
    see(question.get_by_text("Nothing is named 'Mia'", exact=False))
    said = question.inner_text()
    vic.get_by_role("tab", name="In words").click()
    words = vic.get_by_role("tabpanel", name="In words")
    words.get_by_role("textbox", name="Your question").fill("What news did my sister Mia share?")
    words.get_by_role("button", name="Recall").click()
    see(words.get_by_text("no memory", exact=True))
    said += words.inner_text()
    assert not [s for s in secrets if s in said], said
    go(vic, "Entities")
    vic.get_by_role("textbox", name="A name or alias").fill("Mia")
    vic.keyboard.press("Enter")
    see(vic.get_by_text("binds to no entity", exact=False))
    go(vic, "Sources and history")
    vic.get_by_role("textbox", name="Record id, or words of its statement or source").fill("m-family-1")
    vic.keyboard.press("Enter")
    see(vic.get_by_text("No record matches “m-family-1”", exact=False))
    screenshot(vic, "viewer-sources-restricted")
    said = vic.locator("body").inner_text().replace("No record matches “m-family-1”", "")
    assert not [s for s in secrets if s in said], said

    # The review pages by their URL, inside this session: the app runs its main page instead (while
    # the same step reaches a page the viewer has).
    open_by_url_in_session(vic, "entities")
    see(vic.get_by_role("heading", name="Entities", exact=True, level=1))
    for path, title in zip(REVIEW_PATHS, REVIEW_PAGES, strict=True):
        open_by_url_in_session(vic, path)
        see(vic.get_by_role("heading", name="Ask", exact=True, level=1))
        assert vic.get_by_role("heading", name=title, exact=True, level=1).count() == 0, path

    # ... and in a new tab: the sign-in at that address, then the main page; never the review page.
    tab = people.new_tab("vic")
    for path, title in zip(REVIEW_PATHS, REVIEW_PAGES, strict=True):
        tab.goto(f"{people.served.up.ui_url}/{path}")
        tab.get_by_label("Your API token", exact=True).fill(people.served.tokens["vic"])
        tab.get_by_role("button", name="Sign in").click()
        see(tab.get_by_role("heading", name="Ask", exact=True, level=1))
        settle(tab)
        assert tab.get_by_role("heading", name=title, exact=True, level=1).count() == 0, path
        assert not set(REVIEW_PAGES) & set(nav(tab)), path
    # A curator following the same link lands on it once signed in.
    link = people.new_tab("cora")
    link.goto(f"{people.served.up.ui_url}/{REVIEW_PATHS[0]}")
    link.get_by_label("Your API token", exact=True).fill(people.served.tokens["cora"])
    link.get_by_role("button", name="Sign in").click()
    see(link.get_by_role("heading", name=REVIEW_PAGES[0], exact=True, level=1))


def test_every_page_as_an_admin(people: People) -> None:
    """The pages not shown above, each with content, as root: who also sees what vic may not."""
    root = people.page("root")
    assert set(REVIEW_PAGES) <= set(nav(root)), nav(root)

    go(root, "Overview")
    see(root.get_by_role("heading", name="The store"))
    see(root.get_by_text("Records", exact=True))
    see(root.get_by_role("heading", name="Review queue"))
    see(root.get_by_text("Waiting for sign-off", exact=True))
    root.get_by_role("button", name="Run the evaluation").click()  # the development set: a second or so
    see(root.get_by_text("Questions", exact=True))
    see(root.get_by_text(re.compile(r"^Encoder .*, k = \d+\.$")))
    screenshot(root, "overview")

    go(root, "Entities")
    root.get_by_role("textbox", name="A name or alias").fill("Paris")
    root.keyboard.press("Enter")
    see(root.get_by_text("binds to", exact=False).filter(has_text="urn:wb:entity:paris"))
    screenshot(root, "entities")

    go(root, "Sources and history")
    root.get_by_role("textbox", name="Record id, or words of its statement or source").fill("m-family-1")
    root.keyboard.press("Enter")
    see(root.get_by_text("My sister Mia is expecting a baby in March.", exact=True))
    see(root.get_by_text("visible to group:family", exact=False))
    screenshot(root, "sources-and-history")

    go(root, "SPARQL")
    editor = root.frame_locator('iframe[title="code_editor.code_editor"]')
    see(editor.get_by_text("COUNT(*)", exact=False))
    editor.locator(".ace_content").click()
    root.keyboard.press("Control+Enter")  # runs the example query
    see(root.get_by_role("heading", name="Results"))
    see(root.get_by_text(re.compile(r"^\d+ rows?\.$")))
    screenshot(root, "sparql")

