"""A worker that dies on purpose: SIGKILL at a chosen write to the store, before or after it.

The crash tests fork a worker per attempt; the worker runs (or resumes) one refund run and
kills itself with SIGKILL at its N-th store write (a checkpoint, a journal entry, a claim...),
just before the write or just after it. No sleeps, no timing: the point of death is chosen,
and every point is reachable.
"""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from schemawire.store import Store, open_store
from schemawire.trace import Trace, trace_path
from tests.host.flows import REQUEST, refund_runner, use_ledger

WRITES = ("create_run", "claim", "release", "save", "finish", "call_started", "call_ended")
WORKER_SECONDS = 30.0


class CrashingStore:
    """A store that kills its process at its ``at``-th write (before it when ``before``)."""

    def __init__(self, inner: Store, at: int, before: bool) -> None:
        self._inner = inner
        self._left = at
        self._before = before

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name not in WRITES:
            return method

        def write(*args: Any, **kwargs: Any) -> Any:
            self._left -= 1
            if self._left == 0 and self._before:
                os.kill(os.getpid(), signal.SIGKILL)
            result = method(*args, **kwargs)
            if self._left == 0:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return write


def work(url: str, run_id: str, ledger: Path, crash: tuple[int, bool] | None) -> None:
    """Start ``run_id`` (or resume it, if it exists), dying as ``crash`` says; its hops go to
    its own trace file, in a ``traces`` folder beside the ledger."""
    use_ledger(ledger)
    store: Any = open_store(url)
    if crash is not None:
        store = CrashingStore(store, *crash)
    trace = Trace(run_id, path=trace_path(run_id, ledger.parent / "traces"))
    runner = refund_runner(store, worker=f"worker-{os.getpid()}", trace=trace)

    async def go() -> None:
        if store.run(run_id) is None:
            await runner.start(REQUEST, run_id=run_id)
        else:
            await runner.resume(run_id)

    anyio.run(go)
    trace.close()
    store.close()


def in_child(task: Callable[[], None]) -> int:
    """Run ``task`` in a forked process; how it ended: 0, 1 (an exception), or -signal.

    Raises:
        TimeoutError: it did not end within `WORKER_SECONDS` (it is killed).
    """
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 0
        try:
            task()
        except BaseException:
            code = 1
        os._exit(code)
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], WORKER_SECONDS)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError(f"worker {pid} ran for more than {WORKER_SECONDS} s")
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(handle)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
