"""A worker process that advances runs one step at a time, racing the others.

Each worker loops over the runs: (claim,) read the latest checkpoint, save the next step with
``expected_step`` = the step it read, (release); until every run has reached the last step. It
reports the steps it wrote, how many saves were refused, and how many claims it did not get.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

from schemawire.store import Checkpoint, StoreError
from schemawire.store.postgres import PostgresStore


@dataclass(frozen=True)
class Race:
    url: str
    run_ids: list[str]
    steps: int
    claims: bool


@dataclass
class Report:
    worker: str
    written: list[tuple[str, int]] = field(default_factory=list)
    refused: int = 0
    not_claimed: int = 0
    error: str | None = None


def race(plan: Race, worker: str, start: Barrier, reports: Queue[Any]) -> None:
    """The body of one worker process; it always puts one `Report` on ``reports``."""
    report = Report(worker)
    try:
        store = PostgresStore(plan.url)
        try:
            start.wait()
            pending = list(plan.run_ids)
            while pending:
                for run_id in list(pending):
                    if not _advance(store, plan, run_id, report):
                        pending.remove(run_id)
        finally:
            store.close()
    except Exception:
        report.error = traceback.format_exc()
    reports.put(report)


def _advance(store: PostgresStore, plan: Race, run_id: str, report: Report) -> bool:
    """One try at one step of one run; False once the run has reached the last step."""
    if plan.claims and not store.claim(run_id, report.worker):
        report.not_claimed += 1
        return True
    try:
        latest = store.latest(run_id)
        assert latest is not None
        if latest.step >= plan.steps:
            return False
        step = latest.step + 1
        try:
            store.save(
                Checkpoint(run_id, step, {"by": report.worker, "step": step}, None, None, "next"),
                expected_step=latest.step,
            )
        except StoreError:
            report.refused += 1
        else:
            report.written.append((run_id, step))
        return True
    finally:
        if plan.claims:
            store.release(run_id, report.worker)
