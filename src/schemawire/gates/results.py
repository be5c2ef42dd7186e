"""The result gate: a tool's result, checked before the model reads it.

In order:

1. A failure (the tool raised, or said ``isError``) becomes a one-line error with the stable
   code ``tool_failed``: no stack trace or exception internals reach the model.
2. The structured result is validated against the tool's output schema. Where the tool gave only
   text and has an output schema, text that is itself JSON is parsed and checked ("JSON inside
   JSON"). A mismatch becomes an error result the model can read, with every violation: the run
   goes on, and the model knows not to trust the value.
3. Secrets are redacted (`schemawire.gates.redact`): values the output schema marks
   ``x-redact`` or ``writeOnly``, members whose key names a secret, and detected keys and tokens.
4. The result is cut to the tool's byte budget, staying valid JSON (`schemawire.gates.truncate`);
   the verdict says whether what is left still satisfies the output schema.

The gate never raises: whatever the tool returned, the model gets something it can read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from schemawire._json import Limits, dumps, loads
from schemawire.errors import JSONError, SchemawireError, UsageError
from schemawire.gates._schema_view import SchemaView
from schemawire.gates._values import ValueLimits, ValueProblem, plain_json
from schemawire.gates.redact import Redactor, default_redactor
from schemawire.gates.truncate import size_of, truncate
from schemawire.gates.verdict import Change, Verdict
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Rejection, ToolResult, ToolSpec, Violation

if TYPE_CHECKING:
    from schemawire.schema.repository import Repository

__all__ = ["ResultGate", "ResultOptions"]

_MCP_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_ONE_LINE = 300  # characters of a failure's message shown to the model
_TEXT_LIMITS = Limits(max_bytes=64 * 1024 * 1024, big_integers="exact")
# What a result may be before it is cut to budget: large, but JSON, and not nested without end.
_RESULT_LIMITS = ValueLimits(max_bytes=64 * 1024 * 1024, max_depth=128, max_string=64 * 1024 * 1024,
                             max_items=10_000_000)  # fmt: skip


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
            raise UsageError(f"no tool {tool!r} in {repository.root}")
        output = repository.find(f"tools/{tool}.output")
        validator = repository.validator(output) if output is not None else None
        return cls(spec, validator, options, repository.documents)

    def check(self, result: Any, *, call_id: str = "") -> Verdict:
        """The verdict on ``result``: a `ToolResult`, an MCP ``CallToolResult`` object, the
        exception the tool raised, or the value a local tool returned."""
        try:
            return self._check(_as_result(result, call_id), call_id)
        except (SchemawireError, ValueError, TypeError, RecursionError) as error:
            # Not reached by any input we know of; if it is, the model still reads one line.
            return self._failed(ToolResult(call_id, None, True), f"{type(error).__name__}",
                                code="gate_error")  # fmt: skip

    # --- the steps -------------------------------------------------------------------------

    def _check(self, result: ToolResult | BaseException, call_id: str) -> Verdict:
        if isinstance(result, BaseException):
            return self._failed(ToolResult(call_id, None, True), _exception_line(result))
        plain, problem = _plain(result)
        if problem is not None:
            if result.is_error:
                return self._failed(result, "the tool failed and its error is not JSON")
            violation = Violation(problem.pointer, problem.keyword, problem.message)
            hint = f"{self.spec.name} returned what JSON cannot hold; tell the user it failed."
            return self._refused(result, "result_malformed", (violation,), hint)
        result = plain
        if result.is_error:
            return self._failed(result, _failure_line(result.content))
        structured, changes = self._structured(result)
        if self.validator is not None:
            violations = self._violations(structured)
            if violations:
                return self._invalid(result, violations)
        content, structured = self._redacted(result.content, structured, changes)
        content, structured = self._cut(content, structured, changes)
        conforms = None
        if self.validator is not None and structured is not None:
            conforms = self.validator.is_valid(structured)
        value = ToolResult(result.call_id, content, False, structured)
        return Verdict("results", self.spec.name, True, value, None, tuple(changes), conforms)

    def _structured(self, result: ToolResult) -> tuple[Any, list[Change]]:
        """The structured result: as given, else the JSON inside the text, else (for a local tool
        with an output schema) the returned value itself."""
        if result.structured is not None or self.validator is None:
            return result.structured, []
        text = _only_text(result.content)
        if text is not None and self.options.json_in_text:
            try:
                return loads(text, limits=_TEXT_LIMITS, source="<result>"), []
            except JSONError:
                return None, []
        if text is None and not _is_blocks(result.content):
            return result.content, []
        return None, []

    def _violations(self, structured: Any) -> tuple[Violation, ...]:
        assert self.validator is not None
        if structured is None:
            message = "the tool has an output schema but gave no structured result (or JSON text)"
            return (Violation("", "type", message, "a value its output schema accepts", None),)
        return self.validator.violations(structured)

    def _redacted(self, content: Any, structured: Any, changes: list[Change]) -> tuple[Any, Any]:
        if not self.options.redact:
            return content, structured
        marked = self.view.mark if self.view is not None and self.view.has_marks else None
        if structured is not None:
            same = content is structured  # a local tool's value is both: redacted once
            structured, found = self.redactor.value(structured, marked, "")
            changes.extend(_under("/structured", found))
            if same:
                changes.extend(_under("/content", found))
                return structured, structured
        content, found = self._redacted_content(content, marked)
        changes.extend(_under("/content", found))
        return content, structured

    def _redacted_content(self, content: Any, marked: Any) -> tuple[Any, list[Change]]:
        if not _is_blocks(content):
            return self.redactor.value(content, marked if not isinstance(content, str) else None)
        blocks, found = [], []
        for index, block in enumerate(content):
            text = block.get("text") if block.get("type") == "text" else None
            if not isinstance(text, str):
                blocks.append(block)
                continue
            redacted, changes = self._redacted_text(text, marked)
            found += [replace(c, pointer=f"/{index}/text{c.pointer}") for c in changes]
            blocks.append({**block, "text": redacted} if redacted is not text else block)
        return blocks, found

    def _redacted_text(self, text: str, marked: Any) -> tuple[str, list[Change]]:
        """Text that is JSON is redacted member by member (keys and schema marks count), then
        written back; other text string by string."""
        value = _json_container(text)
        if value is not None:
            redacted, changes = self.redactor.value(value, marked)
            return (dumps(redacted, indent=False) if changes else text), changes
        redacted_text, found = self.redactor.value(text)
        return redacted_text, found

    def _cut(self, content: Any, structured: Any, changes: list[Change]) -> tuple[Any, Any]:
        budget = self.options.max_bytes
        required = self.view.required if self.view is not None else None
        if structured is not None and size_of(structured) > budget:
            structured, cuts = truncate(structured, budget, required)
            changes.extend(_under("/structured", cuts))
        if content is not None and size_of(content) > budget:
            content, cuts = self._cut_content(content, budget, required)
            changes.extend(_under("/content", cuts))
        return content, structured

    def _cut_content(self, content: Any, budget: int, required: Any) -> tuple[Any, list[Change]]:
        if not _is_blocks(content):
            return truncate(content, budget, required if not isinstance(content, str) else None)
        texts = [i for i, b in enumerate(content) if b.get("type") == "text"]
        share = budget // max(len(texts), 1)  # each text block its part of the budget
        blocks, cuts = list(content), []
        for index in texts:
            text = blocks[index].get("text")
            if not isinstance(text, str) or size_of(text) <= share:
                continue
            cut, found = _cut_text(text, share, required)
            blocks[index] = {**blocks[index], "text": cut}
            cuts += [replace(c, pointer=f"/{index}/text{c.pointer}") for c in found]
        return blocks, cuts

    # --- failures --------------------------------------------------------------------------

    def _failed(self, result: ToolResult, line: str, code: str = "tool_failed") -> Verdict:
        violation = Violation("", "tool", line[:_ONE_LINE])
        hint = f"{self.spec.name} failed; tell the user, or call it again if the error says how."
        return self._refused(result, code, (violation,), hint)

    def _invalid(self, result: ToolResult, violations: tuple[Violation, ...]) -> Verdict:
        hint = (f"The result of {self.spec.name} does not match its output schema: do not rely "
                "on it; tell the user, or call the tool again.")  # fmt: skip
        return self._refused(result, "result_invalid", violations, hint)

    def _refused(
        self, result: ToolResult, code: str, violations: tuple[Violation, ...], hint: str
    ) -> Verdict:
        spec, schema = self.spec, self.spec.output_schema or {}
        schema_id = schema.get("$id") if code == "result_invalid" else spec.schema_id
        version = schema.get("x-version") if code == "result_invalid" else spec.version
        rejection = Rejection("results", code, spec.name, schema_id, version, violations, hint)
        shown, changes = self.redactor.value(rejection.to_json())  # violations quote the result
        shown, cuts = truncate(shown, self.options.max_bytes)
        error = ToolResult(result.call_id, shown, True, None)
        changes = _under("/content", changes + cuts)
        return Verdict("results", spec.name, False, error, rejection, tuple(changes), False)


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


def _as_result(result: Any, call_id: str) -> ToolResult | BaseException:
    if isinstance(result, ToolResult | BaseException):
        return result
    if (
        isinstance(result, dict)
        and isinstance(result.get("content"), list)
        and ("isError" in result or "structuredContent" in result or _is_blocks(result["content"]))
    ):  # an MCP CallToolResult, as JSON
        return ToolResult(call_id, result["content"], result.get("isError") is True,
                          result.get("structuredContent"))  # fmt: skip
    return ToolResult(call_id, result)


def _is_blocks(content: Any) -> bool:
    """Whether ``content`` is a list of MCP content blocks."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") in _MCP_BLOCK_TYPES for b in content)
    )


def _only_text(content: Any) -> str | None:
    """The text of content that is one string or one text block."""
    if isinstance(content, str):
        return content
    if _is_blocks(content) and len(content) == 1 and content[0].get("type") == "text":
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def _json_container(text: str) -> dict[str, Any] | list[Any] | None:
    """The object or array ``text`` holds, if it is one. (Most text is prose: it is not parsed,
    since a failed parse builds a whole error with a caret.)"""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        value = loads(text, limits=_TEXT_LIMITS, source="<result>")
    except JSONError:
        return None
    return value if isinstance(value, dict | list) else None


def _cut_text(text: str, budget: int, required: Any) -> tuple[str, list[Change]]:
    """Text cut to ``budget`` bytes; text that is JSON is cut as JSON and written back."""
    value = _json_container(text)
    if value is not None:
        cut, changes = truncate(value, budget, required)
        return dumps(cut, indent=False), changes
    cut_string, changes = truncate(text, budget)
    return cut_string, changes


def _under(prefix: str, changes: list[Change]) -> list[Change]:
    """``changes`` with pointers into the `ToolResult` as a whole (``/structured/...``)."""
    return [replace(change, pointer=prefix + change.pointer) for change in changes]


def _exception_line(error: BaseException) -> str:
    try:
        lines = str(error).strip().splitlines()
    except Exception:  # an exception that cannot say what it is: its type still can
        lines = []
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _failure_line(content: Any) -> str:
    """One line of what a failing tool said: the last line of a traceback, or the first line."""
    text = _only_text(content)
    if text is None:
        texts = (
            [b.get("text") for b in content if isinstance(b, dict)] if _is_blocks(content) else []
        )
        text = "\n".join(t for t in texts if isinstance(t, str)) or dumps(content, indent=False)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "the tool failed and said nothing"
    return lines[-1] if _TRACEBACK.search(text) else lines[0]
