"""Stdio servers tied to the process that starts them, so that none outlives it.

The SDK stops a server it started when the session closes: stdin closed, 2 s of grace, SIGTERM
to the server's process group, SIGKILL 2 s later. Nothing of that runs when the process holding
the session is killed (SIGKILL, the OOM killer, a SIGTERM nobody handles): the server, in its
own session (the SDK starts it with ``start_new_session``), is reparented to init and keeps
running. On Linux the kernel can send a signal to a process when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), but only the process itself can ask for it, and the SDK's
``stdio_client`` takes no hook that runs in the child. So the server is started through a
launcher: a few lines of Python that ask for SIGKILL on the parent's death, check that the
parent is still the one that started it (it may have died already), and ``exec`` the server's
command in the same process (same pid, same pipes; the request survives ``exec``).

Elsewhere (macOS, Windows) the command runs as given: there only the orderly stop applies.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["tied_to_this_process"]

# Runs in the child, before the server: `python -I -S -c LAUNCHER <parent pid> <program> <argv>`
# (argv[0] is the command as given, as a shell would pass it; the program is its resolved path).
# -I -S: no site, no user paths, no PYTHON* variables (about 15 ms to start).
_LAUNCHER = """\
import ctypes, os, signal, sys
PR_SET_PDEATHSIG = 1
parent, program, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
if os.getppid() != parent:
    os._exit(70)
os.execv(program, argv)
"""


def tied_to_this_process(
    command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | Path | None
) -> tuple[str, list[str]]:
    """The command line that starts ``command`` so that the kernel kills it when this process
    dies (Linux); elsewhere, or when the program cannot be found, ``command`` as given (so the
    SDK reports a missing program as it always does).

    Args:
        command: the server's program, a path or a name looked up on ``env``'s ``PATH``.
        args: its arguments.
        env: the environment the server gets (its ``PATH`` finds the program).
        cwd: the server's working directory (a relative program path is relative to it).
    """
    program = _program(command, env, cwd)
    if not sys.platform.startswith("linux") or not sys.executable or program is None:
        return command, list(args)
    launcher = ["-I", "-S", "-c", _LAUNCHER, str(os.getpid()), program, command, *args]
    return sys.executable, launcher


def _program(command: str, env: Mapping[str, str], cwd: str | Path | None) -> str | None:
    """The absolute path of the program ``command`` runs, found as ``exec`` would find it."""
    if os.sep in command:
        path = Path(cwd or ".", command) if not os.path.isabs(command) else Path(command)
        return str(path.absolute()) if os.access(path, os.X_OK) and path.is_file() else None
    return shutil.which(command, path=env.get("PATH", os.defpath))
