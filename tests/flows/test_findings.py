"""`schemawire.flows.findings`: what ``schemawire check`` says about a repository's flows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from schemawire.flows.findings import flow_findings
from schemawire.schema.repository import Repository
from tests.host.flows import FLOW, REFUND


def test_check_finds_what_is_wrong_with_a_flow(write_repo: Any) -> None:
    assert list(flow_findings(Repository.load(REFUND))) == []
    flow = json.loads(FLOW.read_text())
    flow["agents"]["billing"]["tools"].append("teleport")
    flow["state"] = "state/nowhere"
    flow["agents"]["triage"]["routes"][0]["when"] = {
        "properties": {"confidence": {"minimum": 0.99}}
    }
    root = write_repo({"flows/refund.json": flow})
    for path in (REFUND / "schemas").rglob("*.json"):
        target = root / path.relative_to(REFUND)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    for path in (REFUND / "fixtures").rglob("*.json"):
        target = root / path.relative_to(REFUND)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    messages = [f.message for f in flow_findings(Repository.load(root))]
    assert any('no schema "state/nowhere"' in m for m in messages)
    assert any('no tool schema "teleport"' in m for m in messages)
    wrong = 'refund.json should reach route "billing" of agent "triage", but reaches "end"'
    assert any(wrong in m for m in messages)


def test_check_says_so_when_no_route_takes_a_fixture(tmp_path: Path) -> None:
    root = tmp_path / "refund"
    shutil.copytree(REFUND, root, ignore=shutil.ignore_patterns("__pycache__"))
    flow = json.loads(FLOW.read_text())
    first = flow["agents"]["triage"]["routes"][0]
    first["when"] = {"properties": {"confidence": {"minimum": 0.99}}}
    flow["agents"]["triage"]["routes"] = [first]  # no fallback
    (root / "flows" / "refund.json").write_text(json.dumps(flow))
    messages = [f.message for f in flow_findings(Repository.load(root))]
    said = 'should reach route "billing" of agent "triage", but no route takes it'
    assert any(said in m for m in messages), messages
    assert not any("None" in m or "'" in m for m in messages)
