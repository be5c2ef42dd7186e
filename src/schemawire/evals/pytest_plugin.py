"""pytest runs the eval cases: each case file is a test item.

Installing schemawire registers it (a ``pytest11`` entry point named as this module), so pytest
loads it by itself; ``-p schemawire.evals.pytest_plugin`` loads it where entry points are not
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``), and is harmless where they are. It collects:

- ``evals/*.json`` at the root of a repository (beside a ``schemawire.toml``, or a
  ``pyproject.toml`` with ``[tool.schemawire]``): the cases of a repository, by the same rule
  as ``schemawire eval`` (`is_case_file`), so that other JSON (fixtures, test data) is never
  taken for a case;
- any ``.json`` file named on the command line, wherever it is.

A failing case reports each failure with where its expectation is written
(``file:line:column #pointer``); a case that cannot be run reports why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schemawire._json import dumps
from schemawire.errors import InputError, UsageError
from schemawire.evals.discover import is_case_file
from schemawire.evals.runner import CaseResult, run_case

__all__ = ["CaseFailedError", "CaseFile", "CaseItem", "pytest_collect_file"]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    """A case file's collector, for case files (see the module's docstring)."""
    named = file_path.suffix == ".json" and parent.session.isinitpath(file_path)
    if is_case_file(file_path) or named:
        collector: CaseFile = CaseFile.from_parent(parent, path=file_path)
        return collector
    return None


class CaseFailedError(Exception):
    """A case whose run did not do what it expects.

    Not a `SchemawireError`: it is pytest's failure protocol, not an error of the library. It is
    raised by `CaseItem.runtest` to pytest alone, which reports it with `CaseItem.repr_failure`
    as a failed test; no schemawire function raises it to a caller."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(f"{len(result.failures)} expectations failed")
        self.result = result


class CaseFile(pytest.File):
    """A case file: one item."""

    def collect(self) -> Iterator[CaseItem]:
        yield CaseItem.from_parent(self, name=self.path.stem)


class CaseItem(pytest.Item):
    """One case, run as a test."""

    def runtest(self) -> None:
        result = run_case(self.path)
        if not result.passed:
            raise CaseFailedError(result)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        error = excinfo.value
        if isinstance(error, CaseFailedError):
            result = error.result
            lines = [f"eval case {dumps(result.name)} failed ({len(result.failures)}):"]
            lines += [
                f"  {result.path}:{f.line}:{f.column} #{f.pointer or '/'}\n    {f.message}"
                for f in result.failures
            ]
            return "\n".join(lines)
        if isinstance(error, InputError | UsageError | OSError):
            return f"eval case {self.path} cannot be run:\n  {error}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"eval case {self.name}"
