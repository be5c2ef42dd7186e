"""``schemawire trace export``: a recorded run's spans sent to an OpenTelemetry collector."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from schemawire.cli._output import EXIT_FINDINGS, fail, guarded, print_json, stdout

if TYPE_CHECKING:
    from schemawire.otel import OtlpExport

__all__ = ["live_export", "trace_app"]

_EXAMPLES = (
    "[bold]Examples[/]\n\n"
    "  schemawire trace export .schemawire/traces/RUN_ID.jsonl --otlp http://127.0.0.1:4318\n\n"
    "  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 schemawire trace export RUN.jsonl\n\n"
    "  schemawire trace export RUN.jsonl --otlp http://127.0.0.1:4318 --json"
)

trace_app = typer.Typer(
    name="trace",
    help="Recorded traces: send their spans to OpenTelemetry.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    epilog=_EXAMPLES,
)


@trace_app.command("export", epilog=_EXAMPLES)
@guarded
def export_command(
    files: Annotated[list[Path], typer.Argument(help="Trace files (JSON Lines).")],
    otlp: Annotated[
        str | None,
        typer.Option(
            "--otlp",
            metavar="URL",
            help="The collector's OTLP/HTTP URL (/v1/traces is added to a base URL); default: "
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT.",
        ),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Send each trace file's spans (run, turn, model, tool, MCP, with the GenAI and MCP
    semantic conventions and the gates' verdicts) over OTLP/HTTP. Content (messages,
    arguments, results) only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY,
    and always as the trace kept it: redacted. Exit 1 when the collector answered that it
    rejected spans (OTLP partial success)."""
    try:
        from schemawire.otel import export_file, traces_endpoint
    except ImportError:
        fail("OpenTelemetry is not installed: pip install 'schemawire[otel]'")
    endpoint = traces_endpoint(otlp)
    if endpoint is None:
        fail("no collector: pass --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT")
    sent = {str(path): export_file(path, endpoint) for path in files}
    if json:
        print_json(
            {
                "endpoint": endpoint,
                "spans": {path: done.spans for path, done in sent.items()},
                "rejected": {path: done.rejected for path, done in sent.items()},
            }
        )
    else:
        for path, done in sent.items():
            refused = f" ({done.rejected} rejected: {done.message})" if done.rejected else ""
            stdout.print(f"{path}: {done.spans} spans sent to {endpoint}{refused}")
    rejected = sum(done.rejected for done in sent.values())
    if rejected:
        fail(f"the collector rejected {rejected} spans", EXIT_FINDINGS)


def live_export(otlp: str | None) -> OtlpExport | None:
    """The live export a server's ``--otlp URL`` asks for, or the OTel environment does
    (``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, unless ``OTEL_SDK_DISABLED=true``); None when
    neither does.

    Raises:
        UsageError: --otlp was given but OpenTelemetry is not installed.
    """
    from schemawire.errors import UsageError

    wanted = otlp is not None or any(
        os.environ.get(name)
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    if not wanted or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return None
    try:
        from schemawire.otel import OtlpExport
    except ImportError as error:
        if otlp is None:  # only the environment asked: serve as before
            return None
        raise UsageError("--otlp needs OpenTelemetry: pip install 'schemawire[otel]'") from error
    return OtlpExport(otlp)
