"""Axial hex geometry: distances, the three line axes, hexagons and their rows.

Coordinates are axial ``(q, r)`` as in the HTTTX Bot API: +q goes right, +r goes
top-right, and the implicit third coordinate is ``s = -q - r``.

>>> distance((0, 0), (2, -1))
2
>>> len(hexagon((0, 0), 8))
217
"""

from __future__ import annotations

from collections.abc import Iterator

Hex = tuple[int, int]

#: The three axes a line can run along, one direction each: along +q, along +r, and
#: along (+q, -r) (the s axis). A line is a run of stones on one of them.
AXES: tuple[Hex, Hex, Hex] = ((1, 0), (0, 1), (1, -1))

#: The six neighbours of a cell, counter-clockwise from +q.
NEIGHBOURS: tuple[Hex, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


def distance(a: Hex, b: Hex) -> int:
    """Hex distance: the number of steps between two cells.

    >>> distance((0, 0), (3, -3))
    3
    """
    dq = a[0] - b[0]
    dr = a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def hexagon_size(radius: int) -> int:
    """Number of cells within ``radius`` of a cell, itself included: 3r² + 3r + 1.

    >>> hexagon_size(50)
    7651
    """
    return 3 * radius * radius + 3 * radius + 1


def row_span(radius: int, dr: int) -> tuple[int, int]:
    """The ``dq`` range ``(lo, hi)``, inclusive, of a hexagon's row at offset ``dr``.

    A hexagon of radius R is, row by row, one interval of q: this is what lets the rules
    engine work with whole rows (as bit masks) instead of single cells.

    >>> row_span(2, 0), row_span(2, 2), row_span(2, -2)
    ((-2, 2), (-2, 0), (0, 2))
    """
    if not -radius <= dr <= radius:
        raise ValueError(f"row offset {dr} lies outside a hexagon of radius {radius}")
    return max(-radius, -radius - dr), min(radius, radius - dr)


def hexagon(center: Hex, radius: int) -> list[Hex]:
    """Every cell within ``radius`` of ``center``, row by row.

    >>> hexagon((0, 0), 1)
    [(0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1)]
    """
    cq, cr = center
    cells: list[Hex] = []
    for dr in range(-radius, radius + 1):
        lo, hi = row_span(radius, dr)
        cells.extend((cq + dq, cr + dr) for dq in range(lo, hi + 1))
    return cells


def ring(center: Hex, radius: int) -> Iterator[Hex]:
    """The cells at exactly ``radius`` from ``center`` (just the centre for radius 0)."""
    if radius == 0:
        yield center
        return
    q, r = center[0] - radius, center[1] + radius  # start at the (-q, +r) corner
    for dq, dr in NEIGHBOURS:
        for _ in range(radius):
            yield q, r
            q += dq
            r += dr
