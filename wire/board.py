"""Boards on the wire: ``Board``, the incremental ``GrowingBoard``, ``Move``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, TypeVar, cast

import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from wire.basics import Cell, Coord, Player
from wire.records import _standard_setup

# Time limits travel as JSON numbers of seconds; JSON has no NaN or infinity.
Seconds = Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False)]
Milliseconds = Annotated[StrictInt, Field(ge=0)]


class Board(BaseModel):
    """The stones on the board, in any order (the spec's ``Board``).

    >>> Board.standard()
    Board(cells=[Cell(q=0, r=0, p=<Player.X: 'x'>)])
    """

    model_config = ConfigDict(frozen=True)

    cells: list[Cell]

    @staticmethod
    def standard() -> Board:
        """The start of a standard game: one X at (0, 0)."""
        return Board(cells=_standard_setup())


# Where a GrowingBoard leaves the JSON of its cells on the boards it makes. Not a field
# (pydantic's equality and dumps ignore it): dump_packet reads it, and only while the
# board still holds the very list it was made with, at the same length.
_ENCODED_CELLS = "_encoded_cells"


class GrowingBoard:
    """The board of a game in progress, where stones are only ever added.

    It keeps the JSON of its cells as it grows, so a packet carrying the board (a
    ``move_request`` to each seat, a ``board_update`` to spectators: twice per move)
    costs one copy of those bytes in ``dump_packet`` instead of encoding every stone
    again: the board of a 500-move game is 1000 stones.

    >>> from models import dump_packet
    >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    >>> board.extend([Cell(q=1, r=0, p=Player.O)])
    >>> dump_packet(board.board())
    b'{"cells":[{"q":0,"r":0,"p":"x"},{"q":1,"r":0,"p":"o"}]}'
    >>> board.board() == Board(cells=board.cells)
    True
    """

    __slots__ = ("_board", "_cells", "_json")

    def __init__(self, cells: Iterable[Cell] = ()) -> None:
        self._cells: list[Cell] = []
        self._json = bytearray()
        self._board: Board | None = None  # board() until the next stone
        self.extend(cells)

    def __len__(self) -> int:
        return len(self._cells)

    @property
    def cells(self) -> list[Cell]:
        """The stones in the order placed (a copy)."""
        return list(self._cells)

    def extend(self, cells: Iterable[Cell]) -> None:
        """Add stones (their cells must be empty: the caller checked the rules)."""
        self._board = None
        for cell in cells:
            if self._json:
                self._json += b","
            self._json += orjson.dumps(_cells_json((cell,))[0])
            self._cells.append(cell)

    def board(self) -> Board:
        """A ``Board`` holding the stones so far: the same (frozen) one until the next
        ``extend``, so the move's request and its spectators' update share it.

        >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        >>> board.board() is board.board()
        True
        """
        if self._board is None:
            self._board = self.board_as(Board)
        return self._board

    def mark(self) -> tuple[int, int]:
        """Where the board stands now, for ``board_at`` later: O(1), copies nothing."""
        return len(self._cells), len(self._json)

    def board_at(self, mark: tuple[int, int]) -> Board:
        """The board as it stood at ``mark`` (from ``mark``): stones are only ever added,
        so it is the first stones, and the first bytes of their JSON.

        >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        >>> then = board.mark()
        >>> board.extend([Cell(q=1, r=0, p=Player.O)])
        >>> board.board_at(then) == GrowingBoard([Cell(q=0, r=0, p=Player.X)]).board()
        True
        >>> board.board_at(board.mark()) is board.board()
        True
        """
        count, size = mark
        if count == len(self._cells):
            return self.board()
        cells = self._cells[:count]
        board = Board.model_construct(cells=cells)
        object.__setattr__(board, _ENCODED_CELLS, (cells, count, bytes(self._json[:size])))
        return board

    def board_as(self, model: type[B], **fields: Any) -> B:
        """A board of type ``model`` (a ``Board`` subclass) with the stones so far and
        its other ``fields``, e.g. a stateless board's ``to_move``."""
        cells = list(self._cells)
        board = cast(B, model.model_construct(cells=cells, **fields))
        # Bypasses the frozen model on purpose: see _ENCODED_CELLS.
        object.__setattr__(board, _ENCODED_CELLS, (cells, len(cells), bytes(self._json)))
        return board


B = TypeVar("B", bound=Board)


class Move(BaseModel):
    """A move already made, as listed in ``move_request.previous`` and ``board_update``.

    The spec says exactly 2 pieces; we accept 1 or 2 because our server sends 1-stone
    moves in two legitimate cases: the first stone of a move won the game (the second is
    never placed), and a human seat in stone-by-stone mode, whose first stone comes back
    in ``previous`` of the second ``move_request`` (protocol.md, "Humans").
    """

    model_config = ConfigDict(frozen=True)

    side: Player
    pieces: Annotated[list[Coord], Field(min_length=1, max_length=2)]


def _cells_json(cells: Iterable[Cell]) -> list[dict[str, object]]:
    # A Cell's __dict__ is exactly {"q", "r", "p"} (tests/test_models.py checks it), and
    # handing it to orjson is several times faster than building a dict per stone;
    # orjson writes the Player enum as its value. Subclasses may hold more: spell out.
    return [
        cell.__dict__ if type(cell) is Cell else {"q": cell.q, "r": cell.r, "p": cell.p}
        for cell in cells
    ]
