"""The search's memory: one flat integer array, its offsets, and how a ``Position``
is loaded into it.

Everything the kernels (``bot.bots.search.kernels``) read and write lives in one array
``mem`` (a ``numpy.int64`` array for the compiled kernels, a plain ``list`` of ints for
the pure-Python fallback, which indexes lists faster than numpy arrays): the board, the
stone counts of every window, the sparse sets of threat windows and candidate cells, the
evaluation's running totals, the Zobrist keys and the hash. Fixed offsets make it one
argument to pass and one buffer to copy.

The board is a square of ``N`` x ``N`` cells in which a game's stones are placed around
the middle (``Frame``): cell ``(q, r)`` has index ``(q - q0) * N + (r - r0)``, so the
three axes are steps of ``N``, ``1`` and ``N - 1``. A *window* is ``win_distance``
consecutive cells on an axis, named by ``axis * NN + index of its first cell``.

>>> frame = Frame.around([(0, 0), (3, -2)])
>>> frame.index(0, 0) == frame.index(1, 0) - N
True
>>> frame.cell(frame.index(3, -2))
(3, -2)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, MutableSequence
from dataclasses import dataclass

#: Side of the board square; stones must stay ``MARGIN`` cells inside it.
N = 128
NN = N * N
#: Windows per side: three axes times one start per cell.
WN = 3 * NN
MARGIN = 20
#: The longest ``win_distance`` the kernels handle (window loops, the weight table).
MAX_WIN = 8
#: Capacity of a side's set of threat windows.
TCAP = 4096

#: Moves per ply in the move buffers, and plies.
MAXM = 320
MAXPLY = 48

# ---- offsets in ``mem``
BOARD = 0  # NN: 0 empty, 1 X, 2 O
WC = BOARD + NN  # 2 * WN: stones of side s in window w at WC + s * WN + w
TPOS = WC + 2 * WN  # 2 * WN: a window's place in its side's threat set, or -1
TSET = TPOS + 2 * WN  # 2 * TCAP: threat windows of each side
TOUCH = TSET + 2 * TCAP  # NN: stones within the touch radius of each cell
CPOS = TOUCH + NN  # NN: a cell's place in the candidate set, or -1
CSET = CPOS + NN  # NN: candidate cells (touched by a stone; may be occupied)
ZOB = CSET + NN  # 2 * NN: Zobrist keys, side s on cell i at ZOB + s * NN + i
WT = ZOB + 2 * NN  # 32: worth of a live window by its stones
TOFF = WT + 32  # 32: index offsets of the touch hexagon (radius 2: 19 cells)
MISC = TOFF + 32
# ---- scalars at MISC + ...
TN = MISC + 0  # 2: threat windows of each side (windows lacking <= 2 stones, live)
TOT = MISC + 2  # 2: sum of the worth of each side's live windows
WON = MISC + 4  # 2: windows a side has filled (a won game)
HASH = MISC + 6
STM = MISC + 7  # side to move: 0 X, 1 O
CN = MISC + 8  # candidate set size
WIN = MISC + 9  # win_distance
TRN = MISC + 10  # cells in the touch hexagon (7 for radius 1, 19 for radius 2)
NODES = MISC + 11
BUDGET = MISC + 12  # stop (ABORT) when NODES reaches it
ABORT = MISC + 13
KROOT = MISC + 14  # cells paired at the root
KINNER = MISC + 15  # cells paired below it
BEST = MISC + 16  # the root's best move after a search
SELDEPTH = MISC + 17
ROOTN = MISC + 18  # root moves generated
STOP_AT = MISC + 19  # time.monotonic_ns() at which the pure kernels stop (0: never)
SCR = MISC + 32  # 1024: scratch for move generation
ROOTX = SCR + 1024  # MAXM: 1 where the root move's score is exact, 0 for a bound
SIZE = ROOTX + MAXM

#: Transposition table slots (4 ints each: key, move, score, depth * 4 + flag).
TT_BITS_COMPILED = 20
TT_BITS_PURE = 14

SIDE_KEY = 0x2545F4914F6CDD1D  # hashed in for O to move

#: Scores: a win found at ply p is WIN_SCORE - p.
WIN_SCORE = 1_000_000
INF = 2_000_000


def window_worth(stones: int, win_distance: int) -> int:
    """The worth of a live window holding ``stones`` of one side (and none of the
    other's): steeply more as it nears ``win_distance``; a window lacking two stones or
    less is a threat.

    >>> [window_worth(n, 6) for n in range(7)]
    [0, 1, 8, 40, 300, 320, 320]
    """
    lacking = win_distance - stones
    if stones == 0:
        return 0
    if lacking <= 0:
        return 320
    return {1: 320, 2: 300, 3: 40, 4: 8}.get(lacking, 1)


def touch_offsets(radius: int) -> list[int]:
    """Index offsets of the cells within ``radius`` (at most 2) of a cell, nearest
    first."""
    cells = [(dq, dr) for dq in range(-2, 3) for dr in range(-2, 3) if abs(dq + dr) <= 2]
    cells.sort(key=lambda c: (max(abs(c[0]), abs(c[1]), abs(c[0] + c[1])), c))
    dist = [max(abs(q), abs(r), abs(q + r)) for q, r in cells]
    return [q * N + r for (q, r), d in zip(cells, dist, strict=True) if d <= radius]


@dataclass(frozen=True)
class Frame:
    """Where a game's cells sit on the board square."""

    q0: int
    r0: int

    @classmethod
    def around(cls, cells: Iterable[tuple[int, int]]) -> Frame:
        cells = list(cells) or [(0, 0)]
        qs = [q for q, _ in cells]
        rs = [r for _, r in cells]
        return cls((min(qs) + max(qs)) // 2 - N // 2, (min(rs) + max(rs)) // 2 - N // 2)

    def fits(self, q: int, r: int) -> bool:
        x, y = q - self.q0, r - self.r0
        return MARGIN <= x < N - MARGIN and MARGIN <= y < N - MARGIN

    def index(self, q: int, r: int) -> int:
        return (q - self.q0) * N + (r - self.r0)

    def cell(self, index: int) -> tuple[int, int]:
        return index // N + self.q0, index % N + self.r0


_ZOBRIST = random.Random(0x5EED)
ZOBRIST_KEYS = [_ZOBRIST.getrandbits(62) | 1 for _ in range(2 * NN)]


def empty_mem(win_distance: int, touch_radius: int) -> list[int]:
    """A fresh ``mem`` as a list: an empty board, X to move."""
    mem = [0] * SIZE
    mem[TPOS : TPOS + 2 * WN] = [-1] * (2 * WN)
    mem[CPOS : CPOS + NN] = [-1] * NN
    mem[ZOB : ZOB + 2 * NN] = ZOBRIST_KEYS
    for n in range(win_distance + 2):
        mem[WT + n] = window_worth(min(n, win_distance), win_distance)
    offsets = touch_offsets(touch_radius)
    mem[TOFF : TOFF + len(offsets)] = offsets
    mem[TRN] = len(offsets)
    mem[WIN] = win_distance
    mem[KROOT] = 14
    mem[KINNER] = 9
    return mem


def side_index(side: str) -> int:
    return 0 if side == "x" else 1


def load(
    mem: MutableSequence[int],
    frame: Frame,
    stones: Iterable[tuple[int, int, str]],
    to_move: str,
    place: object,
) -> None:
    """Place ``stones`` on ``mem`` with the kernels' ``place``, then set the side to
    move."""
    for q, r, side in stones:
        place(mem, frame.index(q, r), side_index(side))  # type: ignore[operator]
    mem[STM] = side_index(to_move)
