"""The host's tests run on asyncio (uvicorn, which the loopback providers use, needs it)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
