"""``ProtocolError`` and the wording of its messages."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails


class ProtocolError(ValueError):
    """Input that does not follow the wire contract; the message says what and where.

    ``problems`` lists each problem as ``"<path>: <what was expected>, got <what>"``;
    the message joins the first few.
    """

    MAX_REPORTED: ClassVar[int] = 5

    def __init__(self, *problems: str) -> None:
        self.problems: tuple[str, ...] = problems
        shown = "; ".join(problems[: self.MAX_REPORTED])
        hidden = len(problems) - self.MAX_REPORTED
        super().__init__(shown + (f" (and {hidden} more)" if hidden > 0 else ""))


#: Longest text a received value is echoed as in an error message.
MAX_ECHO_CHARS: Final = 40


def clip_text(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its start and end
    around ``...`` (the end often says the most: a reason after a long URL).

    >>> clip_text("http://example.com/" + "a" * 100 + ": connection refused", 40)
    'http://example.com/...connection refused'
    """
    if len(text) <= limit:
        return text
    tail = (limit - 3) // 2
    return f"{text[: limit - 3 - tail]}...{text[len(text) - tail :]}"


# Raised and caught as models.ProtocolError, its public name; tracebacks say so too.
ProtocolError.__module__ = "models"


def _describe(value: object) -> str:
    """A short, JSON-flavoured description of a received value, at most
    ``MAX_ECHO_CHARS`` characters whatever was received.

    >>> _describe(10**400)
    'an integer of about 401 digits'
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 128:
        # Its digits say nothing more, and str() refuses integers of over 4300 digits.
        digits = math.floor(value.bit_length() * math.log10(2)) + 1
        return f"an integer of about {digits} digits"
    if isinstance(value, str | int | float):
        text = repr(value)  # '0' for a string, 0 for a number: the two read differently
        if len(text) <= MAX_ECHO_CHARS:
            return text
        return f"{text[: MAX_ECHO_CHARS - 4]}...{text[-1]}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _path(loc: tuple[int | str, ...]) -> str:
    """``("move_response", "move", "pieces", 0, "q")`` -> ``move_response.move.pieces[0].q``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _bound(limit: object) -> str:
    """A bound from a constraint, as written in a schema: ``0``, not ``0.0``."""
    if isinstance(limit, float) and limit.is_integer():
        return str(int(limit))
    return str(limit)


def _items(count: object) -> str:
    return f"{count} item" if count == 1 else f"{count} items"


# Error types of pydantic-core, in the words of the wire contract.
_EXPECTED = {
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "none_required": "expected null",
}


def _problem(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx = error.get("ctx", {})
    got = f", got {_describe(error['input'])}"
    if kind == "missing":
        what = "missing required field"
    elif kind in ("value_error", "assertion_error"):
        what = str(ctx.get("error", error["msg"]))
    elif kind == "too_short":
        what = f"expected at least {_items(ctx['min_length'])}, got {ctx['actual_length']}"
    elif kind == "string_too_long":
        length = len(error["input"]) if isinstance(error["input"], str) else "more"
        what = f"expected at most {ctx['max_length']} characters, got {length}"
    elif kind == "too_long":
        what = f"expected at most {_items(ctx['max_length'])}, got {ctx['actual_length']}"
    elif kind in ("enum", "literal_error"):
        what = f"expected {ctx['expected']}{got}"
    elif kind == "greater_than":
        what = f"expected more than {_bound(ctx['gt'])}{got}"
    elif kind == "greater_than_equal":
        what = f"expected at least {_bound(ctx['ge'])}{got}"
    elif kind == "less_than":
        what = f"expected less than {_bound(ctx['lt'])}{got}"
    elif kind == "less_than_equal":
        what = f"expected at most {_bound(ctx['le'])}{got}"
    elif kind == "string_pattern_mismatch":
        what = f"expected text matching {ctx['pattern']!r}{got}"
    elif kind in _EXPECTED:
        what = _EXPECTED[kind] + got
    else:
        message = error["msg"]
        what = message[:1].lower() + message[1:] + got
    where = _path(error["loc"])
    return f"{where}: {what}" if where else what


def _problems(exc: ValidationError) -> list[str]:
    return [_problem(error) for error in exc.errors(include_url=False)]
