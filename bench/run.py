"""``make bench``: every benchmark, each beside its peers in the same run.

    python -m bench.run                      # all of them
    python -m bench.run --only projection    # one

1. check (`bench/check.py`): ``schemawire check`` over 1,000 generated tool schemas with 3
   fixtures each, beside check-jsonschema; parsing one schema file beside orjson and json.
2. projection (`bench/projection.py`): 5,000 tools projected to every target, beside
   langchain-core's and the OpenAI Agents SDK's strict converters (in bench/.work/peers-venv).
3. gates (`bench/gates.py`): the argument gate beside the raw floor, python-jsonschema, pydantic
   and fastjsonschema; the result gate on a 100 KB result; redaction recall on the test corpus.
   With it, redaction (`bench/redaction.py`, ``--only redaction``): each detector's worst-shape
   input at 1 and 10 MB, and recall per placement of a secret in a result.
4. loop (`bench/loop.py`): the host loop's cost per tool call (scripted model, a no-op tool),
   200 calls one per turn and 50 in one turn, beside Pydantic AI and the OpenAI Agents SDK.
5. checkpoints (`bench/checkpoints.py`): checkpoints/s of a 2 KB state, validation on and off,
   on SQLite (synchronous FULL and NORMAL) and PostgreSQL (one writer, 10 threads), beside
   LangGraph's SqliteSaver and PostgresSaver (in bench/.work/peers-venv).
6. mcp (`bench/mcp_calls.py`): 1,000 sequential echo calls to server-everything over stdio:
   the SDK's bare ClientSession, schemawire's client (trace on and off), an SDK-only proxy,
   and schemawire's gating proxy.
   With it, gateway (`bench/gateway.py`, ``--only gateway``): echo calls through the gateway
   over three npm servers, and through its ``--shortlist`` call_tool, beside the proxy.
7. startup (`bench/startup.py`): whole-process time of ``--version``, ``--help``, ``check``,
   ``eval`` and ``call --url``, beside the bare interpreter, ``import schemawire`` and
   check-jsonschema on one file.
8. hostile (`bench/hostile.py`): the worst shape of each secret detector and gate walk at 1 and
   10 MB, and other clients' latency during a worst-case request, beside a bare SDK server.
9. load (`bench/load.py`): small calls from 1, 8 and 32 clients against ``serve --http``, the
   gating proxy and a bare SDK server: calls/s, p50, p99, errors, each server's memory growth.
10. shortlist (`bench/shortlist.py`): recall@1/3/5/10, all-gold@10, MRR@10 and query latency on
    the BFCL retrieval set (`bench/shortlist_sets.py`), ``ToolIndex`` beside Pydantic-AI-style
    keyword overlap and FastMCP-style BM25 reimplemented on the same catalogue; then
    (`bench/shortlist_user.py`) the user-style set over ten MCP servers, and the semantic
    extra alone and fused with BM25 on both sets.
11. ui (`bench/ui.py`): a generated 100,000-hop trace with spans in Debian's chromium: from
    navigation to the Run page's first screen, from typing a query to its results; the server's
    index (cold, and after the file grew), its search and its memory per hop.
12. integrations (`bench/integrations_pydantic_ai.py`, `integrations_openai_agents.py`,
    `integrations_langchain.py`): each framework per tool call with its own tool and with ours
    (both gates, a tool span), the same scripted conversation, and each tool invoker alone.
13. otel (`bench/otel.py`): what live OpenTelemetry export adds per hop, batch processor on.
14. soak (`bench/soak.py`, only with ``--only soak``: it runs 30 minutes): mixed traffic
    against ``serve --http`` and the proxy, memory sampled every 10 s.

Medians of several runs; the machine is small and shared, so read the ratios.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from bench import (
    check,
    checkpoints,
    gates,
    gateway,
    hostile,
    load,
    loop,
    mcp_calls,
    otel,
    projection,
    redaction,
    shortlist,
    shortlist_sets,
    shortlist_user,
    soak,
    startup,
    ui,
)

WORK = Path(__file__).parent / ".work"
DEFAULT = (
    "check",
    "projection",
    "gates",
    "redaction",
    "loop",
    "checkpoints",
    "mcp",
    "startup",
    "hostile",
    "load",
    "gateway",
    "shortlist",
    "ui",
    "integrations",
    "otel",
)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    # Unwind, so that the servers the benches started are stopped (`bench.serving`) rather than
    # left running when the bench is killed with SIGTERM.
    sys.exit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        choices=[*DEFAULT, "soak"],
        help="one benchmark (soak runs only when named: 30 minutes)",
    )
    parser.add_argument("--tools", type=int, default=1000, help="check: generated tools")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20, help="tools timed for check-jsonschema")
    parser.add_argument("--projected", type=int, default=5000, help="projection: tools")
    parser.add_argument("--calls", type=int, default=1000, help="mcp: echo calls per round")
    parser.add_argument("--starts", type=int, default=15, help="startup: runs of each command")
    parser.add_argument(
        "--shortlist-scale",
        type=int,
        default=1,
        help="shortlist: the catalogue times N with renamed copies (times only; 4 = 9,620 tools)",
    )
    hostile.add_options(parser)
    load.add_options(parser)
    soak.add_options(parser)
    options = parser.parse_args()
    options.sizes = tuple(options.sizes)
    WORK.mkdir(exist_ok=True)
    if options.only in (None, "check"):
        check.run(WORK, options.tools, options.runs, options.sample)
        print()
    if options.only in (None, "projection"):
        print_projection(*projection.run(WORK, options.projected, options.runs))
        print()
    if options.only in (None, "gates"):
        print_gates(options.runs)
        print()
    if options.only in (None, "redaction"):
        redaction.print_table()
        print()
    if options.only in (None, "loop"):
        loop.print_table(loop.run(WORK, rounds=3))
        print()
    if options.only in (None, "checkpoints"):
        checkpoints.print_table(checkpoints.run(WORK, rounds=3))
        print()
    if options.only in (None, "mcp"):
        mcp_calls.print_table(mcp_calls.run(options.calls, rounds=3), options.calls)
        print()
    if options.only in (None, "startup"):
        startup.print_table(startup.run(WORK, options.starts), options.starts)
        print()
    if options.only in (None, "hostile"):
        hostile.run(WORK, options)
        print()
    if options.only in (None, "load"):
        servers = tuple(options.servers)
        rows, memory = load.run(
            WORK, tuple(options.clients), options.seconds, options.load_rounds, servers
        )
        load.print_table(rows, memory, options.seconds, options.load_rounds)
        print()
    _run_last(options)


def _run_last(options: argparse.Namespace) -> None:
    # The sections after load: the gateway and shortlist benches, and the soak only when named.
    if options.only in (None, "gateway"):  # bench/gateway.py: beside the one-upstream proxy
        gateway.print_table(gateway.run(options.calls, rounds=3), options.calls)
        print()
    if options.only in (None, "shortlist"):
        # The set as an evaluation file too, for `schemawire shortlist --eval` to read.
        shortlist_sets.write_jsonl(shortlist_sets.cases(), WORK / "shortlist-bfcl.jsonl")
        shortlist.print_table(*shortlist.run(options.shortlist_scale))
        shortlist_user.main()
    if options.only in (None, "ui"):
        ui.main()
        print()
    if options.only in (None, "integrations"):
        _run_integrations(options.runs)
    if options.only in (None, "otel"):
        otel.print_table(otel.run(options.runs))
        print()
    if options.only == "soak":
        flat = soak.print_report(*soak.run(WORK, options.minutes, options.every))
        sys.exit(0 if flat else 1)


def _run_integrations(rounds: int) -> None:
    # Imported here: each brings its framework (seconds of imports for the other sections).
    from bench import integrations_langchain, integrations_openai_agents, integrations_pydantic_ai

    for bench in (integrations_pydantic_ai, integrations_openai_agents, integrations_langchain):
        bench.print_table(bench.run(rounds))
        print()


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
    _projection_goals(rows)
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


def _projection_goals(rows: list[projection.Row]) -> None:
    """Issue 17's goals: strict at or below the fastest peer's strict converter, and within 2x
    of the same target's non-strict time (Responses against Chat's: it has no non-strict row)."""
    by_label = {row.label: row for row in rows}
    peer = min((row for row in rows if row.reported is None), key=lambda row: row.micros)
    pairs = [
        ("openai.chat", "openai.chat"),
        ("openai.responses", "openai.chat"),
        ("anthropic", "anthropic"),
    ]
    for target, plain in pairs:
        strict = by_label[f"schemawire {target} strict=True"]
        loose = by_label[f"schemawire {plain} strict=False"]
        ratio = strict.micros / peer.micros
        verdict = "met" if ratio <= 1 else "not met"
        print(
            f"goal {target} strict at or below the fastest peer ({peer.label}, "
            f"{peer.micros:.1f} µs): {strict.micros:.1f} µs, {ratio:.2f}x: {verdict}"
        )
        ratio = strict.micros / loose.micros
        verdict = "met" if ratio <= 2 else "not met"
        print(
            f"goal {target} strict within 2x of {plain} non-strict ({loose.micros:.1f} µs): "
            f"{ratio:.2f}x: {verdict}"
        )


def print_gates(runs: int) -> None:
    print("argument gate: arguments as a JSON string, median µs per call", flush=True)
    rows = gates.run_arguments(runs)
    for case in dict.fromkeys(row[0] for row in rows):
        for kind in ("valid", "invalid"):
            timed = {label: us for name, k, label, us in rows if name == case and k == kind}
            anchor_label = next(
                label
                for label in timed
                if label.startswith("floor:" if kind == "valid" else "floor, every error")
            )
            anchor = timed[anchor_label]
            print()
            print(f"| {case}, {kind} | µs | x anchor |")
            print("|---|---:|---:|")
            for label, micros in timed.items():
                mark = " (anchor)" if label == anchor_label else ""
                print(f"| {label}{mark} | {micros:.2f} | {micros / anchor:.2f}x |")
    print()
    print("| refund arguments, by form and option | µs per call |")
    print("|---|---:|")
    for label, micros in gates.run_options(runs).items():
        print(f"| {label} | {micros:.2f} |")
    results = gates.run_results(runs)
    print()
    print(f"| result gate, one {results.pop('size_kib'):.0f} KiB result | µs per call |")
    print("|---|---:|")
    for label, micros in results.items():
        print(f"| {label} | {micros:,.1f} |")
    whole = results["ResultGate: validate + redact + cut to 16 KiB"]
    verdict = "met" if whole < 1000 else "not met"
    print(
        f"goal, result gate: validate + redact + cut under 1 ms: {whole / 1000:.2f} ms "
        f"({whole / 1000:.2f}x the goal), {verdict}"
    )
    report = redaction.report()
    print()
    print(
        f"redaction on tests/data/secrets.json: {report['caught']}/{report['secrets']} secrets "
        f"caught (recall {report['recall']:.2f}), {len(report['false_positives'])} false "
        f"positives of {report['look_alikes']} look-alikes"
    )


if __name__ == "__main__":
    main()
