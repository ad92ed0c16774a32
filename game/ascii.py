"""Plain-text rendering of a hex board, for terminals and logs.

Rows are drawn top to bottom from the highest r (+r goes top-right), each shifted half
a cell per row so the three axes read as straight lines. Stones are ``x`` and ``o``;
the stones of a winning line are capitals; ``.`` marks an empty cell near the stones.

>>> print(render([(0, 0, "x"), (1, 0, "o"), (0, 1, "o")], margin=0))
r=1   o
r=0  x o
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from game.hexgrid import Hex


def render(
    stones: Iterable[tuple[int, int, str]],
    *,
    highlight: Collection[Hex] = (),
    margin: int = 1,
) -> str:
    """Draw ``stones`` (``(q, r, side)``) with ``margin`` empty cells around them.

    ``highlight`` cells (a winning line, say) are drawn in capitals.
    """
    board = {(q, r): side for q, r, side in stones}
    if not board:
        return "(empty board)"
    lit = set(highlight)
    # Character column of cell (q, r) is 2q + r: neighbours on a row are 2 apart and
    # each row up shifts half a cell right.
    near = {
        (q + dq, r + dr)
        for q, r in board
        for dq in range(-margin, margin + 1)
        for dr in range(-margin, margin + 1)
        if abs(dq + dr) <= margin
    }
    min_r = min(r for _, r in near)
    max_r = max(r for _, r in near)
    min_col = min(2 * q + r for q, r in near)
    label_width = max(len(str(min_r)), len(str(max_r)))
    lines = []
    for r in range(max_r, min_r - 1, -1):
        row = sorted(q for q, rr in near if rr == r)
        chars: list[str] = []
        for q in row:
            column = 2 * q + r - min_col
            chars.extend(" " * (column - len(chars)))
            side = board.get((q, r))
            mark = "." if side is None else side
            chars.append(mark.upper() if (q, r) in lit else mark)
        lines.append(f"r={r:>{label_width}}  {''.join(chars)}".rstrip())
    return "\n".join(lines)
