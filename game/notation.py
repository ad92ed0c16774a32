"""HTTTX notation: read versions 1 and 2, write version 2.

The community's text format for hexagonal tic-tac-toe games (public repositories
``hex-tic-tac-toe/htttx-notation`` for version 2 and
``hex-tic-tac-toe/hexagonal-tic-tac-toe-notation`` for version 1; our summary is
``../shared/notation.md``). ``dumps`` writes a ``GameRecord`` as version 2, ``loads``
reads either version back into a ``GameRecord`` and checks the main line with the rules
engine; ``parse`` gives the whole text as a tree, variations and visuals included.

>>> from models import Coord, GameRecord, Player, RecordedMove
>>> record = GameRecord(
...     name="Final",
...     moves=[RecordedMove(side=Player.O, pieces=[Coord(q=1, r=0), Coord(q=2, r=0)],
...                         clock_ms=4500)],
... )
>>> print(dumps(record), end="")
version[2]
name[Final];
1. [1,0] [2,0] {@4500};
>>> loads(dumps(record)) == record
True
>>> move = loads("version[2]; 1. [-1,0] [0,-1] { @4500 : %-1 };").moves[0]
>>> move.side, move.clock_ms, move.evaluation.heuristic
(<Player.O: 'o'>, 4500, -0.01)
>>> try:
...     loads("version[2]; 1. [1,0] [1,0];")
... except NotationError as error:
...     print(error.line, error.column, error.reason)
1 22 turn 1: O cannot play [1,0]: (1, 0) is already taken by o

Reading
-------
* Whitespace may stand between any two tokens (not inside a number, a tag key, or a tag
  value). Columns count characters, from 1. A leading byte order mark is skipped.
* The version comes from a ``version`` tag anywhere in the tag block. Without one the
  text is version 1 (its spec only recommends the tag; its own example has none, and a
  version 1 text may even start straight with ``1.``). Other versions are rejected.
* Version 2 integers have no leading zeros and no ``-0``; version 1's grammar allows
  both, so they are read there.
* Tag keys are a letter then letters, digits, ``_`` or ``-``; a tag appears once. A tag
  value is everything up to the first ``]`` and may not span lines (this is what lets an
  unclosed tag be reported where it opens instead of swallowing the game).
* Turns are numbered 1, 2, 3... in every line. In a standard game odd turns are O's and
  even turns X's; with a setup, the side of the list written first makes turn 1, and
  sides alternate.
* ``[/]`` ends a turn after its first stone and only on the last turn of a line.
  Version 1 has no ``[/]``; a one-stone last turn (``5. [1,2];``) is read there instead.
  Version 1's ``!`` threat marks are counted (``NotatedTurn.threats``), not kept in the
  record.
* Info blocks: the record has one clock and one evaluation per move, taken from the
  stones' info blocks field by field, the last stone that has one winning: in
  ``[1,0] {@4505:%3} [2,0] {@4500}`` the clock is 4500 and the evaluation %3. Info on
  ``[/]`` belongs to the first stone's position, like the spec says. ``%n`` becomes
  ``heuristic = n / 100``, ``#n`` becomes ``win_in = n``.
* Visuals and variations are parsed and checked for syntax (a visual with a section
  this reader does not know is dropped, as the spec asks), and kept in the tree that
  ``parse`` returns; a ``GameRecord`` has no place for them, so ``loads`` leaves them
  out. Only the main line is checked against the rules.
* ``loads`` replays the main line with the rules engine, using the view and win
  distances and turn limit from the tags (8, 6 and none by default): a stone on an
  occupied cell, out of view, or after the game ended raises ``NotationError`` naming
  the turn and pointing at the stone.

Result when reading
-------------------
``endreason`` ``win``/``draw``/``time``/``resign`` with ``winner`` ``cross``/``circle``
(and our ``cause`` tag, below) give the result; ``time`` means a forfeit on time,
``resign`` a forfeit by resignation unless ``cause`` names another cause. Without
result tags, a main line that ends in a line of ``win_distance`` is a win for that side
and one that reaches the turn limit a draw. The board has the last word: tags that
contradict a line on the board (or a turn-limit draw) raise ``NotationError``. A win the
board does not show is believed, because version 1 writers that cannot write a
one-stone turn may leave out the winning stone.

What goes where
---------------
==============================  =============================================
tag                             record
==============================  =============================================
``name``                        ``name``
``utcdatetime``                 ``started_at`` (UTC, whole seconds)
``playercross``                 ``player_x.name``
``playercircle``                ``player_o.name``
``timecontrol`` ``60``          ``match``: ``clock_type="match"``, ``clock=60``
``timecontrol`` ``60+5``        ``match``: ``"incremental"``, 60 s, increment 5 s
``endreason`` ``winner``        ``result``
anything else (``platform``)    ``tags``
==============================  =============================================

Extra tags of ours, written only when needed, for what the standard tags cannot say
(standard readers ignore them and still find the standard tags):

* ``cause[illegal_move]``: the result's cause when ``endreason`` does not imply it. A
  forfeit is written ``endreason[resign]`` (the standard value nearest to "lost without
  a line or a flag fall") plus ``cause`` for ``illegal_move``, ``protocol_error``,
  ``disconnect``, ``no_show``, ``stall`` and ``aborted``; a turn-limit draw is
  ``endreason[draw] cause[turn_limit]``. A time forfeit is plain ``endreason[time]``.
* ``viewdistance[10]``, ``windistance[5]``, ``turnlimit[200]``: match settings that
  differ from the defaults (8, 6, no limit).
* ``turnclock[30]``: a per-move clock (``clock_type="turn"``) of 30 seconds. It is not
  written as ``timecontrol``, which other readers would take for a clock per game.

Seconds are written as integers when whole, else as exact decimals (``timecontrol[2.5]``);
a naive ``started_at`` is taken to be UTC.

A tag that ``loads`` cannot turn into a field exactly as ``dumps`` would write it back
(``timecontrol[Fischer 60+5]``, ``utcdatetime[2026-03-18T23:20:14Z]``, an unknown
``endreason``...) is also kept, verbatim, in ``tags``, and ``dumps`` writes a key found in
``tags`` in place of the value it would derive. So writing what we read from another
tool gives back its tags; it may add ``endreason``/``winner``/``cause`` tags when the
result was inferred from the board.

Writing
-------
``version[2]`` and one tag per line, then ``;``; the setup only when it is not the
standard one (or when there are no moves, because the grammar wants a setup or a turn);
then one turn per line, ``N. [q,r] [q,r] {@ms:%n};``, or ``N. [q,r] [/] {...};`` for a
one-stone last move. The move's clock and evaluation go in one info block after its
last stone. A move with both ``heuristic`` and ``win_in`` is written with the closed
evaluation ``#n`` only (a proven result says more than an estimate); ``heuristic`` is
written as ``%n`` with ``n = 100 * clamp(heuristic, -1, 1)`` rounded half away from zero
(a NaN heuristic is not written). Setup stones are written as two lists, the side to
move's first, each in record order; read back, ``setup`` lists them in that order.

Not carried: ``game_id``, players' ``type`` and ``bot_url``, ``heartbeat``, each move's
``thinking_ms`` and ``considerations``, extra fields of an evaluation, sub-second parts
of ``started_at``, the result's ``detail`` (free text that a tag value could not give
back as it was). ``dumps`` drops them; ``loads`` leaves them at their defaults.
``dumps`` raises ``ValueError`` for what it cannot write: a tag value with ``]`` or a
line break, a tag key that is not a key or is ``version`` (``clean_tags=True`` cleans or
drops those instead), sides that do not alternate, a one-stone move that is not the last.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from pydantic import ValidationError

from game.rules import IllegalMoveError, InvalidSetupError, Outcome, Position, Termination
from models import (
    Cell,
    Coord,
    EndCause,
    GameRecord,
    GameResult,
    Match,
    Player,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)

__all__ = [
    "Info",
    "NotatedMove",
    "NotatedTurn",
    "Notation",
    "NotationError",
    "Setup",
    "Tag",
    "Visual",
    "dumps",
    "loads",
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
            newline = text.find("\n", opened_at, close if close >= 0 else self.end)
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


# ------------------------------------------------------------------------ reading


def loads(text: str) -> GameRecord:
    """Read a version 1 or 2 game into a ``GameRecord``, checking its main line.

    Raises ``NotationError`` for text that is not notation, and for a main line the
    rules do not allow (the message names the turn).
    """
    notation = parse(text)
    tags = {tag.key: tag for tag in notation.tags}
    match = _match_from_tags(tags)
    if notation.setup is None:
        setup = [Cell(q=0, r=0, p=Player.X)]
        first_to_move = Player.O
    else:
        setup = [Cell(q=q, r=r, p=side) for q, r, side in notation.setup.stones]
        first_to_move = notation.setup.first_to_move
    try:
        position = Position(
            match.view_distance,
            match.win_distance,
            setup=[(cell.q, cell.r, cell.p.value) for cell in setup],
            to_move=first_to_move.value,
            turn_limit=match.turn_limit,
        )
    except InvalidSetupError as error:
        assert notation.setup is not None  # the standard setup is always playable
        raise NotationError(
            f"the setup cannot be played: {error}", notation.setup.line, notation.setup.column
        ) from None
    moves = [_replay(turn, first_to_move, position) for turn in notation.main_line]
    record = GameRecord(
        name=_tag_value(tags, "name"),
        player_x=RecordPlayer(name=_tag_value(tags, "playercross")),
        player_o=RecordPlayer(name=_tag_value(tags, "playercircle")),
        match=match,
        started_at=_read_utc(tags["utcdatetime"].value) if "utcdatetime" in tags else None,
        setup=setup,
        first_to_move=first_to_move,
        moves=moves,
        result=_read_result(tags, position.outcome),
    )
    # Keep verbatim every tag that the fields would not give back as written.
    derived = _field_tags(record)
    record.tags = {
        tag.key: tag.value
        for tag in notation.tags
        if tag.key != "version"
        and (tag.key not in _FIELD_KEYS or derived.get(tag.key) != tag.value)
    }
    return record


def _replay(turn: NotatedTurn, first_to_move: Player, position: Position) -> RecordedMove:
    side = first_to_move if turn.number % 2 else first_to_move.other
    pieces: list[Coord] = []
    clock_ms: int | None = None
    evaluation: PositionEvaluation | None = None
    for move in turn.moves:
        if move.stone is not None:
            q, r = move.stone
            try:
                position.place(q, r)
            except IllegalMoveError as error:
                raise NotationError(
                    f"turn {turn.number}: {side.value.upper()} cannot play [{q},{r}]: {error}",
                    move.line,
                    move.column,
                ) from None
            pieces.append(Coord(q=q, r=r))
        info = move.info
        if info is not None:  # field by field, the last stone's info wins
            if info.clock_ms is not None:
                clock_ms = info.clock_ms
            if info.open_evaluation is not None:
                evaluation = PositionEvaluation(heuristic=info.open_evaluation / 100)
            elif info.closed_evaluation is not None:
                evaluation = PositionEvaluation(win_in=info.closed_evaluation)
    return RecordedMove(side=side, pieces=pieces, evaluation=evaluation, clock_ms=clock_ms)


def _tag_value(tags: Mapping[str, Tag], key: str) -> str | None:
    tag = tags.get(key)
    return None if tag is None else tag.value


def _tag_error(tag: Tag, reason: str) -> NotationError:
    return NotationError(reason, tag.line, tag.column)


def _match_from_tags(tags: Mapping[str, Tag]) -> Match:
    settings: dict[str, object] = {}
    for key, field in (
        ("viewdistance", "view_distance"),
        ("windistance", "win_distance"),
        ("turnlimit", "turn_limit"),
    ):
        if key in tags:
            settings[field] = _setting(tags[key], field, _read_count(tags[key]))
    if "turnclock" in tags:
        seconds = _read_seconds(tags["turnclock"].value)
        if seconds is None or seconds <= 0:
            raise _tag_error(tags["turnclock"], "turnclock needs a number of seconds above 0")
        settings.update(clock_type="turn", clock=seconds)
    elif "timecontrol" in tags:  # another tool's timecontrol we cannot read stays a tag
        settings.update(_read_time_control(tags["timecontrol"].value))
    return Match.model_validate(settings)


def _read_count(tag: Tag) -> int:
    value = tag.value
    if not value or value[0] == "0" or any(c not in _DIGITS for c in value):
        raise _tag_error(tag, f"{tag.key} needs a positive integer, found {value!r}")
    return int(value)


def _setting(tag: Tag, field: str, value: int) -> int:
    try:  # Match knows the limits; ask it rather than repeat them
        Match.model_validate({field: value})
    except ValidationError as error:
        problem = error.errors()[0]["msg"]
        raise _tag_error(tag, f"{tag.key}[{tag.value}]: {problem}") from None
    return value


_SECONDS = r"([0-9]+(?:\.[0-9]+)?)"
# "60", "60+5", and with a leading name as in the specs' examples: "Fischer 60+5".
_TIME_CONTROL = re.compile(rf"(?:[A-Za-z][A-Za-z ]*\s)?\s*{_SECONDS}(?:\s*\+\s*{_SECONDS})?")


def _read_seconds(text: str) -> float | None:
    return float(text) if re.fullmatch(_SECONDS, text) else None


def _read_time_control(text: str) -> dict[str, object]:
    found = _TIME_CONTROL.fullmatch(text.strip())
    if found is None or float(found[1]) <= 0:
        return {}
    if found[2] is None:
        return {"clock_type": "match", "clock": float(found[1])}
    return {"clock_type": "incremental", "clock": float(found[1]), "increment": float(found[2])}


def _read_utc(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


_END_REASONS = {
    "win": ResultReason.WIN,
    "draw": ResultReason.DRAW,
    "time": ResultReason.FORFEIT,
    "resign": ResultReason.FORFEIT,
}
_IMPLIED_CAUSES = {"time": EndCause.TIMEOUT, "resign": EndCause.RESIGN}
_WINNERS = {"cross": Player.X, "circle": Player.O}
_CAUSES = {cause.value: cause for cause in EndCause}


def _read_result(tags: Mapping[str, Tag], outcome: Outcome | None) -> GameResult | None:
    """The result from the tags and the board; see "Result when reading" above."""
    endreason, winner_tag, cause_tag = tags.get("endreason"), tags.get("winner"), tags.get("cause")
    reason = _END_REASONS.get(endreason.value) if endreason else None
    winner = _WINNERS.get(winner_tag.value) if winner_tag else None
    cause = _CAUSES.get(cause_tag.value) if cause_tag else None
    # Where to point when the tags are wrong: at endreason if we read it, else at winner.
    anchor = endreason if reason is not None else winner_tag
    if reason is ResultReason.DRAW and winner is not None:
        assert endreason is not None and winner_tag is not None
        raise _tag_error(
            endreason, f"endreason[draw] with winner[{winner_tag.value}]: a draw has no winner"
        )

    if outcome is not None:
        if outcome.termination is Termination.LINE:
            board_winner = Player(outcome.winner)
            if reason not in (None, ResultReason.WIN) or winner not in (None, board_winner):
                assert anchor is not None
                raise _tag_error(
                    anchor,
                    "the result tags contradict the board: "
                    f"{board_winner.value.upper()} has {len(outcome.line)} in a row",
                )
            return GameResult(winner=board_winner, reason=ResultReason.WIN, cause=cause)
        if reason not in (None, ResultReason.DRAW) or winner is not None:
            assert anchor is not None
            raise _tag_error(
                anchor, "the result tags contradict the board: the turn limit ended it in a draw"
            )
        return GameResult(winner=None, reason=ResultReason.DRAW, cause=cause or EndCause.TURN_LIMIT)

    if reason is None or (reason is not ResultReason.DRAW and winner is None):
        return None  # nothing we can read; the tags stay in ``tags``
    assert endreason is not None
    return GameResult(
        winner=winner, reason=reason, cause=cause or _IMPLIED_CAUSES.get(endreason.value)
    )


# ------------------------------------------------------------------------ writing

# Tags written from the record's fields, in the order written; ``platform`` has no field
# but stands among them, where the specs list it.
_TAG_ORDER = (
    "name",
    "platform",
    "utcdatetime",
    "playercross",
    "playercircle",
    "timecontrol",
    "endreason",
    "winner",
    "cause",
    "viewdistance",
    "windistance",
    "turnlimit",
    "turnclock",
)
_FIELD_KEYS = frozenset(_TAG_ORDER) - {"platform"}
_DEFAULT_MATCH = Match()
_STANDARD_SETUP = [Cell(q=0, r=0, p=Player.X)]


def dumps(record: GameRecord, *, clean_tags: bool = False) -> str:
    """Write a record as HTTTX notation version 2 (see the module docstring).

    ``clean_tags`` makes every tag writable instead of raising: ``]`` in a value becomes
    ``)``, a line break a space, and a tag whose key cannot be written is left out. A
    server exporting records named by its users wants this; a round trip does not.

    >>> from models import RecordPlayer
    >>> print(dumps(GameRecord(player_x=RecordPlayer(name="bot]2")), clean_tags=True), end="")
    version[2]
    playercross[bot)2];
    o : x [0,0];
    """
    derived = _field_tags(record)
    tags = [("version", "2")]
    for key in _TAG_ORDER:  # a value kept verbatim in ``tags`` replaces the derived one
        if key in record.tags:
            tags.append((key, record.tags[key]))
        elif key in derived:
            tags.append((key, derived[key]))
    tags += [(key, value) for key, value in record.tags.items() if key not in _TAG_ORDER]
    if clean_tags:
        tags = [tags[0]] + [
            (key, _clean_tag_value(value)) for key, value in tags[1:] if _writable_key(key)
        ]
    for key, value in tags[1:]:
        _check_tag(key, value)
    lines = [f"{key}[{value}]" for key, value in tags]
    lines[-1] += ";"
    standard = record.setup == _STANDARD_SETUP and record.first_to_move is Player.O
    if not standard or not record.moves:  # the grammar wants a setup or a turn
        lines.append(_setup_text(record.setup, record.first_to_move))
    last = len(record.moves)
    for number, move in enumerate(record.moves, start=1):
        side = record.first_to_move if number % 2 else record.first_to_move.other
        if move.side is not side:
            raise ValueError(
                f"move {number} is {move.side.value}'s, but sides alternate from "
                f"first_to_move {record.first_to_move.value}: it should be {side.value}'s"
            )
        if len(move.pieces) == 1 and number != last:
            raise ValueError(f"move {number} has one stone; only the last move may")
        stones = [f"[{p.q},{p.r}]" for p in move.pieces]
        if len(stones) == 1:
            stones.append("[/]")
        info = _info_text(move)
        lines.append(f"{number}. {' '.join(stones)}{' ' + info if info else ''};")
    return "\n".join(lines) + "\n"


def _writable_key(key: str) -> bool:
    return key != "version" and key[:1] in _KEY_START and all(c in _KEY_CHARS for c in key)


def _clean_tag_value(value: str) -> str:
    return value.replace("]", ")").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def _check_tag(key: str, value: str) -> None:
    if not _writable_key(key):
        raise ValueError(f"{key!r} cannot be written as a tag key")
    if "]" in value or "\n" in value or "\r" in value:
        raise ValueError(f"tag {key}: a value cannot hold ']' or a line break: {value!r}")


def _setup_text(setup: Iterable[Cell], first_to_move: Player) -> str:
    lists = {first_to_move: [first_to_move.value], first_to_move.other: [first_to_move.other.value]}
    for cell in setup:
        lists[cell.p].append(f"[{cell.q},{cell.r}]")
    return f"{' '.join(lists[first_to_move])} : {' '.join(lists[first_to_move.other])};"


def _info_text(move: RecordedMove) -> str:
    parts = [] if move.clock_ms is None else [f"@{move.clock_ms}"]
    evaluation = move.evaluation
    if evaluation is not None:
        if evaluation.win_in is not None:
            parts.append(f"#{evaluation.win_in}")
        elif evaluation.heuristic is not None and not math.isnan(evaluation.heuristic):
            parts.append(f"%{_open_evaluation(evaluation.heuristic)}")
    return "{" + ":".join(parts) + "}" if parts else ""


def _open_evaluation(heuristic: float) -> int:
    """The ``%n`` for a heuristic: 100 times the value clamped to [-1, 1], rounded half away
    from zero.

    >>> [_open_evaluation(h) for h in (0.42, -3.0, 0.005, -0.005, -0.004)]
    [42, -100, 1, -1, 0]
    """
    scaled = 100 * min(1.0, max(-1.0, heuristic))
    magnitude = math.floor(abs(scaled) + 0.5)
    return magnitude if scaled >= 0 else -magnitude


def _field_tags(record: GameRecord) -> dict[str, str]:
    """The tags ``dumps`` derives from the record's fields (not from ``record.tags``)."""
    tags: dict[str, str] = {}
    if record.name is not None:
        tags["name"] = record.name
    if record.started_at is not None:
        tags["utcdatetime"] = _utc_text(record.started_at)
    if record.player_x.name is not None:
        tags["playercross"] = record.player_x.name
    if record.player_o.name is not None:
        tags["playercircle"] = record.player_o.name
    match = record.match
    if match.clock is not None:
        if match.clock_type == "match":
            tags["timecontrol"] = _seconds_text(match.clock)
        elif match.clock_type == "incremental":
            tags["timecontrol"] = f"{_seconds_text(match.clock)}+{_seconds_text(match.increment)}"
        elif match.clock_type == "turn":
            tags["turnclock"] = _seconds_text(match.clock)
    result = record.result
    if result is not None:
        endreason = {
            ResultReason.WIN: "win",
            ResultReason.DRAW: "draw",
            ResultReason.FORFEIT: "time" if result.cause is EndCause.TIMEOUT else "resign",
        }[result.reason]
        tags["endreason"] = endreason
        if result.winner is not None:
            tags["winner"] = "cross" if result.winner is Player.X else "circle"
        if result.cause is not None and result.cause is not _IMPLIED_CAUSES.get(endreason):
            tags["cause"] = result.cause.value
    if match.view_distance != _DEFAULT_MATCH.view_distance:
        tags["viewdistance"] = str(match.view_distance)
    if match.win_distance != _DEFAULT_MATCH.win_distance:
        tags["windistance"] = str(match.win_distance)
    if match.turn_limit is not None:
        tags["turnlimit"] = str(match.turn_limit)
    return tags


def _utc_text(moment: datetime) -> str:
    if moment.tzinfo is not None:  # a naive datetime is taken to be UTC already
        moment = moment.astimezone(UTC)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} "
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )


def _seconds_text(seconds: float) -> str:
    if seconds.is_integer():
        return str(int(seconds))
    # repr is the shortest text that reads back as the same float; Decimal spells out
    # the exponent that repr uses for very small or large numbers.
    return format(Decimal(repr(seconds)), "f")
