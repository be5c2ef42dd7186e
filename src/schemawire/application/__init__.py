"""The application layer: what the command line (and any other front end) runs, whole.

- `schemawire.application.check`: `check_repository`, the CI gate in one pass (repository rules,
  lint, fixtures, flows, adapters, implementations, and versions against a git revision).
- `schemawire.application.json_toolbox`: the local JSON toolbox (format, validate, and the
  schema to validate against), for ``schemawire fmt``, ``diff`` and ``validate``.

It sits above every library layer it composes and below `schemawire.cli`, which only parses
options and shows what these return. The public names are re-exported from `schemawire`.
"""
