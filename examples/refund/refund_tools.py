"""The refund workflow's tools: what `schemawire run --flow` runs once a call passes its gate.

Both answer from fixed data so that the example runs offline. `create_refund` is not
idempotent: it takes the journal's idempotency key, as a real billing system would, and (when
``REFUND_LEDGER`` names a file) writes one line per execution there, so that a test can count
how many times each refund really ran.
"""

from __future__ import annotations

import os
from typing import Any

_ORDERS = {"A-1042": ("delivered", 59.0), "A-2001": ("shipped", 120.0)}


def lookup_order(order_id: str) -> dict[str, Any]:
    """The order's status and what was paid."""
    status, paid = _ORDERS.get(order_id, ("paid", 10.0))
    return {"order_id": order_id, "status": status, "paid": paid}


def create_refund(
    order_id: str, amount: float, reason: str, idempotency_key: str = ""
) -> dict[str, Any]:
    """Files a refund, pending approval."""
    ledger = os.environ.get("REFUND_LEDGER")
    if ledger:
        with open(ledger, "a", encoding="utf-8") as file:
            file.write(f"{idempotency_key} {order_id} {amount}\n")
            file.flush()
            os.fsync(file.fileno())
    return {
        "refund_id": "R-2001",
        "order_id": order_id,
        "amount": amount,
        "status": "pending",
        "metadata": {"reason": reason},
    }
