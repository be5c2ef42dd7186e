"""Hosts in threads: each run renders its conversation into its own cache, so that no host sees,
or can spoil, the messages of another."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from schemawire.host import Host, ScriptedModel
from schemawire.wire import AssistantTurn, Entry, UserText

WAIT = 10.0  # seconds a thread waits for the other before the test fails
HISTORY: list[Entry] = [UserText("What is 2 + 2?"), AssistantTurn(text="4")]  # both hosts'
ANSWER = {
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "6"}}
    ]
}


class ScribblingModel(ScriptedModel):
    """Changes every message of each request it gets (as a model must not), then says so."""

    def __init__(self, scribbled: threading.Event) -> None:
        super().__init__("openai.chat", [ANSWER])
        self.scribbled = scribbled

    async def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        for message in body["messages"]:
            message["content"] = "scribbled"
        self.scribbled.set()
        return await super().respond(body)


def test_a_host_in_another_thread_cannot_spoil_this_hosts_messages() -> None:
    barrier, scribbled = threading.Barrier(2, timeout=WAIT), threading.Event()
    careless, careful = ScribblingModel(scribbled), ScriptedModel("openai.chat", [ANSWER])

    def run_careless() -> None:
        barrier.wait()
        Host(careless).run_sync("And 3 + 3?", history=HISTORY)

    def run_careful() -> None:
        barrier.wait()
        assert scribbled.wait(WAIT), "the other host never asked its model"
        Host(careful).run_sync("And 3 + 3?", history=HISTORY)

    with ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(run_careless), pool.submit(run_careful)]:
            future.result(timeout=WAIT)
    (sent,) = careful.requests
    assert "scribbled" not in json.dumps(sent)
    assert [m["content"] for m in sent["messages"]] == ["What is 2 + 2?", "4", "And 3 + 3?"]
