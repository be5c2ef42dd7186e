"""The local page, ``schemawire ui``: runs, one run's hops, a diff of two runs, the JSON
toolbox and the repository's tools, served on 127.0.0.1 only and computed by the same Python
as the command line. Nothing is uploaded; the page loads nothing from another host."""

from __future__ import annotations

from schemawire.ui._config import UiConfig
from schemawire.ui.app import create_app

__all__ = ["UiConfig", "create_app"]
