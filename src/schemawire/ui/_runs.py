"""(owned by the runs page) its API routes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import BaseRoute

if TYPE_CHECKING:
    from schemawire.ui._config import UiConfig

__all__ = ["routes"]


def routes(config: UiConfig) -> list[BaseRoute]:
    """The runs page's API routes."""
    return []
