"""The exception tree and the stable error codes.

Exceptions are for misuse and for input that cannot be used at all. Findings about schemas (lint,
fixtures, repository rules) and gate rejections are data, returned rather than raised, so one bad
file or one bad call never hides the others.

    SchemawireError                 base of everything schemawire raises
    ├── UsageError                  the API or the command line was used wrongly (exit code 2)
    ├── InputError                  input that cannot be used: says where (source, pointer, line)
    │   ├── JSONError               JSON text that cannot be accepted; `code` says why
    │   ├── ConfigError             a schemawire.toml or [tool.schemawire] that cannot be used
    │   └── SchemaError             a schema that cannot be compiled or resolved
    ├── ServerError                 an MCP server that cannot be started, reached or spoken to
    ├── ModelError                  a model that could not answer: unreachable, refusing, cut off
    ├── StoreError                  a store that cannot be opened or written
    │   └── RunLookupError          an id, or the start of one, that names no run or several
    └── FlowError                   a flow run that cannot go on; carries the gate's rejection

Nothing else crosses the public API: a failure of the MCP SDK, of a model's HTTP client or of a
database driver reaches a caller as one of these, its cause chained. Compare `code`, never
message text: codes are stable, messages may improve. Every code is listed in docs/errors.md.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "ConfigError",
    "ErrorCode",
    "FlowError",
    "GateRefusal",
    "InputError",
    "JSONError",
    "ModelError",
    "RunLookupError",
    "SchemaError",
    "SchemawireError",
    "ServerError",
    "StoreError",
    "UsageError",
]


class ErrorCode(StrEnum):
    """Stable codes carried by `InputError` and its subclasses."""

    # JSON text
    JSON_SYNTAX = "json_syntax"
    JSON_TOO_LARGE = "json_too_large"
    JSON_TOO_DEEP = "json_too_deep"
    JSON_DUPLICATE_KEY = "json_duplicate_key"
    JSON_NON_FINITE = "json_non_finite"
    JSON_BIG_INTEGER = "json_big_integer"
    JSON_INVALID_UTF8 = "json_invalid_utf8"
    JSON_LONE_SURROGATE = "json_lone_surrogate"
    JSON_UNSUPPORTED_ENCODING = "json_unsupported_encoding"
    # a parsed value (not text) that JSON cannot hold: the gates' violation keyword, never raised
    JSON_TYPE = "json_type"
    # files and configuration
    FILE_UNREADABLE = "file_unreadable"
    CONFIG_INVALID = "config_invalid"
    # schemas
    SCHEMA_INVALID = "schema_invalid"
    SCHEMA_UNKNOWN = "schema_unknown"
    REF_UNRESOLVED = "ref_unresolved"


class SchemawireError(Exception):
    """Base class of every exception schemawire raises."""


class UsageError(SchemawireError):
    """The API or the command line was used in a way it does not support."""


class InputError(SchemawireError):
    """Input that cannot be used, with where it came from and where in it the problem is.

    Attributes:
        code: a stable `ErrorCode`.
        message: one sentence saying what is wrong.
        source: a file path or a label such as ``<arguments>``.
        pointer: RFC 6901 pointer to the offending value, when known.
        line: 1-based line, when the input was text.
        column: 1-based column in characters, when the input was text.
        excerpt: the offending line and a caret under the column, when the input was text.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        source: str = "<input>",
        pointer: str | None = None,
        line: int | None = None,
        column: int | None = None,
        excerpt: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.source = source
        self.pointer = pointer
        self.line = line
        self.column = column
        self.excerpt = excerpt

    @property
    def location(self) -> str:
        """``source:line[:column] #pointer`` (or ``source#pointer``), for messages and editors:
        the line and column when known, and the pointer within the line's value."""
        if self.line is not None:
            column = f":{self.column}" if self.column is not None else ""
            pointer = f" #{self.pointer}" if self.pointer else ""
            return f"{self.source}:{self.line}{column}{pointer}"
        if self.pointer is not None:
            return f"{self.source}#{self.pointer}"
        return self.source

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}"
        return f"{text}\n{self.excerpt}" if self.excerpt else text

    def to_json(self) -> dict[str, object]:
        """The error as a JSON object, for ``--json`` output and traces."""
        fields = {
            "code": str(self.code),
            "message": self.message,
            "source": self.source,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
        }
        return {key: value for key, value in fields.items() if value is not None}


class JSONError(InputError):
    """JSON text that cannot be accepted: malformed, too large, too deep, ambiguous or lossy."""


class ConfigError(InputError):
    """A configuration file or table that cannot be used."""


class SchemaError(InputError):
    """A schema that cannot be compiled: it breaks its metaschema or a reference is unresolved."""


class ServerError(SchemawireError):
    """An MCP server that cannot be started, reached or spoken to.

    Attributes:
        server: the server's label (its command or URL).
        reason: one line saying what went wrong.
        stderr: the end of what the server wrote to stderr, when it ran as a process.
        code: what kind of problem it is, one of `schemawire.mcp.SERVER_PROBLEMS`.
        hint: what to do about it, in a few words.

    Its message is one line: ``MCP server <server>: <reason>; <hint>`` (a server that prints it
    on exit is quoted whole by the client that started it).

    The label, the reason and stderr arrive redacted: `schemawire.mcp` makes every one of these
    errors with ``server_error``, which redacts them, because a command line can hold a key
    (``env OPENAI_API_KEY=... cmd``), a URL a password, and a server's last words a connection
    string, and the error travels on to a model, a proxy's client and the trace.
    """

    def __init__(
        self,
        server: str,
        reason: str,
        stderr: str = "",
        code: str = "unavailable",
        hint: str = "",
    ) -> None:
        self.server, self.reason, self.stderr = server, reason, stderr
        self.code, self.hint = code, hint
        text = f"MCP server {server}: {reason}"
        super().__init__(f"{text}; {hint}" if hint else text)


class ModelError(SchemawireError):
    """A model that could not answer: unreachable, refusing, cut off, or out of script.

    Attributes:
        code: what went wrong, a stable code (compare it, not the message): `UNREACHABLE`
            (no response at all), `HTTP_ERROR` (a 4xx or 5xx), `NOT_JSON` (a body or event
            that is not JSON), `STREAM_CUT` (the stream broke off, or ended before its end),
            `STREAM_ERROR` (the API's own error event in the stream), `OUT_OF_SCRIPT`.
        message: what happened, one line.
        status: the HTTP status, when there was a response.
        body: the start of the response body (or of the event), for the error message.
        attempts: the requests made, retries included.
    """

    UNREACHABLE = "model_unreachable"
    HTTP_ERROR = "model_http_error"
    NOT_JSON = "model_not_json"
    STREAM_CUT = "model_stream_cut"
    STREAM_ERROR = "model_stream_error"
    OUT_OF_SCRIPT = "model_out_of_script"

    def __init__(
        self,
        message: str,
        status: int | None = None,
        body: str = "",
        *,
        code: str = HTTP_ERROR,
        attempts: int = 1,
    ) -> None:
        self.message, self.status, self.body = message, status, body
        self.code, self.attempts = code, attempts
        super().__init__(f"{message}\n{body}" if body else message)

    def to_json(self) -> dict[str, Any]:
        """The failure as JSON, for the trace (which redacts it like every hop)."""
        shown: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.status is not None:
            shown["status"] = self.status
        if self.body:
            shown["body"] = self.body
        return shown | {"attempts": self.attempts}


class StoreError(SchemawireError):
    """A store that cannot be opened or written, or a run it does not have."""


class RunLookupError(StoreError):
    """An id, or the start of one, that names no run or several.

    Attributes:
        given: what was asked for.
        candidates: the runs whose ids start with it, newest first (empty: none, or ``given``
            was too short to look for).
    """

    def __init__(self, message: str, given: str, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.given = given
        self.candidates = candidates


class GateRefusal(Protocol):
    """What `FlowError.rejection` holds: a gate's `schemawire.Rejection`. Named here by the
    members a handler reads, since the error tree sits below the value types and cannot import
    them."""

    @property
    def gate(self) -> str: ...
    @property
    def code(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def violations(self) -> tuple[Any, ...]: ...
    def to_json(self) -> dict[str, Any]: ...


class FlowError(SchemawireError):
    """A run that cannot go on: a handoff no route takes, a state that breaks its schema, an
    agent that gave no answer. ``rejection`` is the gate's structured error, when a gate
    stopped it."""

    def __init__(self, message: str, rejection: GateRefusal | None = None) -> None:
        super().__init__(message)
        self.rejection = rejection


def one_line(error: BaseException, limit: int = 500) -> str:
    """An exception as one line for a message: its type, and the first line of what it says
    (at most ``limit`` characters of it). No traceback, never more than one line."""
    try:
        lines = str(error).strip().splitlines()
    except Exception:  # an exception that cannot say what it is: its type still can
        lines = []
    name = type(error).__name__
    return f"{name}: {lines[0][:limit]}" if lines else name
