"""The state the checkpoint bench writes, the same for every store, and the timing both sides
share: plain Python and the standard library only, so that `bench/checkpoints.py` (schemawire's
environment) and `bench/peers_checkpoints.py` (the peers' environment) both import it.

``state(step)`` is a refund workflow's state after ``step`` steps, about 2 KB as compact JSON: a
few scalars (which LangGraph's PostgreSQL saver keeps inline in its checkpoint row) and nested
objects and lists (which it keeps as blobs, one per channel). Every step changes the state, so
no store can skip a write as unchanged. ``STATE_SCHEMA`` is a state schema it satisfies, strict
in the way a flow's state schema is (closed objects, enums, patterns, bounds), for schemawire's
validation before each save.

`Lanes` is one contender as the bench times it: one writer, or several in threads, each with the
checkpoints it writes in order; ``write(n)`` has each write its next n and gives the seconds. The
bench takes turns between the contenders of a group n checkpoints at a time, so that a machine
whose disk others share slows them all alike.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

SEED = 2024
WARM_UP = 20  # untimed checkpoints each writer writes first
JOIN_SECONDS = 300  # the longest a batch may take
MESSAGE_CHARS = 135  # each of the 10 messages: the state comes to about 2 KB

_WORDS = (
    "order",
    "arrived",
    "damaged",
    "box",
    "crushed",
    "refund",
    "requested",
    "customer",
    "photo",
    "attached",
    "courier",
    "late",
    "replacement",
    "out",
    "of",
    "stock",
    "warehouse",
    "label",
    "printed",
    "tracking",
    "shows",
    "delivered",
    "but",
    "not",
    "received",
    "card",
    "charged",
    "twice",
    "please",
    "check",
    "invoice",
    "address",
    "apartment",
    "gate",
    "code",
)


def state(step: int) -> dict[str, Any]:
    """The state after ``step`` steps (the same for the same step, in every environment)."""
    rng = random.Random(SEED * 100_003 + step)
    messages = [
        {
            "role": ("user", "assistant", "tool")[k % 3],
            "content": " ".join(rng.choice(_WORDS) for _ in range(40))[:MESSAGE_CHARS],
        }
        for k in range(10)
    ]
    items = [
        {
            "sku": f"SKU-{rng.randrange(10_000, 99_999)}",
            "quantity": rng.randrange(1, 4),
            "unit_price": round(rng.uniform(3, 250), 2),
        }
        for _ in range(3)
    ]
    return {
        "order_id": f"A{1000 + step % 9000}",
        "intent": ("refund", "exchange", "human")[step % 3],
        "amount": round(sum(i["quantity"] * i["unit_price"] for i in items), 2),
        "step": step,
        "customer": {
            "id": f"C-{rng.randrange(100_000, 999_999)}",
            "tier": "gold",
            "email": f"user{step}@example.com",
            "country": "DE",
        },
        "items": items,
        "messages": messages,
        "tags": sorted(rng.sample(_WORDS, 5)),
    }


def size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON, as a store would write it."""
    return len(json.dumps(value, separators=(",", ":")).encode("utf-8"))


STATE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/schemas/state/bench_refund_flow.json",
    "x-version": "1.0.0",
    "title": "State of a refund workflow (checkpoint bench)",
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A[0-9]{4,}$"},
        "intent": {"type": "string", "enum": ["refund", "exchange", "human"]},
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "step": {"type": "integer", "minimum": 0},
        "customer": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^C-[0-9]+$"},
                "tier": {"type": "string", "enum": ["basic", "silver", "gold"]},
                "email": {"type": "string", "maxLength": 254},
                "country": {"type": "string", "pattern": "^[A-Z]{2}$"},
            },
            "required": ["id", "tier"],
            "additionalProperties": False,
        },
        "items": {
            "type": "array",
            "maxItems": 50,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": "^SKU-[0-9]+$"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price": {"type": "number", "minimum": 0},
                },
                "required": ["sku", "quantity", "unit_price"],
                "additionalProperties": False,
            },
        },
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "role": {"type": "string", "enum": ["user", "assistant", "tool"]},
                    "content": {"type": "string", "maxLength": 4000},
                },
                "required": ["role", "content"],
                "additionalProperties": False,
            },
        },
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
    "required": ["order_id", "intent", "step"],
    "additionalProperties": False,
}


class Lanes:
    """One contender: its writers (lanes), each a function that writes a batch of work items in
    order and the items it has still to write."""

    def __init__(self, lanes: Sequence[tuple[Callable[[list[Any]], None], list[Any]]]) -> None:
        self.lanes = [(write, list(items)) for write, items in lanes]
        self.done = 0  # items each lane has written

    def warm_up(self, n: int = WARM_UP) -> None:
        """Write each lane's first ``n`` items, untimed (tables made, statements prepared)."""
        self.write(n)

    def write(self, n: int) -> float:
        """Each lane writes its next ``n`` items: the seconds from all lanes starting to the last
        one done (one lane writes in this thread, several each in a thread of its own)."""
        batches = [(write, items[self.done : self.done + n]) for write, items in self.lanes]
        assert all(len(batch) == n for _, batch in batches), "more asked for than there is"
        self.done += n
        if len(batches) == 1:
            write, batch = batches[0]
            start = time.perf_counter()
            write(batch)
            return time.perf_counter() - start
        return _race(batches)


def _race(batches: list[tuple[Callable[[list[Any]], None], list[Any]]]) -> float:
    ready = threading.Barrier(len(batches) + 1)
    errors: list[BaseException] = []

    def lane(write: Callable[[list[Any]], None], batch: list[Any]) -> None:
        try:
            ready.wait(timeout=JOIN_SECONDS)
            write(batch)
        except BaseException as error:
            errors.append(error)
            ready.abort()

    threads = [threading.Thread(target=lane, args=batch, daemon=True) for batch in batches]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    try:
        ready.wait(timeout=JOIN_SECONDS)
        start = time.perf_counter()
    except threading.BrokenBarrierError:
        pass  # a lane failed: its error is raised below
    for thread in threads:
        thread.join(timeout=JOIN_SECONDS)
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    if any(thread.is_alive() for thread in threads):
        raise TimeoutError(f"writers still running after {JOIN_SECONDS} s")
    return seconds


if __name__ == "__main__":
    sizes = [size(state(step)) for step in range(1000)]
    print(f"state: {min(sizes)}..{max(sizes)} bytes, mean {sum(sizes) / len(sizes):.0f}")
