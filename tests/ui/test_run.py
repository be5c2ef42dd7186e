"""The Run page in chromium: the waterfall (spans nested; an old trace grouped by turns), one
hop's JSON tree, violations shown in the value they judged, filters, search (on 100,000 hops
too), and an eval case made from the run."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench.ui import QUERY, generate
from playwright.sync_api import expect

from schemawire.trace import read_trace
from schemawire.ui.server import LocalServer
from tests.ui.conftest import WAIT_MS

Server = Callable[..., LocalServer]


OLD_DEMO_TRACE = Path(__file__).parents[1] / "data" / "traces" / "demo-before-spans.jsonl"
"""A real trace without spans: ``schemawire demo`` as it wrote them before spans."""


def first_delta_seq(trace: Path) -> int:
    """The seq of the first model request ``trace`` holds as a delta of the one before."""
    return next(
        hop.seq
        for hop in read_trace(trace, whole=False)
        if hop.direction == "send" and isinstance(hop.payload, dict) and "history" in hop.payload
    )


@pytest.fixture(scope="session")
def big_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("big")
    generate(folder / "big.jsonl", hops=100_000)
    return folder / "big.jsonl"


def _open_run(server: LocalServer, open_page: Callable[..., Any], file: str) -> Any:
    page = open_page(server, f"/run/{Path(file).stem}?file={file}")
    page.locator(".wf-row").first.wait_for()
    return page


def _spans(tmp_path: Path, hops: int = 400) -> Path:
    traces = tmp_path / "traces"
    traces.mkdir(exist_ok=True)
    generate(traces / "spans.jsonl", hops=hops)
    return traces


def test_the_waterfall_nests_spans_run_turn_model_tool_mcp(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path)), open_page, "spans.jsonl")
    rows = page.locator(".wf-row")
    kinds = [rows.nth(i).locator(".kind, .proto").inner_text().lower() for i in range(4)]
    assert kinds == ["run", "turn", "text", "model"]
    assert [rows.nth(i).get_attribute("data-depth") for i in range(4)] == ["0", "1", "2", "2"]
    tool = page.locator(".wf-span:has(.kind-tool)").first
    mcp = page.locator(".wf-span:has(.kind-mcp)").first
    depth = lambda row: int(row.get_attribute("data-depth") or 0)  # noqa: E731
    assert depth(mcp) == depth(tool) + 1
    # the MCP response has no span of its own: the pairing rule puts it in its request's span
    response = page.locator(".wf-row:has(.proto-mcp):has-text('← support-desk')").first
    assert depth(response) == depth(mcp) + 1
    assert "ms" in page.locator(".wf-span:has(.kind-model) .dur").first.inner_text()
    shoot(page, "run")


def test_an_old_trace_without_spans_is_grouped_by_its_user_turns(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(OLD_DEMO_TRACE, traces / "demo.jsonl")
    page = _open_run(ui_server(traces=traces), open_page, "demo.jsonl")
    assert "no spans" in page.locator(".run-head").inner_text()
    texts = page.locator(".wf-row.wf-span:has(.kind-turn)")  # each user text opens a turn
    assert texts.count() == 2
    assert all(texts.nth(i).get_attribute("data-depth") == "0" for i in range(2))
    model = page.locator(".wf-row:has(.proto-openai_chat)").first
    assert model.get_attribute("data-depth") == "1"  # inside the first user turn
    shoot(page, "run-old-trace")


def test_a_hop_expands_to_its_json_with_expand_collapse_wrap_and_copy(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path)), open_page, "spans.jsonl")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator(".wf-row:has(.proto-openai_chat):has-text('calls')").first.click()
    tree = page.locator(".detail .jt").first
    tree.wait_for()
    closed = page.locator(".detail .jt-children.hidden").count()
    page.locator(".detail button", has_text="expand all").first.click()
    assert page.locator(".detail .jt-children.hidden").count() < closed
    page.locator(".detail button", has_text="collapse all").first.click()
    assert page.locator(".detail .jt-children.hidden").count() > 0
    page.locator(".detail button", has_text="wrap").first.click()
    assert "wrap" in (tree.get_attribute("class") or "")
    page.locator(".detail button", has_text="copy").first.click()
    page.locator(".detail .copied", has_text="copied").wait_for()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith('{"run":')
    assert '"protocol":"openai.chat"' in copied


def test_json_inside_json_is_unwrapped_in_place_with_the_raw_string_one_click_away(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path)), open_page, "spans.jsonl")
    page.locator(".wf-row:has(.proto-openai_chat):has-text('calls')").first.click()
    page.locator(".detail button", has_text="expand all").first.click()
    arguments = page.locator(".detail .jt-unwrapped").first
    arguments.wait_for()
    assert "JSON in a string" in arguments.inner_text()
    pointer = arguments.locator(".jt-row").first.get_attribute("data-pointer") or ""
    assert pointer.endswith("/function/arguments")
    assert arguments.locator(".jt-key").count() >= 2  # the arguments' own keys, as a tree
    arguments.locator("button.jt-raw").click()
    raw = arguments.locator(".jt-str:visible").first.inner_text()
    assert raw.startswith('"{\\"')  # the string as written, escaped
    shoot(page, "run-json-in-json")


def test_a_violation_click_highlights_its_pointer_in_the_arguments_it_judged(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path, 1500)), open_page, "spans.jsonl")
    page.select_option("select[name=verdict]", "refused")
    page.locator(".count", has_text=" of ").wait_for()
    page.locator(".wf-row:has(.proto-gate)").first.click()
    violation = page.locator(".detail button.violation").first
    violation.wait_for()
    pointer = violation.locator(".pointer").inner_text()
    assert pointer in {"/amount", "/unit"}
    assert "x-version 1.0.0" in page.locator(".detail .schema").inner_text()
    violation.click()
    marked = page.locator(".detail .judged .jt-hl")
    marked.first.wait_for()
    where = marked.first.get_attribute("data-pointer") or ""
    assert where.endswith("/function/arguments" + pointer)  # inside the unwrapped string
    assert "the value judged" in page.locator(".detail .judged").inner_text()
    shoot(page, "run-violation")


def test_filters_by_protocol_tool_verdict_and_errors(
    ui_server: Server, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path, 1500)), open_page, "spans.jsonl")

    rows = page.locator(".wf-row")

    def only(kept: Any) -> None:
        expect(rows.first).to_be_visible(timeout=WAIT_MS)
        expect(kept).to_have_count(0, timeout=WAIT_MS)  # every row shown passes the filter

    page.select_option("select[name=protocol]", "gate")
    only(page.locator(".wf-row:not(:has(.proto-gate))"))
    page.select_option("select[name=protocol]", "")
    page.select_option("select[name=tool]", "create_refund")
    only(rows.filter(has_not_text="create_refund"))
    page.select_option("select[name=tool]", "")
    page.select_option("select[name=verdict]", "repaired")
    only(rows.filter(has_not_text="repaired"))
    page.select_option("select[name=verdict]", "")
    page.check("input[name=errors]")
    only(page.locator(".wf-row:not(.wf-error)").filter(has_not_text="refused"))


def test_search_finds_hops_on_the_server(
    ui_server: Server, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path, 1500)), open_page, "spans.jsonl")
    page.fill("input[name=q]", "search_orders")
    page.locator(".count", has_text=" of ").wait_for()
    indexes = [row.get_attribute("data-index") for row in page.locator(".wf-row").all()[:8]]
    assert indexes
    lines = page.evaluate(
        "async (indexes) => Promise.all(indexes.map(async (i) => (await (await fetch("
        "`/api/runs/hop?file=spans.jsonl&index=${i}`)).json()).line))",
        indexes,
    )
    assert all("search_orders" in line for line in lines)  # each hop shown holds the query
    page.fill("input[name=q]", "no such thing anywhere")
    page.locator(".nothing", has_text="No hop matches").wait_for()


def test_a_100k_hop_trace_opens_and_searches_fast_with_few_rows_in_the_dom(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, big_trace: Path
) -> None:
    server = ui_server(traces=big_trace.parent)
    page = open_page(server)
    page.locator("table.runs a.run-link").wait_for(timeout=WAIT_MS * 3)  # indexed here, once
    started = time.perf_counter()
    page.goto(f"{server.base}/run/big?file=big.jsonl")
    page.locator(".wf-row").first.wait_for()
    opened = time.perf_counter() - started
    assert page.locator(".count").inner_text().startswith("100,0")
    assert page.locator(".wf-row").count() < 100  # virtual: never all 100,000 in the DOM
    page.locator(".wf").evaluate("w => { w.scrollTop = w.scrollHeight / 2; }")
    expect(page.locator(".wf-row[data-seq='1']")).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator(".wf-row").first).to_be_visible(timeout=WAIT_MS)
    assert int(page.locator(".wf-row").first.get_attribute("data-seq") or 0) > 40_000
    assert page.locator(".wf-row").count() < 100
    started = time.perf_counter()
    page.fill("input[name=q]", QUERY)
    page.locator(".count", has_text=" of ").wait_for(timeout=WAIT_MS)
    searched = time.perf_counter() - started
    assert QUERY in page.locator(".wf-row .label").first.inner_text()
    assert opened < 2.0
    assert searched < 1.5
    shoot(page, "run-100k-search")


def test_an_eval_case_is_made_from_the_run_and_written_under_evals_once(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, demo_trace: Path, tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(demo_trace, traces / "demo.jsonl")
    repo = tmp_path / "repo"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "support-desk", repo)
    page = _open_run(ui_server(traces=traces, repo=repo), open_page, "demo.jsonl")
    page.locator("button.eval-button").click()
    case = page.locator(".detail .jt").first
    case.wait_for()
    assert "eval-case.json" in case.inner_text()
    assert page.locator(".detail a.download-case").get_attribute("download") == "demo.json"
    page.locator(".detail button.write-case").click()
    page.locator(".detail .ok", has_text="written").wait_for()
    written = repo / "evals" / "demo.json"
    assert '"input"' in written.read_text(encoding="utf-8")
    # The same bytes as the command writes (which checks the case runs before it writes it).
    by_command = repo / "evals" / "by-command.json"  # beside it: the same relative paths inside
    command = [
        sys.executable,
        "-m",
        "schemawire",
        "eval",
        "--from-trace",
        str(traces / "demo.jsonl"),
    ]
    command += ["--out", str(by_command), "--repo", str(repo)]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    assert written.read_text(encoding="utf-8") == by_command.read_text(encoding="utf-8")
    shoot(page, "run-eval-case")
    page.locator("button.eval-button").click()  # again: the file is there, never overwritten
    page.locator(".detail button.write-case").click()
    page.locator(".detail .error-box", has_text="exists already").wait_for()
    assert '"input"' in written.read_text(encoding="utf-8")


def test_a_run_still_going_shows_its_new_hops_and_the_keyboard_walks_the_rows(
    ui_server: Server, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    generate(traces / "going.jsonl", hops=120, end=False)
    page = _open_run(ui_server(traces=traces), open_page, "going.jsonl")
    assert page.locator(".run-head .badge").first.inner_text() == "open"
    before = page.locator(".count").inner_text()
    with (traces / "going.jsonl").open("a", encoding="utf-8") as file:
        generate(tmp_path / "more.jsonl", hops=60)
        file.write((tmp_path / "more.jsonl").read_text(encoding="utf-8"))
    expect(page.locator(".count")).not_to_have_text(before, timeout=WAIT_MS)
    first = page.locator(".wf-row").first
    first.focus()
    first.press("Enter")
    page.locator(".detail .hop-title", has_text="#1 ").wait_for()
    page.keyboard.press("ArrowDown")
    page.locator(".detail .hop-title", has_text="#2 ").wait_for()
    assert page.locator(".wf-row.selected").get_attribute("data-seq") == "2"


def test_turns_collapse_to_one_row_each_and_one_opens_again(
    ui_server: Server, open_page: Callable[..., Any], shoot: Any, tmp_path: Path
) -> None:
    page = _open_run(ui_server(traces=_spans(tmp_path)), open_page, "spans.jsonl")
    page.locator("button.fold-turns").click()
    inside = page.locator(".wf-row:not(:has(.kind-run)):not(:has(.kind-turn))")
    expect(inside).to_have_count(0, timeout=WAIT_MS)  # only the run and its turns
    turns = page.locator(".wf-row:has(.kind-turn)")
    assert turns.count() > 10
    shoot(page, "run-turns-collapsed")
    turns.nth(1).locator("button.fold").click()
    expect(inside.first).to_be_visible(timeout=WAIT_MS)
    opened = page.locator(".wf-row:has(.kind-model)")
    assert opened.count() == 1  # the second turn's model request, and nothing of the others
    page.locator("button.unfold").click()
    expect(page.locator(".wf-row:has(.kind-model)").nth(1)).to_be_visible(timeout=WAIT_MS)


def test_an_old_traces_turns_collapse_too(
    ui_server: Server, open_page: Callable[..., Any], tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(OLD_DEMO_TRACE, traces / "demo.jsonl")
    page = _open_run(ui_server(traces=traces), open_page, "demo.jsonl")
    page.locator(".wf-row:has(.kind-turn)").first.locator("button.fold").click()
    expect(page.locator(".wf-row")).to_have_count(28 - 8, timeout=WAIT_MS)  # turn 1's 8 hops
    assert page.locator(".wf-row:has(.kind-turn)").count() == 2


def test_a_refusal_names_its_schema_file_and_version_and_a_delta_opens_whole(
    ui_server: Server, open_page: Callable[..., Any], demo_trace: Path, tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(demo_trace, traces / "demo.jsonl")
    repo = Path(__file__).parents[2] / "examples" / "support-desk"
    page = _open_run(ui_server(traces=traces, repo=repo), open_page, "demo.jsonl")
    page.locator(".wf-row:has(.badge.outcome-rejected)").click()
    schema = page.locator(".detail .schema")
    schema.wait_for()
    assert "schemas/tools/get_weather.json" in schema.inner_text()
    assert "x-version 1.0.0" in schema.inner_text()
    page.locator(".detail button.violation").click()
    marked = page.locator(".detail .judged .jt-hl")
    marked.wait_for()
    assert '"kelvin"' in marked.inner_text()  # the model's unit, in its arguments string
    # the second request of a turn was written as a delta; the page shows it whole on demand
    page.locator(f".wf-row[data-seq='{first_delta_seq(demo_trace)}']").click()
    toggle = page.locator(".detail button.whole-toggle")
    toggle.wait_for()
    messages = ".detail .jt-row[data-pointer='/payload/messages'] .jt-note"
    written = page.locator(messages).inner_text()
    toggle.click()
    expect(page.locator(messages)).not_to_have_text(written, timeout=WAIT_MS)
    assert int(page.locator(messages).inner_text().split()[0]) > int(written.split()[0])


def test_a_cold_100k_trace_shows_its_first_rows_before_it_is_indexed_whole(
    ui_server: Server, open_page: Callable[..., Any], big_trace: Path, tmp_path: Path
) -> None:
    traces = tmp_path / "cold"
    traces.mkdir()
    server = ui_server(traces=traces)
    page = open_page(server, "/static/favicon.svg")  # the token set; the Runs page left
    shutil.copy(big_trace, traces / "big.jsonl")  # so no listing has indexed it
    with page.expect_response(lambda r: "/api/runs/run?" in r.url) as first_meta:
        started = time.perf_counter()
        page.goto(f"{server.base}/run/big?file=big.jsonl")
    page.locator(".wf-row").first.wait_for()
    opened = time.perf_counter() - started
    assert first_meta.value.json()["indexing"] is True  # answered from the file's head
    assert page.locator(".wf-row[data-seq='1']").count() == 1
    # The rest is indexed off the request: the count and the status fill in by themselves.
    with big_trace.open("rb") as file:
        hops = sum(1 for _ in file)
    expect(page.locator(".count")).to_have_text(f"{hops:,} hops", timeout=WAIT_MS)
    expect(page.locator(".run-title .badge")).to_have_text("ok", timeout=WAIT_MS)
    assert opened < 2.0
