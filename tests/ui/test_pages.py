"""Each page loads in the browser, with the navigation, and asks no other host."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from schemawire.ui.server import LocalServer


@pytest.mark.parametrize("path", ["/", "/diff", "/toolbox", "/tools"])
def test_each_page_loads_and_marks_itself_in_the_navigation(
    ui_server: Callable[..., LocalServer], open_page: Callable[..., Any], path: str
) -> None:
    page = open_page(ui_server(), path)
    current = page.locator("header.top nav a[aria-current=page]")
    assert current.count() == 1
    assert current.get_attribute("href") == path
