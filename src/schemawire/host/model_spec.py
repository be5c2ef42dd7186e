"""`model_from_spec`: the model a ``--model`` value names.

A script (``script:FILE``) is a `ScriptedModel`; a provider's model is an `HttpModel`, which
loads with its HTTP client only when one is named, so a run of a scripted model never imports
it. Above both model modules, so that neither imports the other.
"""

from __future__ import annotations

import os
import re

from schemawire._json import quoted
from schemawire.errors import UsageError
from schemawire.host.models import Model, ScriptedModel

__all__ = ["model_from_spec"]

# A URL (no colon in its path) and a model name, which may hold colons (Ollama's "qwen3:8b").
_URL_AND_NAME = re.compile(r"^(https?://[^/:]+(?::\d+)?(?:/[^:]*)?):(.+)$")
_PREFIXES = {
    "openai": "openai.chat",
    "openai-responses": "openai.responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


def model_from_spec(spec: str, *, stream: bool = True) -> Model:
    """The model a ``--model`` value names.

    ``openai:NAME``, ``openai-responses:NAME``, ``anthropic:NAME``, ``gemini:NAME``,
    ``openai-compatible:URL:NAME`` (a server speaking Chat Completions at URL, such as
    ``http://127.0.0.1:11434/v1``) or ``script:FILE``. ``stream`` says whether an HTTP model
    streams its answers.

    Raises:
        UsageError: the value names no model this way, or the provider's key variable (such
            as ``OPENAI_API_KEY``) is not set; an OpenAI-compatible server needs none.
    """
    kind, colon, rest = spec.partition(":")
    if not colon or not rest:
        raise UsageError(
            f"--model {quoted(spec)}: write PROVIDER:NAME, such as openai:gpt-4.1-mini"
        )
    if kind == "script":
        return ScriptedModel.from_file(rest)
    from schemawire.host.providers import HttpModel  # with its HTTP client: not for a script

    if kind == "openai-compatible":
        found = _URL_AND_NAME.match(rest)
        if found is None:
            raise UsageError(f"--model {quoted(spec)}: write openai-compatible:URL:NAME")
        url, name = found.groups()
        key = os.environ.get("OPENAI_API_KEY", "")
        return HttpModel("openai.chat", name, base_url=url, api_key=key, stream=stream)
    api = _PREFIXES.get(kind)
    if api is None:
        known = ", ".join([*_PREFIXES, "openai-compatible", "script"])
        raise UsageError(f"--model {quoted(spec)}: unknown provider {quoted(kind)}; known: {known}")
    return HttpModel(api, rest, stream=stream)
