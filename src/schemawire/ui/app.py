"""The local page's Starlette app: the pages (static HTML, CSS and JS shipped in the wheel),
their JSON API, and `LocalOnly` around both.

Each page owns a module that gives its API routes (`_runs`, `_diff`, `_toolbox`, `_tools`);
this module only puts them together. The Tools page's API also has a lifespan (its MCP session
and its calls outlive a request), which is the app's. Every answer of the API is JSON; an error is
``{"error": {"code", "message", ...}}`` with a 4xx status, as `schemawire.errors` words it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from schemawire.errors import InputError, SchemawireError, one_line
from schemawire.ui._config import UiConfig
from schemawire.ui._security import LocalOnly

__all__ = ["create_app"]


@dataclass(frozen=True, slots=True)
class Page:
    """One page: its path, its name (``static/<name>.js`` fills it, ``static/<name>.css``
    styles it), its title, and the scripts it loads before its own."""

    path: str
    name: str
    title: str
    scripts: tuple[str, ...] = ()


PAGES = (
    Page("/", "runs", "Runs"),
    Page("/run/{run_id}", "run", "Run"),
    Page("/diff", "diff", "Diff"),
    Page("/toolbox", "toolbox", "Toolbox"),
    Page("/tools", "tools", "Tools", scripts=("toolsform.js",)),
)
"""Every page, each one HTML document made from ``static/page.html``."""


def create_app(config: UiConfig) -> LocalOnly:
    """The page for ``config``, as an ASGI app (uvicorn serves it on 127.0.0.1)."""
    from schemawire.ui import _diff, _runs, _toolbox, _tools

    tools = _tools.ToolsApi(config)
    routes: list[BaseRoute] = [
        *(_page_route(page) for page in PAGES),
        *_runs.routes(config),
        *_diff.routes(config),
        *_toolbox.routes(config),
        *tools.routes(),
        Mount("/static", StaticFiles(directory=_static_folder()), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            SchemawireError: _schemawire_error,
            404: _not_found,
            Exception: _unexpected,
        },
        lifespan=tools.lifespan,
    )
    return LocalOnly(app, token=config.token)


def _static_folder() -> Path:
    folder = resources.files("schemawire.ui") / "static"
    return Path(str(folder))  # the wheel installs the package as files, never zipped


def _page_route(page: Page) -> Route:
    html = _page_html(page).encode("utf-8")

    async def endpoint(request: Request) -> Response:
        return Response(html, media_type="text/html", headers={"cache-control": "no-store"})

    return Route(page.path, endpoint, methods=["GET"], name=page.name)


def _page_html(page: Page) -> str:
    """``static/page.html`` for ``page``: its title, its stylesheet and scripts, its name (the
    navigation marks the current page by it)."""
    static = _static_folder()
    styles = [f"{page.name}.css"] if (static / f"{page.name}.css").is_file() else []
    scripts = [*page.scripts, f"{page.name}.js"]
    head = [
        *(f'<link rel="stylesheet" href="/static/{css}">' for css in styles),
        *(f'<script src="/static/{js}" defer></script>' for js in scripts),
    ]
    template = (static / "page.html").read_text(encoding="utf-8")
    return (
        template.replace("{title}", page.title)
        .replace("{page}", page.name)
        .replace("{head}", "\n".join(head))
    )


async def _schemawire_error(request: Request, error: Exception) -> Response:
    status = 400 if isinstance(error, InputError) else 500
    body = error.to_json() if isinstance(error, InputError) else {"message": one_line(error)}
    return JSONResponse({"error": body}, status_code=status)


async def _unexpected(request: Request, error: Exception) -> Response:
    """Any other failure: still JSON the page can show (the command's words, never a
    traceback), and a 500."""
    message = f"the page's server failed: {one_line(error)}"
    return JSONResponse({"error": {"code": "internal", "message": message}}, status_code=500)


async def _not_found(request: Request, error: Exception) -> Response:
    return JSONResponse(
        {"error": {"code": "not_found", "message": f"nothing at {request.url.path}"}},
        status_code=404,
    )
