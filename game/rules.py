"""The rules of HTTTX, as a fast incremental position.

X's first stone stands at (0, 0) before the game starts; then O moves, and every move
places two stones. Each stone is checked on its own, in order: its cell must be empty and
within ``view_distance`` of a stone already on the board (the mover's first stone of a
move counts for the second). ``win_distance`` stones in a row on one of the three axes
win, checked after every stone; a winning first stone ends the game at once.

>>> pos = Position()
>>> pos.to_move, pos.stones_left
('o', 2)
>>> pos.place(1, 0); pos.place(2, 0)
>>> pos.to_move
'x'
>>> pos.is_legal(0, 0), pos.is_legal(11, 0), pos.is_legal(-8, 0)
(False, False, True)
>>> pos.place(11, 0)
Traceback (most recent call last):
...
game.rules.OutOfViewError: (11, 0) is farther than view_distance 8 from every stone

How it stays fast (every operation is O(1) in the number of stones):

* Each cell has one integer key, ``q * 2**20 + r``; the board is a dict of them and each
  side's stones a set, so walking a line through the new stone (the only lines that can
  change) is integer additions and set lookups.
* "Within view of a stone" is answered from bit masks of stones per board row: the
  hexagon of radius R around a cell is one interval of q in each of its 2R + 1 rows, so
  the check is a mask test per row, nearest rows first, stopping at the first hit.
  Placing a stone sets one bit.
* Those row masks are cut in chunks of a fixed width C > 2R (64 or 128 cells), kept in a
  dict keyed like cells: a hexagon's rows then span at most two chunks, and a stone costs
  the same memory and work wherever it stands, at (0, 0) or at q = 500000 (one whole-row
  integer would be as wide as the farthest stone from the row's first). The masks of a
  hexagon's rows are tabled once per view distance for each offset in a chunk.
* ``legal_cells()`` is a maintained set, updated lazily: stones placed since the last call
  are folded in with per-row coverage masks, so only cells that become newly covered are
  touched, never the whole hexagon cell by cell, and never the whole board: a stone costs
  O(view area) at most.
"""

from __future__ import annotations

from collections.abc import Iterable, KeysView
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Literal, TypeAlias

from game.hexgrid import Hex
from game.rowmasks import COORD_LIMIT as _COORD_LIMIT
from game.rowmasks import STRIDE as _STRIDE
from game.rowmasks import ViewMasks, chunk_shift, mask_tables, table_masks

Side: TypeAlias = Literal["x", "o"]
X: Side = "x"
O: Side = "o"  # noqa: E741 - the side's name

_OTHER: dict[str, Side] = {X: O, O: X}

# Cells are keyed q * _STRIDE + r (game.rowmasks): stepping along the three axes is then
# adding a constant, which keeps the line walk to integer additions and dict lookups.
_AXIS_STEPS = (_STRIDE, 1, _STRIDE - 1)  # (1, 0), (0, 1), (1, -1)

MIN_VIEW_DISTANCE, MAX_VIEW_DISTANCE = 1, 50
MIN_WIN_DISTANCE, MAX_WIN_DISTANCE = 2, 20


# ------------------------------------------------------------------------- errors


class IllegalMoveError(ValueError):
    """A stone that the rules do not allow. The message says why."""


class OccupiedCellError(IllegalMoveError):
    """The cell already holds a stone."""


class OutOfViewError(IllegalMoveError):
    """The cell is farther than ``view_distance`` from every stone on the board."""


class GameOverError(IllegalMoveError):
    """The game has already ended."""


class NothingToUndoError(IndexError):
    """``undo()`` with no stone placed since the setup."""


class InvalidSetupError(ValueError):
    """A start position the rules cannot play from (a repeated cell, an existing line)."""


# ------------------------------------------------------------------------ outcome


class Termination(Enum):
    """Why a game ended."""

    LINE = "line"  # ``win_distance`` or more in a row
    TURN_LIMIT = "turn_limit"  # ``turn_limit`` moves were played: a draw


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game, as a value.

    ``winner`` is ``"x"``, ``"o"``, or None for a draw; ``line`` holds the winning run of
    cells in order along its axis (it may be longer than ``win_distance``).

    >>> Outcome(termination=Termination.TURN_LIMIT, winner=None).result()
    '1/2-1/2'
    """

    termination: Termination
    winner: Side | None
    line: tuple[Hex, ...] = ()

    def result(self) -> str:
        """``"1-0"`` when X won, ``"0-1"`` when O won, ``"1/2-1/2"`` for a draw."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner == X else "0-1"


# ----------------------------------------------------------------------- position


# Coverage bits one stone added to the covered rows when it was folded into
# ``legal_cells``: [(chunk key, q of the chunk's bit 0, row, bits)].
_CoverageDelta: TypeAlias = list[tuple[int, int, int, int]]


class Position:
    """A game in progress: the board, the side to move, and the outcome.

    ``setup`` replaces the standard start (X at the origin) with any stones, given as
    ``(q, r, side)``; ``to_move`` is then the side that makes the first move.
    ``turn_limit`` ends the game in a draw after that many moves (a move is two stones).
    A setup that already holds a winning line raises ``InvalidSetupError`` unless
    ``reject_setup_lines`` is False (for callers that only ask which cells are legal).
    """

    __slots__ = (
        "_board",
        "_chunk_mask",
        "_chunk_shift",
        "_coverage_deltas",
        "_covered_rows",
        "_fold_masks",
        "_history",
        "_keys_of",
        "_legal",
        "_line_checks",
        "_moves_played",
        "_outcome",
        "_setup_size",
        "_stone_rows",
        "_stones_left",
        "_to_move",
        "_view_masks",
        "turn_limit",
        "view_distance",
        "win_distance",
    )

    def __init__(
        self,
        view_distance: int = 8,
        win_distance: int = 6,
        *,
        setup: Iterable[tuple[int, int, str]] | None = None,
        to_move: str = O,
        turn_limit: int | None = None,
        reject_setup_lines: bool = True,
    ) -> None:
        if not MIN_VIEW_DISTANCE <= view_distance <= MAX_VIEW_DISTANCE:
            raise ValueError(
                f"view_distance must be {MIN_VIEW_DISTANCE}..{MAX_VIEW_DISTANCE}, "
                f"got {view_distance}"
            )
        if not MIN_WIN_DISTANCE <= win_distance <= MAX_WIN_DISTANCE:
            raise ValueError(
                f"win_distance must be {MIN_WIN_DISTANCE}..{MAX_WIN_DISTANCE}, got {win_distance}"
            )
        if turn_limit is not None and turn_limit < 1:
            raise ValueError(f"turn_limit must be at least 1 move, got {turn_limit}")
        self.view_distance = view_distance
        self.win_distance = win_distance
        self.turn_limit = turn_limit
        self._to_move: Side = _side(to_move)
        self._stones_left = 2
        self._moves_played = 0
        self._outcome: Outcome | None = None
        self._board: dict[int, Side] = {}
        # The keys of each side's stones: walking a line is then `key in set`, one
        # opcode a step instead of a method call and a comparison.
        self._keys_of: dict[str, set[int]] = {X: set(), O: set()}
        self._history: list[tuple[int, int, Side]] = []
        # Chunk key (q >> shift) * _STRIDE + r -> bit (q & mask) set for every stone of
        # row r in that chunk. A chunk is wider than a hexagon, so one hexagon row lies
        # in at most two chunks.
        self._chunk_shift = chunk_shift(view_distance)
        self._chunk_mask = (1 << self._chunk_shift) - 1
        # Shared by every position of this view distance, filled in as offsets occur.
        self._view_masks, self._fold_masks = mask_tables(view_distance)
        self._stone_rows: dict[int, int] = {}
        self._line_checks = _line_checks(win_distance)
        # legal_cells(): covered rows (bit masks like _stone_rows) and the empty covered
        # cells. Stones are folded in lazily, in order; _coverage_deltas[i] is what stone
        # i added, so its length is the number of stones folded in so far.
        self._covered_rows: dict[int, int] = {}
        self._legal: dict[Hex, None] = {}
        self._coverage_deltas: list[_CoverageDelta] = []

        stones = [(0, 0, X)] if setup is None else list(setup)
        for q, r, side in stones:
            self._check_coordinates(q, r)
            key = q * _STRIDE + r
            if key in self._board:
                raise InvalidSetupError(f"the setup puts two stones on ({q}, {r})")
            self._put(q, r, _side(side))
        for q, r, side in stones if reject_setup_lines else ():
            line = self._line_through(q * _STRIDE + r, _side(side))
            if line:
                raise InvalidSetupError(
                    f"the setup already has {len(line)} in a row for {side}: {list(line)}"
                )
        self._setup_size = len(self._history)

    # ------------------------------------------------------------------ queries

    @property
    def to_move(self) -> Side:
        """The side whose stone comes next (still the last mover once the game is over)."""
        return self._to_move

    @property
    def stones_left(self) -> int:
        """Stones the side to move still places in this move: 2, then 1."""
        return self._stones_left

    @property
    def moves_played(self) -> int:
        """Complete moves (2 stones, or a winning first stone) since the setup."""
        return self._moves_played

    @property
    def outcome(self) -> Outcome | None:
        """None while the game goes on."""
        return self._outcome

    def is_game_over(self) -> bool:
        return self._outcome is not None

    @property
    def stones(self) -> list[tuple[int, int, Side]]:
        """Every stone in placement order, setup stones first: ``(q, r, side)``."""
        return list(self._history)

    @property
    def setup(self) -> list[tuple[int, int, Side]]:
        """The stones of the start position."""
        return self._history[: self._setup_size]

    def __len__(self) -> int:
        """Number of stones on the board."""
        return len(self._history)

    def piece_at(self, q: int, r: int) -> Side | None:
        """The side of the stone on (q, r), or None for an empty cell."""
        return self._board.get(q * _STRIDE + r)

    def is_legal(self, q: int, r: int) -> bool:
        """Whether the side to move may put its next stone on (q, r)."""
        # The fast path of _illegality: this runs once per stone on a game server.
        if self._outcome is not None or type(q) is not int or type(r) is not int:
            return False
        return (
            -_COORD_LIMIT < r < _COORD_LIMIT  # beyond it, keys q * _STRIDE + r would collide
            and q * _STRIDE + r not in self._board
            and self._in_view(q, r)
        )

    def why_illegal(self, q: int, r: int) -> str | None:
        """None for a legal stone, else the reason it is not."""
        error = self._illegality(q, r)
        return None if error is None else str(error)

    def legal_cells(self) -> KeysView[Hex]:
        """Every cell the side to move may play, as a live, read-only set-like view.

        It changes as stones are placed: copy it (``set(...)``, ``list(...)``) to keep a
        snapshot or to place stones while iterating. Empty once the game is over.

        >>> sorted(Position(view_distance=1).legal_cells())
        [(-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)]
        """
        if self._outcome is not None:
            return {}.keys()
        if not self._board:  # an empty setup: the first stone goes to the origin
            return {(0, 0): None}.keys()
        self._fold_coverage()
        return self._legal.keys()

    def copy(self) -> Position:
        """An independent copy, e.g. for a search to play on."""
        clone = Position.__new__(Position)
        # Immutable or shared-by-design values first, then fresh containers.
        clone.view_distance = self.view_distance
        clone.win_distance = self.win_distance
        clone.turn_limit = self.turn_limit
        clone._to_move = self._to_move
        clone._stones_left = self._stones_left
        clone._moves_played = self._moves_played
        clone._outcome = self._outcome
        clone._setup_size = self._setup_size
        clone._chunk_shift = self._chunk_shift
        clone._chunk_mask = self._chunk_mask
        clone._view_masks = self._view_masks
        clone._fold_masks = self._fold_masks
        clone._line_checks = self._line_checks
        clone._board = self._board.copy()
        clone._keys_of = {X: self._keys_of[X].copy(), O: self._keys_of[O].copy()}
        clone._history = self._history.copy()
        clone._coverage_deltas = self._coverage_deltas.copy()  # deltas are never mutated
        clone._stone_rows = self._stone_rows.copy()
        clone._covered_rows = self._covered_rows.copy()
        clone._legal = self._legal.copy()
        return clone

    def change_mark(self) -> tuple[object, ...]:
        """An O(1) value equal to a later one only if the position is the same: nothing
        placed, rebased or changed since, or all of it taken back (a search that plays
        and undoes). The last stone's record is compared by identity: a stone taken
        back and played again is a new record.

        >>> pos = Position(); mark = pos.change_mark()
        >>> pos.place(1, 0); _ = pos.undo(); pos.change_mark() == mark
        True
        >>> pos.place(1, 0); pos.change_mark() == mark
        False
        """
        last = self._history[-1] if self._history else None
        # id(last) with last itself: the record is kept alive, so no other has its id.
        return (id(last), last, len(self._history), self._setup_size, self._moves_played,
                self._stones_left, self._to_move, self._outcome, self.view_distance,
                self.win_distance, self.turn_limit)  # fmt: skip

    def rebase(self) -> None:
        """Make every stone on the board part of the setup, in O(1).

        The position is then the one ``Position(view_distance, win_distance,
        setup=self.stones, to_move=self.to_move, turn_limit=self.turn_limit)`` builds:
        ``setup`` lists all the stones, ``moves_played`` starts again at 0 and ``undo()``
        cannot take them back. Only between moves and while the game goes on: raises
        ``ValueError`` after the first stone of a move or once the game is over.

        >>> pos = Position()
        >>> pos.place_move((1, 0), (2, 0))
        >>> pos.rebase()
        >>> len(pos.setup), pos.moves_played, pos.to_move
        (3, 0, 'x')
        """
        if self._outcome is not None or self._stones_left != 2:
            raise ValueError(f"rebase needs a game going on, between moves: {self!r}")
        self._setup_size = len(self._history)
        self._moves_played = 0

    def __repr__(self) -> str:
        return (
            f"<Position {len(self._history)} stones, {self._to_move} to move "
            f"({self._stones_left} left), outcome={self._outcome}>"
        )

    # ------------------------------------------------------------------ changes

    def place(self, q: int, r: int) -> None:
        """Put the next stone of the side to move on (q, r).

        Raises ``OccupiedCellError``, ``OutOfViewError`` or ``GameOverError`` (all
        ``IllegalMoveError``) with the reason, leaving the position unchanged.
        """
        if not self.is_legal(q, r):
            raise self._illegality(q, r) or IllegalMoveError(f"({q}, {r}) cannot be played")
        key = q * _STRIDE + r
        side = self._to_move
        # _put, inlined: this is the hottest line of a game server.
        self._board[key] = side
        self._keys_of[side].add(key)
        self._history.append((q, r, side))
        rows = self._stone_rows
        chunk = (q >> self._chunk_shift) * _STRIDE + r
        rows[chunk] = rows.get(chunk, 0) | (1 << (q & self._chunk_mask))
        line = self._line_through(key, side)
        if line:
            self._outcome = Outcome(Termination.LINE, side, line)
            self._moves_played += 1
            return
        if self._stones_left == 2:
            self._stones_left = 1
            return
        self._stones_left = 2
        self._to_move = _OTHER[side]
        self._moves_played += 1
        if self.turn_limit is not None and self._moves_played >= self.turn_limit:
            self._outcome = Outcome(Termination.TURN_LIMIT, None)

    def place_move(self, first: Hex, second: Hex | None = None) -> None:
        """Play a whole move: two stones, or one when it wins the game.

        Atomic: if either stone is illegal, nothing is placed.
        """
        self.place(*first)
        if self._outcome is not None and self._outcome.termination is Termination.LINE:
            if second is not None:
                self.undo()
                raise GameOverError(
                    f"the first stone {first} already won; a second stone is not played"
                )
            return
        if second is None:
            self.undo()
            raise IllegalMoveError(f"a move places 2 stones; only {first} was given")
        try:
            self.place(*second)
        except IllegalMoveError:
            self.undo()
            raise

    def undo(self) -> tuple[int, int, Side]:
        """Take back the last stone and return it as ``(q, r, side)``."""
        if len(self._history) <= self._setup_size:
            raise NothingToUndoError("no stone has been placed since the setup")
        q, r, side = self._history.pop()
        del self._board[q * _STRIDE + r]
        self._keys_of[side].discard(q * _STRIDE + r)
        chunk = (q >> self._chunk_shift) * _STRIDE + r
        self._stone_rows[chunk] ^= 1 << (q & self._chunk_mask)
        if not self._stone_rows[chunk]:
            del self._stone_rows[chunk]
        if len(self._coverage_deltas) > len(self._history):
            self._unfold(q, r, self._coverage_deltas.pop())
        # Rewind the turn state to just before this stone was placed.
        outcome, self._outcome = self._outcome, None
        if outcome is not None and outcome.termination is Termination.LINE:
            self._moves_played -= 1
        elif self._stones_left == 2:
            self._stones_left = 1
            self._to_move = side
            self._moves_played -= 1
        else:
            self._stones_left = 2
        return q, r, side

    # ----------------------------------------------------------------- internals

    def _illegality(self, q: int, r: int) -> IllegalMoveError | None:
        if self._outcome is not None:
            return GameOverError(
                f"the game is over ({self._outcome.termination.value}); ({q}, {r}) cannot be played"
            )
        if type(q) is not int or type(r) is not int:  # bool is an int subclass: reject it
            return IllegalMoveError(f"coordinates must be integers, got ({q!r}, {r!r})")
        if not -_COORD_LIMIT < q < _COORD_LIMIT or not -_COORD_LIMIT < r < _COORD_LIMIT:
            return OutOfViewError(f"({q}, {r}) is too far from the origin to be in view")
        if self._board.get(q * _STRIDE + r) is not None:
            return OccupiedCellError(
                f"({q}, {r}) is already taken by {self._board[q * _STRIDE + r]}"
            )
        if not self._in_view(q, r):
            return OutOfViewError(
                f"({q}, {r}) is farther than view_distance {self.view_distance} from every stone"
            )
        return None

    def _in_view(self, q: int, r: int) -> bool:
        # The hexagon's columns q - R .. q + R start at some offset in chunk ``key`` (of
        # row r) and may go on into the next chunk: the table for that offset says which
        # chunk of which row to test with which mask, nearest rows first.
        left = q - self.view_distance
        key = (left >> self._chunk_shift) * _STRIDE + r
        rows_get = self._stone_rows.get
        offset = left & self._chunk_mask
        for key_step, mask in self._view_masks[offset] or self._tabled_view_masks(offset):
            row = rows_get(key + key_step)
            if row and row & mask:
                return True
        # An empty setup: the first stone goes to the origin.
        return not self._board and q == 0 and r == 0

    def _tabled_view_masks(self, offset: int) -> ViewMasks:
        return table_masks(self.view_distance, offset)[0]

    def _put(self, q: int, r: int, side: Side) -> None:
        self._board[q * _STRIDE + r] = side
        self._keys_of[side].add(q * _STRIDE + r)
        self._history.append((q, r, side))
        rows = self._stone_rows
        chunk = (q >> self._chunk_shift) * _STRIDE + r
        rows[chunk] = rows.get(chunk, 0) | (1 << (q & self._chunk_mask))

    def _line_through(self, key: int, side: Side) -> tuple[Hex, ...]:
        """The run of ``side`` through ``key`` if it is ``win_distance`` long, else ()."""
        own = self._keys_of[side]
        for step, winning_span in self._line_checks:
            forward = key + step
            while forward in own:
                forward += step
            backward = key - step
            while backward in own:
                backward -= step
            if forward - backward > winning_span:
                return tuple(_hex(k) for k in range(backward + step, forward, step))
        return ()

    def _check_coordinates(self, q: int, r: int) -> None:
        if type(q) is not int or type(r) is not int:
            raise InvalidSetupError(f"coordinates must be integers, got ({q!r}, {r!r})")
        if not -_COORD_LIMIT < q < _COORD_LIMIT or not -_COORD_LIMIT < r < _COORD_LIMIT:
            raise InvalidSetupError(f"({q}, {r}) is too far from the origin")

    # -- legal_cells maintenance

    def _fold_coverage(self) -> None:
        """Fold stones placed since the last call into the covered rows and legal set."""
        history = self._history
        deltas = self._coverage_deltas
        if len(deltas) == len(history):
            return
        covered = self._covered_rows
        legal = self._legal
        board = self._board
        radius = self.view_distance
        shift = self._chunk_shift
        fold_masks = self._fold_masks
        for q, r, _ in history[len(deltas) :]:
            delta: _CoverageDelta = []
            # As in _in_view: the hexagon's columns start at bit ``offset`` of one chunk
            # and may go on into the next.
            left = q - radius
            offset = left & self._chunk_mask
            first_q = left - offset
            first_key = (left >> shift) * _STRIDE + r
            parts = fold_masks[offset] or table_masks(radius, offset)[1]
            for key_step, q_step, dr, mask in parts:
                key = first_key + key_step
                row = covered.get(key, 0)
                new = mask & ~row
                if not new:
                    continue
                covered[key] = row | mask
                chunk_q = first_q + q_step
                row_index = r + dr
                delta.append((key, chunk_q, row_index, new))
                while new:
                    low = new & -new
                    cell_q = chunk_q + low.bit_length() - 1
                    if cell_q * _STRIDE + row_index not in board:
                        legal[(cell_q, row_index)] = None
                    new ^= low
            deltas.append(delta)
            legal.pop((q, r), None)

    def _unfold(self, q: int, r: int, delta: _CoverageDelta) -> None:
        """Take back what the stone on (q, r) added to the legal-cell bookkeeping."""
        covered = self._covered_rows
        legal = self._legal
        for key, chunk_q, row_index, bits in delta:
            covered[key] &= ~bits
            if not covered[key]:
                del covered[key]
            while bits:
                low = bits & -bits
                legal.pop((chunk_q + low.bit_length() - 1, row_index), None)
                bits ^= low
        key = (q >> self._chunk_shift) * _STRIDE + r
        if (covered.get(key, 0) >> (q & self._chunk_mask)) & 1:
            legal[(q, r)] = None


@cache
def _line_checks(win_distance: int) -> tuple[tuple[int, int], ...]:
    """(axis step, span of a winning run on that axis in key units): a run from key b to
    key f, both exclusive, wins when f - b exceeds the span."""
    return tuple((step, win_distance * step) for step in _AXIS_STEPS)


def _side(value: str) -> Side:
    if value == X:
        return X
    if value == O:
        return O
    raise ValueError(f"a side is 'x' or 'o', got {value!r}")


def _hex(key: int) -> Hex:
    # Undo q * _STRIDE + r for negative r too: round r into (-STRIDE/2, STRIDE/2].
    q, r = divmod(key + _STRIDE // 2, _STRIDE)
    return q, r - _STRIDE // 2
