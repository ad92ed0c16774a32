"""Hex <-> pixel maths for the board: pure geometry, no Qt, so it is tested on its own.

Hexes are pointy-top. Axial ``(q, r)`` follows the spec: +q goes right, +r goes
top-right. World coordinates are in the widget's units before zooming, with y growing
downwards like the screen, so +r *decreases* y:

    x = size * √3 * (q + r / 2)        y = -size * 1.5 * r

where ``size`` is the hex radius (centre to corner).

>>> x, y = hex_to_world(1, 0, 10.0)
>>> round(x, 4), y
(17.3205, -0.0)
>>> world_to_hex(*hex_to_world(3, -2, 10.0), 10.0)
(3, -2)

A :class:`Viewport` maps world coordinates to the screen (a scale and an offset) and
answers what the board widget needs: which cell is under the mouse, where a cell is
drawn, how to zoom around the cursor and how to frame a set of cells.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from game.hexgrid import Hex

SQRT3: float = math.sqrt(3.0)

#: Zoom limits, in screen pixels per world unit. With the default hex radius of 24 this is
#: a hex from 2.4 px (a whole long game on one screen) to 96 px across its radius.
MIN_SCALE: float = 0.1
MAX_SCALE: float = 4.0

#: ``Viewport.fit`` never zooms in further than this: a lone stone is framed at a
#: comfortable size instead of filling the window.
FIT_MAX_SCALE: float = 1.5


def hex_to_world(q: int, r: int, size: float) -> tuple[float, float]:
    """The world position of the centre of cell ``(q, r)``.

    >>> hex_to_world(0, 0, 24.0)
    (0.0, -0.0)
    >>> x, y = hex_to_world(0, 1, 2.0)   # +r is up and to the right
    >>> round(x, 3), y
    (1.732, -3.0)
    """
    return size * SQRT3 * (q + r / 2.0), -size * 1.5 * r


def world_to_fractional(x: float, y: float, size: float) -> tuple[float, float]:
    """The exact inverse of :func:`hex_to_world`: fractional axial ``(q, r)``.

    >>> world_to_fractional(*hex_to_world(2, -5, 3.0), 3.0)
    (2.0, -5.0)
    """
    r = -y / (1.5 * size)
    q = x / (SQRT3 * size) - r / 2.0
    return q, r


def round_hex(q: float, r: float) -> Hex:
    """The cell containing fractional axial ``(q, r)``: cube rounding.

    Rounding q and r on their own picks a wrong cell near corners; rounding all three
    cube coordinates and then recomputing the one that moved most keeps ``q + r + s = 0``
    and lands in the hex whose centre is nearest.

    >>> round_hex(0.4, 0.4)    # nearer (0, 1)'s centre than the origin's
    (0, 1)
    >>> round_hex(0.3, 0.1)
    (0, 0)
    """
    s = -q - r
    rq, rr, rs = round(q), round(r), round(s)
    dq, dr, ds = abs(rq - q), abs(rr - r), abs(rs - s)
    if dq > dr and dq > ds:
        rq = -rr - rs
    elif dr > ds:
        rr = -rq - rs
    return int(rq), int(rr)


def world_to_hex(x: float, y: float, size: float) -> Hex:
    """The cell under the world point ``(x, y)`` (the hit test).

    >>> world_to_hex(0.0, 0.0, 24.0)
    (0, 0)
    >>> world_to_hex(*hex_to_world(-7, 12, 24.0), 24.0)
    (-7, 12)
    """
    return round_hex(*world_to_fractional(x, y, size))


def hex_corners(cx: float, cy: float, size: float) -> list[tuple[float, float]]:
    """The six corners of the pointy-top hex of radius ``size`` centred on ``(cx, cy)``,
    clockwise on screen starting at the lower-right corner (30° below the +x axis).

    >>> [(round(x, 2), round(y, 2)) for x, y in hex_corners(0.0, 0.0, 1.0)][:3]
    [(0.87, 0.5), (0.0, 1.0), (-0.87, 0.5)]
    """
    corners = []
    for k in range(6):
        angle = math.radians(30 + 60 * k)
        corners.append((cx + size * math.cos(angle), cy + size * math.sin(angle)))
    return corners


def _clamp_scale(scale: float) -> float:
    return min(MAX_SCALE, max(MIN_SCALE, scale))


@dataclass
class Viewport:
    """The world <-> screen transform of the board widget.

    ``screen = world * scale + offset``: ``offset_x, offset_y`` is where the world origin
    (the centre of cell (0, 0)) appears on screen, ``scale`` is screen pixels per world
    unit and ``size`` the hex radius in world units.

    >>> view = Viewport(offset_x=400.0, offset_y=300.0)
    >>> view.center_of((0, 0))
    (400.0, 300.0)
    >>> view.cell_at(400.0 + 24.0 * SQRT3, 300.0)
    (1, 0)
    >>> view.zoom_at(100.0, 100.0, 2.0); view.to_world(100.0, 100.0)
    (-300.0, -200.0)
    """

    size: float = 24.0
    scale: float = 1.0
    offset_x: float = 0.0
    offset_y: float = 0.0

    def __post_init__(self) -> None:
        self.scale = _clamp_scale(self.scale)

    def to_screen(self, wx: float, wy: float) -> tuple[float, float]:
        """Screen position of the world point ``(wx, wy)``."""
        return wx * self.scale + self.offset_x, wy * self.scale + self.offset_y

    def to_world(self, sx: float, sy: float) -> tuple[float, float]:
        """World point shown at screen position ``(sx, sy)``."""
        return (sx - self.offset_x) / self.scale, (sy - self.offset_y) / self.scale

    def cell_at(self, sx: float, sy: float) -> Hex:
        """The cell under the screen position ``(sx, sy)``."""
        return world_to_hex(*self.to_world(sx, sy), self.size)

    def center_of(self, cell: Hex) -> tuple[float, float]:
        """Screen position of the centre of ``cell``."""
        return self.to_screen(*hex_to_world(cell[0], cell[1], self.size))

    @property
    def hex_radius_px(self) -> float:
        """A hex's radius (centre to corner) on screen, in pixels."""
        return self.size * self.scale

    def pan(self, dx: float, dy: float) -> None:
        """Move the board by ``(dx, dy)`` screen pixels."""
        self.offset_x += dx
        self.offset_y += dy

    def zoom_at(self, sx: float, sy: float, factor: float) -> None:
        """Multiply the scale by ``factor`` (clamped), keeping the world point under
        ``(sx, sy)`` where it is on screen: zooming around the cursor."""
        wx, wy = self.to_world(sx, sy)
        self.scale = _clamp_scale(self.scale * factor)
        self.offset_x = sx - wx * self.scale
        self.offset_y = sy - wy * self.scale

    def fit(self, cells: Iterable[Hex], width: float, height: float, margin: float = 2.0) -> None:
        """Frame ``cells`` (whole hexes plus ``margin`` hexes around them) centred in a
        ``width`` x ``height`` screen rectangle; the origin's hex when there are none.

        The scale stays within the zoom limits and never exceeds :data:`FIT_MAX_SCALE`,
        so a single stone is not blown up to fill the window.
        """
        xs: list[float] = []
        ys: list[float] = []
        for q, r in cells:
            x, y = hex_to_world(q, r, self.size)
            xs.append(x)
            ys.append(y)
        if not xs:
            xs, ys = [0.0], [0.0]
        # Half a hex plus the margin around the outermost centres, in world units.
        pad_x = self.size * SQRT3 * (0.5 + margin)
        pad_y = self.size * (1.0 + 1.5 * margin)
        left, right = min(xs) - pad_x, max(xs) + pad_x
        top, bottom = min(ys) - pad_y, max(ys) + pad_y
        if width > 0 and height > 0:
            fitting = min(width / (right - left), height / (bottom - top))
            self.scale = _clamp_scale(min(fitting, FIT_MAX_SCALE))
        self.offset_x = width / 2.0 - (left + right) / 2.0 * self.scale
        self.offset_y = height / 2.0 - (top + bottom) / 2.0 * self.scale

    def visible_range(self, width: float, height: float) -> tuple[int, int, int, int]:
        """``(q_min, q_max, r_min, r_max)``, inclusive, of a box of cells that covers
        every hex at least partly visible in a ``width`` x ``height`` screen.

        The screen is a parallelogram's worth of axial cells, so the box holds some cells
        that are off screen; :meth:`visible_rows` gives the tight range row by row.
        """
        corners = [(0.0, 0.0), (width, 0.0), (0.0, height), (width, height)]
        fractional = [world_to_fractional(*self.to_world(x, y), self.size) for x, y in corners]
        qs = [q for q, _ in fractional]
        rs = [r for _, r in fractional]
        # One extra cell on every side: a hex whose centre is just off screen still shows.
        return (
            math.floor(min(qs)) - 1,
            math.ceil(max(qs)) + 1,
            math.floor(min(rs)) - 1,
            math.ceil(max(rs)) + 1,
        )

    def visible_rows(self, width: float, height: float) -> Iterator[tuple[int, int, int]]:
        """For every row ``r`` that shows on screen, ``(r, q_min, q_max)``: the cells of
        that row that are at least partly visible (with one cell to spare each side)."""
        _, _, r_min, r_max = self.visible_range(width, height)
        left, _ = self.to_world(0.0, 0.0)
        right, _ = self.to_world(width, 0.0)
        hex_width = SQRT3 * self.size
        for r in range(r_min, r_max + 1):
            q_lo = (left - hex_width) / hex_width - r / 2.0
            q_hi = (right + hex_width) / hex_width - r / 2.0
            yield r, math.floor(q_lo), math.ceil(q_hi)
