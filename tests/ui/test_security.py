"""The page answers only its own launch, at its own address (HTTP, no browser needed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from schemawire.ui._security import TOKEN_HEADER, cookie_name
from schemawire.ui.server import LocalServer


@pytest.fixture
def server(ui_server: Callable[..., LocalServer]) -> LocalServer:
    return ui_server()


def get(server: LocalServer, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(server.base + path, timeout=5, follow_redirects=False, **kwargs)


def test_without_the_token_every_page_is_refused(server: LocalServer) -> None:
    for path in ("/", "/toolbox", "/static/common.js", "/api/runs"):
        answer = get(server, path)
        assert answer.status_code == 403, path
        assert "schemawire ui" in answer.json()["error"]["message"]


def test_the_token_in_the_url_sets_a_cookie_and_leaves_the_url(server: LocalServer) -> None:
    answer = get(server, f"/toolbox?token={server.config.token}&x=1")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/toolbox?x=1"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{cookie_name(server.port)}={server.config.token};")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    again = get(server, "/toolbox", cookies={cookie_name(server.port): server.config.token})
    assert again.status_code == 200
    assert "text/html" in again.headers["content-type"]


def test_a_wrong_token_is_refused(server: LocalServer) -> None:
    assert get(server, "/?token=guess").status_code == 403
    assert get(server, "/", headers={TOKEN_HEADER: "guess"}).status_code == 403


def test_another_host_name_is_refused_whatever_the_token(server: LocalServer) -> None:
    # DNS rebinding: evil.example resolves to 127.0.0.1, and the browser sends its name.
    headers = {"host": f"evil.example:{server.port}", TOKEN_HEADER: server.config.token}
    assert get(server, "/", headers=headers).status_code == 421
    local = {"host": f"localhost:{server.port}", TOKEN_HEADER: server.config.token}
    assert get(server, "/", headers=local).status_code == 200


def test_every_answer_carries_the_content_security_policy(server: LocalServer) -> None:
    answer = get(server, "/", headers={TOKEN_HEADER: server.config.token})
    assert answer.headers["content-security-policy"].startswith("default-src 'self'")
    assert answer.headers["x-content-type-options"] == "nosniff"
    refused = get(server, "/")
    assert refused.headers["content-security-policy"].startswith("default-src 'self'")


def test_a_write_must_be_json_from_this_page(server: LocalServer) -> None:
    token = {TOKEN_HEADER: server.config.token}
    form = httpx.post(
        server.base + "/api/toolbox/format", data={"text": "{}"}, headers=token, timeout=5
    )
    assert form.status_code == 403
    elsewhere = httpx.post(
        server.base + "/api/toolbox/format",
        json={"text": "{}"},
        headers={**token, "origin": "http://evil.example"},
        timeout=5,
    )
    assert elsewhere.status_code == 403


def test_the_server_listens_on_127_0_0_1_only(server: LocalServer) -> None:
    assert server.base.startswith("http://127.0.0.1:")
    assert server._socket.getsockname()[0] == "127.0.0.1"


def test_an_unexpected_failure_is_still_a_json_error(
    ui_server: Callable[..., LocalServer], tmp_path: Path
) -> None:
    # A repository that went away under a running page: its file list cannot be read.
    server = ui_server(repo=tmp_path / "gone")
    answer = get(server, "/api/toolbox/files", headers={TOKEN_HEADER: server.config.token})
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error["code"] == "internal"
    assert error["message"].startswith("the page's server failed: ")
    assert "Traceback" not in answer.text
