"""``schemawire ui`` as a user starts it: the URL it prints opens the page; Ctrl-C stops it; a
port in use is an error that says what to do."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx
import pytest

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")


@pytest.mark.slow
def test_the_printed_url_opens_the_page_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    with subprocess.Popen(
        [SCHEMAWIRE, "ui", "--traces", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        try:
            first = process.stdout.readline()  # printed once the socket is bound
            found = URL.search(first)
            assert found, first
            url = found.group(0)
            opened = httpx.get(url, timeout=10, follow_redirects=True)
            assert opened.status_code == 200
            assert "<title>Runs" in opened.text
            assert httpx.get(url.split("?")[0], timeout=10).status_code == 403
        finally:
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert out.rstrip().endswith("stopped.")


@pytest.mark.slow
def test_a_port_in_use_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [SCHEMAWIRE, "ui", "--traces", str(tmp_path), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--port 0" in result.stderr


def test_ui_help_shows_examples() -> None:
    result = subprocess.run(
        [SCHEMAWIRE, "ui", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    assert "schemawire ui --repo examples/support-desk --open" in result.stdout
    assert "127.0.0.1" in result.stdout


def test_a_repository_that_is_not_there_is_refused_with_what_to_do(tmp_path: Path) -> None:
    result = subprocess.run(
        [SCHEMAWIRE, "ui", "--repo", str(tmp_path / "nope"), "--traces", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "no such folder" in result.stderr
    assert "schemawire init --blank" in result.stderr
