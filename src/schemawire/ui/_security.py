"""What keeps the local page local: it answers only to its own address, only with the token it
printed, and its pages load nothing from anywhere else.

- **Host header.** A page on another site can point a name it controls at 127.0.0.1 (DNS
  rebinding) and then read our answers as same-origin; a request whose ``Host`` is not
  ``127.0.0.1:<port>`` or ``localhost:<port>`` is refused (421), whatever its address.
- **The token.** Each launch makes a token and prints it in the URL. Opening that URL once
  sets a cookie (HttpOnly, SameSite=Strict, named by the port: cookies are not port-scoped)
  and redirects to the same page without the token, so it stays out of the history. Every
  other request needs the cookie or an ``X-Schemawire-Token`` header; without, 403.
- **Writes.** A POST must carry JSON (``Content-Type: application/json``, which a form on
  another site cannot send without asking first) and, when the browser says where it comes
  from (``Origin``), come from this page.
- **Headers.** ``Content-Security-Policy: default-src 'self'`` (no inline script or style, no
  other host, no frames), ``nosniff``, no referrer, no framing.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["TOKEN_HEADER", "LocalOnly", "cookie_name", "new_token"]

TOKEN_HEADER = "x-schemawire-token"

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def new_token() -> str:
    """A fresh per-launch token (32 URL-safe characters)."""
    return secrets.token_urlsafe(24)


def cookie_name(port: int) -> str:
    """The token cookie of the page on ``port`` (two launches on two ports keep apart)."""
    return f"schemawire_token_{port}"


class LocalOnly:
    """ASGI middleware: refuses what is not for this launch's page, adds the security headers
    to every answer."""

    def __init__(self, app: ASGIApp, *, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        port = _port(scope)
        headers = _headers(scope)
        if headers.get("host", "") not in _allowed_hosts(port):
            await _refuse(send, 421, "This page answers only at 127.0.0.1 or localhost.")
            return
        given = _query_token(scope)
        if given is not None and self._matches(given):
            await _redirect_setting_cookie(scope, send, port, self.token)
            return
        if not self._authorised(headers, port):
            await _refuse(
                send,
                403,
                "Open the URL that `schemawire ui` printed: it carries this launch's token.",
            )
            return
        if scope["method"] not in {"GET", "HEAD"} and not _safe_write(headers, port):
            await _refuse(send, 403, "Writes must be JSON sent from this page.")
            return
        await self.app(scope, receive, _with_security_headers(send))

    def _matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _authorised(self, headers: dict[str, str], port: int) -> bool:
        header = headers.get(TOKEN_HEADER)
        if header is not None and self._matches(header):
            return True
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no token
            return False
        morsel = cookies.get(cookie_name(port))
        return morsel is not None and self._matches(morsel.value)


def _port(scope: Scope) -> int:
    server = scope.get("server")
    return int(server[1]) if server and server[1] is not None else 80


def _headers(scope: Scope) -> dict[str, str]:
    return {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}


def _allowed_hosts(port: int) -> set[str]:
    return {f"127.0.0.1:{port}", f"localhost:{port}"}


def _safe_write(headers: dict[str, str], port: int) -> bool:
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    origin = headers.get("origin")
    same_origin = origin is None or origin in {f"http://{host}" for host in _allowed_hosts(port)}
    return content_type == "application/json" and same_origin


def _query_token(scope: Scope) -> str | None:
    for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
        if key == "token":
            return str(value)
    return None


async def _redirect_setting_cookie(scope: Scope, send: Send, port: int, token: str) -> None:
    """303 to the same path and query, less the token, with the token as a cookie."""
    kept = [
        (key, value)
        for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        if key != "token"
    ]
    location = scope["path"] + (f"?{urlencode(kept)}" if kept else "")
    cookie = f"{cookie_name(port)}={token}; Path=/; HttpOnly; SameSite=Strict"
    await _answer(
        send, 303, b"", [(b"location", location.encode()), (b"set-cookie", cookie.encode())]
    )


async def _refuse(send: Send, status: int, message: str) -> None:
    body = f'{{"error": {{"code": "ui_refused", "message": "{message}"}}}}'.encode()
    await _answer(send, status, body, [(b"content-type", b"application/json")])


async def _answer(
    send: Send, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, *SECURITY_HEADERS, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await send(message)

    return sending
