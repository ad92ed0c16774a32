"""Hexagons as bit masks of board rows, cut in chunks: the tables behind the rules
engine's view check and legal-cell bookkeeping (``game.rules``).

A cell has one integer key, ``q * STRIDE + r``, and so does a chunk of a row:
``(q >> chunk_shift(R)) * STRIDE + r`` holds bit ``q & (width - 1)`` for cell (q, r). A
chunk is wider than a hexagon of radius R (2R + 1 cells), so each row of a hexagon lies in
at most two chunks, and a stone costs the same wherever it stands.

>>> chunk_shift(8), chunk_shift(50)
(6, 7)
>>> view, fold = table_masks(1, offset=0)
>>> [dr for _, _, dr, _ in fold]
[-1, 0, 1]
"""

from __future__ import annotations

from functools import cache
from typing import TypeAlias

from game.hexgrid import row_span

__all__ = [
    "COORD_LIMIT",
    "STRIDE",
    "FoldMasks",
    "ViewMasks",
    "chunk_shift",
    "mask_tables",
    "row_masks",
    "row_spans",
    "table_masks",
]

# One integer per cell: q * STRIDE + r. Stepping along the three axes is then adding
# a constant, which keeps the line walk to integer additions and dict lookups.
# A stride of 2**20 keeps keys near the origin below 2**30, CPython's one-digit ints,
# which hash and add fastest. Coordinates stay within +-COORD_LIMIT so keys never collide;
# no game gets there (it would take tens of thousands of stones in a straight line).
STRIDE = 1 << 20
COORD_LIMIT = 1 << 19


@cache
def row_spans(view_distance: int) -> tuple[tuple[int, int, int], ...]:
    """(dr, lo, hi) of every row of a hexagon of radius ``view_distance``, top to bottom."""
    return tuple(
        (dr, *row_span(view_distance, dr)) for dr in range(-view_distance, view_distance + 1)
    )


@cache
def row_masks(view_distance: int) -> tuple[tuple[int, int], ...]:
    """(dr, mask of that hexagon row's cells) of every row, top to bottom; bit 0 of a mask
    is the hexagon's leftmost column q - R."""
    radius = view_distance
    return tuple(
        (dr, ((1 << (hi - lo + 1)) - 1) << (lo + radius)) for dr, lo, hi in row_spans(view_distance)
    )


# The row masks of a hexagon whose leftmost column q - R is at some offset in a chunk:
# for the view check, (key step from that chunk's key in row r, mask), nearest rows
# first because that is where a stone is most likely found; for folding legal cells,
# (key step, q step to that chunk's bit 0, row step dr, mask). Either lists only the
# parts of rows that hold cells.
ViewMasks: TypeAlias = tuple[tuple[int, int], ...]
FoldMasks: TypeAlias = tuple[tuple[int, int, int, int], ...]


@cache
def mask_tables(view_distance: int) -> tuple[list[ViewMasks], list[FoldMasks]]:
    """The view and fold masks of every chunk offset, ``()`` until ``table_masks``
    works them out (on first use: the 128 offsets of view distance 50 take tens of ms
    at once, which a game server should not spend on one request)."""
    width = 1 << chunk_shift(view_distance)
    return [()] * width, [()] * width


def table_masks(view_distance: int, offset: int) -> tuple[ViewMasks, FoldMasks]:
    """Work out the masks of ``offset`` and keep them in ``mask_tables`` (a race
    between threads only computes the same values twice)."""
    width = 1 << chunk_shift(view_distance)
    chunk_bits = (1 << width) - 1
    parts: list[tuple[int, int, int, int]] = []
    for dr, row_mask in row_masks(view_distance):
        spread = row_mask << offset
        if spread & chunk_bits:
            parts.append((dr, 0, dr, spread & chunk_bits))
        if spread >> width:
            parts.append((STRIDE + dr, width, dr, spread >> width))
    fold = tuple(parts)
    view = tuple((key_step, mask) for key_step, _, _, mask in sorted(fold, key=_row_distance))
    view_table, fold_table = mask_tables(view_distance)
    view_table[offset], fold_table[offset] = view, fold
    return view, fold


def _row_distance(part: tuple[int, int, int, int]) -> int:
    return abs(part[2])


def chunk_shift(view_distance: int) -> int:
    """log2 of the chunk width of the row masks: at least 64 cells, and wider than a
    hexagon (2R + 1 cells), so that a hexagon's columns span at most two chunks.

    >>> chunk_shift(8), chunk_shift(31), chunk_shift(32), chunk_shift(50)
    (6, 6, 7, 7)
    """
    return max(6, (2 * view_distance).bit_length())
