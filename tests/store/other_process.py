"""A worker in another process that claims a run and then waits, so that a test can see its
claim hold, and then lapse when the process exits or is killed."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SECONDS = 30

_CLAIM_AND_WAIT = """
import sys
from schemawire.store import open_store
store = open_store(sys.argv[1])
print(store.claim(sys.argv[2], sys.argv[3]), flush=True)
sys.stdin.read()
"""


@contextmanager
def claimed_in_another_process(
    url: str, run_id: str, worker: str = "other-process"
) -> Iterator[subprocess.Popen[str]]:
    """Yield a process that holds ``run_id``'s claim; it exits (without releasing or closing
    the store) when its stdin is closed, or dies when killed. Killed at the end in any case."""
    command = [sys.executable, "-c", _CLAIM_AND_WAIT, url, run_id, worker]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], SECONDS)
            assert ready, f"the other process did not claim {run_id} within {SECONDS} s"
            assert process.stdout.readline().strip() == "True", "the other process's claim"
            yield process
        finally:
            process.kill()
            process.wait(timeout=SECONDS)


def exit_normally(process: subprocess.Popen[str]) -> None:
    """Let the process end by itself (its stdin closed), and wait for it."""
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=SECONDS) == 0


def crash(process: subprocess.Popen[str]) -> None:
    """SIGKILL: no release, no close, no goodbye to the server."""
    process.kill()
    process.wait(timeout=SECONDS)
