"""The tools one host offers a model: projected once for its API, each with the gate that reads
the calls made under that projection.

Each runner carries the repository its schemas come from, so a ``$ref`` into another file of it
is resolved when the tool is projected and when its arguments are checked; a reference that
nothing resolves is refused here, before any model is asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.gates import ArgumentGate, ArgumentOptions
from schemawire.host.tools import ToolRunner
from schemawire.project import TARGETS, Catalogue, project_catalogue
from schemawire.schema.repository import Repository
from schemawire.types import Projection
from schemawire.wire import ToolRef
from schemawire.wire.conversation import SEARCH_NAMES

__all__ = ["OfferedTool", "Toolset", "documents_of"]


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """One tool as the model is sent it: who runs it, the gate its calls pass, its payload."""

    runner: ToolRunner
    gate: ArgumentGate
    ref: ToolRef


class Toolset:
    """Runners projected for one target, by canonical name."""

    def __init__(
        self,
        runners: Sequence[ToolRunner],
        target: str,
        *,
        strict: bool,
        argument_options: ArgumentOptions | None,
        documents: Mapping[str, Any],
        search: ToolRunner | None = None,
    ) -> None:
        """
        Args:
            search: the runner among ``runners`` that is the host's tool search, to be sent
                in the API's own form where it has one (`ToolRef.searches`); None: every
                runner is a plain function tool.

        Raises:
            UsageError: two runners have one name, or a schema names what nothing resolves.
        """
        _refuse_twins(runners)
        options: dict[str, Any] = {"strict": strict} if "strict" in TARGETS[target].options else {}
        specs = [runner.spec for runner in runners]
        self.catalogue: Catalogue = project_catalogue(specs, target, documents=documents, **options)
        _refuse_unresolved(self.catalogue)
        self.tools = {
            runner.spec.name: _offered(
                runner, projection, argument_options, documents, searches=runner is search
            )
            for runner, projection in zip(runners, self.catalogue.projections, strict=True)
        }
        if search is not None:  # the API calls its own tool search by its own name
            self._name_search(search.spec.name, SEARCH_NAMES.get(target))
        # One tuple for every request: the wire modules render an entry once per tool list.
        self.refs = tuple(tool.ref for tool in self.tools.values())

    def _name_search(self, name: str, known_as: str | None) -> None:
        tool = self.tools.get(name)
        if tool is not None and known_as is not None:
            ref = dataclasses.replace(tool.ref, projected_name=known_as)
            self.tools[name] = dataclasses.replace(tool, ref=ref)


def documents_of(
    runners: Sequence[ToolRunner], repository: Repository | None = None
) -> dict[str, Any]:
    """Every schema a ``$ref`` of these runners (or of ``repository``) may name, by URI."""
    documents: dict[str, Any] = {}
    # A runner of the caller's own may not say where its schemas come from.
    repositories = [getattr(runner, "repository", None) for runner in runners] + [repository]
    for each in {id(r): r for r in repositories if r is not None}.values():
        documents.update(each.documents)
    return documents


def _offered(
    runner: ToolRunner,
    projection: Projection,
    argument_options: ArgumentOptions | None,
    documents: Mapping[str, Any],
    *,
    searches: bool,
) -> OfferedTool:
    gate = ArgumentGate(
        runner.spec, runner.validator, argument_options, projection=projection, documents=documents
    )
    ref = ToolRef(runner.spec.name, projection.projected_name, projection.payload, False, searches)
    return OfferedTool(runner, gate, ref)


def _refuse_twins(runners: Sequence[ToolRunner]) -> None:
    seen: set[str] = set()
    for runner in runners:
        if runner.spec.name in seen:
            raise UsageError(
                f"two tools are named {quoted(runner.spec.name)}: "
                "the model could not tell them apart"
            )
        seen.add(runner.spec.name)


def _refuse_unresolved(catalogue: Catalogue) -> None:
    for projection in catalogue.projections:
        for loss in projection.losses:
            if loss.code == "REF_UNRESOLVED":
                raise UsageError(
                    f"the schema of {projection.name} has a $ref at {loss.pointer or '/'} that "
                    "names nothing it was given: build the tool from its repository "
                    "(python_tools(repository, ...), PythonTool(..., repository=...))"
                )
