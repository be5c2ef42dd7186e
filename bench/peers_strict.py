"""The peers' OpenAI strict converters, timed on the bench's tools. Runs in the bench's own
environment (bench/.work/peers-venv), not schemawire's, so it imports only the peers.

    python bench/peers_strict.py TOOLS.json OUT.json RUNS

TOOLS.json is a list of OpenAI function objects. OUT.json gets, per converter, the median
microseconds per tool and, per tool, the Chat Completions tool it produced or the error it
raised. Inputs are copied before the timed pass where a converter changes them in place.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from agents.strict_schema import ensure_strict_json_schema
from langchain_core.utils.function_calling import convert_to_openai_tool

Converter = Callable[[dict[str, Any]], dict[str, Any]]


def langchain(function: dict[str, Any]) -> dict[str, Any]:
    return convert_to_openai_tool(function, strict=True)


def openai_agents(function: dict[str, Any]) -> dict[str, Any]:
    # What the Agents SDK sends for a FunctionTool made from a raw schema with strict on.
    parameters = ensure_strict_json_schema(function["parameters"])
    return {
        "type": "function",
        "function": {
            "name": function["name"],
            "description": function["description"],
            "parameters": parameters,
            "strict": True,
        },
    }


CONVERTERS: dict[str, tuple[str, Converter]] = {
    "langchain-core convert_to_openai_tool(strict=True)": ("langchain-core", langchain),
    "openai-agents ensure_strict_json_schema": ("openai-agents", openai_agents),
}


def timed_pass(convert: Converter, raw: str) -> tuple[float, list[Any]]:
    functions = json.loads(raw)  # a fresh copy, outside the timed part
    outputs: list[Any] = []
    start = time.perf_counter()
    for function in functions:
        try:
            outputs.append(convert(function))
        except Exception as error:  # a refusal is an outcome to count, not a crash
            outputs.append({"error": f"{type(error).__name__}: {error}"})
    return time.perf_counter() - start, outputs


def main() -> None:
    tools_path, out_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(tools_path, encoding="utf-8") as file:
        raw = file.read()
    count = len(json.loads(raw))
    report = {}
    for label, (package, convert) in CONVERTERS.items():
        passes = [timed_pass(convert, raw) for _ in range(runs)]
        seconds = statistics.median(elapsed for elapsed, _ in passes)
        report[label] = {
            "version": version(package),
            "micros": seconds / count * 1e6,
            "outputs": passes[-1][1],
        }
    with open(out_path, "w", encoding="utf-8") as file:
        json.dump(report, file)


if __name__ == "__main__":
    main()
