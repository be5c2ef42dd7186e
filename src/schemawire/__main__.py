"""``python -m schemawire``: the command line, for when the ``schemawire`` script is not on PATH
(the demo starts its MCP server this way)."""

from schemawire.cli import main

if __name__ == "__main__":
    main()
