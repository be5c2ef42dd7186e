"""Serving the page: a socket on 127.0.0.1 (never another address), uvicorn on it, the URL
with this launch's token.

`LocalServer` binds first, so the URL is known (and printed) before the first request, and a
port already in use is an error at once. The command line runs it in the foreground
(`LocalServer.run`); tests and the demo run it in a thread (`LocalServer.running`).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import uvicorn

from schemawire.errors import UsageError
from schemawire.ui._config import UiConfig
from schemawire.ui._security import new_token
from schemawire.ui.app import create_app

__all__ = ["HOST", "LocalServer"]

HOST = "127.0.0.1"
STARTUP_SECONDS = 10.0  # a thread's server that has not started by then never will


class LocalServer:
    """The page for ``config`` on ``127.0.0.1:port`` (0: a free port)."""

    def __init__(self, config: UiConfig, port: int = 0) -> None:
        self.config = config if config.token else replace(config, token=new_token())
        self._socket = _bound(port)
        self.port: int = self._socket.getsockname()[1]
        self._server = _Server(
            uvicorn.Config(
                create_app(self.config),
                log_level="warning",
                access_log=False,
                lifespan="on",  # the Tools page's MCP session lives in it (app.py)
                timeout_graceful_shutdown=2,
            )
        )

    @property
    def url(self) -> str:
        """The page's address, with the token that opens it."""
        return f"http://{HOST}:{self.port}/?token={self.config.token}"

    @property
    def base(self) -> str:
        """The page's address, without the token."""
        return f"http://{HOST}:{self.port}"

    def run(self) -> None:
        """Serve until interrupted (Ctrl-C)."""
        self._server.run(sockets=[self._socket])

    @contextmanager
    def running(self) -> Iterator[LocalServer]:
        """Serve in a thread while the block runs; stopped (and waited for) on the way out.

        Raises:
            RuntimeError: the server did not start within `STARTUP_SECONDS`.
        """
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        try:
            if not self._server.ready.wait(STARTUP_SECONDS) or not self._server.started:
                raise RuntimeError("the page's server did not start")
            yield self
        finally:
            self._server.should_exit = True
            thread.join(STARTUP_SECONDS)


class _Server(uvicorn.Server):
    """uvicorn's server, which says when its startup is over (started, or failed to)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


def _bound(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port``.

    Raises:
        UsageError: the port is taken or not ours to use.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as error:
        sock.close()
        raise UsageError(
            f"cannot listen on {HOST}:{port} ({error.strerror}); "
            "choose another with --port, or --port 0 for any free port"
        ) from error
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
