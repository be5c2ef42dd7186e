"""The argument gate: a tool call's arguments, checked against the tool's full canonical schema
before the tool runs.

Arguments arrive as a JSON string (OpenAI), an object (Anthropic, Gemini, MCP) or bytes. The gate
reads them with the checked parser (duplicate keys, NaN, integers beyond 64 bits and invalid UTF-8
refused, with line and column), holds them to size limits, decodes the two double encodings
models produce (the whole arguments as a JSON string inside the string, and an object or array
sent as a JSON string), optionally repairs malformed JSON, and validates against every keyword of
the canonical schema, including those a provider projection could not carry. It returns a
`Verdict`: the arguments to call the tool with, or a `Rejection` that lists every violation and
goes back to the model instead. The tool is not called on a rejection, and the gate never raises.

    gate = ArgumentGate.from_repository(repository, "create_refund")
    verdict = gate.check('{"order_id": "A-1042", "amount": -5}')
    if verdict.accepted:
        run(verdict.value)
    else:
        reply_to_model(verdict.rejection.to_json())
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schemawire._json import ParseLimits, loads, loads_written, nests_within, quoted
from schemawire._pointer import resolve, split
from schemawire.errors import ErrorCode, JSONError, SchemawireError, UsageError, one_line
from schemawire.gates._integers import IntegerPlaces
from schemawire.gates._repair import Repaired, repair
from schemawire.gates._schema_view import SchemaView
from schemawire.gates._values import (
    ValueLimits,
    ValueProblem,
    bytes_problem,
    first_problem,
    plain_json,
    replaced,
)
from schemawire.gates.verdict import Change, Verdict
from schemawire.schema.validator import CompiledSchema, compile_schema
from schemawire.types import Projection, Rejection, ToolSpec, Violation

if TYPE_CHECKING:
    from schemawire.schema.repository import Repository

__all__ = ["ArgumentGate", "ArgumentOptions"]

_SOURCE = "<arguments>"
_MAX_DECODING_ROUNDS = 8  # strings decoded at most this deep into each other
_TOO_LARGE_CODES = frozenset({ErrorCode.JSON_TOO_LARGE, ErrorCode.JSON_TOO_DEEP})
_OPENERS = ("{", "[")


@dataclass(frozen=True, slots=True)
class ArgumentOptions:
    """How the argument gate reads arguments.

    Attributes:
        limits: size limits (bytes, depth, string length, items).
        decode_strings: decode arguments sent as a JSON string inside the JSON string, and an
            object or array sent as a JSON string where the schema wants the value; each decoding
            is recorded in the verdict.
        tolerant: repair malformed JSON (trailing commas, single quotes, code fences, a cut-off
            end) with json-repair, recording what changed. Off by default.
        allow_duplicate_keys: accept an object that repeats a key (the last value wins). Off by
            default: which value the model meant is unknown.
    """

    limits: ValueLimits = field(default_factory=ValueLimits)
    decode_strings: bool = True
    tolerant: bool = False
    allow_duplicate_keys: bool = False


class ArgumentGate:
    """Checks the arguments of calls to one tool. Safe to share between threads."""

    def __init__(
        self,
        spec: ToolSpec,
        validator: CompiledSchema | None = None,
        options: ArgumentOptions | None = None,
        *,
        projection: Projection | None = None,
        documents: Mapping[str, Any] | None = None,
    ) -> None:
        """
        Args:
            spec: the tool; its input schema is the canonical one, never a projection.
            validator: the input schema compiled with its references (`Repository.validator`);
                compiled from ``spec.input_schema`` when not given.
            options: how to read arguments; the defaults are safe.
            projection: the projection of ``spec`` the model was sent, when it was not the
                canonical schema itself. Arguments sent under it are turned back into the
                canonical shape before they are validated: keys it renamed, ``null`` for an
                optional property a strict mode made required, maps it sent as key/value
                pairs. Without it, a strict-mode model's ``"unit": null`` is refused.
            documents: the schemas the input schema's ``$ref``s name, by URI
                (`Repository.documents`): where it types a value ``integer``, an integral
                float (``5.0``) is handed on as ``5``.

        Raises:
            SchemaError: the input schema does not compile.
            UsageError: ``projection`` is of another tool.
        """
        if projection is not None and projection.name != spec.name:
            raise UsageError(
                f"the projection is of {quoted(projection.name)}, "
                f"not of the tool {quoted(spec.name)}"
            )
        self.spec = spec
        self.validator = validator or compile_schema(spec.input_schema, source=spec.name)
        self.options = options or ArgumentOptions()
        self.projection = projection
        limits = self.options.limits
        self._parse_limits = ParseLimits(
            max_bytes=limits.max_bytes,
            max_depth=limits.max_depth,
            allow_duplicate_keys=self.options.allow_duplicate_keys,
            big_integers="reject",
        )
        # A string of more than max_string characters, or an array or object of more than
        # max_items entries, needs at least that many characters of text (and a character at
        # least a byte): shorter texts skip that walk.
        self._walk_from = min(limits.max_string, 2 * limits.max_items)
        self._is_valid = self.validator.is_valid
        mapping = projection.argument_map if projection is not None else None
        self._restore = mapping.restore if mapping is not None and not mapping.is_identity else None
        self._integers = IntegerPlaces.of(spec.input_schema, documents)
        # Arguments the schema accepts nest no deeper than it lets them: where that is within
        # the limit, a short text's depth is measured only once the schema refuses it (the
        # limit then decides what is reported, as before). Not under a projection, which
        # accepts other shapes than the canonical schema it validates.
        bound = SchemaView(spec.input_schema, documents).nesting_bound
        self._depth_vouched = (
            self._restore is None and bound is not None and bound <= limits.max_depth
        )

    @classmethod
    def from_repository(
        cls,
        repository: Repository,
        tool: str,
        options: ArgumentOptions | None = None,
        *,
        projection: Projection | None = None,
    ) -> ArgumentGate:
        """The gate of ``tool`` (its name or ``$id``) in ``repository``.

        Args:
            repository: where the tool's schemas are.
            tool: the tool's canonical name (or its ``$id``).
            options: how to read arguments.
            projection: the projection the model was sent (see `ArgumentGate`); from
                ``project_repository(repository, target, ...).find(name)``.

        Raises:
            UsageError: no such tool, or ``projection`` is of another tool.
            SchemaError: its input schema does not compile.
        """
        file = repository.find(tool)
        spec = next((s for s in repository.tools() if file and s.name == file.name), None)
        if file is None or spec is None:
            raise UsageError(f"no tool {quoted(tool)} in {repository.root}")
        validator = repository.validator(file)
        return cls(spec, validator, options, projection=projection, documents=repository.documents)

    def check(self, arguments: Any) -> Verdict:
        """The verdict on ``arguments``: a JSON text (str, bytes) or an already parsed value."""
        try:
            # The usual call, a short JSON text of an object, skips the steps it does not need;
            # anything else (an error, a repair, a long text) takes the full path.
            if type(arguments) is str and len(arguments) < self._walk_from:
                try:
                    value, written = loads_written(
                        arguments,
                        limits=self._parse_limits,
                        source=_SOURCE,
                        depth_vouched=self._depth_vouched,
                    )
                except JSONError:
                    return self._check(arguments)  # to report it, or repair it
                if type(value) is dict:
                    return self._validated_short(value, written, arguments)
            return self._check(arguments)
        except (SchemawireError, ValueError, TypeError, RecursionError) as error:
            # Not reached by any input we know of (the tests feed the gate random bytes and
            # hostile values); if it is, the model gets a one-line error, not a crash.
            return self._reject("gate_error", [Violation("", "gate", one_line(error, 200))])

    # --- the steps -------------------------------------------------------------------------

    def _validated_short(self, value: dict[str, Any], written: bytes | None, text: str) -> Verdict:
        """`_validated`, for an object read from a short text, its depth measured only if the
        schema that vouched for it refuses it."""
        if not self._depth_vouched:
            return self._validated(value, [], written)
        if self._is_valid(value):
            return self._validated(value, [], written, valid=True)
        if written is None or not nests_within(value, written, self._parse_limits.max_depth):
            return self._check(text)  # read again, to refuse it as the parser does
        return self._validated(value, [], written)

    def _check(self, arguments: Any) -> Verdict:
        changes: list[Change] = []
        value, problem = self._read(arguments, changes)
        if problem is not None:
            return self._reject_problem(problem)
        return self._validated(value, changes)

    def _validated(
        self, value: Any, changes: list[Change], written: bytes | None = None, valid: bool = False
    ) -> Verdict:
        """The verdict on a parsed value; ``written`` is orjson's text of it, if the parser
        wrote one (it spares the integer places a walk); ``valid`` when it is known to pass
        the schema."""
        if self._restore is not None and type(value) is dict:
            value = self._restore(value)
            written = None  # of the value as sent, not as restored
        if not valid and not self._is_valid(value):
            written = None
            decoded = self._decode_and_validate(value, changes)
            if isinstance(decoded, ValueProblem):
                return self._reject_problem(decoded)
            value, violations = decoded
            if violations:
                return self._reject("arguments_invalid", violations, changes)
        if self._integers is not None:
            value = self._integers.apply(value, written)
        return Verdict.accept(
            gate="arguments",
            tool=self.spec.name,
            value=value,
            changes=tuple(changes),
            conforms=True,
        )

    def _read(self, arguments: Any, changes: list[Change]) -> tuple[Any, ValueProblem | None]:
        """The arguments as a value, or what makes them unreadable."""
        if isinstance(arguments, str | bytes | bytearray | memoryview):
            return self._parse_text(arguments, changes)
        return plain_json(arguments, self.options.limits)

    def _parse_text(
        self, text: str | bytes | bytearray | memoryview, changes: list[Change]
    ) -> tuple[Any, ValueProblem | None]:
        try:
            value = loads(text, limits=self._parse_limits, source=_SOURCE)
        except JSONError as error:
            return self._repaired_value(text, error, changes)
        if isinstance(value, str) and self.options.decode_strings:
            value = self._double_encoded(value, changes)
        if _length(text) >= self._walk_from:
            return value, first_problem(value, self.options.limits)
        return value, None

    def _repaired_value(
        self, text: str | bytes | bytearray | memoryview, error: JSONError, changes: list[Change]
    ) -> tuple[Any, ValueProblem | None]:
        """What json-repair read in a malformed text, or what is wrong with the text."""
        repaired = self._repaired(text, error)
        if repaired is None:
            return None, _json_problem(error)
        # What json-repair read is held to the parser's own checks (NaN, big integers...) and to
        # the limits.
        value, problem = plain_json(repaired.value, self.options.limits)
        if problem is not None:
            return None, problem
        changes.append(repaired.change(value))
        return value, None

    def _repaired(
        self, text: str | bytes | bytearray | memoryview, error: JSONError
    ) -> Repaired | None:
        # Only syntax is repaired: invalid UTF-8, a lone surrogate, a duplicate key or NaN in
        # otherwise good JSON, or a text over the limits, is not a typo to guess around.
        if not self.options.tolerant or error.code != ErrorCode.JSON_SYNTAX:
            return None
        if not isinstance(text, str):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError:
                return None  # invalid UTF-8 past the syntax error: not a model's typo
        return repair(text)

    def _double_encoded(self, value: str, changes: list[Change]) -> Any:
        """The object inside a JSON string that holds JSON text, decoded once."""
        try:
            inner = loads(value, limits=self._parse_limits, source=_SOURCE)
        except JSONError:
            return value  # a plain string: the schema will say it is not an object
        if not isinstance(inner, dict | list):
            return value
        changes.append(
            Change(
                "double_encoded",
                "",
                "the arguments were a JSON string holding JSON text; decoded once",
            )
        )
        return inner

    def _decode_and_validate(
        self, value: Any, changes: list[Change]
    ) -> tuple[Any, tuple[Violation, ...]] | ValueProblem:
        """Every violation of ``value``; first, where a string holding JSON text stands where an
        object or array belongs, the decoded value, when decoding removes that violation. A
        decoded value is held to the limits, as the whole was: what is over them is returned."""
        violations = self.validator.violations(value)
        decoded_any = False
        for _ in range(_MAX_DECODING_ROUNDS if self.options.decode_strings else 0):
            decoded = self._decode_strings(value, violations)
            if decoded is None:
                break
            if isinstance(decoded, ValueProblem):
                return decoded
            candidate, pointers = decoded
            remaining = self.validator.violations(candidate)
            fixed = [p for p in pointers if not any(v.pointer == p for v in remaining)]
            if not fixed:
                break
            value = candidate if len(fixed) == len(pointers) else _only(value, candidate, fixed)
            decoded_any = True
            changes.extend(
                Change("string_decoded", p, "an object or array sent as a JSON string; decoded")
                for p in fixed
            )
            violations = self.validator.violations(value)
            if not violations:
                break
        # A decoded value may write more bytes than the string it was (1e9 is 1000000000.0).
        problem = bytes_problem(value, self.options.limits) if decoded_any else None
        return problem if problem is not None else (value, violations)

    def _decode_strings(
        self, value: Any, violations: tuple[Violation, ...]
    ) -> tuple[Any, list[str]] | ValueProblem | None:
        """``value`` with each violating string that holds an object or array decoded, or the
        first decoded value over the limits (its depth counted from where it sits)."""
        pointers: list[str] = []
        for violation in violations:
            got = violation.got
            if not isinstance(got, str) or violation.pointer in pointers:
                continue
            if got.lstrip()[:1] not in _OPENERS:
                continue  # not an object or array: not worth a parse
            if not _holds(value, violation.pointer, got):
                continue  # a pointer that misses its value (jsonschema-rs drops "" members)
            try:
                inner = loads(got, limits=self._parse_limits, source=_SOURCE)
            except JSONError:
                continue
            if isinstance(inner, dict | list):
                at, depth = violation.pointer, len(split(violation.pointer))
                problem = first_problem(inner, self.options.limits, at=at, depth=depth)
                if problem is not None:
                    return problem
                value = replaced(value, at, inner)
                pointers.append(at)
        return (value, pointers) if pointers else None

    # --- rejections ------------------------------------------------------------------------

    def _reject_problem(self, problem: ValueProblem) -> Verdict:
        code = "arguments_too_large" if problem.kind == "too_large" else "arguments_malformed"
        violation = Violation(problem.pointer, problem.keyword, problem.message)
        return self._reject(code, [violation])

    def _reject(
        self, code: str, violations: list[Violation] | tuple[Violation, ...], changes: Any = ()
    ) -> Verdict:
        spec = self.spec
        hint = (
            f"Call {spec.name} again with arguments that satisfy its schema."
            if code == "arguments_invalid"
            else f"Call {spec.name} again with one JSON object as its arguments."
        )
        rejection = Rejection.for_spec(
            spec, gate="arguments", code=code, violations=violations, hint=hint
        )
        return Verdict.reject(rejection, gate="arguments", tool=spec.name, changes=tuple(changes))


def _length(text: str | bytes | bytearray | memoryview) -> int:
    """Characters of a str, bytes of the rest (a memoryview's ``len`` counts its items, which
    may be 8 bytes each)."""
    return text.nbytes if isinstance(text, memoryview) else len(text)


def _holds(document: Any, pointer: str, value: str) -> bool:
    """Whether ``pointer`` names ``value`` itself in ``document``."""
    try:
        return bool(resolve(document, pointer) == value)
    except KeyError:
        return False


def _json_problem(error: JSONError) -> ValueProblem:
    kind = "too_large" if error.code in _TOO_LARGE_CODES else "malformed"
    where = f"line {error.line}, column {error.column}: " if error.line is not None else ""
    return ValueProblem(kind, error.pointer or "", str(error.code), where + error.message)


def _only(original: Any, candidate: Any, pointers: list[str]) -> Any:
    """``original`` with only the values at ``pointers`` taken from ``candidate``."""
    for pointer in pointers:
        original = replaced(original, pointer, resolve(candidate, pointer))
    return original
