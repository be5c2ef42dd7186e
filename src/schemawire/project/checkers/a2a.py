"""A2A: one AgentCard (protocol v1.0, ProtoJSON camelCase).

Rules from projections.md §6 and ``specification/a2a.proto``: the REQUIRED fields and the JSON
type of every field of the card and of the messages inside it (interfaces, provider,
capabilities and their extensions, skills, signatures). A2A has no slot for a JSON Schema, so
nothing here checks schemas.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from schemawire._json import quoted
from schemawire._pointer import join
from schemawire.project.checkers import (
    Flaw,
    Member,
    Problem,
    describe,
    duplicate_names,
    member_flaws,
    run_rules,
)

__all__ = ["RULE_IDS", "check_payload", "check_request"]

# RFC 6838 type/subtype names, with optional parameters after ";".
MEDIA_TYPE = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$"
)
_REQUIRED_STRING = Member("string", True)
CARD = {
    "name": _REQUIRED_STRING,
    "description": _REQUIRED_STRING,
    "supportedInterfaces": Member("objects", True),
    "provider": Member("object"),
    "version": _REQUIRED_STRING,
    "documentationUrl": Member("string"),
    "capabilities": Member("object", True),
    "securitySchemes": Member("object"),
    "securityRequirements": Member("objects"),
    "defaultInputModes": Member("strings", True),
    "defaultOutputModes": Member("strings", True),
    "skills": Member("objects", True),
    "signatures": Member("objects"),
    "iconUrl": Member("string"),
}
INTERFACE = {
    "url": _REQUIRED_STRING,
    "protocolBinding": _REQUIRED_STRING,
    "tenant": Member("string"),
    "protocolVersion": _REQUIRED_STRING,
}
PROVIDER = {"url": _REQUIRED_STRING, "organization": _REQUIRED_STRING}
CAPABILITIES = {
    "streaming": Member("boolean"),
    "pushNotifications": Member("boolean"),
    "extensions": Member("objects"),
    "extendedAgentCard": Member("boolean"),
}
EXTENSION = {
    "uri": _REQUIRED_STRING,
    "description": Member("string"),
    "required": Member("boolean"),
    "params": Member("object"),
}
SKILL = {
    "id": _REQUIRED_STRING,
    "name": _REQUIRED_STRING,
    "description": _REQUIRED_STRING,
    "tags": Member("strings", True),
    "examples": Member("strings"),
    "inputModes": Member("strings"),
    "outputModes": Member("strings"),
    "securityRequirements": Member("objects"),
}
SIGNATURE = {
    "protected": _REQUIRED_STRING,
    "signature": _REQUIRED_STRING,
    "header": Member("object"),
}
_MODES = ("defaultInputModes", "defaultOutputModes", "inputModes", "outputModes")


@dataclass(frozen=True, slots=True)
class _Message:
    """One protobuf message of the card, as JSON: where it is, its fields and what it is."""

    pointer: str
    value: dict[Any, Any]
    shape: Mapping[str, Member]
    what: str


def check_payload(target: str, payload: Any, options: Mapping[str, Any]) -> Iterator[Problem]:
    """Every rule of the A2A target that ``payload`` (one AgentCard) breaks."""
    if not isinstance(payload, dict):
        message = f"an AgentCard must be a JSON object, not {describe(payload)}"
        yield Problem("", "a2a.card.not-object", message)
        return
    yield from run_rules(CARD_RULES, tuple(_messages(payload)))


def _messages(card: dict[Any, Any]) -> Iterator[_Message]:
    yield _Message("", card, CARD, "an AgentCard")
    yield from _each(card, "", "supportedInterfaces", INTERFACE, "an AgentInterface")
    if isinstance(card.get("provider"), dict):
        yield _Message("/provider", card["provider"], PROVIDER, "an AgentProvider")
    capabilities = card.get("capabilities")
    if isinstance(capabilities, dict):
        yield _Message("/capabilities", capabilities, CAPABILITIES, "AgentCapabilities")
        yield from _each(
            capabilities, "/capabilities", "extensions", EXTENSION, "an AgentExtension"
        )
    yield from _each(card, "", "skills", SKILL, "an AgentSkill")
    yield from _each(card, "", "signatures", SIGNATURE, "an AgentCardSignature")


def _each(
    parent: dict[Any, Any], pointer: str, key: str, shape: Mapping[str, Member], what: str
) -> Iterator[_Message]:
    items = parent.get(key)
    for index, item in enumerate(items if isinstance(items, list) else ()):
        if isinstance(item, dict):
            yield _Message(join(pointer, key, index), item, shape, what)


# --- rules ------------------------------------------------------------------------------------


def check_missing(messages: tuple[_Message, ...]) -> Iterator[Flaw]:
    yield from _member_flaws(messages, "missing")
    for message in messages:
        yield from _empty_required(message)


def _empty_required(message: _Message) -> Iterator[Flaw]:
    # ProtoJSON cannot tell an empty string or list from an unset field: REQUIRED means filled.
    for name, member in message.shape.items():
        value = message.value.get(name)
        if member.required and value in ("", []):
            text = f"{message.what} needs {quoted(name)}, and an empty value counts as none"
            yield Flaw(join(message.pointer, name), text)


def _member_flaws(messages: tuple[_Message, ...], which: str) -> Iterator[Flaw]:
    for message in messages:
        yield from member_flaws(message.value, message.shape, message.pointer, message.what)[which]


def check_media_types(messages: tuple[_Message, ...]) -> Iterator[Flaw]:
    for message in messages:
        for key in _MODES:
            modes = message.value.get(key) if key in message.shape else None
            for index, mode in enumerate(modes if isinstance(modes, list) else ()):
                if isinstance(mode, str) and not MEDIA_TYPE.match(mode):
                    text = f"{describe(mode)} is not a media type such as application/json"
                    yield Flaw(join(message.pointer, key, index), text)


def check_skill_ids(messages: tuple[_Message, ...]) -> Iterator[Flaw]:
    skills = [m for m in messages if m.shape is SKILL]
    for flaw in duplicate_names((join(m.pointer, "id"), m.value.get("id")) for m in skills):
        yield Flaw(flaw.pointer, "skill id is used twice; each skill needs a unique id")


CARD_RULES: dict[str, Callable[[tuple[_Message, ...]], Iterable[Flaw]]] = {
    "a2a.field.missing": check_missing,
    "a2a.field.type": lambda messages: _member_flaws(messages, "type"),
    # ProtoJSON parsers refuse unknown fields unless told to ignore them.
    "a2a.field.unknown": lambda messages: _member_flaws(messages, "unknown"),
    "a2a.field.media-type": check_media_types,
    "a2a.skill.duplicate-id": check_skill_ids,
}


def check_request(
    target: str, payloads: list[Any], options: Mapping[str, Any]
) -> Iterator[Problem]:
    """Cards published together: each names a different agent."""
    named = [(f"/{i}/name", p.get("name")) for i, p in enumerate(payloads) if isinstance(p, dict)]
    for flaw in duplicate_names(named):
        yield Problem(flaw.pointer, "a2a.request.duplicate-name", flaw.message)


RULE_IDS = ("a2a.card.not-object", *CARD_RULES, "a2a.request.duplicate-name")
