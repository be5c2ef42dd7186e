"""``schemawire run`` against a streaming provider: the answer's text and a call's arguments
print as they arrive, on a terminal; ``--json`` prints nothing live; a provider's key must be
set before anything starts."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console
from starlette.responses import Response

from schemawire.cli._live import LivePrinter
from schemawire.evals import case_from_trace, run_case_async
from schemawire.types import Hop
from schemawire.wire import ArgumentsDelta, CallStarted, TextDelta
from tests.cli.test_cli import SUPPORT_DESK, invoke
from tests.host.loopback import provider
from tests.host.test_providers import chat_events
from tests.wire.provider_responses import sse_for

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DEMO = Path(__file__).parents[2] / "src" / "schemawire" / "host" / "demo.json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def printed(*deltas: Any) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    live = LivePrinter(console)
    for delta in deltas:
        live(delta)
    live.around(lambda hop: console.print(f"hop {hop.seq}"))(
        Hop("run", 7, 0.0, "model:openai.chat", "host", "openai.chat", "receive", {})
    )
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(output, str)
    return output


def test_text_and_calls_print_as_they_arrive_and_a_hop_starts_its_own_line() -> None:
    output = printed(
        TextDelta("Let me "),
        TextDelta("check [both] :smile:."),
        CallStarted(0, "call_1", "get_weather"),
        ArgumentsDelta(0, '{"city": '),
        ArgumentsDelta(0, '"上海"}'),
        CallStarted(1, "call_2", "billing.refund"),
        ArgumentsDelta(1, "{}"),
    )
    assert output == (
        "Let me check [both] :smile:.\n"  # no markup, no emoji codes: the model's text as it is
        '→ get_weather {"city": "上海"}\n'
        "→ billing.refund {}\n"
        "hop 7\n"
    )


def test_nothing_streamed_prints_nothing() -> None:
    assert printed() == "hop 7\n"


# --- schemawire run ------------------------------------------------------------------------------

QUESTION = "上海今天多少度？"


def demo_streams() -> list[bytes]:
    """The demo's first question (a call, then the answer) as an OpenAI server streams it."""
    responses = json.loads(DEMO.read_text(encoding="utf-8"))["responses"][:2]
    return [sse_for("openai.chat", chat_events(body)).encode() for body in responses]


async def run_against_a_stream(*options: str) -> tuple[Any, list[dict[str, Any]]]:
    """``schemawire run`` with the support desk's tools against a loopback server streaming
    the demo's answers, as if on a terminal; the process and the request bodies."""
    streams = demo_streams()

    def answer(attempt: int, body: dict[str, Any]) -> Response:
        if body.get("stream"):
            return Response(streams[attempt - 1], media_type="text/event-stream")
        responses = json.loads(DEMO.read_text(encoding="utf-8"))["responses"]
        return Response(json.dumps(responses[attempt - 1]), media_type="application/json")

    async with provider(answer) as (url, app):
        environment = {
            **os.environ,
            "OPENAI_API_KEY": "k-test",
            "OPENAI_BASE_URL": url,
            "FORCE_COLOR": "1",
        }
        command = [
            SCHEMAWIRE,
            "run",
            "-m",
            "openai:gpt-test",
            "--repo",
            str(SUPPORT_DESK),
            QUESTION,
            *options,
        ]
        with anyio.fail_after(60):
            done = await anyio.run_process(command, env=environment, check=False)
    return done, [body for _, _, body in app.requests]


@pytest.mark.slow
@pytest.mark.anyio
async def test_run_prints_the_streamed_call_and_answer_as_they_arrive(tmp_path: Path) -> None:
    done, bodies = await run_against_a_stream("--trace", str(tmp_path / "t.jsonl"))
    out = ANSI.sub("", done.stdout.decode())
    assert done.returncode == 0, out + done.stderr.decode()
    assert [body["stream"] for body in bodies] == [True, True]
    live_call = '→ get_weather {"city": "上海", "unit": "celsius"}\n'
    assert live_call in out
    assert out.index(live_call) < out.index("→ host  openai.chat calls get_weather(")  # its hop
    assert "\n上海今天 18°C，晴。\n" in out  # the answer streamed, on a line of its own


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_streamed_run_is_an_eval_case_like_any_other(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    done, _ = await run_against_a_stream("--json", "--trace", str(trace))
    assert done.returncode == 0, done.stderr.decode()
    out = tmp_path / "evals" / "case.json"
    recorded = case_from_trace(trace, repo=SUPPORT_DESK, out=out)
    out.parent.mkdir()
    out.write_text(json.dumps(recorded.document), encoding="utf-8")
    calls = recorded.document["expect"]["calls"]
    assert [call["tool"] for call in calls] == ["get_weather"]
    assert (await run_case_async(out)).status == "passed"  # replays the assembled responses


@pytest.mark.slow
@pytest.mark.anyio
async def test_run_json_prints_nothing_live(tmp_path: Path) -> None:
    done, _ = await run_against_a_stream("--json", "--trace", str(tmp_path / "t.jsonl"))
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["answer"] == "上海今天 18°C，晴。"  # the JSON and nothing else


@pytest.mark.slow
@pytest.mark.anyio
async def test_run_no_stream_asks_for_whole_answers(tmp_path: Path) -> None:
    done, bodies = await run_against_a_stream("--no-stream", "--trace", str(tmp_path / "t.jsonl"))
    assert done.returncode == 0, done.stderr.decode()
    assert ["stream" in body for body in bodies] == [False, False]
    assert "→ get_weather" not in ANSI.sub("", done.stdout.decode())


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai:gpt-4.1-mini", "OPENAI_API_KEY"), ("anthropic:claude-x", "ANTHROPIC_API_KEY")],
)
def test_run_without_the_providers_key_fails_early_naming_it(
    spec: str, variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [name for name in os.environ if name.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "-m", spec, "--repo", str(SUPPORT_DESK), QUESTION)
    assert result.exit_code == 2
    assert f"{variable} is not set" in result.stderr
    assert not (tmp_path / ".schemawire").exists()  # failed before any run began
