"""The prototype's helper functions for bot authors, built on ``game.rules``.

Same names and signatures as the original prototype, so bots written for it run
unchanged; each works on a plain ``list[Cell]`` and is pure. A bot that wants speed
keeps a ``game.rules.Position`` instead and updates it stone by stone.

>>> from models import Cell, Coord, Player
>>> cells = [Cell(q=0, r=0, p=Player.X)]
>>> len(valid_placement_cells(cells, 1))
6
>>> cells = place_piece(cells, Coord(q=1, r=0), Player.O)
>>> evaluate_status(cells, 6)
<GameStatus.IN_PROGRESS: 'in_progress'>
"""

from __future__ import annotations

from game import hexgrid
from game.rules import Position
from models import Cell, Coord, GameStatus, Player

#: The three line directions, as in the prototype.
DIRECTIONS: list[tuple[int, int]] = [tuple(axis) for axis in hexgrid.AXES]  # type: ignore[misc]


def hex_distance(q1: int, r1: int, q2: int, r2: int) -> int:
    """Steps between two cells.

    >>> hex_distance(0, 0, 2, -1)
    2
    """
    return hexgrid.distance((q1, r1), (q2, r2))


def _position(cells: list[Cell], view_distance: int) -> Position:
    # Only asked which cells are in view: the board may already hold a line, and a cell
    # listed twice counts once.
    unique = {(c.q, c.r): (c.q, c.r, c.p.value) for c in cells}
    return Position(view_distance, setup=unique.values(), reject_setup_lines=False)


def valid_placement_cells(cells: list[Cell], view_distance: int) -> list[Coord]:
    """Every empty cell within ``view_distance`` of a stone; the origin on an empty board.

    Sorted by distance from the origin, then by (q, r), so answers are reproducible.
    """
    if not cells:
        return [Coord(q=0, r=0)]
    legal = _position(cells, view_distance).legal_cells()
    ordered = sorted(legal, key=lambda c: (hexgrid.distance(c, (0, 0)), c))
    return [Coord(q=q, r=r) for q, r in ordered]


def is_valid_placement(cells: list[Cell], coord: Coord, view_distance: int) -> tuple[bool, str]:
    """Whether a stone may go on ``coord``, with the reason when it may not."""
    if any(c.q == coord.q and c.r == coord.r for c in cells):
        return False, f"({coord.q},{coord.r}) already occupied"
    if not cells:
        ok = (coord.q, coord.r) == (0, 0)
        return ok, "" if ok else f"({coord.q},{coord.r}) out of view range"
    position = _position(cells, view_distance)
    if not position.is_legal(coord.q, coord.r):
        return False, f"({coord.q},{coord.r}) out of view range"
    return True, ""


def place_piece(cells: list[Cell], coord: Coord, player: Player) -> list[Cell]:
    """A new list with ``player``'s stone added on ``coord`` (the input is not changed)."""
    return [*cells, Cell(q=coord.q, r=coord.r, p=player)]


def check_win(cells: list[Cell], player: Player, win_distance: int) -> bool:
    """Whether ``player`` has ``win_distance`` or more in a row anywhere on the board.

    >>> row = [Cell(q=q, r=0, p=Player.X) for q in range(6)]
    >>> check_win(row, Player.X, 6), check_win(row, Player.O, 6)
    (True, False)
    """
    owned = {(c.q, c.r) for c in cells if c.p == player}
    for q, r in owned:
        for dq, dr in hexgrid.AXES:
            if (q - dq, r - dr) in owned:
                continue  # only count each run from its first stone
            length = 1
            while (q + dq * length, r + dr * length) in owned:
                length += 1
            if length >= win_distance:
                return True
    return False


def evaluate_status(cells: list[Cell], win_distance: int) -> GameStatus:
    """``X_WINS``, ``O_WINS`` or ``IN_PROGRESS`` for a board."""
    if check_win(cells, Player.X, win_distance):
        return GameStatus.X_WINS
    if check_win(cells, Player.O, win_distance):
        return GameStatus.O_WINS
    return GameStatus.IN_PROGRESS
