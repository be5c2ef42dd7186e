"""A throwaway PostgreSQL server for the tests, started from the machine's binaries, and its
fixtures: ``postgres_server`` (one per session) and ``postgres_url`` (a fresh schema per test).
The root conftest brings them in with ``pytest_plugins = ["tests.store.postgres_server"]``;
psycopg is imported only once a test asks for a server.

PostgreSQL refuses to run as root (initdb and postgres both exit). CI and the developers'
machines run the tests as root, so there the server runs as the unprivileged ``nobody``: its
directory (data, log and unix socket, all in one temporary directory) is handed to that account
and every server command is started as it (``subprocess``'s ``user=``, no su or sudo). The tests
connect over TCP on 127.0.0.1 with ``trust`` authentication, so the account does not matter to
them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

UNPRIVILEGED = "nobody"
START_SECONDS = 30
STOP_SECONDS = 30
SETTINGS = (  # a test server: durability is not what the tests measure
    "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
    "-c full_page_writes=off -c max_connections=60"
)


class PostgresStartError(RuntimeError):
    """The server cannot be started here; the message says why and what to install."""


@dataclass
class TemporaryPostgres:
    """A running server in ``root`` on ``port``, with the database ``schemawire``."""

    root: Path
    port: int = 0
    account: pwd.struct_passwd | None = None
    started_in: float = 0.0

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/schemawire"

    def stop(self) -> None:
        """Stop fast (or, if that does not finish in time, immediately) and delete the files."""
        try:
            for mode in ("fast", "immediate"):
                done = self._run(
                    "pg_ctl",
                    "stop",
                    "-D",
                    "data",
                    "-m",
                    mode,
                    "-w",
                    "-t",
                    str(STOP_SECONDS),
                    check=False,
                )
                if done.returncode == 0:
                    break
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        extra: dict[str, Any] = {}
        if self.account is not None:
            extra = {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}
        done = subprocess.run(
            command,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=START_SECONDS + 10,
            check=False,
            env=_environment(),
            **extra,
        )
        if check and done.returncode != 0:
            raise PostgresStartError(f"{' '.join(command)} failed:\n{done.stderr}{self._log()}")
        return done

    def _log(self) -> str:
        log = self.root / "server.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""


def start_postgres() -> TemporaryPostgres:
    """Initialise a cluster in a new temporary directory, start it on a free port, and create
    the database ``schemawire``.

    Raises:
        PostgresStartError: the binaries are missing or the server does not start.
    """
    missing = [name for name in ("initdb", "pg_ctl", "postgres") if shutil.which(name) is None]
    if missing:
        raise PostgresStartError(
            f"{', '.join(missing)} not on PATH: the store tests start a real PostgreSQL server "
            "(install Debian's postgresql package, or put its bin/ directory on PATH)"
        )
    began = time.monotonic()
    server = TemporaryPostgres(Path(tempfile.mkdtemp(prefix="schemawire-pg-")), account=_account())
    try:
        if server.account is not None:
            os.chown(server.root, server.account.pw_uid, server.account.pw_gid)
        server._run(
            "initdb",
            "-D",
            "data",
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-instructions",
        )
        _start_on_a_free_port(server)
        import psycopg  # here, not at the top: a session that starts no server needs no psycopg

        with psycopg.connect(
            server.url.replace("/schemawire", "/postgres"), autocommit=True, connect_timeout=10
        ) as admin:
            admin.execute("CREATE DATABASE schemawire")
    except BaseException:
        server.stop()
        raise
    server.started_in = time.monotonic() - began
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TemporaryPostgres]:
    """A PostgreSQL server for the whole session. Fails (never skips) if it cannot start."""
    try:
        server = start_postgres()
    except PostgresStartError as error:
        pytest.fail(str(error), pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server: TemporaryPostgres) -> str:
    """A URL whose ``search_path`` is a schema of its own, so each test starts with no tables."""
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    return f"{postgres_server.url}?options=-csearch_path%3D{schema}"


def _start_on_a_free_port(server: TemporaryPostgres, attempts: int = 3) -> None:
    """``pg_ctl start -w`` waits (at most START_SECONDS) until the server accepts connections.
    Another process may take the port between our choosing it and the server binding it: then
    try another."""
    for attempt in range(attempts):
        server.port = free_port()
        done = server._run(
            "pg_ctl",
            "start",
            "-D",
            "data",
            "-l",
            "server.log",
            "-w",
            "-t",
            str(START_SECONDS),
            "-o",
            f"-p {server.port} -k '{server.root}' {SETTINGS}",
            check=attempt == attempts - 1,
        )
        if done.returncode == 0:
            return
        if "could not bind" not in server._log():
            raise PostgresStartError(f"pg_ctl start failed:\n{done.stderr}{server._log()}")


def _account() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(UNPRIVILEGED)
    except KeyError:
        raise PostgresStartError(
            f"running as root, and there is no {UNPRIVILEGED!r} account to run PostgreSQL as "
            "(PostgreSQL refuses to run as root)"
        ) from None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _environment() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "LC_ALL": "C"}
