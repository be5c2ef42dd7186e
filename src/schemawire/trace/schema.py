"""The trace format's JSON Schema, shipped as ``hop.schema.json``: one hop, one line."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

__all__ = ["hop_schema"]


def hop_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) every line of a trace file is valid against: the hop's members,
    the span hops' payloads precisely, every other payload open. A copy of its own for each
    caller."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


@functools.cache
def _schema_text() -> str:
    return resources.files("schemawire.trace").joinpath("hop.schema.json").read_text("utf-8")
