"""HTTTX notation's syntax: the tree (tags, setup, turns, moves, info, visuals), the parser.

``parse`` reads version 1 or 2 text into a ``Notation`` tree, variations and visuals
included, and raises ``NotationError`` (with line and column) for text that is not
notation. What the text means as a game is ``game.notation_reader``'s concern; the format
itself is described in ``game.notation``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from models import Player

__all__ = [
    "Info",
    "NotatedMove",
    "NotatedTurn",
    "Notation",
    "NotationError",
    "Setup",
    "Tag",
    "Visual",
    "parse",
]


class NotationError(ValueError):
    """Text that is not a valid HTTTX notation game; ``line`` and ``column`` count from 1.

    >>> str(NotationError("expected ';' to end turn 1, found '2'", 2, 1))
    "line 2, column 1: expected ';' to end turn 1, found '2'"
    """

    def __init__(self, reason: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {reason}")
        self.reason = reason
        self.line = line
        self.column = column


# ---------------------------------------------------------------------- the tree


@dataclass(frozen=True, slots=True)
class Tag:
    """A ``key[value]`` pair of the tag block, with the position of its key."""

    key: str
    value: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Info:
    """An info block: the mover's clock and one evaluation, after a stone."""

    clock_ms: int | None = None
    open_evaluation: int | None = None  # %n: -100..100 recommended, positive favours X
    closed_evaluation: int | None = None  # #n: turns to a forced win, positive for X


@dataclass(frozen=True, slots=True)
class Visual:
    """A display hint for one cell.

    ``highlight`` is ``"N"`` (neutral; also for ``<q,r>`` and ``<q,r:#>``), another
    letter as written (``"X"``, ``"O"``...), or None when only a label is given.
    """

    q: int
    r: int
    highlight: str | None
    label: str | None


@dataclass(frozen=True, slots=True)
class NotatedMove:
    """A stone (None for the ``[/]`` terminator), its info block and its visuals."""

    stone: tuple[int, int] | None
    info: Info | None
    visuals: tuple[Visual, ...]
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class NotatedTurn:
    """``N. move move (variation)... ;``.

    ``moves`` has two entries, the second one possibly the terminator; a version 1
    one-stone last turn has one. ``variations`` are lines that replace this turn, each
    starting with the same number. ``threats`` counts version 1 ``!`` marks.
    """

    number: int
    moves: tuple[NotatedMove, ...]
    variations: tuple[tuple[NotatedTurn, ...], ...]
    threats: int
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Setup:
    """A setup section: the stones in written order and the side that moves first."""

    first_to_move: Player
    stones: tuple[tuple[int, int, Player], ...]
    visuals: tuple[Visual, ...]
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Notation:
    """A whole notation text: syntax checked, rules not."""

    version: int
    tags: tuple[Tag, ...]
    setup: Setup | None
    main_line: tuple[NotatedTurn, ...]


# ------------------------------------------------------------------------ parser

_DIGITS = frozenset("0123456789")
_KEY_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEY_CHARS = _KEY_START | _DIGITS | {"_", "-"}
_LABEL_CHARS = _KEY_START | _DIGITS
# Fast paths for the commonest shapes, tried first: when one does not match, the
# character-by-character parser reads the same text again and says what is wrong.
# (Numbers of more than 18 digits take the slow path too, which guards int().)
_V2_SIGNED = r"\s*(0|-?[1-9][0-9]{0,17})\s*"
_FAST_STONE_V2 = re.compile(rf"{_V2_SIGNED},{_V2_SIGNED}\]")
_FAST_STONE_V1 = re.compile(r"\s*(-?[0-9]{1,18})\s*,\s*(-?[0-9]{1,18})\s*\]")
_FAST_INFO = re.compile(
    rf"\{{\s*(?:@\s*(0|[1-9][0-9]{{0,17}})\s*)?(:)?(?:\s*([%#]){_V2_SIGNED})?\}}"
)
# Deep enough for any real study; shallow enough to stay far from Python's recursion limit.
_MAX_VARIATION_DEPTH = 100


def parse(text: str) -> Notation:
    """Read notation text (version 1 or 2) into a tree; raises ``NotationError``.

    Checks the syntax, turn numbering and the placement of ``[/]``, not the rules.

    >>> notation = parse("version[2]; 1. [1,0] <2,0:#X> [0,1] (1. [2,0] [/];);")
    >>> notation.main_line[0].moves[0].visuals
    (Visual(q=2, r=0, highlight='X', label=None),)
    >>> [turn.moves[0].stone for turn in notation.main_line[0].variations[0]]
    [(2, 0)]
    """
    return _Parser(text).document()


class _Parser:
    """Recursive descent over the characters, with positions kept as string offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.end = len(text)
        # Editors on Windows may start a file with a byte order mark; columns start after it.
        self.pos = 1 if text.startswith("\ufeff") else 0
        self.version = 2
        self.depth = 0
        self.line_starts = [self.pos]
        newline = text.find("\n")
        while newline >= 0:
            self.line_starts.append(newline + 1)
            newline = text.find("\n", newline + 1)

    # -- positions and errors

    def where(self, offset: int) -> tuple[int, int]:
        index = bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def error(self, reason: str, offset: int | None = None) -> NotationError:
        line, column = self.where(self.pos if offset is None else offset)
        return NotationError(reason, line, column)

    def found(self) -> str:
        if self.pos >= self.end:
            return "end of text"
        return repr(self.text[self.pos])

    def expected(self, what: str, hint: str = "") -> NotationError:
        return self.error(f"expected {what}, found {self.found()}{hint}")

    # -- characters

    def peek(self) -> str:
        """Skip whitespace; the next character, or "" at the end of the text."""
        text, pos, end = self.text, self.pos, self.end
        if pos < end and not text[pos].isspace():  # the common case, kept cheap
            return text[pos]
        while pos < end and text[pos].isspace():
            pos += 1
        self.pos = pos
        return text[pos] if pos < end else ""

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            raise self.expected(what)
        self.pos += 1

    def expect_closing(self, char: str, what: str, opened_at: int, construct: str) -> None:
        """Like ``expect``, but an unclosed construct is reported where it opens."""
        found = self.peek()
        if found == char:
            self.pos += 1
            return
        if not found:
            raise self.error(f"{construct} is not closed: expected {char!r}", opened_at)
        raise self.expected(what)

    def integer(self, what: str, *, signed: bool) -> int:
        self.peek()
        text, start = self.text, self.pos
        negative = signed and text.startswith("-", start)
        first = start + 1 if negative else start
        stop = first
        while stop < self.end and text[stop] in _DIGITS:
            stop += 1
        if stop == first:
            self.pos = first
            raise self.expected(what)
        digits = text[first:stop]
        if self.version >= 2 and len(digits) > 1 and digits[0] == "0":
            raise self.error(
                f"{text[start:stop]!r} has a leading zero, which version 2 does not allow",
                start,
            )
        if self.version >= 2 and negative and digits == "0":
            raise self.error("'-0' is not allowed in version 2: write 0", start)
        try:
            value = int(digits)
        except ValueError:  # beyond Python's limit on digits: no real game has such a number
            raise self.error(f"{what} has too many digits", start) from None
        self.pos = stop
        return -value if negative else value

    # -- document and tags

    def document(self) -> Notation:
        first = self.peek()
        tags: tuple[Tag, ...] = ()
        if first in _KEY_START:
            tags = self.tag_block()
            self.version = _version_of(tags)
        elif first in _DIGITS:
            self.version = 1  # version 1 may start straight with its turns
        else:
            raise self.expected("a tag such as 'version[2]' or a first turn such as '1.'")
        setup = None
        if self.peek() in ("x", "o"):
            if self.version == 1:
                raise self.error("a setup section needs version[2]")
            setup = self.setup()
        return Notation(self.version, tags, setup, self.line(1, opened_at=None))

    def tag_block(self) -> tuple[Tag, ...]:
        tags: list[Tag] = []
        seen: set[str] = set()
        text = self.text
        while True:
            char = self.peek()
            if char == ";":
                self.pos += 1
                return tuple(tags)
            if char not in _KEY_START:
                raise self.expected("a tag 'key[value]' or the ';' that ends the tags")
            start = stop = self.pos
            while stop < self.end and text[stop] in _KEY_CHARS:
                stop += 1
            key = text[start:stop]
            self.pos = stop
            if self.peek() != "[":
                raise self.expected(f"'[' after the tag key {key!r}")
            opened_at = self.pos
            close = text.find("]", opened_at)
            stop = close if close >= 0 else self.end
            # A carriage return breaks a line too: a value holding one could not be written.
            newline = max(text.find("\n", opened_at, stop), text.find("\r", opened_at, stop))
            if close < 0 or newline >= 0:
                raise self.error(
                    f"tag {key!r} is not closed: expected ']' before the end of the line",
                    opened_at,
                )
            if key in seen:
                raise self.error(f"tag {key!r} appears twice", start)
            seen.add(key)
            tags.append(Tag(key, text[opened_at + 1 : close], *self.where(start)))
            self.pos = close + 1

    # -- setup

    def setup(self) -> Setup:
        start = self.pos
        first = Player(self.text[start])
        self.pos += 1
        stones = self.setup_stones(first)
        self.expect(":", f"a stone '[q,r]' or the ':' that ends the {first.value} list")
        if self.peek() != first.other.value:
            raise self.expected(f"{first.other.value!r} after ':' in the setup")
        self.pos += 1
        stones += self.setup_stones(first.other)
        visuals = self.visuals()
        self.expect(";", "a stone '[q,r]', a visual '<q,r>' or the ';' that ends the setup")
        return Setup(first, tuple(stones), visuals, *self.where(start))

    def setup_stones(self, side: Player) -> list[tuple[int, int, Player]]:
        stones: list[tuple[int, int, Player]] = []
        while self.peek() == "[":
            self.pos += 1
            q, r = self.coordinates()
            stones.append((q, r, side))
        return stones

    def coordinates(self) -> tuple[int, int]:
        """``q,r]`` of a stone, its '[' already read."""
        fast = (_FAST_STONE_V2 if self.version >= 2 else _FAST_STONE_V1).match(self.text, self.pos)
        if fast is not None:
            self.pos = fast.end()
            return int(fast[1]), int(fast[2])
        q = self.integer("the q coordinate (an integer)", signed=True)
        self.expect(",", "',' between coordinates")
        r = self.integer("the r coordinate (an integer)", signed=True)
        self.expect("]", "']' after the coordinates")
        return q, r

    # -- lines and turns

    def line(self, first_number: int, opened_at: int | None) -> tuple[NotatedTurn, ...]:
        """Turns up to the end of the text (main line) or the ')' of a variation."""
        turns: list[NotatedTurn] = []
        number = first_number
        while True:
            char = self.peek()
            if opened_at is not None:
                if char == ")":
                    if not turns:
                        raise self.expected(f"turn {number} (a variation holds at least one)")
                    self.pos += 1
                    return tuple(turns)
                if not char:
                    raise self.error("this variation is not closed: expected ')'", opened_at)
            elif not char:
                return tuple(turns)
            if char not in _DIGITS:
                closing = " or the ')' that ends the variation" if opened_at is not None else ""
                hint = " (no variation is open)" if char == ")" and opened_at is None else ""
                raise self.expected(f"turn {number} ('{number}.'){closing}", hint)
            if turns and _ends_early(turns[-1]):
                last = turns[-1].number
                raise self.error(
                    f"turn {number} follows turn {last}, which ended after one stone; "
                    "only the last turn of a line may do that"
                )
            if turns:
                numbering = "turn numbers must be consecutive"
            elif opened_at is None:
                numbering = "turns are numbered from 1"
            else:
                numbering = "a variation starts with the number of the turn it replaces"
            turns.append(self.turn(number, numbering))
            number += 1

    def turn(self, number: int, numbering: str) -> NotatedTurn:
        """A turn that must be numbered ``number``, by the rule ``numbering``."""
        start = self.pos
        found = self.integer("a turn number", signed=False)
        if found != number:
            raise self.error(f"{numbering}: expected turn {number}, found {found}", start)
        self.expect(".", f"'.' after the turn number {number}")
        moves = [self.move(number, second=False)]
        char = self.peek()
        if char == "[":
            moves.append(self.move(number, second=True))
        elif not (self.version == 1 and char in (";", "!")):  # v1: a one-stone last turn
            what = "'[q,r]' or '[/]'" if self.version >= 2 else "'[q,r]'"
            raise self.expected(f"the second stone of turn {number} ({what})", self.v1_hint())
        threats = 0
        variations: list[tuple[NotatedTurn, ...]] = []
        if self.version == 1:
            while self.peek() == "!":
                threats += 1
                self.pos += 1
        else:
            while self.peek() == "(":
                variations.append(self.variation(number))
        if self.peek() != ";":
            hint = self.v1_hint()
            if not hint and self.version >= 2 and self.peek() == "!":
                hint = " ('!' threat marks are version 1 only)"
            raise self.expected(f"';' to end turn {number}", hint)
        self.pos += 1
        return NotatedTurn(number, tuple(moves), tuple(variations), threats, *self.where(start))

    def v1_hint(self) -> str:
        """Why a version 2 construct is unexpected, when the text is version 1."""
        if self.version == 1 and self.peek() in ("{", "<", "("):
            return " (info blocks, visuals and variations need version[2])"
        return ""

    def variation(self, number: int) -> tuple[NotatedTurn, ...]:
        opened_at = self.pos
        if self.depth >= _MAX_VARIATION_DEPTH:
            raise self.error(f"variations nest deeper than {_MAX_VARIATION_DEPTH} levels")
        self.pos += 1
        self.depth += 1
        turns = self.line(number, opened_at)
        self.depth -= 1
        return turns

    def move(self, number: int, *, second: bool) -> NotatedMove:
        if self.peek() != "[":
            raise self.expected(f"a stone '[q,r]' in turn {number}")
        start = self.pos
        self.pos += 1
        stone: tuple[int, int] | None
        if self.peek() == "/":
            if self.version == 1:
                raise self.error("'[/]' needs version[2]", start)
            if not second:
                raise self.error("'[/]' can only take the place of a turn's second stone", start)
            self.pos += 1
            self.expect("]", "']' to close '[/]'")
            stone = None
        else:
            stone = self.coordinates()
        info = None
        visuals: tuple[Visual, ...] = ()
        if self.version >= 2:
            if self.peek() == "{":
                info = self.info()
            visuals = self.visuals()
            if self.peek() == "{":
                raise self.error(
                    "a stone has one info block at most"
                    if info is not None
                    else "an info block goes right after its stone, before the visuals"
                )
        return NotatedMove(stone, info, visuals, *self.where(start))

    # -- info and visuals

    def info(self) -> Info:
        fast = _FAST_INFO.match(self.text, self.pos)
        if fast is not None:
            clock, colon, kind, value = fast.groups()
            # The pattern is looser than the grammar about ':'; anything else goes the
            # slow way below, which also explains what is wrong.
            if (colon is not None) == (clock is not None and kind is not None) and (clock or kind):
                self.pos = fast.end()
                evaluation = None if value is None else int(value)
                return Info(
                    None if clock is None else int(clock),
                    evaluation if kind == "%" else None,
                    evaluation if kind == "#" else None,
                )
        opened_at = self.pos
        self.pos += 1
        clock = None
        char = self.peek()
        if char == "@":
            self.pos += 1
            clock = self.integer("the clock in milliseconds after '@'", signed=False)
            if self.peek() == ":":
                self.pos += 1
                if self.peek() not in ("%", "#"):
                    raise self.expected("an evaluation ('%n' or '#n') after ':'")
            elif self.peek() not in ("}", ""):
                raise self.expected("':' and an evaluation, or the '}' that ends the info")
        elif char not in ("%", "#", ""):
            raise self.expected("'@' (clock), '%' or '#' (evaluation) in the info block")
        open_evaluation = closed_evaluation = None
        char = self.peek()
        if char in ("%", "#"):
            self.pos += 1
            value = self.integer(f"an evaluation (an integer) after {char!r}", signed=True)
            if char == "%":
                open_evaluation = value
            else:
                closed_evaluation = value
        self.expect_closing("}", "the '}' that ends the info", opened_at, "this info block")
        return Info(clock, open_evaluation, closed_evaluation)

    def visuals(self) -> tuple[Visual, ...]:
        visuals: list[Visual] = []
        while self.peek() == "<":
            visual = self.visual()
            if visual is not None:
                visuals.append(visual)
        return tuple(visuals)

    def visual(self) -> Visual | None:
        """A visual, or None for one with a section this reader does not know."""
        opened_at = self.pos
        self.pos += 1
        q = self.integer("the q coordinate (an integer)", signed=True)
        self.expect(",", "',' between coordinates")
        r = self.integer("the r coordinate (an integer)", signed=True)
        highlight = label = None
        understood = True
        text = self.text
        while True:
            char = self.peek()
            if char == ">":
                self.pos += 1
                break
            if not char:
                raise self.error("this visual is not closed: expected '>'", opened_at)
            if char != ":":
                raise self.expected("':' and a section, or the '>' that ends the visual")
            # A section runs to the next ':' or '>'; future sections may hold anything.
            stop = self.pos + 1
            while stop < self.end and text[stop] not in ":>":
                stop += 1
            section = "".join(text[self.pos + 1 : stop].split())
            self.pos = stop
            kind, content = section[:1], section[1:]
            if kind == "#" and (not content or (len(content) == 1 and content in _KEY_START)):
                highlight = content or "N"  # '#' alone is the neutral 'N'
            elif kind == "$" and content and all(c in _LABEL_CHARS for c in content):
                label = content
            else:
                understood = False
        if not understood:
            return None
        if highlight is None and label is None:
            highlight = "N"  # the spec: a bare <q,r> is a neutral highlight
        return Visual(q, r, highlight, label)


def _ends_early(turn: NotatedTurn) -> bool:
    """Whether a turn stops after its first stone: '[/]', or version 1's one-stone turn."""
    return len(turn.moves) == 1 or turn.moves[1].stone is None


def _version_of(tags: Sequence[Tag]) -> int:
    for tag in tags:
        if tag.key == "version":
            if tag.value in ("1", "2"):
                return int(tag.value)
            raise NotationError(
                f"unknown notation version {tag.value!r}: this reader knows versions 1 and 2",
                tag.line,
                tag.column,
            )
    return 1
