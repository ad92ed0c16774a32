"""The board surface: the stretch of the infinite grid drawn as the board, and its grid.

``surface_cells`` says which cells make up the surface (the legal cells and the stones,
or the cells near the stones when no legal set is given, or a small hexagon round the
origin for an empty board); it is plain data, no Qt. ``build_surface`` turns those
cells into what the board widget draws through its view transform: one filled outline
path (a few closed loops rather than thousands of hexagons) and one batch of
deduplicated grid lines, in world coordinates.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Set
from typing import NamedTuple

from PyQt5.QtCore import QLineF, QPointF, Qt
from PyQt5.QtGui import QPainterPath, QPolygonF

from game.hexgrid import Hex, hexagon
from ui.hexlayout import SQRT3, hex_corners, hex_to_world

__all__ = ["EMPTY_BOARD_RADIUS", "SURFACE_MARGIN", "BoardSurface", "build_surface", "surface_cells"]

#: Cells within this distance of a stone belong to the board surface when the caller
#: gives no legal set (a finished game, a replay).
SURFACE_MARGIN = 2
#: With no stones at all, the surface is this hexagon round the origin.
EMPTY_BOARD_RADIUS = 4

# Edge k of a hex (from corner k to corner k + 1, see hex_corners) faces this neighbour.
# Each cell draws edges 0-2 always and edges 3-5 only where the neighbour is off the
# surface, so every shared edge is drawn exactly once.
_EDGE_NEIGHBOURS: tuple[Hex, ...] = ((1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1), (1, 0))
# Corner k of cell (q, r) lies at x = (2q + r + _CORNER_X[k]) * size * √3 / 2 and
# y = (-3r + _CORNER_Y[k]) * size / 2: integers that name each corner exactly.
_CORNER_X = (1, 0, -1, -1, 0, 1)
_CORNER_Y = (1, 2, 1, -1, -2, -1)


class BoardSurface(NamedTuple):
    """The surface in world coordinates: its outline (odd-even filled, so holes stay
    holes) and its grid lines, each shared edge once."""

    path: QPainterPath
    grid_lines: list[QLineF]


def surface_cells(stones: Mapping[Hex, str], legal: Collection[Hex] | None) -> set[Hex]:
    """The cells the board surface covers for ``stones`` and the ``legal`` cells.

    >>> sorted(surface_cells({}, {(0, 0), (1, 0)}))
    [(0, 0), (1, 0)]
    >>> len(surface_cells({(0, 0): "x"}, None)) == len(hexagon((0, 0), SURFACE_MARGIN))
    True
    """
    if legal:
        cells = set(legal)
        cells.update(stones)
    elif not stones:
        # Nothing to show yet: a small board round the origin rather than nothing.
        cells = set(hexagon((0, 0), EMPTY_BOARD_RADIUS))
    else:
        cells = set()
        around = hexagon((0, 0), SURFACE_MARGIN)
        for q, r in stones:
            cells.update((q + dq, r + dr) for dq, dr in around)
    return cells


def build_surface(cells: Set[Hex], size: float) -> BoardSurface:
    """The outline path and grid lines of ``cells`` for hexes of radius ``size``."""
    unit = hex_corners(0.0, 0.0, size)
    lines: list[QLineF] = []
    # The surface's outline: its boundary edges, each from corner k to corner k + 1
    # of its cell (clockwise), keyed by exact integer corner coordinates so they
    # chain into closed loops. Filling a few loops is far cheaper than filling
    # thousands of hexagons.
    successor: dict[tuple[int, int], tuple[int, int]] = {}
    edges = [(*unit[k], *unit[(k + 1) % 6]) for k in range(6)]
    for q, r in cells:
        cx, cy = hex_to_world(q, r, size)
        column, row = 2 * q + r, -3 * r
        for k, (dq, dr) in enumerate(_EDGE_NEIGHBOURS):
            inside = (q + dq, r + dr) in cells
            if inside and k >= 3:
                continue  # the neighbour draws this edge as one of its first three
            x1, y1, x2, y2 = edges[k]
            lines.append(QLineF(cx + x1, cy + y1, cx + x2, cy + y2))
            if not inside:
                start = (column + _CORNER_X[k], row + _CORNER_Y[k])
                end = (k + 1) % 6
                successor[start] = (column + _CORNER_X[end], row + _CORNER_Y[end])
    path = QPainterPath()
    path.setFillRule(Qt.FillRule.OddEvenFill)  # holes in the surface stay holes
    half_width, half_height = size * SQRT3 / 2, size / 2
    while successor:
        first, point = successor.popitem()
        loop = [QPointF(first[0] * half_width, first[1] * half_height)]
        while point != first:
            loop.append(QPointF(point[0] * half_width, point[1] * half_height))
            point = successor.pop(point)
        path.addPolygon(QPolygonF(loop))
        path.closeSubpath()
    return BoardSurface(path, lines)
