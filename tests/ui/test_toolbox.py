"""The Toolbox page in a real browser, against the command line it must never disagree with.

Each hostile input of the parser shows the line, column, message and caret that ``schemawire
fmt -`` prints (run as a subprocess); the page's verdicts equal ``schemawire validate --json``
on every fixture of every example repository; a format + validate + jump is done with the
keyboard alone; and the page works with the network off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schemawire.ui.server import LocalServer

from .conftest import WAIT_MS

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
SCHEMAWIRE = [sys.executable, "-m", "schemawire"]
ENV = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}

Opener = Callable[..., Any]
Servers = Callable[..., LocalServer]


def cli(
    *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``schemawire ARGS`` as a user runs it."""
    done = subprocess.run(
        [*SCHEMAWIRE, *args],
        check=False,
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=ENV,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


def toolbox(open_page: Opener, server: LocalServer, **options: Any) -> Any:
    page = open_page(server, "/toolbox", **options)
    page.wait_for_selector("#input")
    return page


def run_action(page: Any, action: str) -> None:
    """Choose ``action`` and run it; wait for the result to be replaced."""
    page.check(f"#action-{action}")
    before = page.locator("#result").get_attribute("data-done")
    page.click("#run")
    page.wait_for_function(
        "([before]) => { const r = document.querySelector('#result');"
        " return r.dataset.done && r.dataset.done !== before && !r.hasAttribute('aria-busy'); }",
        arg=[before],
        timeout=WAIT_MS,
    )


# --- the parser's refusals: the page says what the command says ---

HOSTILE = {
    "duplicate_key": b'{"id": 1,\n "name": "a",\n "id": 2}',
    "nan": b'{"ratio": NaN}',
    "infinity": b"[1, 2, -Infinity]",
    "trailing_comma": b'{"a": [1, 2,],\n "b": 3}',
    "truncated": b'{"a": {"b": [1, 2',
    "bad_utf8": b'{"name": "caf\xe9"}',
    "lone_surrogate": b'{"s": "\\ud800"}',
    "too_deep": b"[" * 200 + b"]" * 200,
}


def cli_refusal(raw: bytes) -> str:
    """What ``schemawire fmt -`` says about ``raw`` (its error, the ``<stdin>`` label as
    ``<input>``, which the page names a pasted document)."""
    done = cli("fmt", "-", stdin=raw)
    assert done.returncode == 2, done
    return done.stderr.removeprefix("error: ").rstrip("\n").replace("<stdin>", "<input>")


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_each_hostile_input_is_refused_as_the_command_line_refuses_it(
    ui_server: Servers, open_page: Opener, tmp_path: Path, shoot: Any, case: str
) -> None:
    raw = HOSTILE[case]
    expected = cli_refusal(raw)
    page = toolbox(open_page, ui_server())
    dropped = tmp_path / f"{case}.json"
    dropped.write_bytes(raw)
    page.set_input_files("#open-file", str(dropped))  # the file's bytes, as they are
    page.wait_for_function("() => document.querySelector('#input-note').textContent.length > 0")
    run_action(page, "check")
    shown = page.locator("#cli-message").inner_text()
    assert shown == expected.replace("<input>", dropped.name)
    first_line = expected.split("\n")[0]
    line, column = first_line.split(":")[1:3]
    assert (
        page.locator(".tb-where")
        .inner_text()
        .startswith(f"line {line}, column {column.split(' ')[0]}")
    )
    assert page.locator("#excerpt").inner_text() == "\n".join(expected.split("\n")[1:])
    if case in ("duplicate_key", "bad_utf8"):
        shoot(page, f"toolbox-refused-{case}")


def test_a_pasted_document_over_the_size_limit_is_refused_as_validate_max_bytes_refuses_it(
    ui_server: Servers, open_page: Opener, tmp_path: Path
) -> None:
    text = json.dumps({"items": list(range(40))})
    (tmp_path / "any.json").write_text("{}")
    (tmp_path / "doc.json").write_text(text)
    done = cli("validate", "any.json", "doc.json", "--json", "--max-bytes", "64", cwd=tmp_path)
    expected = json.loads(done.stdout.splitlines()[0])["error"]["message"]
    page = toolbox(open_page, ui_server())
    page.fill("#input", text)
    page.click("details.tb-limits summary")
    page.fill("#max-bytes", "64")
    run_action(page, "check")
    assert expected in page.locator("#verdict").inner_text()
    assert page.locator(".tb-code").inner_text() == "json_too_large"
    # a refusal with no place has no excerpt: nothing stands in its stead (not the text "null")
    shown = page.evaluate(
        "() => [...document.querySelector('#result').childNodes].map(n => n.textContent)"
    )
    assert "null" not in shown


def test_big_integers_are_kept_exact_in_every_format_as_fmt_keeps_them(
    ui_server: Servers, open_page: Opener
) -> None:
    raw = '{"b": 123456789012345678901234567890, "a": [1.5, -0, "x"]}'
    page = toolbox(open_page, ui_server())
    page.fill("#input", raw)
    run_action(page, "format")
    assert page.locator("#output").inner_text() == cli("fmt", "-", stdin=raw.encode()).stdout
    for indent, option in (("4", "4"), ("tab", "tab"), ("minify", "0")):
        page.select_option("#indent", indent)
        page.check("#sort-keys")
        run_action(page, "format")
        expected = cli("fmt", "-", "--indent", option, "--sort-keys", stdin=raw.encode()).stdout
        assert page.locator("#output").inner_text() == expected
        assert "123456789012345678901234567890" in expected


# --- validation: the page's verdicts are the command's, on every example fixture ---


def example_repositories() -> list[str]:
    return sorted(p.parent.name for p in EXAMPLES.glob("*/schemawire.toml"))


def fixtures_of(repo: Path) -> list[tuple[str, str]]:
    """Each fixture file (relative path) and the schema it is for: ``fixtures/<kind>/<name>/
    <valid|invalid>/*`` is for the schema of that kind and name (`schemawire.schema.fixtures`)."""
    found = []
    for path in sorted((repo / "fixtures").glob("*/*/*/*.json*")):
        if path.name.endswith(".expect.json"):
            continue
        kind, name = path.relative_to(repo / "fixtures").parts[:2]
        found.append((path.relative_to(repo).as_posix(), f"{kind}/{name}"))
    return found


def page_results(page: Any) -> list[dict[str, Any]]:
    """The verdicts the page shows: source, valid, and each violation's pointer, keyword,
    message (read from the page, as a person reads them)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#result h2.tb-source')].map((h) => {
          const badge = h.querySelector('.badge').textContent;
          const violations = [];
          let next = h.nextElementSibling;
          if (next && next.classList.contains('tb-violations')) {
            for (const b of next.querySelectorAll('.tb-violation')) violations.push({
              pointer: b.dataset.pointer, keyword: b.children[1].textContent,
              message: b.children[2].textContent});
          }
          return {source: h.firstChild.textContent.trim(), valid: badge === 'valid',
                  unreadable: badge === 'unreadable', violations};
        })"""
    )


# Every example repository that has fixtures (imports and shortlist have none).
WITH_FIXTURES = [name for name in example_repositories() if fixtures_of(EXAMPLES / name)]


def test_the_fixture_comparison_covers_the_example_repositories() -> None:
    assert {"broken-refunds", "refund", "support-desk"} <= set(WITH_FIXTURES)


@pytest.mark.parametrize("name", WITH_FIXTURES)
def test_page_verdicts_equal_validate_json_on_every_fixture(
    ui_server: Servers, open_page: Opener, name: str
) -> None:
    repo = EXAMPLES / name
    fixtures = fixtures_of(repo)
    page = toolbox(open_page, ui_server(repo=repo))
    page.wait_for_function("() => document.querySelectorAll('#repo-files option').length > 0")
    compared = 0
    for fixture, schema in fixtures:
        done = cli("validate", schema, fixture, "--json", "--repo", ".", cwd=repo)
        page.fill("#repo-file", fixture)
        page.press("#repo-file", "Enter")
        page.wait_for_function(
            "(f) => document.querySelector('#input-note').textContent.startsWith(f)", arg=fixture
        )
        lines = fixture.endswith(".jsonl")
        page.check("#action-lines" if lines else "#action-validate")
        if lines:
            page.select_option("#lines-mode", "validate")
        page.fill("#schema", schema)
        run_action(page, "lines" if lines else "validate")
        if done.returncode == 2 and not done.stdout:  # the schema cannot be used
            assert page.locator("#cli-message").count() == 1, fixture
            shown = page.locator("#verdict").inner_text()
            assert shown.split(": ", 1)[1].split(" (")[0][:40] in done.stderr, fixture
            continue
        expected = [json.loads(line) for line in done.stdout.splitlines()]
        got = page_results(page)
        shown = page.locator("#result").inner_text()  # what the page said, if it refused
        assert [r["source"] for r in got] == [r["source"] for r in expected], (fixture, shown)
        for mine, theirs in zip(got, expected, strict=True):
            assert mine["unreadable"] == ("error" in theirs), fixture
            assert mine["valid"] == theirs["valid"], fixture
            assert mine["violations"] == [
                {k: v[k] for k in ("pointer", "keyword", "message")} for v in theirs["violations"]
            ], fixture
        compared += 1
    assert compared > 0


def test_a_pasted_schema_validates_and_each_violation_jumps_to_its_place(
    ui_server: Servers, open_page: Opener, shoot: Any
) -> None:
    page = toolbox(open_page, ui_server())
    document = '{\n  "name": "ada",\n  "age": -3,\n  "tags": ["x", 7]\n}'
    schema = {
        "type": "object",
        "required": ["name", "email"],
        "properties": {
            "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    page.fill("#input", document)
    page.check("#action-validate")
    page.check("#paste-schema")
    page.fill("#schema-text", json.dumps(schema))
    run_action(page, "validate")
    pointers = page.eval_on_selector_all(".tb-violation", "bs => bs.map(b => b.dataset.pointer)")
    assert set(pointers) == {"/email", "/age", "/tags/1"}
    page.click(".tb-violation[data-pointer='/tags/1']")
    selected = page.evaluate(
        "() => { const t = document.querySelector('#input');"
        " return [document.activeElement.id, t.value.slice(t.selectionStart, t.selectionEnd)]; }"
    )
    assert selected == ["input", "7"]  # the item itself, not the rest of its line
    shoot(page, "toolbox-validate")


# --- diff and JSON Lines ---


def test_diff_of_two_documents_shows_the_patch_and_the_edits_schemawire_diff_prints(
    ui_server: Servers, open_page: Opener, tmp_path: Path, shoot: Any
) -> None:
    a = '{"city": "Paris", "unit": "celsius", "days": [1, 2, 3]}'
    b = '{"unit": "kelvin", "city": "Paris", "days": [1, 3], "note": "x"}'
    (tmp_path / "a.json").write_text(a)
    (tmp_path / "b.json").write_text(b)
    words = cli("diff", "a.json", "b.json", cwd=tmp_path).stdout.splitlines()
    patch = json.loads(cli("diff", "a.json", "b.json", "--json", cwd=tmp_path).stdout)
    page = toolbox(open_page, ui_server())
    page.check("#action-diff")
    page.fill("#input", a)
    page.fill("#input-b", b)
    run_action(page, "diff")
    assert page.eval_on_selector_all("#edits li", "ls => ls.map(l => l.textContent)") == words
    shown = page.evaluate("() => jsonTree.parse !== undefined")
    assert shown
    assert len(patch) == page.locator("#edits li").count()
    shoot(page, "toolbox-diff")


def test_json_lines_get_a_verdict_per_line_with_its_number(
    ui_server: Servers, open_page: Opener, tmp_path: Path
) -> None:
    text = '{"a": 1}\n\n{"a": 2,}\n[1, 2]\n{"a": NaN}\n'
    page = toolbox(open_page, ui_server())
    page.fill("#input", text)
    page.check("#action-lines")
    page.select_option("#lines-mode", "check")
    run_action(page, "lines")
    rows = page.eval_on_selector_all(
        ".tb-lines tbody tr", "rs => rs.map(r => [r.dataset.line, r.cells[1].textContent])"
    )
    assert [r[0] for r in rows] == ["1", "3", "4", "5"]  # the blank line 2 is no instance
    assert [r[1].startswith("✓") for r in rows] == [True, False, True, False]
    (tmp_path / "in.jsonl").write_text(text)
    done = cli("fmt", "in.jsonl", "--stdout", cwd=tmp_path)
    expected = done.stderr.removeprefix("error: ").split("\n")[0].split(": ", 1)[1]
    assert rows[1][1].endswith(expected)
    page.select_option("#lines-mode", "format")
    page.fill("#input", '{"b": 1,  "a": 2}\n\n[1,\t2]\n')
    run_action(page, "lines")
    assert page.locator("#output").inner_text() == '{"b":1,"a":2}\n[1,2]\n'


def test_a_huge_json_lines_text_lists_only_its_refused_lines(
    ui_server: Servers, open_page: Opener
) -> None:
    """50,000 lines, two refused: the page says how many of each, and its table holds the
    two refused lines (not 50,000 rows), each a button to its place."""
    lines = ['{"a": 1}'] * 50_000
    lines[20_000] = '{"a": 1,}'
    lines[49_999] = '{"a": 1'
    page = toolbox(open_page, ui_server())
    page.eval_on_selector(  # as a paste does (fill types it, too slowly for 50,000 lines)
        "#input",
        "(t, text) => { t.value = text; t.dispatchEvent(new Event('input')); }",
        "\n".join(lines),
    )
    page.check("#action-lines")
    page.select_option("#lines-mode", "check")
    run_action(page, "lines")
    assert page.locator("#verdict").inner_text() == "✗ 50,000 lines: 49,998 accepted, 2 refused"
    assert "every refused line" in page.locator("#listed").inner_text()
    rows = page.eval_on_selector_all(".tb-lines tbody tr", "rs => rs.map(r => r.dataset.line)")
    assert rows == ["20001", "50000"]
    page.click(".tb-lines tbody tr:first-child button")
    line = page.evaluate(
        "() => { const t = document.activeElement;"
        " return t.value.slice(0, t.selectionStart).split('\\n').length; }"
    )
    assert line == 20_001


def test_json_lines_validate_line_by_line_as_validate_json_does(
    ui_server: Servers, open_page: Opener, tmp_path: Path
) -> None:
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
    text = '{"a": 1}\n{"a": "x"}\n\n{"b": 2}\n{"a": 1,}\n'
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "in.jsonl").write_text(text)
    done = cli("validate", "schema.json", "in.jsonl", "--json", cwd=tmp_path)
    expected = [json.loads(line) for line in done.stdout.splitlines()]
    page = toolbox(open_page, ui_server())
    page.fill("#input", text)
    page.check("#action-lines")
    page.select_option("#lines-mode", "validate")
    page.check("#paste-schema")
    page.fill("#schema-text", json.dumps(schema))
    run_action(page, "lines")
    got = page_results(page)
    assert [r["source"].replace("<input>", "in.jsonl") for r in got] == [
        r["source"] for r in expected
    ]
    assert [r["valid"] for r in got] == [r["valid"] for r in expected]
    assert [r["unreadable"] for r in got] == ["error" in r for r in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert mine["violations"] == [
            {k: v[k] for k in ("pointer", "keyword", "message")} for v in theirs["violations"]
        ]


# --- keyboard only, and offline ---


def test_format_validate_and_jump_with_the_keyboard_alone(
    ui_server: Servers, open_page: Opener, shoot: Any
) -> None:
    repo = EXAMPLES / "refund"
    page = toolbox(open_page, ui_server(repo=repo))
    page.wait_for_function("() => document.querySelectorAll('#schema-list option').length > 0")
    order: list[str] = []
    while "run" not in order and len(order) < 30:
        page.keyboard.press("Tab")
        order.append(page.evaluate("() => document.activeElement.id"))
    # the documents first (a file, a repository file, the input), then the action and its
    # options, then Run
    wanted = ["open-file", "repo-file", "input", "action-format", "indent", "sort-keys", "run"]
    assert [i for i in order if i in wanted] == wanted, order
    page.keyboard.press("Alt+i")
    assert page.evaluate("() => document.activeElement.id") == "input"
    page.keyboard.type('{"order_id": 7, "amount": -5, "reason": "late"}')
    page.keyboard.press("Alt+1")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#output")
    page.keyboard.press("Alt+r")  # the result's first control: "Use as input"
    assert page.evaluate("() => document.activeElement.id") == "use-output"
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # focus is visible
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "input"
    assert page.input_value("#input").startswith('{\n  "order_id": 7,')
    page.keyboard.press("Alt+3")
    assert page.evaluate("() => document.activeElement.id") == "action-validate"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.id") == "schema"
    page.keyboard.type("tools/create_refund")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".tb-violation")
    page.keyboard.press("Alt+r")
    focused = page.evaluate("() => document.activeElement.dataset.pointer")
    assert focused is not None
    page.keyboard.press("Enter")
    selection = page.evaluate(
        "() => { const t = document.activeElement;"
        " return [t.id, t.value.slice(t.selectionStart).split(':')[0]]; }"
    )
    assert selection == ["input", json.dumps(focused.rsplit("/", 1)[1])]
    status = page.locator("#result")
    assert status.get_attribute("role") == "status"
    assert status.get_attribute("aria-live") == "polite"
    shoot(page, "toolbox-keyboard")


def test_the_page_works_with_the_network_off(
    ui_server: Servers, open_page: Opener, offline_browser: Any
) -> None:
    """In a browser off the network (but for the loopback the page is served on), every
    action still answers, since all of them are computed on this machine."""
    from playwright.sync_api import Error as PlaywrightError

    elsewhere = offline_browser.new_page()
    try:
        with pytest.raises(PlaywrightError, match="ERR_"):
            elsewhere.goto("http://example.com/", timeout=WAIT_MS)  # the network is off
    finally:
        elsewhere.close()
    page = toolbox(open_page, ui_server(), offline=True)
    page.fill("#input", '{"a": 1, "a": 2}')
    run_action(page, "check")
    assert "duplicate key" in page.locator("#verdict").inner_text()
    page.fill("#input", '{"b":[1,2]}')
    run_action(page, "format")
    assert page.locator("#output").inner_text() == '{\n  "b": [\n    1,\n    2\n  ]\n}\n'


def test_a_dropped_file_reaches_the_parser_as_its_bytes(
    ui_server: Servers, open_page: Opener
) -> None:
    raw = b'{"name": "caf\xe9",\n "ok": true}'
    page = toolbox(open_page, ui_server())
    page.evaluate(
        """(bytes) => {
          const transfer = new DataTransfer();
          transfer.items.add(new File([new Uint8Array(bytes)], "latin1.json"));
          const input = document.querySelector('#input');
          input.dispatchEvent(new DragEvent('drop', {dataTransfer: transfer, bubbles: true}));
        }""",
        list(raw),
    )
    page.wait_for_function("() => document.querySelector('#input-note').textContent.length > 0")
    assert "not all UTF-8" in page.locator("#input-note").inner_text()
    run_action(page, "check")
    expected = cli_refusal(raw).replace("<input>", "latin1.json")
    assert page.locator("#cli-message").inner_text() == expected
    page.click(".tb-jump")  # the caret's place, in the text area
    assert page.evaluate("() => document.querySelector('#input').selectionStart") == 13


def test_a_violation_in_a_dropped_crlf_file_jumps_to_its_place(
    ui_server: Servers, open_page: Opener
) -> None:
    """A text area shows a file's CRLF line ends as LF (one character fewer per line): the
    server counts the file's own characters, so the jump must not land a line's worth of
    characters early."""
    raw = b'{\r\n  "a": 1,\r\n  "b": 2,\r\n  "c": 3,\r\n  "n": "x"\r\n}\r\n'
    page = toolbox(open_page, ui_server())
    page.evaluate(
        """(bytes) => {
          const transfer = new DataTransfer();
          transfer.items.add(new File([new Uint8Array(bytes)], "crlf.json"));
          const input = document.querySelector('#input');
          input.dispatchEvent(new DragEvent('drop', {dataTransfer: transfer, bubbles: true}));
        }""",
        list(raw),
    )
    page.wait_for_function("() => document.querySelector('#input-note').textContent.length > 0")
    page.check("#action-validate")
    page.check("#paste-schema")
    page.fill("#schema-text", '{"properties": {"n": {"type": "integer"}}}')
    run_action(page, "validate")
    page.click(".tb-violation")
    selected = page.evaluate(
        "() => { const t = document.querySelector('#input');"
        " return t.value.slice(t.selectionStart, t.selectionEnd); }"
    )
    assert selected == '"n": "x"'


@pytest.mark.parametrize(
    "reference",
    [
        "schemas/tools/create_refund.json",  # by file name
        "https://example.com/schemas/tools/create_refund.json",  # by $id
        "create_refund",  # by tool name
    ],
)
def test_a_schema_chosen_by_file_name_or_id_gives_the_commands_verdict(
    ui_server: Servers, open_page: Opener, tmp_path: Path, reference: str
) -> None:
    repo = EXAMPLES / "refund"
    document = '{"order_id": "A-1", "amount": 0, "reason": "late", "extra": 1}'
    (tmp_path / "doc.json").write_text(document)
    done = cli("validate", reference, str(tmp_path / "doc.json"), "--json", "--repo", ".", cwd=repo)
    (expected,) = [json.loads(line) for line in done.stdout.splitlines()]
    page = toolbox(open_page, ui_server(repo=repo))
    page.wait_for_function("() => document.querySelectorAll('#schema-list option').length > 0")
    listed = page.eval_on_selector_all("#schema-list option", "os => os.map(o => o.value)")
    assert reference in listed or reference == "create_refund"  # the list holds paths and $ids
    page.fill("#input", document)
    page.check("#action-validate")
    page.fill("#schema", reference)
    run_action(page, "validate")
    (got,) = page_results(page)
    assert got["valid"] == expected["valid"]
    assert got["violations"] == [
        {k: v[k] for k in ("pointer", "keyword", "message")} for v in expected["violations"]
    ]
    assert got["violations"]  # the document is meant to break the schema


def test_the_run_pages_schema_link_opens_validate_with_that_schema_chosen(
    ui_server: Servers, open_page: Opener
) -> None:
    # A verdict on the Run page links its schema as /toolbox?schema=<file or $id>.
    server = ui_server(repo=EXAMPLES / "support-desk")
    page = open_page(server, "/toolbox?schema=schemas/tools/get_weather.json")
    page.wait_for_selector("#schema")
    assert page.input_value("#schema") == "schemas/tools/get_weather.json"
    assert page.is_checked("#action-validate")
    assert page.evaluate("document.activeElement.id") == "input"
    page.fill("#input", '{"city": "Paris", "unit": "kelvin"}')
    run_action(page, "validate")
    (got,) = page_results(page)
    assert got["valid"] is False
    assert [v["pointer"] for v in got["violations"]] == ["/unit"]


def test_a_jump_in_minified_json_selects_only_the_member_it_names(
    ui_server: Servers, open_page: Opener
) -> None:
    page = toolbox(open_page, ui_server())
    page.fill("#input", '{"a": 1, "b": "x", "c": [true, 2]}')
    page.check("#action-validate")
    page.check("#paste-schema")
    page.fill("#schema-text", '{"properties": {"b": {"type": "integer"}}}')
    run_action(page, "validate")
    page.click(".tb-violation[data-pointer='/b']")
    selected = page.evaluate(
        "() => { const t = document.querySelector('#input');"
        " return t.value.slice(t.selectionStart, t.selectionEnd); }"
    )
    assert selected == '"b": "x"'  # not the rest of the line
