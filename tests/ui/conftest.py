"""The local page in a real browser: Debian's chromium (``/usr/bin/chromium``, which .ci/run
installs with apt) driven by Playwright, never a downloaded browser.

Fixtures:
    ui_server: factory, ``ui_server(traces=..., repo=...)`` serves the page on 127.0.0.1 for
        the test (stopped by it) and gives the `LocalServer`.
    page: a fresh browser page that has opened that URL's token; every request it makes is
        counted, and the test fails if one went to a host other than 127.0.0.1 or if the page
        logged an error.
    shoot: ``shoot(page, name)`` saves a screenshot under ``artifacts/screenshots/`` (CI keeps
        the ``artifacts`` folder).

Every test here is marked ``slow`` (a browser process): ``make test`` runs them, ``make
test-fast`` does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from schemawire.ui import UiConfig
from schemawire.ui.server import LocalServer

CHROMIUM = Path(os.environ.get("SCHEMAWIRE_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).parents[2] / "artifacts" / "screenshots"
# As toolbox-page.md (C3) and the machine notes say: without the background-networking flags,
# chromium keeps trying hosts this machine cannot reach.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 10_000  # every wait in these tests is bounded by this


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slow)


# One browser per module, not per session: Playwright's sync API runs an asyncio loop in the
# main thread while it is open, and the tests after tests/ui that start a loop of their own
# (anyio.run) would find it running.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        launched.close()


# Off the network but for the loopback the page is served on: the resolver finds no host, and
# every request off 127.0.0.1 goes to a closed port. (Playwright's offline mode cuts the
# loopback too, so it cannot serve a local page.)
OFFLINE_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
]


@pytest.fixture(scope="module")
def offline_browser(browser: Any) -> Iterator[Any]:
    """A second chromium with the network off (`OFFLINE_ARGS`); ``open_page(..., offline=True)``
    opens its pages there."""
    launched = browser.browser_type.launch(
        executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *OFFLINE_ARGS], headless=True
    )
    yield launched
    launched.close()


@pytest.fixture(scope="session")
def demo_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real trace, with spans: ``schemawire demo --trace`` (an MCP server over stdio, a
    scripted model, a refused call and its correction)."""
    folder = tmp_path_factory.mktemp("demo")
    command = [sys.executable, "-m", "schemawire", "demo", "--trace", "demo.jsonl"]
    subprocess.run(command, cwd=folder, check=True, capture_output=True, timeout=120)
    return folder / "demo.jsonl"


ServerFactory = Callable[..., LocalServer]


@pytest.fixture
def ui_server(tmp_path: Path) -> Iterator[ServerFactory]:
    with ExitStack() as stack:

        def start(*, traces: Path | None = None, repo: Path | None = None) -> LocalServer:
            folder = traces if traces is not None else tmp_path / "traces"
            folder.mkdir(parents=True, exist_ok=True)
            server = LocalServer(UiConfig(traces=folder, repo=repo, token=""))
            return stack.enter_context(server.running())

        yield start


class Requests:
    """Every request a page made, by host."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    @property
    def elsewhere(self) -> list[str]:
        return [url for url in self.urls if urlsplit(url).hostname not in {"127.0.0.1", None}]


@pytest.fixture
def requests_seen() -> Requests:
    return Requests()


@pytest.fixture
def open_page(
    request: pytest.FixtureRequest, browser: Any, requests_seen: Requests
) -> Iterator[Callable[..., Any]]:
    """``open_page(server, path="/", offline=False)``: a new page at ``path`` of ``server``,
    token given; with ``offline``, in the `offline_browser` (requests still counted)."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_(server: LocalServer, path: str = "/", *, offline: bool = False) -> Any:
        chosen = request.getfixturevalue("offline_browser") if offline else browser
        context = chosen.new_context(viewport={"width": 1360, "height": 860})
        contexts.append(context)
        context.set_default_timeout(WAIT_MS)
        context.route("**/*", _counting(requests_seen))
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.base}/?token={server.config.token}")  # sets the cookie
        if path != "/":
            page.goto(server.base + path)
        page.wait_for_load_state("domcontentloaded")
        return page

    yield open_
    for context in contexts:
        context.close()
    assert requests_seen.elsewhere == [], "the page asked another host"
    assert errors == [], f"the page logged errors: {errors}"


def _counting(requests: Requests) -> Callable[[Any], None]:
    def route(route: Any) -> None:
        url = route.request.url
        requests.urls.append(url)
        if urlsplit(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()

    return route


@pytest.fixture
def shoot() -> Callable[[Any, str], Path]:
    def save(page: Any, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        return path

    return save
