"""Boards on the wire: ``Board``, the incremental ``GrowingBoard``, ``Move``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, TypeVar, cast

import orjson
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from wire.basics import Cell, Coord, Player
from wire.records import _standard_setup
from wire.trusted import trusted

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


#: A stone ``GrowingBoard.add`` noted, as orjson writes its ``Cell`` (``{"q":..,"r":..,
#: "p":"x"}``, in that order: tests/test_models.py compares the two), without a dict and
#: an encoder call per stone: a board is asked for at a game's end, with every stone
#: nobody watched yet.
_CELL_JSON = b'{"q":%d,"r":%d,"p":"%s"}'
_SIDE_JSON = {Player.X: b"x", Player.O: b"o"}
#: The ``Cell`` of each stone ``add`` noted, shared between boards (they are frozen,
#: and games are played near the origin: the same cells come back game after game);
#: bounded, cleared when full. A race between threads can only make an equal Cell twice.
_CELLS: dict[tuple[int, int, Player], Cell] = {}
_CELLS_LIMIT = 1 << 14


class GrowingBoard:
    """The board of a game in progress, where stones are only ever added.

    Stones come in cheaply (``add``: no model, no JSON) and are turned into ``Cell``
    objects and JSON only when a board is asked for, once each: most moves of a game
    between bots that read ``previous`` never need the board, while a packet carrying
    it (a ``setup``, a ``move_request`` to a bot that reads the board, a spectator's
    ``board_update``) then costs one copy of those bytes in ``dump_packet`` instead of
    encoding every stone again: the board of a 500-move game is 1000 stones.

    >>> from models import dump_packet
    >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    >>> board.add(1, 0, Player.O)
    >>> dump_packet(board.board())
    b'{"cells":[{"q":0,"r":0,"p":"x"},{"q":1,"r":0,"p":"o"}]}'
    >>> board.board() == Board(cells=board.cells)
    True
    """

    __slots__ = ("_board", "_cells", "_ends", "_json", "_pending")

    def __init__(self, cells: Iterable[Cell] = ()) -> None:
        self._cells: list[Cell] = []
        self._json = bytearray()
        # Where each stone's JSON ends in _json, so any earlier board is a prefix.
        self._ends: list[int] = []
        # Stones added since the board was last asked for: encoded on demand.
        self._pending: list[Cell | tuple[int, int, Player]] = []
        self._board: Board | None = None  # board() until the next stone
        self.extend(cells)

    def __len__(self) -> int:
        return len(self._cells) + len(self._pending)

    @property
    def cells(self) -> list[Cell]:
        """The stones in the order placed (a copy)."""
        self._catch_up()
        return list(self._cells)

    def extend(self, cells: Iterable[Cell]) -> None:
        """Add stones (their cells must be empty: the caller checked the rules)."""
        self._board = None
        self._pending.extend(cells)

    def add(self, q: int, r: int, p: Player) -> None:
        """Add one stone of ``p`` at ``(q, r)`` (empty: the caller checked the rules):
        O(1), its ``Cell`` and JSON are made when a board is next asked for. ``q`` and
        ``r`` are ints and ``p`` a ``Player``, as the rules hold them: they are not
        validated again."""
        self._board = None
        self._pending.append((q, r, p))

    def _catch_up(self) -> None:
        """Make the ``Cell`` and the JSON of every stone added since the last time."""
        if not self._pending:
            return
        json, ends, cells = self._json, self._ends, self._cells
        for item in self._pending:
            if type(item) is tuple:
                # A stone ``add`` noted: its values come from the rules, which placed
                # it (int coordinates, a Player), so neither needs pydantic's look.
                q, r, p = item
                cell = _CELLS.get(item)
                if cell is None:
                    cell = trusted(Cell, {"q": q, "r": r, "p": p})
                    if len(_CELLS) >= _CELLS_LIMIT:
                        _CELLS.clear()
                    _CELLS[item] = cell
                encoded = _CELL_JSON % (q, r, _SIDE_JSON[p])
            else:
                cell = cast(Cell, item)
                encoded = orjson.dumps(_cells_json((cell,))[0])
            if json:
                json += b","
            json += encoded
            ends.append(len(json))
            cells.append(cell)
        self._pending.clear()

    def board(self) -> Board:
        """A ``Board`` holding the stones so far: the same (frozen) one until the next
        stone, so the move's request and its spectators' update share it.

        >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        >>> board.board() is board.board()
        True
        """
        if self._board is None:
            self._board = self.board_as(Board)
        return self._board

    def mark(self) -> int:
        """Where the board stands now, for ``board_at`` later: O(1), copies nothing."""
        return len(self)

    def board_at(self, mark: int) -> Board:
        """The board as it stood at ``mark`` (from ``mark``): stones are only ever added,
        so it is the first stones, and the first bytes of their JSON.

        >>> board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
        >>> then = board.mark()
        >>> board.add(1, 0, Player.O)
        >>> board.board_at(then) == GrowingBoard([Cell(q=0, r=0, p=Player.X)]).board()
        True
        >>> board.board_at(board.mark()) is board.board()
        True
        """
        if mark == len(self):
            return self.board()
        self._catch_up()
        cells = self._cells[:mark]
        size = self._ends[mark - 1] if mark else 0
        board = Board.model_construct(cells=cells)
        object.__setattr__(board, _ENCODED_CELLS, (cells, mark, bytes(self._json[:size])))
        return board

    def board_as(self, model: type[B], **fields: Any) -> B:
        """A board of type ``model`` (a ``Board`` subclass) with the stones so far and
        its other ``fields``, e.g. a stateless board's ``to_move``."""
        self._catch_up()
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
