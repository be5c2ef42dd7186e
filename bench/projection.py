"""Projection bench: the bench's tools to every target, beside the peers' strict converters.

For each target, the median time per tool over several passes, and, from the last pass, how
many payloads break the target's rules (the target checkers of `schemawire.project.checkers`,
written apart from the projection code). The peers' OpenAI strict converters run on the same
tools in their own environment (`bench/peers_strict.py`); their outputs go through the same
OpenAI checker, and through three checks of what a strict conversion can silently change:

- a tool name the API refuses (dots, spaces; over 64 characters), passed through;
- an optional parameter made required without letting it be null, so the model must invent one;
- a free-form map closed into an object that can only be empty.

The three checks walk properties and items from the root, following local ``$ref``s.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.corpus import Corpus, function_object, tool_corpus
from schemawire._json import dumps, loads
from schemawire.project import project
from schemawire.project._arguments import ArgumentMap
from schemawire.project.a2a import Agent, agent_card
from schemawire.project.checkers import Problem, check_payload
from schemawire.types import Projection, ToolSpec

PEERS_PYTHON = Path(__file__).parent / ".work/peers-venv/bin/python"
TARGETS: list[tuple[str, dict[str, Any]]] = [
    ("openai.chat", {"strict": True}),
    ("openai.chat", {"strict": False}),
    ("openai.responses", {"strict": True}),
    ("anthropic", {"strict": False}),
    ("anthropic", {"strict": True}),
    ("gemini", {}),
    ("gemini", {"openapi": True}),
    ("mcp", {}),
    ("mcp", {"version": "2025-06-18"}),
    ("a2a", {}),
]
OPENAI_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_DEPTH = 32  # the semantic walk follows $refs; recursive definitions stop here


@dataclass(frozen=True)
class Row:
    """One converter over all tools."""

    label: str
    micros: float
    outputs: int
    refused: int = 0
    rule_breaking: int = 0
    rule_breaking_real: int = 0  # of them, among the corpus's real tools
    bad_names: int = 0
    optional_required: int = 0
    maps_closed: int = 0
    reported: int | None = None
    rules: Counter[str] = field(default_factory=Counter)  # tools breaking each checker rule


def run(work: Path, size: int, runs: int) -> tuple[list[Row], int]:
    """Time every target and both peers on ``size`` tools, ``runs`` passes each: a row per
    converter, and how many of the tools are real."""
    corpus = tool_corpus(size)
    print(
        f"projecting {len(corpus.tools)} tools ({corpus.real} real) to {len(TARGETS)} targets, "
        f"{runs} passes each",
        flush=True,
    )
    rows = [_ours(corpus, target, options, runs) for target, options in TARGETS]
    return rows + _peers(work, corpus, runs), corpus.real


def _ours(corpus: Corpus, target: str, options: dict[str, Any], runs: int) -> Row:
    tools, times = corpus.tools, []
    for _ in range(runs):
        start = time.perf_counter()
        projections = [project(tool, target, **options) for tool in tools]
        times.append(time.perf_counter() - start)
    problems = [_problems(target, options, p) for p in projections]
    breaking = [bool(found) for found in problems]
    label = f"schemawire {target}" + "".join(f" {k}={v}" for k, v in options.items())
    row = Row(
        label,
        statistics.median(times) / len(tools) * 1e6,
        len(tools),
        refused=sum(p.blocked for p in projections),
        rule_breaking=sum(breaking),
        rule_breaking_real=sum(breaking[: corpus.real]),
        reported=sum(not p.lossless for p in projections),
        rules=_rule_counts(problems),
    )
    if target == "openai.chat" and options.get("strict"):
        pairs = zip(tools, projections, strict=True)
        row = _with_defects(row, [_defects(tool, p.payload, p.argument_map) for tool, p in pairs])
    print(f"  {row.label}: {row.micros:.1f} µs/tool", flush=True)
    return row


def _problems(target: str, options: dict[str, Any], projection: Projection) -> tuple[Problem, ...]:
    if target == "a2a":  # a skill is checked as part of an Agent Card
        return check_payload(target, agent_card([projection], Agent()))
    check_options = {"version": options["version"]} if "version" in options else {}
    return check_payload(target, projection.payload, **check_options)


def _peers(work: Path, corpus: Corpus, runs: int) -> list[Row]:
    if not PEERS_PYTHON.exists():
        raise SystemExit(f"the peers' environment is missing: {PEERS_PYTHON} (make bench makes it)")
    tools = corpus.tools
    source, result = work / "projection-tools.json", work / "projection-peers.json"
    source.write_text(dumps([function_object(tool) for tool in tools], indent=False))
    script = Path(__file__).parent / "peers_strict.py"
    subprocess.run(
        [str(PEERS_PYTHON), str(script), str(source), str(result), str(runs)],
        check=True,
        timeout=1800,
    )
    rows = []
    for label, report in loads(result.read_bytes()).items():
        outputs = report["outputs"]
        made = [(t, o) for t, o in zip(tools, outputs, strict=True) if "error" not in o]
        problems = [() if "error" in o else check_payload("openai.chat", o) for o in outputs]
        breaking = [bool(found) for found in problems]
        row = Row(
            f"{label} {report['version']}",
            report["micros"],
            len(tools),
            refused=len(tools) - len(made),
            rule_breaking=sum(breaking),
            rule_breaking_real=sum(breaking[: corpus.real]),
            rules=_rule_counts(problems),
        )
        rows.append(_with_defects(row, [_defects(t, o) for t, o in made]))
        print(f"  {rows[-1].label}: {report['micros']:.1f} µs/tool", flush=True)
    return rows


def _rule_counts(problems: list[tuple[Problem, ...]]) -> Counter[str]:
    return Counter(rule for found in problems for rule in {problem.rule for problem in found})


def _with_defects(row: Row, defects: list[set[str]]) -> Row:
    return replace(
        row,
        bad_names=sum("name" in d for d in defects),
        optional_required=sum("optional" in d for d in defects),
        maps_closed=sum("map" in d for d in defects),
    )


# --- what a strict conversion silently changed -------------------------------------------------


def _defects(tool: ToolSpec, payload: Any, arguments: ArgumentMap | None = None) -> set[str]:
    function = payload.get("function", {}) if isinstance(payload, dict) else {}
    found = set() if OPENAI_NAME.fullmatch(str(function.get("name", ""))) else {"name"}
    parameters = function.get("parameters")
    if isinstance(parameters, dict):
        comparison = _Comparison(_Side(tool.input_schema), _Side(parameters))
        found.update(comparison.walk(tool.input_schema, parameters, arguments))
    return found


@dataclass(frozen=True)
class _Side:
    """One schema document, to resolve its local ``$ref``s."""

    root: dict[str, Any]

    def resolve(self, schema: Any) -> Any:
        for _ in range(_MAX_DEPTH):
            if not (isinstance(schema, dict) and str(schema.get("$ref", "")).startswith("#")):
                return schema
            schema = self._pointer(schema["$ref"][1:])
        return schema

    def _pointer(self, pointer: str) -> Any:
        node: Any = self.root
        for part in filter(None, pointer.split("/")):
            key = part.replace("~1", "/").replace("~0", "~")
            node = node.get(key) if isinstance(node, dict) else None
        return node

    def accepts_null(self, schema: Any, depth: int = 0) -> bool:
        schema = self.resolve(schema)
        if schema is True or schema == {} or depth > _MAX_DEPTH:
            return True
        if not isinstance(schema, dict):
            return False
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if "null" not in types:
                return False
        if "enum" in schema and None not in schema["enum"]:
            return False
        if "const" in schema and schema["const"] is not None:
            return False
        unions = [schema[k] for k in ("anyOf", "oneOf") if isinstance(schema.get(k), list)]
        return all(any(self.accepts_null(b, depth + 1) for b in union) for union in unions)


@dataclass(frozen=True)
class _Comparison:
    """The canonical schema beside what a converter made of it."""

    canonical: _Side
    projected: _Side

    def walk(self, c: Any, p: Any, arguments: ArgumentMap | None, depth: int = 0) -> Iterator[str]:
        c, p = self.canonical.resolve(c), self.projected.resolve(p)
        if depth > _MAX_DEPTH or not isinstance(c, dict) or not isinstance(p, dict):
            return
        if _is_map(c) and p.get("additionalProperties") is False and not p.get("properties"):
            yield "map"
        projected_keys = {v: k for k, v in arguments.renames.items()} if arguments else {}
        for key, child in (c.get("properties") or {}).items():
            key_p = projected_keys.get(key, key)
            child_p = (p.get("properties") or {}).get(key_p)
            if child_p is None:
                continue
            if self._made_required(c, key, p, key_p):
                yield "optional"
            inner = arguments.properties.get(key) if arguments else None
            yield from self.walk(child, child_p, inner, depth + 1)
        if isinstance(c.get("items"), dict) and isinstance(p.get("items"), dict):
            inner = arguments.items if arguments else None
            yield from self.walk(c["items"], p["items"], inner, depth + 1)

    def _made_required(self, c: dict[str, Any], key: str, p: dict[str, Any], key_p: str) -> bool:
        """An optional property now required, with null refused on both sides."""
        return (
            key not in c.get("required", ())
            and key_p in p.get("required", ())
            and not self.projected.accepts_null(p["properties"][key_p])
            and not self.canonical.accepts_null(c["properties"][key])
        )


def _is_map(schema: dict[str, Any]) -> bool:
    """An object that takes keys it does not name."""
    objectish = schema.get("type") == "object" or "additionalProperties" in schema
    return (
        objectish and "properties" not in schema and schema.get("additionalProperties") is not False
    )
