"""The result gate: a tool's result, checked before the model reads it.

What it checks says what it is: a `McpResult` is a ``CallToolResult`` as an MCP server sent
it, a `ToolResult` a result already taken apart, an exception what the tool raised, and any
other value what a local tool returned (validated as that value, whatever its shape). In order:

1. A failure (the tool raised, or said ``isError``) becomes a one-line error with the stable
   code ``tool_failed``: no stack trace or exception internals reach the model. An MCP error
   result that carries a schemawire rejection (`schemawire.gates._rejection`) is that
   rejection, passed on unchanged.
2. The structured result is validated against the tool's output schema. Where the tool gave only
   text and has an output schema, text that is itself JSON is parsed and checked ("JSON inside
   JSON"). A mismatch becomes an error result the model can read, with every violation: the run
   goes on, and the model knows not to trust the value.
3. Secrets are redacted (`schemawire.gates.redact`): values the output schema marks
   ``x-redact`` or ``writeOnly``, members whose key names a secret, and detected keys and tokens.
4. The result is cut to the tool's byte budget, staying valid JSON (`schemawire.gates._truncate`;
   content blocks by `schemawire.gates._cut_blocks`);
   the verdict says whether what is left still satisfies the output schema. A rejection is cut
   as a rejection: violations are left out from the end, and it says how many.

The gate never raises: whatever the tool returned, the model gets something it can read.
"""

from __future__ import annotations

import base64
import binascii
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from schemawire._json import dumps, json_in_text, loads, quoted
from schemawire.errors import JSONError, SchemawireError, UsageError, one_line
from schemawire.gates._cut_blocks import TEXT_LIMITS, cut_blocks
from schemawire.gates._rejection import carried_rejection, cut_rejection
from schemawire.gates._schema_view import SchemaView
from schemawire.gates._truncate import size_of, truncate
from schemawire.gates._values import ValueLimits, ValueProblem, plain_json, without_lone_surrogates
from schemawire.gates.redact import Redactor, default_redactor
from schemawire.gates.verdict import Change, Verdict
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Rejection, ToolResult, ToolSpec, Violation

if TYPE_CHECKING:
    from schemawire.schema.repository import Repository

__all__ = ["McpResult", "ResultGate", "ResultOptions"]

_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_ONE_LINE = 300  # characters of a failure's message shown to the model
_MARKER = "[REDACTED:"
# What a result may be before it is cut to budget: large, but JSON, and not nested without end.
_RESULT_LIMITS = ValueLimits(
    max_bytes=64 * 1024 * 1024, max_depth=128, max_string=64 * 1024 * 1024, max_items=10_000_000
)


@dataclass(frozen=True, slots=True)
class ResultOptions:
    """How the result gate treats results.

    Attributes:
        max_bytes: the byte budget of what the model reads (the structured result and the
            content, each); a larger value is cut to it, as valid JSON.
        redact: replace secrets.
        json_in_text: parse text content that is JSON, when the tool has an output schema and
            gave no structured result.
        redactor: the detectors to use (default: `default_redactor`).
    """

    max_bytes: int = 32 * 1024
    redact: bool = True
    json_in_text: bool = True
    redactor: Redactor | None = None


@dataclass(frozen=True, slots=True)
class McpResult:
    """A ``CallToolResult`` as an MCP server sent it: the one form the result gate reads as MCP.

    Attributes:
        content: the content blocks (``[{"type": "text", "text": ...}, ...]``), as sent.
        is_error: the server says the tool failed (``isError``).
        structured: ``structuredContent``, when there is one.
        meta: the result's ``_meta``, when there is one (it may mark a schemawire rejection).
    """

    content: Any
    is_error: bool = False
    structured: Any = None
    meta: Any = None

    @classmethod
    def from_json(cls, result: Mapping[str, Any]) -> McpResult:
        """A ``CallToolResult`` as JSON; a missing ``content`` is no content."""
        return cls(
            result.get("content", []),
            result.get("isError") is True,
            result.get("structuredContent"),
            result.get("_meta"),
        )


class _Received(NamedTuple):
    """A result as the gate takes it in: the result; whether its content is MCP content blocks;
    the rejection (as the model would read it) that an MCP error result carries; and what
    keeps an MCP result from being one."""

    result: ToolResult
    as_blocks: bool
    carried: tuple[dict[str, Any], Rejection] | None = None
    malformed: Violation | None = None


class ResultGate:
    """Checks the results of one tool. Safe to share between threads."""

    def __init__(
        self,
        spec: ToolSpec,
        validator: CompiledSchema | None = None,
        options: ResultOptions | None = None,
        documents: Mapping[str, Any] | None = None,
    ) -> None:
        """
        Args:
            spec: the tool; its output schema, if any, is the one results must satisfy.
            validator: the output schema compiled with its references; compiled from
                ``spec.output_schema`` when not given.
            options: budget and redaction; the defaults are safe.
            documents: schemas the output schema's references name, by URI.

        Raises:
            SchemaError: the output schema does not compile.
        """
        self.spec = spec
        schema = spec.output_schema
        if validator is None and schema is not None:
            validator = compile_schema(schema, source=f"{spec.name}.output")
        self.validator = validator
        self.options = options or ResultOptions()
        self.view = SchemaView(schema, documents) if schema is not None else None
        self.redactor = self.options.redactor or default_redactor()

    @classmethod
    def from_repository(
        cls, repository: Repository, tool: str, options: ResultOptions | None = None
    ) -> ResultGate:
        """The gate of ``tool`` (its name) in ``repository``.

        Raises:
            UsageError: no such tool.
            SchemaError: its output schema does not compile.
        """
        spec = next((s for s in repository.tools() if s.name == tool), None)
        if spec is None:
            raise UsageError(f"no tool {quoted(tool)} in {repository.root}")
        output = repository.find(f"tools/{tool}.output")
        validator = repository.validator(output) if output is not None else None
        return cls(spec, validator, options, repository.documents)

    def check(self, result: Any, *, call_id: str = "") -> Verdict:
        """The verdict on ``result``: a `McpResult` (what an MCP server sent), a `ToolResult`,
        the exception the tool raised, or the value a local tool returned (a dict is that
        value, even one shaped like a ``CallToolResult``)."""
        try:
            return self._check(_received(result, call_id), call_id)
        except (SchemawireError, ValueError, TypeError, RecursionError) as error:
            # Not reached by any input we know of; if it is, the model still reads one line.
            return self._failed(
                ToolResult(call_id, None, True), f"{type(error).__name__}", code="gate_error"
            )

    # --- the steps -------------------------------------------------------------------------

    def _check(self, received: _Received | BaseException, call_id: str) -> Verdict:
        if isinstance(received, BaseException):
            # The whole first line: `_failed` redacts it before it cuts it.
            line = one_line(received, limit=sys.maxsize)
            return self._failed(ToolResult(call_id, None, True), line)
        result, as_blocks, carried, malformed = received
        if carried is not None:
            return self._passed_on(result, *carried)
        if malformed is not None:
            hint = f"{self.spec.name}'s server sent a result MCP does not allow; tell the user."
            return self._refused(result, "result_malformed", (malformed,), hint)
        plain, problem = _plain(result)
        if problem is not None:
            return self._not_json(result, problem)
        if plain.is_error:
            return self._failed(plain, _failure_text(plain.content, as_blocks))
        return self._checked(plain, as_blocks)

    def _not_json(self, result: ToolResult, problem: ValueProblem) -> Verdict:
        if result.is_error:
            return self._failed(result, "the tool failed and its error is not JSON")
        violation = Violation(problem.pointer, problem.keyword, problem.message)
        held = (
            "more than a result may hold"
            if problem.kind == "too_large"
            else "what JSON cannot hold"
        )
        hint = f"{self.spec.name} returned {held}; tell the user it failed."
        return self._refused(result, "result_malformed", (violation,), hint)

    def _checked(self, result: ToolResult, as_blocks: bool) -> Verdict:
        """A result made of JSON that does not say it failed: validated, redacted, cut."""
        structured, changes = self._structured(result, as_blocks)
        validator = self.validator
        if validator is not None and (structured is None or not validator.is_valid(structured)):
            return self._invalid(result, self._violations(structured))
        content, structured = self._redacted(result.content, structured, changes, as_blocks)
        content, structured = self._cut(content, structured, changes, as_blocks)
        conforms = None
        if validator is not None and structured is not None:
            # Valid as checked above, unless a redaction or a cut changed it since.
            conforms = validator.is_valid(structured) if changes else True
        value = ToolResult(result.call_id, content, False, structured)
        return Verdict.accept(
            gate="results",
            tool=self.spec.name,
            value=value,
            changes=tuple(changes),
            conforms=conforms,
        )

    def _structured(self, result: ToolResult, as_blocks: bool) -> tuple[Any, list[Change]]:
        """The structured result: as given, else the JSON inside the text, else (for a local tool
        with an output schema) the returned value itself."""
        if result.structured is not None or self.validator is None:
            return result.structured, []
        if not as_blocks and self.validator.is_valid(result.content):
            return result.content, []  # a local tool's own value, a string its schema takes too
        text = _only_text(result.content, as_blocks)
        if text is not None and self.options.json_in_text:
            try:
                return loads(text, limits=TEXT_LIMITS, source="<result>"), []
            except JSONError:
                return None, []
        if text is None and not as_blocks:
            return result.content, []
        return None, []

    def _violations(self, structured: Any) -> tuple[Violation, ...]:
        assert self.validator is not None
        if structured is None:
            message = "the tool has an output schema but gave no structured result (or JSON text)"
            return (Violation("", "type", message, "a value its output schema accepts", None),)
        return self.validator.violations(structured)

    def _redacted(
        self, content: Any, structured: Any, changes: list[Change], as_blocks: bool
    ) -> tuple[Any, Any]:
        if not self.options.redact:
            return content, structured
        marked = self.view.mark if self.view is not None and self.view.has_marks else None
        if structured is not None:
            same = content is structured  # a local tool's value is both: redacted once
            structured, found = self.redactor.value(structured, marked, "", under="/structured")
            changes.extend(found)
            if same:
                changes.extend(_under("/content", found, "/structured"))
                return structured, structured
        content, found = self._redacted_content(content, marked, as_blocks)
        changes.extend(_under("/content", found))
        return content, structured

    def _redacted_content(
        self, content: Any, marked: Any, as_blocks: bool
    ) -> tuple[Any, list[Change]]:
        if not as_blocks:
            return self.redactor.value(content, marked if not isinstance(content, str) else None)
        blocks, found = [], []
        for index, block in enumerate(content):
            redacted, changes = self._redacted_block(block, marked)
            found += [replace(c, pointer=f"/{index}{c.pointer}") for c in changes]
            blocks.append(redacted)
        return blocks, found

    def _redacted_block(self, block: dict[str, Any], marked: Any) -> tuple[Any, list[Change]]:
        """One content block, every member of it: a text block's text (JSON text member by
        member, with the schema's marks), an embedded resource, and all else (``_meta``,
        ``uri``, annotations, keys) as values. Image and audio ``data`` is binary: kept."""
        kind = block.get("type")
        rest: dict[str, Any] = {}
        shown: dict[str, Any] = {}
        found: list[Change] = []
        for name, member in block.items():
            if name == "text" and kind == "text" and isinstance(member, str):
                shown[name], changes = self._redacted_text(member, marked)
            elif name == "resource" and kind == "resource" and isinstance(member, dict):
                shown[name], changes = self._redacted_resource(member)
            elif name == "data" and kind in ("image", "audio"):
                shown[name], changes = member, []
            else:
                rest[name] = member
                continue
            found += _under(f"/{name}", changes)
        redacted_rest, changes = self.redactor.value(rest)
        found += changes
        if not found:
            return block, []
        return {**shown, **redacted_rest} if redacted_rest is not rest else {
            **block,
            **shown,
        }, found

    def _redacted_resource(self, resource: dict[str, Any]) -> tuple[Any, list[Change]]:
        """An embedded resource: its text as a text block's (no schema marks: it is not the
        structured result), its blob decoded where it is UTF-8 text, all else as values."""
        text, blob = resource.get("text"), resource.get("blob")
        rest = {k: v for k, v in resource.items() if k not in ("text", "blob")}
        redacted, found = self.redactor.value(rest)
        shown = dict(redacted)
        if isinstance(text, str):
            shown["text"], changes = self._redacted_text(text, None)
            found += _under("/text", changes)
        if isinstance(blob, str):
            shown["blob"], changes = _redacted_blob(self.redactor, blob)
            found += _under("/blob", changes)
        return (shown if found else resource), found

    def _redacted_text(self, text: str, marked: Any) -> tuple[str, list[Change]]:
        """Text that is JSON is redacted member by member (keys and schema marks count), then
        written back; other text string by string."""
        value = json_in_text(text, TEXT_LIMITS)
        if value is not None:
            redacted, changes = self.redactor.value(value, marked)
            return (dumps(redacted, indent=False) if changes else text), changes
        redacted_text, found = self.redactor.value(text)
        return redacted_text, found

    def _cut(
        self, content: Any, structured: Any, changes: list[Change], as_blocks: bool
    ) -> tuple[Any, Any]:
        budget = self.options.max_bytes
        required = self.view.required if self.view is not None else None
        if structured is not None and size_of(structured) > budget:
            same = content is structured and not as_blocks  # a local tool's value: cut once
            structured, cuts = truncate(structured, budget, required)
            changes.extend(_under("/structured", cuts))
            if same:
                changes.extend(_under("/content", cuts))
                return structured, structured
        if content is not None and size_of(content) > budget:
            content, cuts = self._cut_content(content, budget, required, as_blocks)
            changes.extend(_under("/content", cuts))
        return content, structured

    def _cut_content(
        self, content: Any, budget: int, required: Any, as_blocks: bool
    ) -> tuple[Any, list[Change]]:
        if not as_blocks:
            return truncate(content, budget, required if not isinstance(content, str) else None)
        return cut_blocks(content, budget, required)

    # --- failures --------------------------------------------------------------------------

    def _failed(self, result: ToolResult, said: str, code: str = "tool_failed") -> Verdict:
        """A refusal quoting one line of what the tool ``said``. All it said is redacted before
        the line is taken and cut (a cut can end a secret early, and what is left no detector
        knows), and the rejection holds the redacted line: ``schemawire call --json`` prints
        it, not only the model. Always redacted, as the model's view of any refusal is."""
        redacted, _ = self._redacted_text(said, None)  # JSON by member, so keys count too
        # An exception's message may hold a lone surrogate, which no JSON text can carry.
        line = _cut_line(_failure_line(without_lone_surrogates(redacted)))
        violation = Violation("", "tool", line)
        hint = f"{self.spec.name} failed; tell the user, or call it again if the error says how."
        return self._refused(result, code, (violation,), hint)

    def _invalid(self, result: ToolResult, violations: tuple[Violation, ...]) -> Verdict:
        hint = (
            f"The result of {self.spec.name} does not match its output schema: do not rely "
            "on it; tell the user, or call the tool again."
        )
        return self._refused(result, "result_invalid", self._quoted(violations), hint)

    def _quoted(self, violations: tuple[Violation, ...]) -> tuple[Violation, ...]:
        """The violations with the values they quote redacted as the members they quote:
        by the schema's marks (valid or not), by key, and by the detectors."""
        if not self.options.redact:
            return violations
        marked = self.view.mark if self.view is not None and self.view.has_marks else None
        return tuple(self.redactor.violation(violation, marked) for violation in violations)

    def _refused(
        self, result: ToolResult, code: str, violations: tuple[Violation, ...], hint: str
    ) -> Verdict:
        spec, schema = self.spec, self.spec.output_schema or {}
        schema_id = schema.get("$id") if code == "result_invalid" else spec.schema_id
        version = schema.get("x-version") if code == "result_invalid" else spec.version
        rejection = Rejection(
            gate="results",
            code=code,
            tool=spec.name,
            schema_id=schema_id,
            version=version,
            violations=violations,
            hint=hint,
        )
        return self._shown(result.call_id, rejection.to_json(), rejection)

    def _passed_on(
        self, result: ToolResult, shown: dict[str, Any], rejection: Rejection
    ) -> Verdict:
        """A rejection another schemawire gate made (an MCP server's, a proxy's), carried by an
        error result: passed on as it came, within this gate's budget."""
        return self._shown(result.call_id, shown, rejection)

    def _shown(self, call_id: str, shown: dict[str, Any], rejection: Rejection) -> Verdict:
        """The refusal, as the model reads it: redacted (violations quote the result) and cut to
        budget as a rejection."""
        redacted, changes = self.redactor.value(shown)
        cut, cuts = cut_rejection(redacted, self.options.max_bytes)
        error = ToolResult(call_id, cut, True, None)
        found = _under("/content", changes + cuts)
        return Verdict.reject(
            rejection, gate="results", tool=self.spec.name, value=error, changes=tuple(found)
        )


def _redacted_blob(redactor: Redactor, blob: str) -> tuple[str, list[Change]]:
    """A resource's base64 blob, its secrets redacted where it holds UTF-8 text (a file read
    from disk); binary data, or base64 that is not valid, is kept as it came."""
    try:
        text = base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return blob, []
    redacted, kinds = redactor.text(text)
    if not kinds:
        return blob, []
    encoded = base64.b64encode(redacted.encode("utf-8")).decode("ascii")
    return encoded, [
        Change("redacted", "", f"a {kind} was found in the decoded blob") for kind in kinds
    ]


def _plain(result: ToolResult) -> tuple[ToolResult, ValueProblem | None]:
    """``result`` made of plain JSON values (a local tool may return enums, tuples...), or what
    keeps it from being JSON. A value that is both content and structured result stays one."""
    content, problem = plain_json(result.content, _RESULT_LIMITS)
    if problem is not None:
        return result, problem
    structured = result.structured
    if structured is result.content:
        structured = content
    elif structured is not None:
        structured, problem = plain_json(structured, _RESULT_LIMITS)
        if problem is not None:
            return result, replace(problem, pointer="/structured" + problem.pointer)
    return ToolResult(result.call_id, content, result.is_error, structured), None


def _received(result: Any, call_id: str) -> _Received | BaseException:
    """``result`` as the gate takes it in; nothing is guessed from the shape of a dict."""
    if isinstance(result, BaseException):
        return result
    if isinstance(result, McpResult):
        return _from_mcp(result, call_id)
    if isinstance(result, ToolResult):  # its content may be MCP content blocks
        return _Received(result, result.has_content_blocks)
    return _Received(ToolResult(call_id, result), False)


def _from_mcp(result: McpResult, call_id: str) -> _Received:
    """An MCP result: its content must be a list of content blocks (objects with a ``type``)."""
    content = result.content
    taken = ToolResult(call_id, content, result.is_error, result.structured)
    malformed = _not_blocks(content)
    if malformed is not None:
        return _Received(replace(taken, content=None), False, None, malformed)
    text = _only_text(content, True) if result.is_error else None
    carried = carried_rejection(text, result.meta) if text is not None else None
    return _Received(taken, True, carried)


def _not_blocks(content: Any) -> Violation | None:
    """Why ``content`` is not a list of MCP content blocks (objects with a string ``type``)."""
    if not isinstance(content, list):
        return Violation(
            "/content",
            "type",
            "content must be an array of content blocks",
            "array",
            _kind(content),
        )
    for index, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            message = "not a content block (an object with a string type)"
            return Violation(f"/content/{index}", "type", message, "object", _kind(block))
    return None


def _kind(value: Any) -> str:
    """The JSON type of ``value``, for a violation's ``got`` (the value itself may be large)."""
    kinds = (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (list, "array"),
        (dict, "object"),
    )
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def _only_text(content: Any, as_blocks: bool) -> str | None:
    """The text of content that is one string or one text block."""
    if isinstance(content, str):
        return content
    if as_blocks and len(content) == 1 and content[0].get("type") == "text":
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def _under(prefix: str, changes: list[Change], instead_of: str = "") -> list[Change]:
    """``changes`` with pointers into the `ToolResult` as a whole (``/structured/...``), each
    under ``prefix`` in place of the ``instead_of`` it starts with."""
    # Built directly: `dataclasses.replace` costs a few µs a change, and a result can hold
    # hundreds of redactions.
    cut = len(instead_of)
    return [
        Change(
            change.kind, prefix + change.pointer[cut:], change.detail, change.before, change.after
        )
        for change in changes
    ]


def _cut_line(line: str) -> str:
    """A failure's line cut to `_ONE_LINE` characters, never inside a ``[REDACTED:...]``."""
    if len(line) <= _ONE_LINE:
        return line
    opened = line.rfind(_MARKER, 0, _ONE_LINE + len(_MARKER) - 1)  # the last one begun
    if opened >= 0 and line.find("]", opened) >= _ONE_LINE:
        return line[:opened]
    return line[:_ONE_LINE]


def _failure_text(content: Any, as_blocks: bool) -> str:
    """All a failing tool said: its text, or its content as JSON."""
    text = _only_text(content, as_blocks)
    if text is None:
        texts = [b.get("text") for b in content] if as_blocks else []
        text = "\n".join(t for t in texts if isinstance(t, str)) or dumps(content, indent=False)
    return text


def _failure_line(text: str) -> str:
    """One line of what a failing tool said: the last line of a traceback, or the first line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "the tool failed and said nothing"
    return lines[-1] if _TRACEBACK.search(text) else lines[0]
