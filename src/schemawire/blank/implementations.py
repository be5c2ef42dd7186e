"""Your tools' implementations: what `schemawire serve` and `schemawire run` call once a call has
passed the argument gate.

Each function takes the tool's arguments as keywords, already checked against
schemas/tools/<name>.json, and returns a value its output schema (<name>.output.json) describes.
Name each one under [serve.tools] in schemawire.toml.
"""
