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


def test_the_json_tree_reads_its_text_without_loss(
    ui_server: Callable[..., LocalServer], open_page: Callable[..., Any]
) -> None:
    # The page's JSON.parse would round the integer and keep one of the duplicate keys.
    page = open_page(ui_server(), "/toolbox")
    page.wait_for_function("() => typeof jsonTree === 'object'")
    shown = page.evaluate(
        """() => {
          const tree = jsonTree.render('{"id": 12345678901234567890123, "a": [1], "a": {}}');
          return {
            text: [...tree.querySelectorAll('.jt-num')].map((n) => n.textContent),
            keys: [...tree.querySelectorAll('.jt-key')].map((k) => k.textContent),
            notes: [...tree.querySelectorAll('.jt-note')].map((n) => n.textContent),
          };
        }"""
    )
    assert shown["text"] == ["12345678901234567890123", "1"]
    assert shown["keys"] == ['"id": ', '"a": ', '"a": ']
    assert shown["notes"] == ["3 keys", "1 item", "0 keys"]
