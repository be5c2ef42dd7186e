"""``make bench``: every benchmark, each beside its peers in the same run.

    python -m bench.run                      # both
    python -m bench.run --only projection    # one

1. check (`bench/check.py`): ``schemawire check`` over 1,000 generated tool schemas with 3
   fixtures each, beside check-jsonschema; parsing one schema file beside orjson and json.
2. projection (`bench/projection.py`): 5,000 tools projected to every target, beside
   langchain-core's and the OpenAI Agents SDK's strict converters (in bench/.work/peers-venv).

Medians of several runs; the machine is small and shared, so read the ratios.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench import check, projection

WORK = Path(__file__).parent / ".work"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["check", "projection"])
    parser.add_argument("--tools", type=int, default=1000, help="check: generated tools")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20, help="tools timed for check-jsonschema")
    parser.add_argument("--projected", type=int, default=5000, help="projection: tools")
    options = parser.parse_args()
    WORK.mkdir(exist_ok=True)
    if options.only in (None, "check"):
        check.run(WORK, options.tools, options.runs, options.sample)
        print()
    if options.only in (None, "projection"):
        print_projection(*projection.run(WORK, options.projected, options.runs))


def print_projection(rows: list[projection.Row], real: int) -> None:
    ours = next(row for row in rows if row.label == "schemawire openai.chat strict=True")
    print()
    print(
        f"| converter ({rows[0].outputs} tools) | µs/tool | tools/s | x ours (openai strict) "
        f"| refused | break the target's rules | of the {real} real tools | changes reported |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        reported = "none" if row.reported is None else f"{row.reported}"
        print(
            f"| {row.label} | {row.micros:.1f} | {1e6 / row.micros:,.0f} | "
            f"{row.micros / ours.micros:.2f}x | {row.refused} | {row.rule_breaking} | "
            f"{row.rule_breaking_real} | {reported} |"
        )
    print()
    print(
        "| OpenAI strict output | break strict rules | names refused | optional made "
        "required, no null | maps closed empty | refused |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    strict = [row for row in rows if row.reported is None or row is ours]
    for row in strict:
        print(
            f"| {row.label} | {row.rule_breaking} | {row.bad_names} | "
            f"{row.optional_required} | {row.maps_closed} | {row.refused} |"
        )
    print()
    labels = " | ".join(row.label for row in strict)
    print(f"| tools breaking each OpenAI strict rule | {labels} |")
    print("|---|" + "---:|" * len(strict))
    broken = {rule for row in strict for rule in row.rules}
    for rule in sorted(broken, key=lambda r: (-max(row.rules[r] for row in strict), r)):
        print(f"| `{rule}` | " + " | ".join(str(row.rules[rule]) for row in strict) + " |")


if __name__ == "__main__":
    main()
