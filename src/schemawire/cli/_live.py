"""A streamed answer printed as it arrives, for people at a terminal: the model's text as it
writes it, and each tool call's arguments as they assemble (the gates run once the call is
whole; the hop lines that follow say what they decided)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from schemawire.types import Hop
from schemawire.wire import ArgumentsDelta, CallStarted, StreamDelta, TextDelta

__all__ = ["LivePrinter"]


class LivePrinter:
    """Prints each piece of a streamed answer (pass it as ``Host(on_delta=...)``).

    The text goes out as it comes; a call starts a line of its own, ``→ name `` and then its
    arguments, piece by piece. Anything else printed meanwhile must first end the line the
    answer is on: `around` wraps a hop printer so that it does.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._mid_line = False  # the cursor is after something this printer wrote

    def __call__(self, delta: StreamDelta) -> None:
        if isinstance(delta, TextDelta):
            self._write(delta.text)
        elif isinstance(delta, CallStarted):
            self.end_line()
            self._write("→ ", "bold cyan")
            self._write(f"{delta.name} ", "cyan")
        elif isinstance(delta, ArgumentsDelta):
            self._write(delta.text, "dim")

    def end_line(self) -> None:
        """End the line a streamed answer left open, if it did."""
        if self._mid_line:
            self.console.print()
            self._mid_line = False

    def around(self, printer: Callable[[Hop], None]) -> Callable[[Hop], None]:
        """``printer``, called on a line of its own."""

        def on_hop(hop: Hop) -> None:
            self.end_line()
            printer(hop)

        return on_hop

    def _write(self, text: str, style: str | None = None) -> None:
        if not text:
            return
        self.console.print(text, style=style, end="", markup=False, highlight=False, emoji=False)
        self._mid_line = not text.endswith("\n")
