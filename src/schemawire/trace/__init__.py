"""Every hop traced as JSON: `Trace` records them (in memory and as JSON Lines), `read_trace`
reads a trace file back, `record_verdicts` adds the gates' verdicts as hops and
`record_shortlist` a shortlist decision; one id per run (`new_run_id`), and by default one file
per run (`trace_path`)."""

from __future__ import annotations

from schemawire.trace.recorder import (
    TRACES,
    Trace,
    new_run_id,
    read_trace,
    record_shortlist,
    record_verdicts,
    trace_path,
)

__all__ = [
    "TRACES",
    "Trace",
    "new_run_id",
    "read_trace",
    "record_shortlist",
    "record_verdicts",
    "trace_path",
]
