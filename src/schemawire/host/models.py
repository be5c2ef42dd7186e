"""Models: what the host asks, and `ScriptedModel` offline.

A model takes the JSON body its API wants (built by `schemawire.wire`) and gives back the JSON
body of the response. `ScriptedModel` plays a JSON script of recorded responses and keeps every
request it received, for demos, tests and evals. The models of the providers' HTTP APIs are
`schemawire.host.providers.HttpModel`; `schemawire.host.model_spec` reads ``--model``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from schemawire._json import load_file
from schemawire.errors import ModelError, UsageError
from schemawire.wire import StreamDelta

__all__ = [
    "DeltaSink",
    "Model",
    "ModelError",
    "PoolingModel",
    "ScriptedModel",
    "StreamingModel",
]

DeltaSink = Callable[[StreamDelta], None]
"""Called with each piece of a streamed answer as it arrives (text, a call's start, a piece of
its arguments)."""


class Model(Protocol):
    """Anything that answers a request body of its API with a response body."""

    api: str
    """The API it speaks: a key of `schemawire.wire.APIS`."""
    name: str
    """The model's name at the provider (for the request body)."""

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response to one request (``body`` shares objects with earlier requests' bodies:
        do not change it).

        Raises:
            ModelError: the model could not answer.
        """
        ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also answer as a stream (`schemawire.host.providers.HttpModel`)."""

    streaming: bool
    """Whether the host should ask it for streams (it may be turned off)."""

    async def stream(
        self, body: dict[str, Any], on_delta: DeltaSink | None = None
    ) -> dict[str, Any]:
        """The response to one request that asks for a stream (`WireFormat.stream_body`),
        put together as the API would have sent it whole; each piece goes to ``on_delta`` as
        it arrives.

        Raises:
            ModelError: the model could not answer, or its stream failed.
            InputError: an event of the stream is not one of its API.
        """
        ...


@runtime_checkable
class PoolingModel(Model, Protocol):
    """A model that keeps connections open while it is held (`HttpModel`): a host holds it open
    for each run, and for its ``async with host:`` block. Other models are never entered."""

    def held_open(self) -> AbstractAsyncContextManager[object]:
        """A block for the model's requests to share connections in, closed at its end."""
        ...


# --- offline ------------------------------------------------------------------------------------


class ScriptedModel:
    """Plays recorded responses in order, whatever it is asked, and records what it was asked.

    A script file is ``{"api": "openai.chat", "model": "...", "responses": [<response body>,
    ...]}``: each response exactly as the API would send it.
    """

    def __init__(self, api: str, responses: Sequence[dict[str, Any]], name: str = "scripted"):
        self.api = api
        self.name = name
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """The model a script file describes.

        Raises:
            InputError: the file is not JSON.
            UsageError: it is not a script (no ``api`` or ``responses``).
        """
        script: Any = load_file(path)
        if not isinstance(script, dict) or not isinstance(script.get("responses"), list):
            raise UsageError(f'{path}: a script is {{"api": ..., "responses": [...]}}')
        api = script.get("api")
        if not isinstance(api, str):
            raise UsageError(f'{path}: the script must name its "api", such as "openai.chat"')
        listed: list[Any] = script["responses"]
        responses = [r for r in listed if isinstance(r, dict)]
        if len(responses) != len(listed):
            raise UsageError(f"{path}: every response must be a JSON object")
        return cls(api, responses, str(script.get("model", "scripted")))

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        index = len(self.requests) - 1
        if index >= len(self.responses):
            message = (
                f"the script has {len(self.responses)} responses; request {index + 1} has none"
            )
            raise ModelError(message, code=ModelError.OUT_OF_SCRIPT)
        return self.responses[index]
