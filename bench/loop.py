"""Loop bench: what a host loop costs per tool call, with the model scripted so that all the time
is the loop's. The conversation and its timing are those of `bench/peers_loop.py`: one local tool
``noop(i: int) -> dict``; "sequential" is 200 turns of one call each, then a text answer;
"parallel" is one turn of 50 calls, then a text answer. µs per call: the whole run over its
calls, the first and last 20 calls of the sequential run (to show growth with history), and the
whole parallel run over its 50 calls; medians of several rounds.

Contenders:
- a hand-written floor, here in schemawire's environment: a list of messages, a dispatch dict,
  ``json.loads`` of each arguments string, the call, the result appended;
- Pydantic AI's agent loop with its ``FunctionModel``, and the OpenAI Agents SDK's runner with a
  scripted ``Model``, in the peers' environment (`bench/.work/peers-venv`);
- schemawire's loop, through ``bench/loop_ours.py`` when that file exists: ``sequential(n)``
  gives the seconds of each of n sequential calls, ``parallel(n)`` the seconds of one turn of n
  (so its sequential figure is the mean of its calls, without the run's start and last answer).

The peers run a plain ``def`` tool in a worker thread; their ``async def`` runs come as extra rows.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.peers_loop import (
    EDGE,
    PARALLEL,
    TURNS,
    Clock,
    Script,
    check_results,
    noop,
    parallel_script,
    sequential_script,
    summary,
)

PEERS_PYTHON = Path(__file__).parent / ".work/peers-venv/bin/python"
FLOOR = "hand-written floor"
OURS = "schemawire"
FLOOR_ROUNDS = 21  # the floor's run takes a millisecond: more rounds for a steady median


def run(work: Path, rounds: int) -> dict[str, dict[str, Any]]:
    """Every loop on both scenarios, ``rounds`` rounds each: a summary per loop (µs per call),
    keyed by the table's row labels; the peers' ``async def`` tool runs come as extra rows."""
    print(
        f"host loops, {TURNS} sequential calls and one turn of {PARALLEL}, {rounds} rounds",
        flush=True,
    )
    results = {FLOOR: _floor(max(rounds, FLOOR_ROUNDS))}
    floor = results[FLOOR]
    print(
        f"  {FLOOR}: {floor['sequential']:.1f} µs/call sequential, "
        f"{floor['parallel']:.1f} µs/call parallel",
        flush=True,
    )
    results.update(_peers(work, rounds))
    ours = _ours(rounds)
    if ours is None:
        print(f"  {OURS}: not yet measured", flush=True)
    else:
        results[OURS] = ours
        print(
            f"  {OURS}: {ours['sequential']:,.1f} µs/call sequential, "
            f"{ours['parallel']:,.1f} µs/call parallel",
            flush=True,
        )
    return results


# --- the floor ---------------------------------------------------------------------------------


def _floor_run(script: Script) -> tuple[float, Clock]:
    clock, turn = Clock(), iter(script)

    def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
        clock.entered.append(time.perf_counter())
        calls = next(turn)
        reply: dict[str, Any] = {"role": "assistant", "content": None if calls else "done"}
        if calls:
            reply["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": "noop", "arguments": args}}
                for call_id, args in calls
            ]
        clock.left.append(time.perf_counter())
        return reply

    tools: dict[str, Callable[..., Any]] = {"noop": noop}
    start = time.perf_counter()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    while True:
        reply = model(messages)
        messages.append(reply)
        if not reply.get("tool_calls"):
            break
        for call in reply["tool_calls"]:
            function = call["function"]
            result = tools[function["name"]](**json.loads(function["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    elapsed = time.perf_counter() - start
    assert messages[-1]["content"] == "done"
    check_results(script, [m["content"] for m in messages if m["role"] == "tool"])
    return elapsed, clock


def _floor(rounds: int) -> dict[str, Any]:
    sequential, parallel = sequential_script(TURNS), parallel_script(PARALLEL)
    _floor_run(sequential)  # warm-up
    totals, gaps, wholes = [], [], []
    for _ in range(rounds):
        elapsed, clock = _floor_run(sequential)
        totals.append(elapsed)
        gaps.append(clock.gaps())
        elapsed, clock = _floor_run(parallel)
        wholes.append(elapsed)
    return summary(totals, gaps, wholes, PARALLEL)


# --- the peers, in their own environment -------------------------------------------------------


def _peers(work: Path, rounds: int) -> dict[str, dict[str, Any]]:
    if not PEERS_PYTHON.exists():
        raise SystemExit(f"the peers' environment is missing: {PEERS_PYTHON} (make bench makes it)")
    result = work / "loop-peers.json"
    script = Path(__file__).parent / "peers_loop.py"
    command = [str(PEERS_PYTHON), str(script), str(result), str(rounds), str(TURNS), str(PARALLEL)]
    subprocess.run(command, check=True, timeout=1800)
    rows = {}
    for label, flavours in json.loads(result.read_text(encoding="utf-8")).items():
        for flavour, report in flavours.items():
            report.pop("raw", None)
            rows[label if flavour == "def" else f"{label}, {flavour} tool"] = report
    return rows


# --- schemawire's loop, once bench/loop_ours.py exists -----------------------------------------


def _ours(rounds: int) -> dict[str, Any] | None:
    if importlib.util.find_spec("bench.loop_ours") is None:
        return None
    ours = importlib.import_module("bench.loop_ours")
    ours.sequential(5)  # warm-up
    ours.parallel(PARALLEL)
    calls = [[float(s) for s in ours.sequential(TURNS)] for _ in range(rounds)]
    wholes = [float(ours.parallel(PARALLEL)) for _ in range(rounds)]
    assert all(len(per_call) == TURNS for per_call in calls)
    return summary([sum(per_call) for per_call in calls], calls, wholes, PARALLEL)


# --- the table ---------------------------------------------------------------------------------


def print_table(results: dict[str, dict[str, Any]]) -> None:
    floor = results[FLOOR]
    print()
    print(
        f"| host loop, one local tool, scripted model | sequential µs/call (all {TURNS}) "
        f"| first {EDGE} | last {EDGE} | parallel µs/call ({PARALLEL} in one turn) "
        "| x floor (sequential / parallel) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    main = [label for label in results if "," not in label and label != OURS]
    for label in [*main, OURS]:
        row = results.get(label)
        if row is None:
            print(f"| {label} | not yet measured | | | | |")
            continue
        name = f"{label} {row['version']}" if "version" in row else label
        ratio = (
            f"{_times(row['sequential'] / floor['sequential'])} / "
            f"{_times(row['parallel'] / floor['parallel'])}"
        )
        print(
            f"| {name} | {_us(row['sequential'])} | {_us(row['first'])} | "
            f"{_us(row['last'])} | {_us(row['parallel'])} | {ratio} |"
        )
    extra = [label for label in results if "," in label]
    if extra:
        print()
        print("The peers run a plain `def` tool in a worker thread; the same tool as `async def`:")
        print()
        print(
            f"| host loop, `async def` tool | sequential µs/call | first {EDGE} | last {EDGE} "
            "| parallel µs/call |"
        )
        print("|---|---:|---:|---:|---:|")
        for label in extra:
            row = results[label]
            print(
                f"| {label} | {_us(row['sequential'])} | {_us(row['first'])} | "
                f"{_us(row['last'])} | {_us(row['parallel'])} |"
            )
    turns = [label for label in results if "parallel_turn" in results[label]]
    if turns:
        print()
        alone = ", ".join(f"{label} {_us(results[label]['parallel_turn'])}" for label in turns)
        print(
            f"the {PARALLEL}-call turn alone, without the run's start and final answer, "
            f"µs/call: {alone}"
        )


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.1f}x"


def _us(micros: float) -> str:
    return f"{micros:,.1f}" if micros < 100 else f"{micros:,.0f}"


if __name__ == "__main__":
    work = Path(__file__).parent / ".work"
    work.mkdir(exist_ok=True)
    print_table(run(work, rounds=3))
