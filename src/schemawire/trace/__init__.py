"""Every hop traced as JSON: `Trace` records them (in memory and as JSON Lines), `read_trace`
reads a trace file back."""

from __future__ import annotations

from schemawire.trace.recorder import Trace, read_trace

__all__ = ["Trace", "read_trace"]
