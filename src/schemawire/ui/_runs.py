"""The Runs page's API: every ``*.jsonl`` trace under the traces folder (and its subfolders),
newest first, each with a summary (status, models, tools, counts), and the signature the page
polls to see new and growing traces without reloading.

A summary is cached by (path, size, mtime), so a folder of hundreds of traces lists from file
stats alone once read; a trace that grows is indexed on from where it stopped
(`schemawire.ui._run_folder`, `schemawire.ui._trace_index`). The Run page's routes are in
`schemawire.ui._run`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from schemawire.ui import _run
from schemawire.ui._run_folder import TraceFolder

if TYPE_CHECKING:
    from schemawire.ui._config import UiConfig

__all__ = ["routes"]


def routes(config: UiConfig) -> list[BaseRoute]:
    """The Runs page's API routes, and the Run page's (`schemawire.ui._run`)."""
    folder = TraceFolder(config.traces)

    async def listing(request: Request) -> Response:
        since = request.query_params.get("since")
        return JSONResponse(await run_in_threadpool(_listing, folder, since))

    return [
        Route("/api/runs/list", listing, methods=["GET"]),
        *_run.routes(config, folder),
    ]


def _listing(folder: TraceFolder, since: str | None) -> dict[str, Any]:
    files = folder.files()
    signature = folder.signature(files)
    if since == signature:
        return {"signature": signature, "unchanged": True}
    runs = [folder.summary(path, stat) for path, stat in files]
    return {"signature": signature, "folder": str(folder.root), "runs": runs}
