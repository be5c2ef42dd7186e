"""The Diff page in a real browser, over real traces: ``schemawire demo`` run as a user runs
it, once as shipped and again with its scripted model varied (another city; a refused unit),
and one trace rewritten in the span format (`docs/traces.md`) to show both formats align."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from schemawire.ui.server import LocalServer

Opener = Callable[..., Any]
Servers = Callable[..., LocalServer]

SHIPPED = "aaaa000000000001"  # the demo as shipped
PARIS = "bbbb000000000002"  # its first call asks for Paris
REFUSED = "cccc000000000003"  # its first call asks for kelvin, which the argument gate refuses
SPANS = "dddd000000000004"  # the run before spans, rewritten with span hops and span ids
BEFORE = "eeee000000000005"  # a run of the demo as main wrote it before spans (tests/data/traces)
OLD_TRACE = Path(__file__).parents[1] / "data" / "traces" / "demo-before-spans.jsonl"


def demo(folder: Path, run_id: str, change: tuple[str, str] | None = None) -> Path:
    """A real trace of ``schemawire demo`` (its script's first call changed by ``change``)."""
    trace = folder / f"{run_id}.jsonl"
    command = [sys.executable, "-m", "schemawire", "demo", "--trace", str(trace)]
    if change is not None:
        shipped = resources.files("schemawire.host") / "demo.json"
        script = shipped.read_text(encoding="utf-8").replace(*change, 1)
        varied = folder.parent / f"{run_id}.script.json"
        varied.write_text(script, encoding="utf-8")
        command += ["--model", f"script:{varied}"]
    subprocess.run(command, check=True, capture_output=True, cwd=folder.parent, timeout=120)
    return trace


def with_spans(source: Path, target: Path) -> None:
    """``source`` as the span format writes it: every hop in a turn span under a run span,
    each span opened and closed by its own hops (ids of 16 hex characters)."""
    hops = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    run_span, seq, lines = "0123456789abcdef", 0, []

    def hop(template: dict[str, Any], **fields: Any) -> None:
        nonlocal seq
        seq += 1
        lines.append({**template, **fields, "seq": seq})

    first = hops[0]
    span_hop = {"run": first["run"], "time": first["time"], "from": "host", "to": "host"}
    start = {"protocol": "span", "direction": "start", "verdict": None}
    end = {"protocol": "span", "direction": "end", "verdict": None}
    hop(span_hop | start, span=run_span, payload={"kind": "run", "name": "demo", "parent": None})
    turn = None
    for number, original in enumerate(hops):
        if original["protocol"] == "text":
            if turn is not None:
                hop(span_hop | end, span=turn, payload={"kind": "turn", "status": "ok"})
            turn = f"{number:016x}"
            payload = {"kind": "turn", "name": "turn", "parent": run_span}
            hop(span_hop | start, span=turn, payload=payload)
        hop(original, span=turn or run_span)
    hop(span_hop | end, span=turn, payload={"kind": "turn", "status": "ok"})
    hop(span_hop | end, span=run_span, payload={"kind": "run", "status": "ok"})
    target.write_text("".join(json.dumps(h, ensure_ascii=False) + "\n" for h in lines))


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("diff") / "traces"
    folder.mkdir()
    demo(folder, SHIPPED)
    demo(folder, PARIS, ('\\"city\\": \\"上海\\"', '\\"city\\": \\"paris\\"'))
    demo(folder, REFUSED, ('\\"unit\\": \\"celsius\\"', '\\"unit\\": \\"kelvin\\"'))
    (folder / "nested").mkdir()  # a run's file may be anywhere below the folder
    old = OLD_TRACE.read_text(encoding="utf-8")
    old_run = json.loads(old.splitlines()[0])["run"]
    (folder / f"{BEFORE}.jsonl").write_text(old.replace(old_run, BEFORE), encoding="utf-8")
    with_spans(folder / f"{BEFORE}.jsonl", folder / "nested" / f"{SPANS}.jsonl")
    return folder


def open_diff(open_page: Opener, server: LocalServer, a: str, b: str) -> Any:
    page = open_page(server, f"/diff?a={a}&b={b}")
    page.wait_for_selector("#pairs-equal")
    return page


def card(page: Any, name: str) -> int:
    return int(page.locator(f"#{name} .df-num").inner_text().replace(",", ""))


def test_two_real_runs_one_varied_show_the_changed_pair_with_its_patch(
    ui_server: Servers, open_page: Opener, traces: Path, shoot: Any
) -> None:
    page = open_diff(open_page, ui_server(traces=traces), SHIPPED, PARIS)
    hops = len((traces / f"{SHIPPED}.jsonl").read_text(encoding="utf-8").splitlines())
    assert card(page, "hops-a") == card(page, "hops-b") == hops
    assert card(page, "only-a") == card(page, "only-b") == 0
    assert card(page, "pairs-changed") > 0
    page.wait_for_selector("#edits")  # the first changed pair is shown at once
    assert page.locator("#detail h2").inner_text().endswith("openai.chat receive")
    edits = page.locator("#edits > li").all_inner_texts()
    assert len(edits) == 1
    assert edits[0].startswith("~ /payload/choices/0/message/tool_calls/0/function/arguments:")
    inside = page.locator("#edits .df-inner li").all_inner_texts()  # the arguments string's JSON
    assert inside == ["inside the JSON this string holds:", '~ /city: "上海" → "paris"']
    pointer = "/payload/choices/0/message/tool_calls/0/function/arguments"
    for pane in ("a", "b"):
        marked = page.locator(f"#pane-{pane} .jt-hl")
        assert marked.count() == 1
        assert marked.get_attribute("data-pointer") == pointer
    assert "paris" in page.locator("#pane-b .jt-hl").inner_text()
    ignored = page.locator("#ignored").inner_text()
    for word in ("run id", "seq", "time", "span ids", "JSON-RPC ids", "Myers"):
        assert word in ignored
    shoot(page, "diff")


def test_the_tool_call_the_variation_changed_is_a_changed_pair_and_its_patch_says_how(
    ui_server: Servers, open_page: Opener, traces: Path
) -> None:
    page = open_diff(open_page, ui_server(traces=traces), SHIPPED, PARIS)
    row = page.locator("tr.df-row", has_text="mcp send tools/call get_weather").first
    assert "changed" in row.inner_text()
    row.click()
    page.wait_for_function(
        "() => document.querySelector('#detail h2')?.textContent.includes('tools/call')"
    )
    edits = page.locator("#edits > li").all_inner_texts()
    assert edits == ['~ /payload/params/arguments/city: "上海" → "paris"']


def test_a_verdict_accepted_in_a_and_refused_in_b_is_in_the_summary(
    ui_server: Servers, open_page: Opener, traces: Path, shoot: Any
) -> None:
    page = open_diff(open_page, ui_server(traces=traces), SHIPPED, REFUSED)
    changes = page.locator("#verdict-changes").inner_text()
    assert "arguments get_weather: accepted in A, rejected in B" in changes
    assert card(page, "only-a") > 0  # the tool call B never made
    page.locator("#verdict-changes button").first.click()
    page.wait_for_function(
        "() => document.querySelector('#detail h2')?.textContent.includes('gate check')"
    )
    edits = " ".join(page.locator("#edits > li").all_inner_texts())
    assert '~ /verdict/outcome: "accepted" → "rejected"' in edits
    page.check("#changed-only")
    page.wait_for_function("() => !document.querySelector('#rows tr.df-pair:not(.df-changed)')")
    kinds = page.eval_on_selector_all("#rows tr", "rs => rs.map(r => r.className)")
    assert kinds
    assert all("df-changed" in k or "df-a" in k or "df-b" in k for k in kinds)
    shoot(page, "diff-verdicts")


def test_a_trace_with_spans_aligns_with_one_without(
    ui_server: Servers, open_page: Opener, traces: Path
) -> None:
    page = open_diff(open_page, ui_server(traces=traces), BEFORE, SPANS)
    assert card(page, "pairs-equal") == 28  # span ids left out: every hop pairs, equal
    assert card(page, "pairs-changed") == 0
    assert card(page, "only-b") == 6  # the run span and two turns, opened and closed
    only_b = page.eval_on_selector_all(
        "#rows tr.df-b .df-label", "ls => ls.map(l => l.textContent)"
    )
    assert only_b[0] == "span start run demo"


def test_the_pickers_list_every_run_newest_first_and_choose_the_pair(
    ui_server: Servers, open_page: Opener, traces: Path
) -> None:
    page = open_page(ui_server(traces=traces), "/diff")
    page.wait_for_selector("#pairs-equal")
    runs = page.eval_on_selector_all("#run-a option", "os => os.map(o => o.value)")
    assert sorted(runs) == sorted([SHIPPED, PARIS, REFUSED, SPANS, BEFORE])
    by_age = sorted(traces.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    assert runs == [p.stem for p in by_age]
    assert page.input_value("#run-b") == runs[0]  # newest in B, the one before in A
    assert page.input_value("#run-a") == runs[1]
    page.select_option("#run-a", SHIPPED)
    page.select_option("#run-b", PARIS)
    page.click("#compare")
    page.wait_for_url(f"**/diff?a={SHIPPED}&b={PARIS}")
    page.wait_for_selector("#edits")
