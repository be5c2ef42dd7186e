"""What every checkpoint store keeps, and the interface each one implements.

A run is a sequence of steps. After each step its state is checkpointed: ``{run_id, step,
state, schema, version}``, the state already validated against the flow's state schema (a
store never writes what the caller has not checked). Besides checkpoints, a store keeps a
journal of tool calls: each call is recorded before it runs (``started``) and after
(``completed`` or ``failed``), under an idempotency key, so that a resumed run can tell a call
it has done from one it has not, and from one that was interrupted.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal, Protocol, TypeVar

from schemawire._json import ParseLimits, canonical, loads
from schemawire.errors import RunLookupError, StoreError

__all__ = [
    "SHORT_ID",
    "CallStatus",
    "Checkpoint",
    "JournalEntry",
    "RunInfo",
    "RunLookupError",
    "RunStatus",
    "Store",
    "StoreError",
    "find_run",
    "idempotency_key",
    "locks_for_itself",
    "one_call_at_a_time",
]

RunStatus = Literal["running", "done", "failed"]
CallStatus = Literal["started", "completed", "failed"]
SHORT_ID = 4
"""The fewest characters of a run id that `find_run` takes for the whole id."""
# What the store wrote itself: any size a column holds, and as deep as JSON may be.
_STORED = ParseLimits(max_bytes=2**30, max_depth=250)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The state of a run after one step.

    Attributes:
        run_id: the run.
        step: the step's number, from 1; step 0 is the run's input.
        state: the state, valid against ``schema``.
        schema: the ``$id`` of the state schema it was checked against.
        version: that schema's ``x-version``.
        node: the flow node the run goes to next (None once the run is over).
        next_input: what that node starts from: the user's input, or the handoff object the
            node before emitted (already through the handoff gate).
        created: when the store wrote it, in seconds since the epoch (None until it is
            written: `Store.save` returns the checkpoint as written).
    """

    run_id: str
    step: int
    state: Any
    schema: str | None
    version: str | None
    node: str | None
    next_input: Any = None
    created: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field, by its name."""
        return _fields_of(self)


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One tool call of a run, as the journal knows it.

    Attributes:
        key: the idempotency key (see `idempotency_key`).
        run_id: the run.
        step: the step the call belongs to.
        tool: the tool's name.
        arguments: the arguments it was called with (accepted by the argument gate).
        status: ``started`` (recorded before the call; if it is still so, the call was
            interrupted), ``completed`` or ``failed``.
        result: the result as the model read it, once the call ended.
    """

    key: str
    run_id: str
    step: int
    tool: str
    arguments: Any
    status: CallStatus
    result: Any = None


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A run, as ``schemawire runs list`` shows it."""

    run_id: str
    flow: str
    status: RunStatus
    step: int
    node: str | None
    created: float
    updated: float
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field, by its name."""
        return _fields_of(self)


class Store(Protocol):
    """A checkpoint store. Every method is atomic: it happens wholly or not at all.

    Its methods are called from worker threads (`schemawire.host.workflow` runs them off the
    event loop), one runner's calls one at a time; a store that several runners share must be
    safe to call from several threads at once. The stores here let one call at a time onto
    their connection (`one_call_at_a_time`, which a store of your own can use too).
    """

    def create_run(self, run_id: str, flow: str, first: Checkpoint) -> Checkpoint:
        """A new run, with its first checkpoint (step 0: the input); that checkpoint as written.

        Raises:
            StoreError: a run with that id exists.
        """
        ...

    def claim(self, run_id: str, worker: str) -> bool:
        """Whether ``worker`` may run ``run_id`` now: no other live worker holds it. A claim
        lasts until `release` or the worker's session ends (a crashed worker's claim lapses)."""
        ...

    def release(self, run_id: str, worker: str) -> None:
        """Give up the claim, if ``worker`` holds it through this store (else nothing)."""
        ...

    def save(self, checkpoint: Checkpoint, *, expected_step: int) -> Checkpoint:
        """Write the checkpoint of step ``expected_step + 1``, if the run is still at
        ``expected_step`` (so that two workers can never both write a step); the checkpoint as
        written (with the time it was written).

        Raises:
            StoreError: the run is not at ``expected_step`` (another worker moved it on).
        """
        ...

    def latest(self, run_id: str) -> Checkpoint | None:
        """The last checkpoint of a run."""
        ...

    def checkpoints(self, run_id: str) -> list[Checkpoint]:
        """Every checkpoint of a run, in order."""
        ...

    def finish(self, run_id: str, status: RunStatus, error: str | None = None) -> None:
        """Mark a run done or failed."""
        ...

    def run(self, run_id: str) -> RunInfo | None:
        """One run."""
        ...

    def runs(self, status: RunStatus | None = None, limit: int = 100) -> list[RunInfo]:
        """The newest runs first, optionally only those of one status."""
        ...

    def runs_starting(self, prefix: str, limit: int = 10) -> list[RunInfo]:
        """The runs whose ids start with ``prefix``, newest first."""
        ...

    def call_started(self, entry: JournalEntry) -> None:
        """Record a call before it runs."""
        ...

    def call_ended(self, key: str, status: CallStatus, result: Any) -> None:
        """Record how a call ended."""
        ...

    def journal(self, run_id: str) -> list[JournalEntry]:
        """Every call of a run, in the order they started."""
        ...

    def call(self, key: str) -> JournalEntry | None:
        """The call with this idempotency key, if it was recorded."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


def _fields_of(value: Checkpoint | RunInfo) -> dict[str, Any]:
    return {field.name: getattr(value, field.name) for field in fields(value)}


def find_run(store: Store, given: str) -> RunInfo:
    """The run ``given`` names: its whole id, or the start of one run's id (at least
    `SHORT_ID` characters), as people copy ids from ``schemawire runs list``.

    Raises:
        RunLookupError: no run has that id or starts with it (``candidates`` is empty), or
            several start with it (``candidates`` lists them).
    """
    exact = store.run(given)
    if exact is not None:
        return exact
    if len(given) < SHORT_ID:
        raise RunLookupError(
            f"no run {given}: give the whole id, or at least its first {SHORT_ID} characters",
            given,
        )
    found = store.runs_starting(given, limit=10)
    if not found:
        raise RunLookupError(f"no run has an id that starts with {given}", given)
    if len(found) > 1:
        ids = tuple(run.run_id for run in found)
        raise RunLookupError(
            f"{given} starts the ids of several runs ({', '.join(ids)}): give more of the id",
            given,
            ids,
        )
    return found[0]


def check_next(checkpoint: Checkpoint, expected_step: int) -> None:
    """Refuse a checkpoint that is not the one after ``expected_step``.

    Raises:
        StoreError: its step is not ``expected_step + 1``.
    """
    if checkpoint.step != expected_step + 1:
        raise StoreError(f"checkpoint of step {checkpoint.step} cannot follow step {expected_step}")


def idempotency_key(run_id: str, step: int, tool: str, arguments: Any) -> str:
    """The key of a call: the same run, step, tool and arguments make the same key, so a
    resumed run recognises a call it has already made, whatever id the model gave it."""
    # canonical: 20 and 20.0 make one key (a model may write either when it calls again). Past
    # 2**53 a whole float stays a float, as keys in journals already written have it.
    text = canonical([run_id, step, tool, arguments], whole_floats_up_to=2**53)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def stored(text: str | bytes | None) -> Any:
    """The JSON value of a column the store wrote (None for SQL NULL); integers of any size
    come back exact."""
    return None if text is None else loads(text, limits=_STORED, source="<store>")


_StoreClass = TypeVar("_StoreClass", bound=type)


def one_call_at_a_time(cls: _StoreClass) -> _StoreClass:
    """Make each public method of store class ``cls`` hold the store's own lock (``_lock``, a
    `threading.RLock` its ``__init__`` makes), so that one connection serves any number of
    threads: the runners, journaled tools and event loops that share one store each run their
    calls in worker threads (`OffLoop`), and two transactions must never interleave on it."""
    for name, method in list(vars(cls).items()):
        if name.startswith("_") or not callable(method):
            continue
        if not getattr(method, _LOCKS_FOR_ITSELF, False):
            setattr(cls, name, _holding_the_lock(method))
    return cls


_LOCKS_FOR_ITSELF = "__schemawire_locks_for_itself__"
_Method = TypeVar("_Method", bound=Callable[..., Any])


def locks_for_itself(method: _Method) -> _Method:
    """Leave ``method`` out of `one_call_at_a_time`: it takes the store's lock itself, for the
    part of its work that uses the connection (`SqliteStore.save` waits for a shared commit
    without holding it)."""
    setattr(method, _LOCKS_FOR_ITSELF, True)
    return method


def _holding_the_lock(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        lock: threading.RLock = self._lock
        with lock:
            return method(self, *args, **kwargs)

    return locked
