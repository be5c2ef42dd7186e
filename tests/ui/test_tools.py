"""The Tools page in a real browser: the repository's tools, their schemas and projections (the
same as `schemawire export`), the form generated from an input schema, and calls through the
gates, locally and on a real MCP server (`schemawire serve` over stdio), each into its own
trace file."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from schemawire.project.export import export
from schemawire.schema.repository import Repository
from schemawire.trace import read_trace
from schemawire.ui import UiConfig
from schemawire.ui._tools import PROJECTIONS
from schemawire.ui.server import LocalServer
from tests.mcp.helpers import peer
from tests.ui.conftest import WAIT_MS
from tests.ui.tools_repo import EXAMPLE, calls_made, tools_repo

Page = Any
Open = Callable[..., Page]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tools_repo(tmp_path)


@contextmanager
def serving(tmp_path: Path, repo: Path, **options: Any) -> Iterator[LocalServer]:
    """The page with options the shared fixture does not take (an MCP server)."""
    config = UiConfig(traces=tmp_path / "traces", repo=repo, token="", **options)
    with LocalServer(config).running() as server:
        yield server


def open_tool(open_page: Open, server: LocalServer, tool: str, tab: str) -> Page:
    page = open_page(server, f"/tools?tool={tool}&tab={tab}")
    page.wait_for_selector(f"#tl-tab-{tab}[aria-selected=true]")
    return page


def fill_ship_order(page: Page) -> None:
    page.fill("[data-pointer='/order_id'] input", "A-1042")
    page.fill("[data-pointer='/address/street'] input", "1 Rue de Rivoli")
    page.fill("[data-pointer='/address/city'] input", "Paris")
    page.fill("[data-pointer='/items/0/sku'] input", "X1")
    page.fill("[data-pointer='/items/0/quantity'] input", "2")


def hops_shown(page: Page) -> list[tuple[str, str, str]]:
    rows = page.locator("#tl-hops > li")
    return [
        (
            row.get_attribute("data-protocol"),
            row.get_attribute("data-direction"),
            row.get_attribute("data-outcome"),
        )
        for row in rows.all()
    ]


def leaves(value: Any, pointer: str = "") -> dict[str, str]:
    """Each scalar of ``value`` by its pointer, written as JSON (as the tree shows it)."""
    if isinstance(value, dict):
        found: dict[str, str] = {}
        for key, item in value.items():
            token = key.replace("~", "~0").replace("/", "~1")
            found |= leaves(item, f"{pointer}/{token}")
        return found
    if isinstance(value, list):
        return {
            k: v for i, item in enumerate(value) for k, v in leaves(item, f"{pointer}/{i}").items()
        }
    return {pointer: json.dumps(value, ensure_ascii=False)}


TREE_LEAVES = """(root) => {
  const scalar = '.jt-str, .jt-num, .jt-bool, .jt-null';
  return Object.fromEntries([...root.querySelectorAll('.jt-row[data-pointer]')]
    .filter((row) => row.querySelector(scalar))
    .map((row) => [row.dataset.pointer, row.querySelector(scalar).textContent]));
}"""


def test_the_list_shows_the_support_desks_tools_and_filters_them(
    ui_server: Callable[..., LocalServer], open_page: Open, shoot: Callable[[Page, str], Path]
) -> None:
    page = open_page(ui_server(repo=EXAMPLE), "/tools")
    page.wait_for_selector("#tl-schema .jt")
    names = page.locator(".tl-item-name").all_text_contents()
    assert names == ["create_refund", "get_weather"]
    item = page.locator(".tl-item[data-tool=get_weather]")
    assert "v1.0.0" in item.inner_text()
    assert "schemas/tools/get_weather.json" in item.inner_text()
    assert "Look up the current weather" in item.inner_text()
    # the first tool is shown: its file, version and canonical schema
    assert page.locator("#tl-file").inner_text() == "schemas/tools/create_refund.json"
    assert "x-version 1.0.0" in page.locator(".tl-head").inner_text()
    assert page.locator("#tl-schema [data-pointer='/properties/reason/enum/3']").count() == 1
    shoot(page, "tools")
    page.fill("#tl-filter", "weather")
    assert page.locator(".tl-list li:not(.hidden)").all_text_contents()[0].startswith("get_weather")
    assert page.locator(".tl-list li:not(.hidden)").count() == 1
    assert page.locator("#tl-count").inner_text().startswith("1 of 2 tools")


def test_each_projection_and_its_losses_are_what_schemawire_export_computes(
    ui_server: Callable[..., LocalServer], open_page: Open, shoot: Callable[[Page, str], Path]
) -> None:
    page = open_tool(open_page, ui_server(repo=EXAMPLE), "create_refund", "projections")
    repository = Repository.load(EXAMPLE)
    buttons = page.locator(".tl-view-item")
    assert buttons.count() == len(PROJECTIONS)
    for index, view in enumerate(PROJECTIONS):
        buttons.nth(index).click()
        page.wait_for_selector(f".tl-view-item[data-index='{index}'][aria-selected=true]")
        made = export(repository, view.target, **view.options)
        [expected] = [p for p in made.catalogue.projections if p.name == "create_refund"]
        shown = page.locator("#tl-view .jt").evaluate(TREE_LEAVES)
        assert shown == leaves(expected.payload), view.label
        rows = page.locator("#tl-view .tl-losses tbody tr")
        got = [[cell.inner_text() for cell in row.locator("td").all()[:3]] for row in rows.all()]
        want = [
            [loss.code, f"{loss.document}:{loss.pointer or '/'}", loss.keyword or "—"]
            for loss in expected.losses
        ]
        assert got == want, view.label
        assert made.command in page.locator("#tl-view .tl-command").inner_text()
    buttons.nth(6).click()  # Gemini: the most losses, worth a look
    page.wait_for_selector(".tl-view-item[data-index='6'][aria-selected=true]")
    # the loss table wraps inside its panel: every column is seen, nothing scrolls sideways
    fits = page.locator("#tl-view .tl-losses").evaluate(
        """(table) => {
          const panel = table.closest('.panel');
          const last = table.querySelector('tbody tr td:last-child').getBoundingClientRect();
          return {scrolls: panel.scrollWidth > panel.clientWidth,
                  cut: last.right > panel.getBoundingClientRect().right};
        }"""
    )
    assert fits == {"scrolls": False, "cut": False}
    shoot(page, "tools-projections")


def test_the_form_of_a_nested_schema(
    ui_server: Callable[..., LocalServer], open_page: Open, repo: Path
) -> None:
    page = open_tool(open_page, ui_server(repo=repo), "ship_order", "call")
    form = page.locator(".tl-form")
    # a required string, with its referenced pattern and description as help
    order = form.locator("[data-pointer='/order_id']")
    assert "required" in order.locator(".fld-label").inner_text()
    assert "matches ^A-[0-9]{4,}$" in order.locator(".fld-help").inner_text()
    # an optional enum as a select, its default said, nothing sent unless chosen
    speed = form.locator("[data-pointer='/speed'] select")
    assert speed.locator("option").all_text_contents() == [
        '(omit: default "standard")',
        '"standard"',
        '"express"',
        '"overnight"',
    ]
    # a nested object as a fieldset, optional members marked
    address = form.locator("fieldset:has(> legend:has-text('address'))")
    assert address.locator("[data-pointer='/address/postcode'] .fld-opt").inner_text() == "optional"
    assert address.locator("[data-pointer='/address/city'] .fld-req").count() == 1
    # an array of objects: minItems 1 gives one item; add and remove
    items = form.locator("[data-pointer='/items'] .fld-item")
    assert items.count() == 1
    form.locator("[data-pointer='/items'] .fld-add").click()
    assert items.count() == 2
    assert form.locator("[data-pointer='/items/1/quantity'] input").get_attribute("min") == "1"
    form.locator("[data-pointer='/items/0'] ~ .fld-remove").first.click()
    assert items.count() == 1
    assert form.locator("[data-pointer='/items/0/sku']").count() == 1
    # anyOf with null: an optional string; an optional boolean as a select
    assert form.locator("[data-pointer='/note'] .fld-opt").count() == 1
    assert form.locator("[data-pointer='/note'] input[type=text]").count() == 1
    assert form.locator("[data-pointer='/gift'] select option").all_text_contents() == [
        "(omit)",
        "true",
        "false",
    ]
    fill_ship_order(page)
    speed.select_option(label='"express"')
    page.fill("[data-pointer='/items/0/quantity'] input", "12345678901234567890123")
    page.click("#tl-mode-raw")
    written = page.locator("#tl-raw").input_value()
    assert '"quantity": 12345678901234567890123' in written  # as typed, not rounded
    assert json.loads(written) == {
        "order_id": "A-1042",
        "speed": "express",
        "address": {"street": "1 Rue de Rivoli", "city": "Paris"},
        "items": [{"sku": "X1", "quantity": 12345678901234567890123}],
    }


def test_a_valid_call_shows_its_hops_in_order_and_the_redacted_result(
    ui_server: Callable[..., LocalServer],
    open_page: Open,
    shoot: Callable[[Page, str], Path],
    repo: Path,
) -> None:
    page = open_tool(open_page, ui_server(repo=repo), "ship_order", "call")
    fill_ship_order(page)
    page.click("#tl-call")
    page.wait_for_selector("#tl-verdict")
    assert page.locator("#tl-verdict").inner_text() == "accepted by both gates"
    assert hops_shown(page) == [
        ("gate", "check", "accepted"),
        ("python", "send", "accepted"),  # the arguments as the function gets them
        ("python", "receive", "redacted"),  # the result gate's verdict
    ]
    # each hop's route is read whole: a local call has no JSON-RPC method column to give room to
    cut = page.locator("#tl-hops .tl-hop-route").evaluate_all(
        "(spans) => spans.filter((s) => s.scrollWidth > s.clientWidth).map((s) => s.title)"
    )
    assert cut == []
    assert page.locator("[data-pointer='/address/street'] .fld-help").first.inner_text() == (
        "at least 1 character"
    )
    assert "redacted" in page.locator("#tl-changes").inner_text()
    assert "/debug" in page.locator("#tl-changes").inner_text()
    output = page.locator("#tl-output").inner_text()
    assert "[REDACTED:github_token]" in output
    assert "ghp_" not in page.locator("#tl-outcome").inner_text()
    assert '"S-77"' in output
    page.evaluate("window.scrollTo(0, 0)")
    shoot(page, "tools-call")
    page.locator("#tl-hops > li").nth(1).locator("summary").click()
    expect(page.locator("#tl-hops > li").nth(1).locator(".jt")).to_contain_text('"A-1042"')
    assert [c["tool"] for c in calls_made(repo)] == ["ship_order"]


def test_a_refused_call_highlights_the_fields_and_never_runs_the_tool(
    ui_server: Callable[..., LocalServer],
    open_page: Open,
    shoot: Callable[[Page, str], Path],
    repo: Path,
) -> None:
    page = open_tool(open_page, ui_server(repo=repo), "create_refund", "call")
    page.fill("[data-pointer='/order_id'] input", "42")
    page.fill("[data-pointer='/amount'] input", "-5")
    page.locator("[data-pointer='/reason'] select").select_option(label='"late"')
    page.click("#tl-call")
    page.wait_for_selector("#tl-verdict")
    assert "refused by the arguments gate" in page.locator("#tl-verdict").inner_text()
    assert "the tool was not called" in page.locator("#tl-verdict").inner_text()
    assert hops_shown(page) == [("gate", "check", "rejected")]
    pointers = page.locator("#tl-violations .tl-pointer").all_text_contents()
    assert sorted(pointers) == ["/amount", "/order_id"]
    bad = page.locator(".tl-form .fld-bad")
    assert sorted(bad.evaluate_all("(nodes) => nodes.map((n) => n.dataset.pointer)")) == [
        "/amount",
        "/order_id",
    ]
    assert "pattern" in page.locator("[data-pointer='/order_id'] .fld-error").inner_text()
    assert page.locator("[data-pointer='/reason'].fld-bad").count() == 0
    page.locator("#tl-violations .tl-pointer", has_text="/amount").click()
    assert (
        page.evaluate("document.activeElement.closest('[data-pointer]').dataset.pointer")
        == "/amount"
    )
    assert calls_made(repo) == []  # the function never ran
    # the rejection's hint (a sentence) wraps inside the panel: nothing is cut at its edge
    page.locator("#tl-output .jt-row", has_text='"hint"').first.wait_for()
    overflow = page.locator("#tl-output").evaluate(
        """(box) => {
          const edge = box.closest('.panel').getBoundingClientRect().right;
          return [...box.querySelectorAll('.jt-str')].filter(
            (s) => s.getBoundingClientRect().right > edge + 1).length;
        }"""
    )
    assert overflow == 0
    page.evaluate("window.scrollTo(0, 0)")
    shoot(page, "tools-refused")
    # the raw editor: the violations marked in the text that was sent
    page.click("#tl-mode-raw")
    page.fill("#tl-raw", '{"order_id": "A-1042", "amount": 0, "reason": "late"}')
    page.click("#tl-call")
    page.wait_for_selector("#tl-raw-marks .jt")
    marked = page.locator("#tl-raw-marks .jt-hl")
    assert marked.evaluate_all("(rows) => rows.map((row) => row.dataset.pointer)") == ["/amount"]
    assert calls_made(repo) == []
    # duplicate keys reach the gate as written, and are refused there
    page.fill("#tl-raw", '{"order_id": "A-1042", "amount": 5, "amount": 6, "reason": "late"}')
    page.click("#tl-call")
    page.wait_for_selector("#tl-verdict")
    assert "refused by the arguments gate" in page.locator("#tl-verdict").inner_text()
    assert "duplicate" in page.locator("#tl-violations").inner_text().lower()
    assert calls_made(repo) == []


def test_a_result_the_output_schema_refuses_is_shown_as_the_result_gates(
    ui_server: Callable[..., LocalServer], open_page: Open, repo: Path
) -> None:
    """The tool ran; its result breaks the output schema: the result gate's violations, whose
    pointers name places in the output (no form field to jump to), and the form unmarked."""
    page = open_tool(open_page, ui_server(repo=repo), "create_refund", "call")
    page.fill("[data-pointer='/order_id'] input", "A-1042")
    page.fill("[data-pointer='/amount'] input", "5")
    page.locator("[data-pointer='/reason'] select").select_option(label='"other"')
    page.click("#tl-call")
    page.wait_for_selector("#tl-verdict")
    verdict = page.locator("#tl-verdict").inner_text()
    assert "refused by the results gate" in verdict
    assert "the tool ran" in verdict
    assert page.locator("#tl-violations .tl-pointer").all_text_contents() == ["/status"]
    assert page.locator("#tl-violations button").count() == 0
    assert page.locator(".tl-form .fld-bad").count() == 0
    assert [c["tool"] for c in calls_made(repo)] == ["create_refund"]


def test_a_call_on_a_real_mcp_server(tmp_path: Path, open_page: Open, repo: Path) -> None:
    command = (sys.executable, "-m", "schemawire", "serve", str(repo))
    with serving(tmp_path, repo, mcp_command=command) as server:
        page = open_tool(open_page, server, "get_weather", "call")
        page.select_option("#tl-where", "mcp")
        page.fill("[data-pointer='/city'] input", "Paris")
        page.click("#tl-call")
        page.wait_for_selector("#tl-verdict", timeout=WAIT_MS * 3)  # a server process starts
        assert page.locator("#tl-verdict").inner_text() == "accepted by both gates"
        shown = hops_shown(page)
        methods = page.locator("#tl-hops > li").evaluate_all(
            "(rows) => rows.map((row) => row.dataset.method)"
        )
        sent = methods.index("tools/call")
        gates = [i for i, hop in enumerate(shown) if hop[0] == "gate"]
        assert [shown[i][2] for i in gates] == ["accepted", "accepted"]
        assert gates[0] < sent < gates[1]  # arguments checked, then sent, its result checked
        assert shown[sent] == ("mcp", "send", "")
        assert ("mcp", "receive", "") in shown[sent + 1 : gates[1]]
        assert "on the MCP server" in page.locator("#tl-run").inner_text()
        assert '"cloudy"' in page.locator("#tl-outcome").inner_text()
        # refused before the server is asked
        page.fill("[data-pointer='/city'] input", "")
        page.click("#tl-call")
        page.wait_for_selector("#tl-verdict:has-text('refused')")
        # the session is open already: the refused call's one hop is the gate's, nothing sent
        assert hops_shown(page) == [("gate", "check", "rejected")]
    assert calls_made(repo) == [
        {"tool": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
    ]


def test_each_call_is_a_run_with_its_own_trace_file(
    ui_server: Callable[..., LocalServer], open_page: Open, repo: Path, tmp_path: Path
) -> None:
    traces = tmp_path / "traces"
    page = open_tool(open_page, ui_server(repo=repo, traces=traces), "get_weather", "call")
    runs = []
    for city in ("Paris", "Taipei"):
        page.fill("[data-pointer='/city'] input", city)
        page.click("#tl-call")
        page.wait_for_selector("#tl-verdict")
        run = page.locator("#tl-run-link").inner_text()
        assert page.locator("#tl-run-link").get_attribute("href") == f"/run/{run}"
        runs.append((run, Path(page.locator("#tl-trace").inner_text())))
    assert len({run for run, _ in runs}) == 2
    for run, path in runs:
        assert path == traces / f"{run}.jsonl"
        hops = list(read_trace(path))
        assert [(h.protocol, h.direction) for h in hops] == [
            ("span", "start"),  # the call's tool span, which the page does not list
            ("gate", "check"),
            ("python", "send"),
            ("python", "receive"),
            ("span", "end"),
        ]
        assert {h.run_id for h in hops} == {run}
        assert len({h.span for h in hops}) == 1  # every hop in the one span
        assert hops[0].payload["kind"] == "tool"
        assert hops[-1].payload["status"] == "ok"
    assert sorted(p.name for p in traces.iterdir()) == sorted(f"{run}.jsonl" for run, _ in runs)
    assert hops_shown(page) == [
        ("gate", "check", "accepted"),
        ("python", "send", "accepted"),
        ("python", "receive", "accepted"),
    ]


def test_with_a_repository_the_servers_own_tools_are_listed_too(
    tmp_path: Path, open_page: Open, repo: Path, shoot: Callable[[Page, str], Path]
) -> None:
    """The repository's tools and, marked server-only, those only the MCP server has."""
    everything = peer("everything", "stdio")
    command = (everything.command, *everything.args)
    with serving(tmp_path, repo, mcp_command=command) as server:
        page = open_page(server, "/tools?tool=echo&tab=call")
        page.wait_for_selector("#tl-tab-call[aria-selected=true]", timeout=WAIT_MS * 3)
        names = page.locator(".tl-item-name").all_text_contents()
        assert {"create_refund", "get_weather", "ship_order", "echo"} <= set(names)
        assert names == sorted(names)
        echo = page.locator(".tl-item[data-tool=echo]")
        assert "server only" in echo.inner_text()
        assert "server only" not in page.locator(".tl-item[data-tool=ship_order]").inner_text()
        assert "MCP server only" in page.locator(".tl-head").inner_text()
        assert page.locator("#tl-where").input_value() == "mcp"
        page.fill("[data-pointer='/message'] input", "beside the repository")
        page.click("#tl-call")
        page.wait_for_selector("#tl-verdict", timeout=WAIT_MS * 3)
        assert page.locator("#tl-verdict").inner_text() == "accepted by both gates"
        page.fill("#tl-filter", "server only")
        shown = page.locator(".tl-list li:not(.hidden) .tl-item-name").all_text_contents()
        assert "echo" in shown
        assert "ship_order" not in shown
        page.fill("#tl-filter", "")
        page.evaluate("window.scrollTo(0, 0)")
        shoot(page, "tools-server-only")


def test_a_later_click_wins_whichever_answer_comes_first(
    ui_server: Callable[..., LocalServer], open_page: Open, repo: Path
) -> None:
    page = open_tool(open_page, ui_server(repo=repo), "create_refund", "schema")
    held: list[Any] = []

    def hold(route: Any) -> None:  # Playwright reads a handler's signature: a def, not a builtin
        held.append(route)

    page.route("**/api/tools/tool/get_weather", hold)
    page.click(".tl-item[data-tool=get_weather]")
    page.click(".tl-item[data-tool=ship_order]")
    page.wait_for_selector("#tl-file:has-text('ship_order.json')")
    assert len(held) == 1
    with page.expect_response("**/api/tools/tool/get_weather") as answered:
        held[0].continue_()  # the earlier answer arrives last
    answered.value.finished()
    # the body is read (resource timing has it) and the page's script has had its turn
    page.wait_for_function(
        """() => performance.getEntriesByType('resource')
          .some((e) => e.name.endsWith('/api/tools/tool/get_weather') && e.responseEnd > 0)""",
        timeout=WAIT_MS,
    )
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
    assert page.locator("#tl-file").inner_text() == "schemas/tools/ship_order.json"
    assert page.locator(".tl-item[aria-selected=true]").get_attribute("data-tool") == "ship_order"


def test_without_a_repository_the_page_says_how_to_give_one(
    ui_server: Callable[..., LocalServer], open_page: Open
) -> None:
    page = open_page(ui_server(), "/tools")
    page.wait_for_selector(".tl-empty")
    assert "schemawire ui --repo DIR" in page.locator(".tl-empty").inner_text()


def test_without_a_repository_the_tools_are_the_mcp_servers(
    tmp_path: Path, open_page: Open, shoot: Callable[[Page, str], Path]
) -> None:
    """The npm reference server ``everything``: its tools listed, each projected from its own
    schema, and a call through the gates on it (its own schema gates the arguments)."""
    server = peer("everything", "stdio")
    command = (server.command, *server.args)
    config = UiConfig(traces=tmp_path / "traces", repo=None, token="", mcp_command=command)
    with LocalServer(config).running() as ui:
        page = open_page(ui, "/tools?tool=echo&tab=call")
        page.wait_for_selector("#tl-tab-call[aria-selected=true]", timeout=WAIT_MS * 3)
        assert "echo" in page.locator(".tl-item-name").all_text_contents()
        assert "the MCP server" in page.locator("#tl-count").inner_text()
        assert page.locator(".tl-head").inner_text().count("MCP server") >= 1
        assert page.locator("#tl-where").input_value() == "mcp"
        page.fill("[data-pointer='/message'] input", "hello from the page")
        page.click("#tl-call")
        page.wait_for_selector("#tl-verdict", timeout=WAIT_MS * 3)
        assert page.locator("#tl-verdict").inner_text() == "accepted by both gates"
        assert "hello from the page" in page.locator("#tl-output").inner_text()
        methods = page.locator("#tl-hops > li").evaluate_all(
            "(rows) => rows.map((row) => row.dataset.method)"
        )
        assert "tools/call" in methods
        page.evaluate("window.scrollTo(0, 0)")
        shoot(page, "tools-mcp")
        page.click("#tl-tab-projections")
        page.wait_for_selector(".tl-view-item[aria-selected=true]", timeout=WAIT_MS * 3)
        assert page.locator(".tl-view-item").count() == len(PROJECTIONS)
        assert "projected from the server's schema" in page.locator("#tl-view").inner_text()
