"""The Runs page in chromium: real traces (``schemawire demo``'s, and ones with spans as
spans.md writes them), newest first with their counts, live, and a file that is no trace."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.ui import generate
from playwright.sync_api import expect

from schemawire.ui.server import LocalServer
from tests.ui.conftest import WAIT_MS

Server = Callable[..., LocalServer]


def _age(path: Path, seconds: float) -> None:
    stat = path.stat()
    os.utime(path, (stat.st_atime - seconds, stat.st_mtime - seconds))


def test_runs_are_listed_newest_first_with_their_counts(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, demo_trace: Path, tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    (traces / "nested").mkdir(parents=True)
    old = traces / "nested" / "old.jsonl"
    old.write_bytes(demo_trace.read_bytes())
    _age(old, 3600)
    generate(traces / "spans.jsonl", hops=1000)
    page = open_page(ui_server(traces=traces))
    page.wait_for_selector("table.runs tbody tr")
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).get_attribute("data-file") == "spans.jsonl"  # newer first
    assert rows.nth(1).get_attribute("data-file") == "nested/old.jsonl"
    demo = rows.nth(1).locator("td")
    texts = [demo.nth(i).inner_text() for i in range(11)]
    assert texts[1] == "ok"
    assert texts[4] == "scripted-demo"
    assert texts[5] == "get_weather"
    assert texts[6:10] == ["1", "0", "0", "0"]  # one refusal (unit kelvin), no repair
    assert texts[10] == str(len(demo_trace.read_bytes().splitlines()))  # every hop, spans too
    spans = rows.nth(0).locator("td")
    assert spans.nth(1).inner_text() == "ok"
    assert int(spans.nth(6).inner_text()) > 0  # the generator refuses about 6% of calls
    shoot(page, "runs")


def test_a_new_trace_and_a_growing_one_appear_without_reload(
    ui_server: Server, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    first = traces / "first.jsonl"
    generate(first, hops=100, end=False)
    page = open_page(ui_server(traces=traces))
    row = page.locator("table.runs tbody tr[data-file='first.jsonl']")
    row.wait_for()
    assert row.locator("td").nth(1).inner_text() == "open"  # its run span has not ended
    page.evaluate("window.__loaded_once = true")
    generate(traces / "second.jsonl", hops=60)
    _age(traces / "second.jsonl", 10)
    page.locator("tr[data-file='second.jsonl']").wait_for(timeout=WAIT_MS)
    with first.open("a", encoding="utf-8") as file:  # the first run goes on: 100 more hops
        file.write((traces / "second.jsonl").read_text(encoding="utf-8"))
    hops = page.locator("tr[data-file='first.jsonl'] td:last-child")
    expect(hops).not_to_have_text("100", timeout=WAIT_MS)
    assert page.evaluate("window.__loaded_once === true")  # the same page: no reload
    assert page.locator("table.runs tbody tr").first.get_attribute("data-file") == "first.jsonl"


def test_a_file_that_is_not_a_trace_is_listed_as_unreadable(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "notes.jsonl").write_text("shopping list\n", encoding="utf-8")
    generate(traces / "fine.jsonl", hops=50)
    page = open_page(ui_server(traces=traces))
    bad = page.locator("tr.unreadable[data-file='notes.jsonl']")
    bad.wait_for()
    assert "line 1 is not JSON" in bad.inner_text()
    assert page.locator("tr[data-file='fine.jsonl'] a.run-link").count() == 1
    shoot(page, "runs-unreadable")


def test_the_list_comes_back_after_a_poll_that_failed(
    ui_server: Server, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    generate(traces / "steady.jsonl", hops=50)
    page = open_page(ui_server(traces=traces))
    page.locator("tr[data-file='steady.jsonl']").wait_for()
    polls: list[str] = []

    def once_broken(route: Any) -> None:
        polls.append(route.request.url)
        if len(polls) == 1:  # an answer that is not JSON (a proxy's page, a server restarting)
            route.fulfill(status=200, content_type="text/plain", body="busy")
        else:
            route.continue_()

    page.route("**/api/runs/list*", once_broken)
    page.locator(".error-box").wait_for(timeout=WAIT_MS)
    # The folder did not change meanwhile: the list must be drawn again all the same.
    page.locator("tr[data-file='steady.jsonl']").wait_for(timeout=WAIT_MS)
    assert page.locator(".error-box").count() == 0
