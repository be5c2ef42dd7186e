"""`schemawire.flows.definition`: a flow file is checked against the flow schema as it loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemawire.errors import ConfigError
from schemawire.flows.definition import load_flow
from tests.host.flows import FLOW


def test_a_flow_file_is_checked_against_the_flow_schema(tmp_path: Path) -> None:
    bad = tmp_path / "flow.json"
    bad.write_text(
        json.dumps({"name": "x", "start": "a", "agents": {"a": {"handoff": "handoffs/h"}}})
    )
    with pytest.raises(ConfigError, match="routes"):
        load_flow(bad)
    bad.write_text(json.dumps({"name": "x", "start": "nobody", "agents": {"a": {}}}))
    with pytest.raises(ConfigError, match='no agent "nobody"'):
        load_flow(bad)


def test_a_fallback_route_must_come_last(tmp_path: Path) -> None:
    flow = json.loads(FLOW.read_text())
    routes = flow["agents"]["triage"]["routes"]
    routes.reverse()
    misplaced = tmp_path / "flow.json"
    misplaced.write_text(json.dumps(flow))
    with pytest.raises(ConfigError, match="routes/0: a fallback route must be the last"):
        load_flow(misplaced)
