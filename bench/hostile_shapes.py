"""The worst-shape inputs of `bench/hostile.py`: for each secret detector and each walk of the
gates, an input built to make it work hardest, at a given size in bytes.

A shape is a function of the size that returns a `Probe`: a thunk that runs the input through
the gate (or the redactor) and what it gave, so that building the input is not timed.

Detector shapes are made from the detectors of `default_redactor` as they are (so the bench
follows ``secrets.json`` when it changes): for each detector, its first trigger repeated with
spaces and without, plus the shapes known to be hard for particular kinds (``url_password``:
``"a." * n + " ://"``; ``private_key``: BEGIN headers without an END; ``basic_auth``: one
scheme word before a long run the look-ahead scans), and texts that are a match every few
bytes, each hiding a part of what it matches (``"a://b:c@" * n``, ``"password=abcdefgh " *
n``): the cost of a match. ``one trigger word`` is a megabyte of prose with a single trigger in
the middle: the cost of the patterns per byte.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, NamedTuple

from schemawire.gates import ArgumentGate, McpResult, ResultGate, default_redactor
from schemawire.gates._truncate import size_of
from schemawire.types import ToolSpec

__all__ = ["DETECTOR_SHAPES", "WALK_SHAPES", "Probe", "detector_shapes"]


class Probe(NamedTuple):
    """An input ready to run: its size in bytes of JSON, and the run (what it returns: the
    outcome, and the size of what the model would read)."""

    size: int
    run: Callable[[], tuple[str, int | None]]


Shape = Callable[[int], Probe]

# --- detectors ------------------------------------------------------------------------------


def _redacted(text: str) -> Probe:
    def run() -> tuple[str, int | None]:
        redacted, changes = default_redactor().value(text)
        return f"{len(changes)} redacted", len(redacted)

    return Probe(len(text), run)


def _repeated(piece: str, size: int) -> str:
    return piece * max(1, size // len(piece))


def _numbered(template: str, size: int) -> str:
    """``template`` with 0, 1, 2... (in hex) until about ``size`` characters: matches that
    each hide a different part."""
    pieces, total, number = [], 0, 0
    while total < size:
        piece = template.format(f"{number:x}")
        pieces.append(piece)
        total += len(piece)
        number += 1
    return "".join(pieces)


_KNOWN_HARD: dict[str, dict[str, Callable[[int], str]]] = {
    "url_password": {
        '"a." * n + " ://"': lambda size: _repeated("a.", size - 4) + " ://",
        '"a://b:" * n': lambda size: _repeated("a://b:", size),
        '"a://b:c@" * n, a match every 8 bytes': lambda size: _repeated("a://b:c@", size),
        '"a://b:<n>@", each hidden part new': lambda size: _numbered("a://b:{}@", size),
    },
    "private_key": {
        "BEGIN headers, no END": lambda size: _repeated("-----BEGIN RSA PRIVATE KEY-----\n", size),
        "one BEGIN, no END, no base64": lambda size: (
            "-----BEGIN PRIVATE KEY-----" + _repeated("! ", size - 27)
        ),
    },
    "basic_auth": {
        '"Basic " + "A" * n': lambda size: "Basic " + "A" * (size - 6),
        '"basic AAAAAAAAAAAAAAAA " * n': lambda size: _repeated("basic AAAAAAAAAAAAAAAA ", size),
    },
    "password_assignment": {
        '"password=" * n': lambda size: _repeated("password=", size),
        '"password: " + "x" * n': lambda size: "password: " + "x" * (size - 10),
        '"password=abcdefgh " * n': lambda size: _repeated("password=abcdefgh ", size),
        '"password=a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p " * n': lambda size: _repeated(
            "password=a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p ", size
        ),
    },
    "aws_secret_access_key": {
        '"secret_access_key=" * n': lambda size: _repeated("secret_access_key=", size),
    },
    "bearer": {
        '"bearer " * n': lambda size: _repeated("bearer ", size),
        '"Bearer abcdefghijklmnop " * n': lambda size: _repeated("Bearer abcdefghijklmnop ", size),
    },
}


def detector_shapes() -> dict[str, Shape]:
    """Every detector shape, by ``"<kind>: <shape>"``."""
    shapes: dict[str, Shape] = {}
    for detector in default_redactor().detectors:
        trigger = detector.triggers[0] if detector.triggers else detector.kind
        builders: dict[str, Callable[[int], str]] = {
            f"{trigger!r} repeated with spaces": lambda size, t=trigger: _repeated(t + " ", size),
            f"{trigger!r} repeated": lambda size, t=trigger: _repeated(t, size),
            **_KNOWN_HARD.get(detector.kind, {}),
        }
        for label, build in builders.items():
            shapes[f"{detector.kind}: {label}"] = lambda size, b=build: _redacted(b(size))
    shapes["all: one trigger word in prose"] = _one_trigger
    return shapes


def _one_trigger(size: int) -> Probe:
    prose = _repeated("the quick brown fox jumps over the lazy dog. ", size // 2)
    return _redacted(prose + "password " + prose)


DETECTOR_SHAPES = detector_shapes

# --- walks ----------------------------------------------------------------------------------

_ORDER = ToolSpec(
    "refund",
    {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "notes": {"type": "array", "items": {"type": "string"}},
            "data": {},
        },
        "additionalProperties": False,
    },
)
_NO_OUTPUT_SCHEMA = ToolSpec("report", {"type": "object"})


def _arguments(value: Any, size: int) -> Probe:
    gate = ArgumentGate(_ORDER)

    def run() -> tuple[str, int | None]:
        verdict = gate.check(value)
        rejection = verdict.rejection
        return ("accepted" if rejection is None else rejection.code), None

    return Probe(size, run)


def _result(result: Any, size: int) -> Probe:
    gate = ResultGate(_NO_OUTPUT_SCHEMA)

    def run() -> tuple[str, int | None]:
        verdict = gate.check(result)
        rejection = verdict.rejection
        shown = verdict.value.content if verdict.value is not None else None
        outcome = "accepted" if rejection is None else rejection.code
        cut = " (cut)" if any(change.kind == "truncated" for change in verdict.changes) else ""
        return outcome + cut, size_of(shown) if shown is not None else None

    return Probe(size, run)


def members(size: int) -> Probe:
    """A result ``{"order-0": 0, ..., "order-N": N}`` over the budget (no output schema)."""
    count = size // 20
    return _result({f"order-{i}": i for i in range(count)}, size)


def array_argument(size: int) -> Probe:
    """``{"order_id": [0] * N}``, already parsed (as MCP arguments arrive)."""
    return _arguments({"order_id": [0] * (size // 2)}, size)


def shared_references(size: int) -> Probe:
    """``x = [0]; x = [x, x]`` doubled until its JSON is about ``size`` bytes: a few dozen
    objects, a tree of millions of leaves."""
    value: Any = [0]
    doublings = 0
    while 4 * 2**doublings < size:
        value = [value, value]
        doublings += 1
    return _arguments({"data": value}, 4 * 2**doublings)


def long_strings(size: int) -> Probe:
    """Strings of the longest allowed length (100,000 characters), as many as fill ``size``."""
    count = max(1, size // 100_000)
    return _arguments({"notes": ["x" * 100_000 for _ in range(count)]}, count * 100_003)


def encoded_array(size: int) -> Probe:
    """``{"tags": "<JSON of an array>"}``, the string as long as the limit on strings allows
    (about 50,000 items) whatever ``size``: decode_strings turns it into an array."""
    items = min(size // 2, 99_998 // 2)
    text = json.dumps([0] * items, separators=(",", ":"))
    return _arguments({"tags": text}, len(text) + 12)


def text_blocks(size: int) -> Probe:
    """Blocks of 1,000 characters of text, as many as fill ``size``."""
    blocks = [{"type": "text", "text": "x" * 1000} for _ in range(max(1, size // 1000))]
    return _result(McpResult(blocks), size)


def image_block(size: int) -> Probe:
    """One image block of ``size`` bytes of base64."""
    data = base64.b64encode(b"\x89PNG" * (size * 3 // 16)).decode()
    return _result(McpResult([{"type": "image", "data": data, "mimeType": "image/png"}]), size)


def resource_block(size: int) -> Probe:
    """One embedded resource block of ``size`` characters of text."""
    resource = {"uri": "file:///report.txt", "mimeType": "text/plain", "text": "x" * size}
    return _result(McpResult([{"type": "resource", "resource": resource}]), size)


WALK_SHAPES: dict[str, Shape] = {
    'result gate: {"order-0": 0, ..., "order-N": N}, no output schema': members,
    'argument gate: {"order_id": [0] * N}, parsed': array_argument,
    "argument gate: shared references x = [x, x]": shared_references,
    "argument gate: strings of 100,000 characters": long_strings,
    'argument gate: {"tags": "<JSON array>"}, decode_strings': encoded_array,
    "result gate: text blocks of 1,000 characters": text_blocks,
    "result gate: one image block": image_block,
    "result gate: one resource block": resource_block,
}
