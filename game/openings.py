"""Opening books: the first turns a tournament plays out before the bots take over.

A book is a text file of HTTTX notation version 2 records, one record per opening, each
starting on a line of its own with ``version[2]`` (so ``game.notation.dumps`` output can
be joined as it is). An opening is the stones of its first turns after X's implicit
``[0,0]``, or a setup (and turns after it). ``load_book`` reads every record with our own
reader, which replays it through the rules, and refuses an opening that is illegal or
already over, naming the opening and its line in the file. ``default_book()`` is the book
shipped with the package (``game/books/openings.htttx``, made by
``tools/make_openings.py``); the tournament runner (issue 11) plays each opening twice,
colours swapped.

>>> book = OpeningBook.from_text('''
... version[2]
... name[Two turns];
... 1. [1,0] [0,1];
... 2. [-1,0] [0,-1];
...
... version[2]
... name[One turn];
... 1. [2,-1] [1,1];
... ''')
>>> len(book), [opening.name for opening in book.order()]
(2, ['Two turns', 'One turn'])
>>> opening = book[0]
>>> opening.moves
(((1, 0), (0, 1)), ((-1, 0), (0, -1)))
>>> position = opening.position()
>>> position.to_move, len(position)
('o', 5)
>>> opening.line
2
>>> sorted(opening.name for opening in book.order(seed=7)) == ['One turn', 'Two turns']
True

An opening that breaks the rules or is already won is an error that names it:

>>> OpeningBook.from_text('version[2] name[Bad]; 1. [1,0] [0,0];', source="mine.htttx")
Traceback (most recent call last):
...
game.openings.IllegalOpeningError: mine.htttx line 1, column 32: opening 'Bad': turn 1: ...
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from game.hexgrid import AXES, Hex
from game.notation import NotationError, dumps, loads
from game.rules import GameOverError, IllegalMoveError, O, Position, Side, X
from models import Cell, Coord, GameRecord, Move, Player, RecordedMove

__all__ = [
    "DEFAULT_BOOK_FILE",
    "STANDARD_SETUP",
    "BookFormatError",
    "EmptyBookError",
    "FinishedOpeningError",
    "IllegalOpeningError",
    "NonStandardOpeningError",
    "Opening",
    "OpeningBook",
    "OpeningError",
    "default_book",
    "load_book",
    "symmetries",
]

#: The shipped book's file name inside the ``game.books`` package.
DEFAULT_BOOK_FILE = "openings.htttx"

#: X's implicit first stone: the setup of every standard game.
STANDARD_SETUP: tuple[tuple[int, int, Side], ...] = ((0, 0, X),)

# A record starts with a line whose first text is its version tag.
_RECORD_START = re.compile(r"^[ \t]*version\[", re.MULTILINE)
_NAME_TAG = re.compile(r"\bname\[([^\]\n]*)\]")


# ------------------------------------------------------------------------- errors


class OpeningError(ValueError):
    """A book that cannot be used; ``source``, ``line`` (from 1) and ``name`` say where."""

    def __init__(
        self, reason: str, *, source: str, line: int, name: str | None, column: int | None = None
    ) -> None:
        where = f"{source} line {line}" + ("" if column is None else f", column {column}")
        super().__init__(f"{where}: opening {name!r}: {reason}" if name else f"{where}: {reason}")
        self.reason = reason
        self.source = source
        self.line = line
        self.column = column
        self.name = name


class IllegalOpeningError(OpeningError):
    """A record that is not notation, or whose stones the rules do not allow."""


class FinishedOpeningError(OpeningError):
    """A record whose game is already over (a line on the board, or a result tag)."""


class BookFormatError(OpeningError):
    """Text outside the records: anything before the first ``version[`` line."""


class EmptyBookError(OpeningError):
    """A book with no opening in it."""


class NonStandardOpeningError(ValueError):
    """``Opening.wire_moves`` of an opening with a setup of its own: a game request's
    opening is moves after the standard start only."""


# ----------------------------------------------------------------------- symmetry


def _rotate(cell: Hex) -> Hex:
    q, r = cell
    return (-r, q + r)


def symmetries() -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
    """The 12 symmetries of the hex grid around ``(0, 0)`` as integer matrices.

    Each is ``((a, b), (c, d))`` mapping ``(q, r)`` to ``(a*q + b*r, c*q + d*r)``: the six
    rotations by 60 degrees, then the same after the reflection ``(q, r) -> (r, q)``.

    >>> len(set(symmetries())), symmetries()[0]
    (12, ((1, 0), (0, 1)))
    """
    found: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for reflect in (False, True):
        ex: Hex = (0, 1) if reflect else (1, 0)  # where (1, 0) goes
        ey: Hex = (1, 0) if reflect else (0, 1)  # where (0, 1) goes
        for _ in range(6):
            found.append(((ex[0], ey[0]), (ex[1], ey[1])))
            ex, ey = _rotate(ex), _rotate(ey)
    return tuple(found)


def _apply(matrix: tuple[tuple[int, int], tuple[int, int]], cell: Hex) -> Hex:
    (a, b), (c, d) = matrix
    q, r = cell
    return (a * q + b * r, c * q + d * r)


# ------------------------------------------------------------------------ opening


@dataclass(frozen=True, slots=True)
class Opening:
    """One opening: its name, its setup, and the turns played from it.

    ``moves`` holds the turns in order, each the two stones of one move as ``(q, r)``;
    ``setup`` is ``STANDARD_SETUP`` (X at the origin) unless the record has a setup, and
    ``first_to_move`` the side that plays ``moves[0]``. The setup is kept sorted (its
    order means nothing). ``line`` is where the record starts in its book (not part of
    equality).

    >>> opening = Opening("Wedge", moves=(((1, 0), (1, -1)), ((-1, 0), (0, -1))))
    >>> opening.to_move, opening.stones()
    ('o', [(0, 0, 'x'), (1, 0, 'o'), (1, -1, 'o'), (-1, 0, 'x'), (0, -1, 'x')])
    >>> print(opening.dumps(), end="")
    version[2]
    name[Wedge];
    1. [1,0] [1,-1];
    2. [-1,0] [0,-1];
    """

    name: str
    moves: tuple[tuple[Hex, ...], ...] = ()
    setup: tuple[tuple[int, int, Side], ...] = STANDARD_SETUP
    first_to_move: Side = O
    line: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "setup", tuple(sorted(self.setup)))

    @property
    def to_move(self) -> Side:
        """The side that moves first once the opening has been played out."""
        if len(self.moves) % 2 == 0:
            return self.first_to_move
        return X if self.first_to_move == O else O

    def stones(self) -> list[tuple[int, int, Side]]:
        """Every stone of the opening as ``(q, r, side)``: the setup, then the moves."""
        stones = list(self.setup)
        side = self.first_to_move
        for move in self.moves:
            stones.extend((q, r, side) for q, r in move)
            side = X if side == O else O
        return stones

    def position(
        self, view_distance: int = 8, win_distance: int = 6, turn_limit: int | None = None
    ) -> Position:
        """The position the bots start from: the setup with every move placed.

        Raises the rules' ``IllegalMoveError`` when the moves do not fit these settings
        (a book is checked with the defaults, 8 and 6).
        """
        position = Position(
            view_distance,
            win_distance,
            setup=self.setup,
            to_move=self.first_to_move,
            turn_limit=turn_limit,
        )
        for move in self.moves:
            for q, r in move:
                position.place(q, r)
        return position

    def recorded_moves(self) -> list[RecordedMove]:
        """The moves as a game record's first moves (no clock, no evaluation)."""
        side = Player(self.first_to_move)
        recorded = []
        for move in self.moves:
            recorded.append(RecordedMove(side=side, pieces=[Coord(q=q, r=r) for q, r in move]))
            side = side.other
        return recorded

    def wire_moves(self) -> list[Move]:
        """The moves as ``NewGameRequest.opening`` takes them: O's first, after X's stone
        at the origin (a tournament sends each opening twice, the seats swapped).

        Raises ``NonStandardOpeningError`` for an opening with a setup of its own, which
        a game request cannot carry.

        >>> opening = Opening("Wedge", moves=(((1, 0), (1, -1)), ((-1, 0), (0, -1))))
        >>> [(m.side.value, [p.as_tuple() for p in m.pieces]) for m in opening.wire_moves()]
        [('o', [(1, 0), (1, -1)]), ('x', [(-1, 0), (0, -1)])]
        """
        if self.setup != STANDARD_SETUP or self.first_to_move != O:
            raise NonStandardOpeningError(
                f"opening {self.name!r} has a setup of its own; a game request's opening is "
                "moves after X's stone at (0, 0), O first"
            )
        return [Move(side=move.side, pieces=move.pieces) for move in self.recorded_moves()]

    def dumps(self) -> str:
        """The opening as one book record (HTTTX notation version 2)."""
        record = GameRecord(
            name=self.name,
            setup=[Cell(q=q, r=r, p=Player(side)) for q, r, side in self.setup],
            first_to_move=Player(self.first_to_move),
            moves=self.recorded_moves(),
        )
        return dumps(record)

    def canonical(self) -> tuple[tuple[Hex, ...], tuple[Hex, ...], Side]:
        """The final position up to the grid's 12 symmetries around ``(0, 0)``.

        Two openings that reach the same stones, or mirror images or rotations of them,
        have the same canonical form: ``(X's stones, O's stones, side to move)``, the
        smallest of the 12 images, each side's cells sorted.

        >>> a = Opening("a", moves=(((1, 0), (2, 0)),))
        >>> b = Opening("b", moves=(((0, -2), (0, -1)),))  # a rotated
        >>> c = Opening("c", moves=(((1, 0), (0, 1)),))
        >>> a.canonical() == b.canonical(), a.canonical() == c.canonical()
        (True, False)
        """
        stones = self.stones()
        images = []
        for matrix in symmetries():
            moved = [(_apply(matrix, (q, r)), side) for q, r, side in stones]
            images.append(
                (
                    tuple(sorted(cell for cell, side in moved if side == X)),
                    tuple(sorted(cell for cell, side in moved if side == O)),
                    self.to_move,
                )
            )
        return min(images)

    def most_in_window(self, side: Side, win_distance: int = 6) -> int:
        """The most stones ``side`` has in one open window of ``win_distance`` cells.

        A window is ``win_distance`` consecutive cells on one of the three axes holding
        no stone of the other side, so a line could still be made there. With two stones
        a move, ``win_distance - 2`` or more in one window is a threat to win next move.

        >>> opening = Opening("x", moves=(((1, 0), (2, 0)), ((0, 1), (-1, 0))))
        >>> opening.most_in_window(O), opening.most_in_window(X)
        (2, 2)
        """
        board = {(q, r): stone for q, r, stone in self.stones()}
        best = 0
        for (q, r), stone in board.items():
            if stone != side:
                continue
            for dq, dr in AXES:
                for start in range(-win_distance + 1, 1):  # every window through the stone
                    cells = [
                        (q + (start + i) * dq, r + (start + i) * dr) for i in range(win_distance)
                    ]
                    held = [board.get(cell) for cell in cells]
                    if all(stone_at in (None, side) for stone_at in held):
                        best = max(best, held.count(side))
        return best


# --------------------------------------------------------------------------- book


@dataclass(frozen=True, slots=True)
class OpeningBook:
    """The openings of one book, in file order; ``source`` names it in errors."""

    openings: tuple[Opening, ...]
    source: str = "<book>"

    @classmethod
    def from_text(cls, text: str, source: str = "<book>") -> OpeningBook:
        """Read a book's text; raises an ``OpeningError`` for the first bad record."""
        text = text.removeprefix("\ufeff")  # a byte order mark, as the reader allows
        starts = [found.start() for found in _RECORD_START.finditer(text)]
        head = text[: starts[0]] if starts else text
        if head.strip():
            offset = len(head) - len(head.lstrip())
            raise BookFormatError(
                "expected a record starting with 'version[' on a line of its own",
                source=source,
                line=text.count("\n", 0, offset) + 1,
                name=None,
            )
        if not starts:
            raise EmptyBookError("the book has no openings", source=source, line=1, name=None)
        openings = []
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else len(text)
            line = text.count("\n", 0, start) + 1
            openings.append(_read_opening(text[start:end], index + 1, line, source))
        return cls(tuple(openings), source)

    def __len__(self) -> int:
        return len(self.openings)

    def __iter__(self) -> Iterator[Opening]:
        return iter(self.openings)

    def __getitem__(self, index: int) -> Opening:
        return self.openings[index]

    def check(self, view_distance: int = 8, win_distance: int = 6) -> None:
        """Check every opening under a match's settings, as loading does for the defaults.

        A tournament with other distances calls this before its first game: a stone out
        of view raises ``IllegalOpeningError``, a line of ``win_distance``
        ``FinishedOpeningError``, each naming the opening and its line.

        >>> book = OpeningBook.from_text("version[2] name[Row]; 1. [1,0] [2,0];")
        >>> book.check(win_distance=2)
        Traceback (most recent call last):
        ...
        game.openings.FinishedOpeningError: <book> line 1: opening 'Row': ... O won
        """
        for opening in self.openings:
            try:
                position = opening.position(view_distance, win_distance)
            except GameOverError:
                raise FinishedOpeningError(
                    f"with win_distance {win_distance} the game is over before its last stone",
                    source=self.source,
                    line=opening.line,
                    name=opening.name,
                ) from None
            except IllegalMoveError as problem:
                raise IllegalOpeningError(
                    f"with view_distance {view_distance}: {problem}",
                    source=self.source,
                    line=opening.line,
                    name=opening.name,
                ) from None
            outcome = position.outcome
            if outcome is not None:
                winner = "nobody" if outcome.winner is None else outcome.winner.upper()
                raise FinishedOpeningError(
                    f"with win_distance {win_distance} the game is already over: {winner} won",
                    source=self.source,
                    line=opening.line,
                    name=opening.name,
                )

    def order(self, seed: int | None = None) -> list[Opening]:
        """The openings in the order a tournament plays them.

        Without a seed, the file's order; with one, a shuffle of every opening that
        the same seed always repeats.
        """
        openings = list(self.openings)
        if seed is not None:
            random.Random(seed).shuffle(openings)
        return openings


def _read_opening(chunk: str, index: int, line: int, source: str) -> Opening:
    found_name = _NAME_TAG.search(chunk)
    name = found_name[1] if found_name else f"opening {index}"

    def error(kind: type[OpeningError], reason: str) -> OpeningError:
        return kind(reason, source=source, line=line, name=name)

    try:
        record = loads(chunk)
    except NotationError as problem:
        raise IllegalOpeningError(
            problem.reason,
            source=source,
            line=line + problem.line - 1,
            name=name,
            column=problem.column,
        ) from None
    if record.result is not None:
        winner = record.result.winner
        reason = (
            f"the game is already over: {winner.value.upper()} won"
            if winner is not None
            else "the game is already over: a draw"
        )
        raise error(FinishedOpeningError, reason)
    moves = tuple(tuple((piece.q, piece.r) for piece in move.pieces) for move in record.moves)
    for number, move in enumerate(moves, start=1):
        if len(move) != 2:
            raise error(IllegalOpeningError, f"turn {number} has one stone; an opening's have two")
    return Opening(
        name=name,
        moves=moves,
        setup=tuple((cell.q, cell.r, _side(cell.p)) for cell in record.setup),
        first_to_move=_side(record.first_to_move),
        line=line,
    )


def _side(player: Player) -> Side:
    return X if player is Player.X else O


def load_book(path: str | Path) -> OpeningBook:
    """Read the book at ``path`` (UTF-8); errors name the file, the line, the opening."""
    path = Path(path)
    return OpeningBook.from_text(path.read_text(encoding="utf-8"), source=str(path))


def default_book() -> OpeningBook:
    """The book shipped with the package, read as package data.

    >>> len(default_book()) >= 50
    True
    """
    text = resources.files("game.books").joinpath(DEFAULT_BOOK_FILE).read_text(encoding="utf-8")
    return OpeningBook.from_text(text, source=f"game/books/{DEFAULT_BOOK_FILE}")
