"""Stdin and stdout read and written on the event loop, when they are pipes.

The SDK's stdio transport reads each line and writes each message in a worker thread (a file
wrapped by ``anyio.wrap_file``): three thread round trips per request answered, which is most
of what a forwarding proxy spends per call. A pipe can be waited on by the event loop instead,
so here each end is opened again, non-blocking, as a file of its own (``/proc/self/fd/N`` opens
a pipe afresh on Linux: the flag does not touch the descriptor the process was given, which
another process may share).

Meanwhile descriptor 0 reads the null device and descriptor 1 writes to stderr, as the SDK's
own transport arranges, so a child process cannot take or garble the protocol's bytes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

__all__ = ["PipeLines", "PipeWriter", "pipes_available", "stdio_pipes"]

_CHUNK = 1 << 16  # bytes read at a time


class PipeLines:
    """Lines of a non-blocking pipe, read as the event loop finds it readable (``readline``,
    as `schemawire.mcp._sent.SentLines` reads a file)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._ended = False

    async def readline(self) -> str:
        """The next line, its newline kept; ``""`` once the pipe has ended."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line.decode("utf-8", "replace")
            if self._ended:
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest.decode("utf-8", "replace")
            await self._fill()

    async def _fill(self) -> None:
        try:
            chunk = os.read(self._fd, _CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(self._fd)
            return
        if not chunk:
            self._ended = True
        self._buffer += chunk


class PipeWriter:
    """A non-blocking pipe written as the event loop finds it writable (``write`` and
    ``flush``, as the SDK's stdio transport writes its stdout)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, text: str) -> None:
        """Write ``text`` whole (waiting while the pipe is full).

        Raises:
            OSError: the reader has gone (``BrokenPipeError``).
        """
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            data = data[written:]

    async def flush(self) -> None:
        """Nothing is buffered: each write went whole to the pipe."""
        await anyio.lowlevel.checkpoint()


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def pipes_available() -> bool:
    """Whether stdin and stdout are both pipes that can be opened afresh (Linux)."""
    return _is_pipe(0) and _is_pipe(1) and os.path.isdir("/proc/self/fd")


@asynccontextmanager
async def stdio_pipes() -> AsyncIterator[tuple[PipeLines, PipeWriter]]:
    """Stdin and stdout (which must be pipes: `pipes_available`), opened afresh and
    non-blocking, while the block runs; descriptors 0 and 1 point elsewhere meanwhile and are
    given back afterwards.

    Raises:
        OSError: a pipe cannot be opened again.
    """
    reading = os.open("/proc/self/fd/0", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        writing = os.open("/proc/self/fd/1", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        os.close(reading)
        raise
    saved_in, saved_out = os.dup(0), os.dup(1)
    quiet = os.open(os.devnull, os.O_RDONLY)
    os.dup2(quiet, 0)
    os.close(quiet)
    os.dup2(2, 1)
    try:
        yield PipeLines(reading), PipeWriter(writing)
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, reading, writing):
            os.close(fd)
