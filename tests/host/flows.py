"""The refund example's flow, ready to run in tests: its runner, with a store and a ledger."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemawire.flows.definition import AgentSpec, Flow, load_flow
from schemawire.host import HostOptions, model_from_spec, python_tools
from schemawire.host.workflow import FlowRunner
from schemawire.schema.implementations import load_implementations
from schemawire.schema.repository import Repository
from schemawire.store import Store
from schemawire.trace import Trace
from tests.helpers import EXAMPLES

REFUND = EXAMPLES / "refund"
FLOW = REFUND / "flows" / "refund.json"
REQUEST = "I was charged twice for order A-1042; please refund the 20."


def scripted(flow: Flow) -> Callable[[AgentSpec], Any]:
    """Each agent's own scripted model, read from the flow's folder."""

    def model(agent: AgentSpec) -> Any:
        assert agent.model is not None
        return model_from_spec(
            "script:" + str(flow.path.parent / agent.model.removeprefix("script:"))
        )

    return model


def refund_runner(
    store: Store, flow: Flow | None = None, root: Path = REFUND, **overrides: Any
) -> FlowRunner:
    """A runner of the refund flow (or ``flow``) over the repository at ``root``, on ``store``."""
    flow = flow or load_flow(root / "flows" / "refund.json")
    repository = Repository.load(root)
    tools = {r.spec.name: r for r in python_tools(repository, load_implementations(repository))}
    options = {
        "tools": tools,
        "model": scripted(flow),
        "trace": Trace(),
        "options": HostOptions(),
        **overrides,
    }
    return FlowRunner(flow, repository, store, **options)


def ledger_lines(path: Path) -> list[str]:
    """What create_refund wrote: one line per time it really ran."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def use_ledger(path: Path) -> None:
    os.environ["REFUND_LEDGER"] = str(path)
