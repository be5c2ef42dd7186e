"""Hypothesis strategies: varied tool schemas, as real tool definitions write them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

KEYS = st.sampled_from(
    [
        "city",
        "unit",
        "amount",
        "order_id",
        "x.y",
        "a b",
        "tags",
        "9lives",
        "meta",
        "é",
        "Content-Type",
        "n",
    ]
)
PATTERNS = st.sampled_from(["^A-[0-9]{4,}$", "^[a-z]+$", "(?=x)x", "^\\d+$"])
FORMATS = st.sampled_from(["email", "date-time", "uri", "uuid", "date", "hostname"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))


def _annotations() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "description": st.text(min_size=1, max_size=12),
            "title": st.text(min_size=1, max_size=8),
            "default": SCALARS,
            "examples": st.lists(SCALARS, min_size=1, max_size=2),
        },
    )


def _string() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(4, 9),
            "pattern": PATTERNS,
            "format": FORMATS,
            "enum": st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True),
        },
    )


def _number() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.sampled_from(["number", "integer"])},
        optional={
            "minimum": st.integers(-5, 0),
            "maximum": st.integers(1, 9),
            "exclusiveMinimum": st.integers(-9, -6),
            "multipleOf": st.sampled_from([1, 2, 0.5]),
        },
    )


def _leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        _string(),
        _number(),
        st.just({"type": "boolean"}),
        st.just({"type": ["string", "null"]}),
        st.just({"type": ["string", "integer"]}),
        st.builds(lambda v: {"const": v}, SCALARS),
        st.just({}),
        st.just(True),
        st.just({"$ref": "#/$defs/code"}),
        st.just({"$ref": "#/$defs/code", "description": "A code."}),
    )


def _with_annotations(schema: Any, extra: dict[str, Any]) -> Any:
    return {**schema, **extra} if isinstance(schema, dict) else schema


def _object(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(KEYS, children, max_size=4))
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        names = sorted(properties)
        if names and draw(st.booleans()):
            schema["required"] = draw(st.lists(st.sampled_from(names), unique=True))
        schema["additionalProperties"] = draw(
            st.sampled_from([False, False, True, None, {"type": "string"}])
        )
        if schema["additionalProperties"] is None:
            del schema["additionalProperties"]
        return schema

    return build()


def _composite(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        _object(children),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(
            lambda items, n: {"type": "array", "items": items, "minItems": n, "uniqueItems": True},
            children,
            st.integers(0, 3),
        ),
        st.builds(lambda b: {"anyOf": b}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda b: {"oneOf": b}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda b: {"allOf": b}, st.lists(_object(children), min_size=1, max_size=2)),
        st.builds(lambda s: {"not": s}, children),
        st.builds(lambda i, t: {"if": i, "then": t}, children, children),
    )


SUBSCHEMAS = st.recursive(
    _leaf(),
    lambda children: st.builds(_with_annotations, _composite(children), _annotations()),
    max_leaves=10,
)


@st.composite
def tool_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A tool input schema: an object at the root (sometimes with root alternatives)."""
    root = draw(_object(SUBSCHEMAS))
    root["description"] = draw(st.text(min_size=1, max_size=20))
    root["$defs"] = {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}
    if draw(st.integers(0, 5)) == 0:
        root["anyOf"] = [{"required": [key]} for key in list(root["properties"])[:2]] or [{}]
    return root
