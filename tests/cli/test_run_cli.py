"""``schemawire demo`` and ``schemawire run``: the walkthrough, and the loop on the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemawire.trace import read_trace
from tests.cli.test_cli import SUPPORT_DESK, invoke

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DEMO_SCRIPT = Path(__file__).parents[2] / "src" / "schemawire" / "host" / "demo.json"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCHEMAWIRE, *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd=cwd)  # fmt: skip


def test_demo_walks_through_the_articles_example(tmp_path: Path) -> None:
    trace = tmp_path / "demo.jsonl"
    result = run("demo", "--trace", str(trace), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in [
        "mcp tools/list",  # the host lists the server's tools
        "OPTIONAL_TO_NULLABLE",  # the loss report of the strict projection
        'calls get_weather({"city": "上海", "unit": "celsius"})',  # a JSON string, read
        "gate arguments accepted get_weather",
        "mcp tools/call get_weather",
        "gate results accepted get_weather",
        "answer: 上海今天 18°C，晴。",
        "gate arguments rejected get_weather  arguments_invalid: /unit must be one of",
        "answer: 上海現在 18°C，約 291 K，晴。",
    ]:
        assert expected in out, expected
    hops = list(read_trace(trace))
    rejected = [h for h in hops if h.verdict and h.verdict["outcome"] == "rejected"]
    assert len(rejected) == 1
    calls = [h for h in hops if h.protocol == "mcp" and h.payload.get("method") == "tools/call"]
    assert len(calls) == 2  # the refused call never reached the server


def script_file(tmp_path: Path, responses: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"api": "openai.chat", "responses": responses}), encoding="utf-8")
    return path


def test_run_with_a_script_and_the_repositorys_functions(tmp_path: Path) -> None:
    demo = json.loads(DEMO_SCRIPT.read_text(encoding="utf-8"))["responses"]
    script = script_file(tmp_path, demo[:2])
    result = run("run", "-m", f"script:{script}", "--repo", str(SUPPORT_DESK), "上海今天多少度？",
                 "--json", "--trace", str(tmp_path / "t.jsonl"), cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["answer"] == "上海今天 18°C，晴。"
    ((call),) = body["calls"]
    assert [g["outcome"] for g in call["gates"]] == ["accepted", "accepted"]
    assert (tmp_path / "t.jsonl").exists()


def test_run_exits_1_without_an_answer(tmp_path: Path) -> None:
    demo = json.loads(DEMO_SCRIPT.read_text(encoding="utf-8"))["responses"]
    script = script_file(tmp_path, [demo[0], demo[0]])
    result = run("run", "-m", f"script:{script}", "--repo", str(SUPPORT_DESK), "q",
                 "--max-turns", "2", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 1
    assert "no answer: turn_limit" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "-m", "openai:x"], "give the user's input"),
        (["run", "q"], "give --model"),
        (["run", "-m", "openai:x", "q", "cmd"], "add --mcp"),
        (["run", "-m", "openai:x", "--mcp", "q"], "--mcp needs"),
        (["run", "-m", "wat:x", "q"], "unknown provider"),
    ],
)
def test_run_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr
