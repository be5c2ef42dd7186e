"""A long-running server gives the memory of large payloads back.

Payloads of 16 KiB or more are gated in worker threads (`schemawire.mcp._offload`), and glibc
gives each thread that allocates a malloc arena of its own. glibc serves a block of 128 KiB or
more with ``mmap``, given back when freed; but each time such a block is freed it raises that
threshold (up to 32 MiB), so the next large payloads come from the thread's arena, whose heap
keeps its high-water mark and which ``malloc_trim`` does not shrink. Under the soak benchmark's
traffic (200 KB and 1 MB calls among small ones) `schemawire serve --http` grew by steps of
about 12 MB, one per arena that took a large call's peak for the first time: 123 MB to 151 MB in
five minutes, with Python's own allocations flat (tracemalloc). Fixing the threshold (which
turns its adapting off) keeps large blocks in ``mmap``: the same traffic held 88-94 MB.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["LARGE_BLOCK", "give_back_large_blocks"]

LARGE_BLOCK = 128 * 1024
"""Blocks this large or larger are mapped on their own (glibc's default, kept from adapting)."""

_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


def give_back_large_blocks() -> bool:
    """Keep malloc from serving large blocks out of its arenas, for the rest of the process;
    whether it took (glibc on Linux: yes; elsewhere nothing is changed). Call it once, before a
    server starts its threads."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library of this process
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK))
