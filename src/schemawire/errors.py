"""The exception tree and the stable error codes.

Exceptions are for misuse and for input that cannot be used at all. Findings about schemas (lint,
fixtures, repository rules) and gate rejections are data, returned rather than raised, so one bad
file or one bad call never hides the others.

    SchemawireError                 base of everything schemawire raises
    ├── UsageError                  the API or the command line was used wrongly (exit code 2)
    └── InputError                  input that cannot be used: says where (source, pointer, line)
        ├── JSONError               JSON text that cannot be accepted; `code` says why
        ├── ConfigError             a schemawire.toml or [tool.schemawire] that cannot be used
        └── SchemaError             a schema that cannot be compiled or resolved

Compare `code`, never message text: codes are stable, messages may improve.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ConfigError",
    "ErrorCode",
    "InputError",
    "JSONError",
    "SchemaError",
    "SchemawireError",
    "UsageError",
    "one_line",
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
        """``source:line:column`` (or ``source#pointer``), for messages and editors."""
        if self.line is not None:
            return f"{self.source}:{self.line}:{self.column}"
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


def one_line(error: BaseException, limit: int = 500) -> str:
    """An exception as one line for a message: its type, and the first line of what it says
    (at most ``limit`` characters of it). No traceback, never more than one line."""
    try:
        lines = str(error).strip().splitlines()
    except Exception:  # an exception that cannot say what it is: its type still can
        lines = []
    name = type(error).__name__
    return f"{name}: {lines[0][:limit]}" if lines else name
