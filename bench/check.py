"""Check bench: schemawire check beside check-jsonschema, on the same generated repository.

1. ``schemawire check`` over 1,000 tool schemas with 3 fixtures each: the whole command, wall
   time and peak memory of the process.
2. check-jsonschema on the same files: ``--check-metaschema`` over all 1,000 schemas in one
   invocation, and ``--schemafile`` per tool for its fixtures (timed on a sample of tools, then
   multiplied out, since check-jsonschema takes one schema per invocation).
3. Parsing one schema file in-process: schemawire's checked parser beside orjson and json.

Medians of several runs; the machine is small and shared, so read the ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench.generate import generate
from schemawire._json import loads

BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Sample:
    seconds: float
    peak_mib: float
    exit_code: int


def run_once(command: list[str], cwd: Path) -> Sample:
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.stderr is not None:
        process.stderr.close()
    return Sample(elapsed, usage.ru_maxrss / 1024, process.returncode)


def median_of(command: list[str], cwd: Path, runs: int) -> Sample:
    samples = [run_once(command, cwd) for _ in range(runs)]
    return Sample(
        statistics.median(s.seconds for s in samples),
        max(s.peak_mib for s in samples),
        samples[-1].exit_code,
    )


def parse_floor(path: Path, rounds: int = 7) -> dict[str, float]:
    raw = path.read_bytes()
    candidates = {
        "orjson.loads": lambda: orjson.loads(raw),
        "json.loads": lambda: json.loads(raw),
        "schemawire._json.loads": lambda: loads(raw),
    }
    number = 2000
    medians = {}
    for name, call in candidates.items():
        times = timeit.repeat(call, number=number, repeat=rounds)
        medians[name] = statistics.median(times) / number * 1e6
    return medians


def run(work: Path, tools: int, runs: int, sample: int) -> None:
    """Time both tools on ``tools`` generated tool schemas and print the tables."""
    repo = generate(work / "repo", tools)
    schemas = sorted((repo / "schemas/tools").glob("*.json"))
    print(f"generated {len(schemas)} tool schemas with 3 fixtures each", flush=True)

    ours = median_of([str(BIN / "schemawire"), "check", "."], repo, runs)
    assert ours.exit_code == 0, "the generated repository must check clean"
    meta = median_of(
        [str(BIN / "check-jsonschema"), "--check-metaschema", *map(str, schemas)], repo, 3
    )
    assert meta.exit_code == 0, "check-jsonschema must accept the generated schemas"
    per_tool = [
        run_once(
            [
                str(BIN / "check-jsonschema"),
                "--schemafile",
                str(schema),
                *map(str, sorted((repo / "fixtures/tools" / schema.stem).rglob("*.json"))),
            ],
            repo,
        )
        for schema in schemas[:sample]
    ]
    instances = statistics.median(s.seconds for s in per_tool)
    theirs = meta.seconds + instances * len(schemas)
    floor = parse_floor(schemas[0])

    print()
    print(f"| measurement ({len(schemas)} tools, 3 fixtures each) | median wall | peak RSS |")
    print("|---|---:|---:|")
    print(
        f"| `schemawire check` (metaschema, $id, refs, lint, fixtures) | {ours.seconds:.2f} s "
        f"| {ours.peak_mib:.0f} MiB |"
    )
    print(
        f"| `check-jsonschema --check-metaschema` (all schemas, one run) | {meta.seconds:.2f} s "
        f"| {meta.peak_mib:.0f} MiB |"
    )
    print(
        f"| `check-jsonschema --schemafile` per tool ({sample} sampled) | "
        f"{instances:.3f} s each | {max(s.peak_mib for s in per_tool):.0f} MiB |"
    )
    print(
        f"| check-jsonschema, metaschema + every tool's fixtures (multiplied out) | "
        f"{theirs:.1f} s | |"
    )
    print()
    alone = ours.seconds / meta.seconds
    print(f"schemawire check / check-jsonschema metaschema alone: {alone:.2f}x")
    print(
        f"schemawire check / check-jsonschema whole job: {ours.seconds / theirs:.4f}x "
        f"({theirs / ours.seconds:.0f}x faster)"
    )
    print()
    print(f"| parse one schema ({schemas[0].stat().st_size} bytes) | median | x orjson |")
    print("|---|---:|---:|")
    for name, micros in floor.items():
        print(f"| `{name}` | {micros:.1f} µs | {micros / floor['orjson.loads']:.1f}x |")
