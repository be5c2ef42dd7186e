"""The Toolbox page's server side, without a browser: each action is the command line's own
function, the document's bytes reach the parser as they are, and the repository's files are
the only ones it reads."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from schemawire._json import DEFAULT_LIMITS, loads
from schemawire._patch import diff_json, edit_line, summarise_patch
from schemawire.application.json_toolbox import format_json, load_schema, validate_text
from schemawire.errors import ErrorCode, JSONError, SchemaError
from schemawire.ui import UiConfig, create_app
from schemawire.ui._toolbox import (
    ToolboxInputError,
    checked,
    formatted,
    repository_file,
    validated,
)

REFUND = Path(__file__).parents[2] / "examples" / "refund"


@pytest.mark.parametrize(
    "raw",
    [b'{"a": 1, "a": 2}', b"[NaN]", b'{"x": "\xff"}', b"[1,]", b'{"a": [', b"[" * 300],
)
def test_the_check_is_the_parsers_refusal_word_for_word(raw: bytes) -> None:
    with pytest.raises(JSONError) as refused:
        loads(raw)
    answer = checked({"input": {"base64": base64.b64encode(raw).decode()}})
    assert answer["ok"] is False
    assert answer["error"] == refused.value.to_json() | {
        "excerpt": refused.value.excerpt,
        "shown": str(refused.value),
    }


@pytest.mark.parametrize(("style", "indent"), [("2", 2), ("4", 4), ("tab", "\t"), ("minify", None)])
def test_every_format_is_format_json_and_keeps_every_value(style: str, indent: object) -> None:
    raw = '{"z": 123456789012345678901234567890, "a": [1.5, "é", {"q": null}]}'
    answer = formatted({"input": {"text": raw}, "style": style, "sort_keys": True})
    assert answer["text"] == format_json(raw, indent=indent, sort_keys=True)  # type: ignore[arg-type]
    assert loads(answer["text"]) == loads(raw)
    assert formatted({"input": {"text": raw}})["text"] == format_json(raw)  # fmt's default


def test_diff_edits_are_the_lines_schemawire_diff_prints(tmp_path: Path) -> None:
    old = {"a": 1, "b": [1, 2, 3], "c": {"d": "x"}}
    new = {"a": 2, "b": [1, 3], "c": {"d": "x", "e": True}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    printed = subprocess.run(
        [sys.executable, "-m", "schemawire", "diff", "old.json", "new.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    lines = [edit_line(e) for e in summarise_patch(old, diff_json(old, new))]
    assert printed.stdout.splitlines() == lines


def test_validation_is_validate_text_with_where_each_violation_is() -> None:
    text = '{\n  "order_id": 7,\n  "amount": -5,\n  "reason": "late"\n}'
    answer = validated({"input": {"text": text}, "schema": "tools/create_refund"}, REFUND)
    schema, label = load_schema("tools/create_refund", repository_dir=REFUND)
    (expected,) = validate_text(schema, text)
    assert answer["schema"] == label
    (result,) = answer["results"]
    shown = [{k: v[k] for k in ("pointer", "keyword", "message")} for v in result["violations"]]
    assert shown == expected.to_json()["violations"]
    for violation in result["violations"]:
        key = json.dumps(violation["pointer"].rsplit("/", 1)[1])
        assert text[violation["offset"] :].startswith(key)


def test_offsets_count_utf16_units_as_the_browser_does() -> None:
    text = '{"emoji": "😀😀", "n": "x"}'
    schema = '{"properties": {"n": {"type": "integer"}}}'
    answer = validated({"input": {"text": text}, "schema_text": schema}, None)
    (violation,) = answer["results"][0]["violations"]
    assert violation["offset"] == text.index('"n"') + 2  # two emoji, each two UTF-16 units


def test_only_the_repositorys_json_files_are_read() -> None:
    with pytest.raises(ToolboxInputError, match="not a JSON file of the repository"):
        repository_file(REFUND, "../refund/../../pyproject.json")
    with pytest.raises(ToolboxInputError, match="not a JSON file of the repository"):
        repository_file(REFUND, "schemawire.toml")
    with pytest.raises(ToolboxInputError, match="outside the repository"):
        validated(
            {"input": {"text": "{}"}, "schema": "../support-desk/schemas/tools/get_weather.json"},
            REFUND,
        )
    with pytest.raises(ToolboxInputError, match="NUL"):  # not the OS's ValueError (a 500)
        repository_file(REFUND, "schemas/a\0.json")
    with pytest.raises(ToolboxInputError, match="NUL"):
        validated({"input": {"text": "{}"}, "schema": "tools/a\0b"}, REFUND)
    picked = repository_file(REFUND, "schemas/tools/create_refund.json")
    assert loads(picked["text"])["$id"].endswith("create_refund.json")


def test_the_routes_answer_json_and_bad_requests_say_why() -> None:
    app = create_app(UiConfig(traces=REFUND, repo=REFUND, token="t"))
    client = TestClient(app, base_url="http://127.0.0.1:8000")
    client.get("/?token=t")
    schemas = client.get("/api/toolbox/schemas").json()["schemas"]
    assert "schemas/tools/create_refund.json" in {s["path"] for s in schemas}
    files = client.get("/api/toolbox/files").json()["files"]
    assert "fixtures/tools/create_refund/valid/late_delivery.json" in files
    answer = client.post("/api/toolbox/check", json={"input": {"base64": "eyJhIjogWw=="}})
    assert answer.json()["error"]["code"] == "json_syntax"
    bad = client.post("/api/toolbox/format", json={"input": {"text": "{}"}, "style": "8"})
    assert bad.status_code == 400
    assert 'style "8"' in bad.json()["error"]["message"]  # JSON, never a Python repr
    unusable = client.post(
        "/api/toolbox/validate", json={"input": {"text": "{}"}, "schema_text": "[1,"}
    )
    assert unusable.status_code == 400
    assert unusable.json()["error"]["code"] == "json_syntax"


def test_a_schema_named_by_the_request_is_never_a_file_of_the_servers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that is no file of the repository is looked up as an $id or tool name only:
    a file of that name in the folder the server runs in is not read (nor shown)."""
    (tmp_path / "secret.json").write_text('{"type": "object", secret-token')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SchemaError) as refused:
        validated({"input": {"text": "{}"}, "schema": "secret.json"}, REFUND)
    assert refused.value.code == ErrorCode.SCHEMA_UNKNOWN
    assert "secret-token" not in str(refused.value)


def test_a_huge_json_lines_text_is_counted_whole_and_listed_in_part() -> None:
    """Each line is checked and counted; the answer lists the refused lines only (so a
    million-line text is not a million-row answer), with how many there are."""
    lines = ['{"a": 1}'] * 5000
    lines[1233] = '{"a": 1,}'
    lines[4000] = "[NaN]"
    answer = checked({"input": {"text": "\n".join(lines)}, "lines": True})
    assert (answer["ok"], answer["total"], answer["refused"]) == (False, 5000, 2)
    assert answer["listed"] == "refused"
    assert [(v["line"], v["ok"]) for v in answer["lines"]] == [(1234, False), (4001, False)]
    small = checked({"input": {"text": '{"a": 1}\n[1,]'}, "lines": True})
    assert [v["ok"] for v in small["lines"]] == [True, False]
    assert small["listed"] == "all"


def test_validating_many_failing_lines_takes_linear_time() -> None:
    """Every line fails (three violations each), with a character beyond the BMP before them:
    finding each violation's place must not rescan the text before it (it was quadratic)."""
    line = '{"note": "😀", "order_id": "x", "amount": "y", "reason": 5}'
    text = "\n".join([line] * 20_000)
    started = time.perf_counter()
    answer = validated(
        {"input": {"text": text}, "schema": "tools/create_refund", "lines": True}, REFUND
    )
    elapsed = time.perf_counter() - started
    assert answer["summary"]["invalid"] == 20_000
    assert answer["listed"] == "failed"
    assert len(answer["results"]) == 1000  # the first failing lines; all are counted
    last = answer["results"][-1]
    start = (len(line) + 1) * 999 + 1  # line 1000, in UTF-16 units (one emoji before it)
    for violation in last["violations"]:
        key = violation["pointer"].rsplit("/", 1)[1]
        at = violation["offset"] - start
        assert at >= 0
        assert (
            text.encode("utf-16-le")[2 * violation["offset"] :]
            .decode("utf-16-le")
            .startswith(json.dumps(key))
        ), violation
    assert elapsed < 20, f"{elapsed:.1f} s for 20,000 failing lines"


def test_a_paste_under_the_parsers_limit_is_not_refused_for_its_escaped_request() -> None:
    """A 10 MB document of quotes is a 20 MB request once JSON-escaped: the request's own
    size must not refuse it (the command accepts the document); a request over the cap is
    refused with what to do instead."""
    app = create_app(UiConfig(traces=REFUND, repo=REFUND, token="t"))
    client = TestClient(app, base_url="http://127.0.0.1:8000")
    client.get("/?token=t")
    document = '["' + '\\"' * 5_000_000 + '"]'
    answer = client.post("/api/toolbox/check", json={"input": {"text": document}})
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json() == {"ok": True}


def test_a_request_over_the_cap_is_refused_before_it_is_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from schemawire.ui import _toolbox

    monkeypatch.setattr(_toolbox, "_MAX_REQUEST_BYTES", 1000)
    app = create_app(UiConfig(traces=REFUND, repo=REFUND, token="t"))
    client = TestClient(app, base_url="http://127.0.0.1:8000")
    client.get("/?token=t")
    answer = client.post("/api/toolbox/check", json={"input": {"text": "[" + "1," * 600 + "1]"}})
    assert answer.status_code == 400
    assert "schemawire validate --max-bytes" in answer.json()["error"]["message"]


def test_a_repository_file_over_the_parsers_limit_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as file:
        file.truncate(DEFAULT_LIMITS.max_bytes + 1)  # sparse: no 16 MiB written
    with pytest.raises(ToolboxInputError, match="schemawire validate --max-bytes"):
        repository_file(tmp_path, "big.json")
