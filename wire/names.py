"""Names of games, seats and bots: bounded in length, free of control characters."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Final

from pydantic import AfterValidator, Field, StrictStr

#: Names of games and seats: short enough for a list of games to stay small.
MAX_NAME_LENGTH: Final = 64

# Characters a name may not hold: they would reach records, notation, logs and other
# people's screens. C0 and C1 controls (NUL, escape sequences, newlines), line and
# paragraph separators, lone surrogates, and the bidirectional controls that can make
# a name read as something else on screen ("Trojan Source", CVE-2021-42574).
_BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})


def _printable_name(name: str) -> str:
    """``name`` unchanged, or ``ValueError`` naming its first control character."""
    for index, char in enumerate(name):
        if _is_control(char):
            raise ValueError(
                f"expected a name without control characters, got U+{ord(char):04X} at "
                f"position {index}"
            )
    return name


Name = Annotated[StrictStr, Field(max_length=MAX_NAME_LENGTH), AfterValidator(_printable_name)]
"""A game's or a seat's name: at most ``MAX_NAME_LENGTH`` characters, no controls."""


def _is_control(char: str) -> bool:
    return char in _BIDI_CONTROLS or unicodedata.category(char) in _FORBIDDEN_CATEGORIES


def _display_name(value: object) -> object:
    r"""A name a bot gives itself, made fit to show: control characters dropped, cut to
    ``MAX_NAME_LENGTH``. Cleaned rather than refused: it is the bot's label, and a bot
    is not turned away for it (a name the client gives is refused instead: ``Name``).

    >>> _display_name("Evil\u202eBot\x00" + "!" * 80)[:12], len(_display_name("b" * 99))
    ('EvilBot!!!!!', 64)
    """
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    return display_text(value, MAX_NAME_LENGTH)


def display_text(text: str, limit: int) -> str:
    r"""Text a peer sent (a name, a close frame's reason), made fit for records, logs
    and screens: control characters dropped, cut to ``limit`` characters ("..." last).

    >>> display_text("bye\n\u202e now", 80), display_text("a" * 10, 6)
    ('bye now', 'aaa...')
    """
    cleaned = "".join(char for char in text if not _is_control(char))
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."
