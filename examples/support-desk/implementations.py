"""The tools' implementations: what `schemawire serve` runs once a call passes the gates.

Each function takes the tool's arguments as keywords, already checked against the tool's
schema, and returns a value its output schema describes. These two answer from fixed data, so
the example runs offline; replace them with calls to your own systems.
"""

from __future__ import annotations

from typing import Any

_WEATHER = {"上海": (18.0, "晴"), "paris": (11.5, "cloudy"), "taipei": (24.0, "rain")}
_REFUNDS: list[dict[str, Any]] = []


def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """The current weather in ``city`` (always in Celsius, as the output schema says)."""
    temp_c, condition = _WEATHER.get(city.casefold(), (20.0, "unknown"))
    return {"city": city, "temp_c": temp_c, "condition": condition}


def create_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Files a refund and returns it, pending approval."""
    refund = {
        "refund_id": f"R-{2001 + len(_REFUNDS)}",
        "order_id": order_id,
        "amount": amount,
        "status": "pending",
        "metadata": {"reason": reason},
    }
    _REFUNDS.append(refund)
    return refund
