"""``python -m schemawire``: the command line, for when the ``schemawire`` script is not on PATH
(the demo starts its MCP server this way)."""

from schemawire.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
