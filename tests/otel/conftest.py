from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.otel.receiver import Receiver, Running

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A real OTLP/HTTP receiver on 127.0.0.1, stopped after the test."""
    with Running() as state:
        yield state
