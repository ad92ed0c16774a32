"""A small exhaustive solver for short forced wins, to check the tactics suite.

It shares only make/unmake with the search (the pure kernels' ``place``/``unplace``, whose
window counts the tests check against a recount), not its move generation or pruning:
every move that can matter is tried. A move *can matter* when one of its stones lies in a
window it could still win in (a live window of its own lacking at most ``2 * k`` stones
for a win within ``k`` more moves) or must block (the opponent's threats); all other
cells are alike for the question asked, so one of them (``dummy``) stands for them all.

Wins are counted in the side's own moves: ``win_in_1`` (it completes a window now),
``win_in_2`` (its move leaves threats no two stones block: it wins with its next move),
``win_in_3`` (its move makes threats, and after every defence that blocks them it has a
win in 2). ``win_in_3`` only tries first moves that threaten: a win whose first move
makes no threat would need every quiet defence tried, and is outside this solver.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from bot.bots.search import layout as L
from bot.bots.search.kernels import axis_step, place, unplace
from game.rules import Position


class Board:
    """A position in the pure kernels' memory, with the side to move."""

    def __init__(self, position: Position) -> None:
        cells = [(q, r) for q, r, _ in position.stones]
        self.frame = L.Frame.around(cells)
        self.mem = L.empty_mem(position.win_distance, 2)
        L.load(self.mem, self.frame, position.stones, position.to_move, place)
        self.win = position.win_distance
        self.side = L.side_index(position.to_move)
        qs = [self.frame.index(q, r) // L.N for q, r in cells]
        rs = [self.frame.index(q, r) % L.N for q, r in cells]
        self.box = (min(qs) - self.win, max(qs) + self.win, min(rs) - self.win, max(rs) + self.win)

    def threats(self, side: int) -> list[list[int]]:
        """The empty cells of each threat window of ``side``."""
        mem = self.mem
        found = []
        for i in range(mem[L.TN + side]):
            w = mem[L.TSET + side * L.TCAP + i]
            axis, start = divmod(w, L.NN)
            step = axis_step(axis)
            found.append([c for c in (start + k * step for k in range(self.win)) if not mem[c]])
        return found

    def blockable(self, side: int) -> bool:
        """Whether two stones (or one) of the other side spoil every threat of ``side``."""
        windows = [set(cells) for cells in self.threats(side)]
        if not windows:
            return True
        cells = set().union(*windows)
        for a in cells:
            rest = [w for w in windows if a not in w]
            if not rest or set.intersection(*rest):
                return True
        return False

    def empty_cells(self) -> Iterator[int]:
        q0, q1, r0, r1 = self.box
        for x in range(q0, q1 + 1):
            for y in range(r0, r1 + 1):
                if not self.mem[x * L.N + y]:
                    yield x * L.N + y

    def relevant(self, side: int, lacking: int) -> list[int]:
        """Empty cells in a live window of ``side`` lacking at most ``lacking`` stones,
        or in a threat of the other side; sorted."""
        mem = self.mem
        other = 1 - side
        found = {c for window in self.threats(other) for c in window}
        for c in self.empty_cells():
            for axis in range(3):
                step = axis_step(axis)
                for k in range(self.win):
                    w = axis * L.NN + c - k * step
                    own = mem[L.WC + side * L.WN + w]
                    if own and not mem[L.WC + other * L.WN + w] and self.win - own <= lacking:
                        found.add(c)
        return sorted(found)

    def dummy(self, avoid: set[int]) -> int:
        """An empty cell next to the stones that is in none of ``avoid``."""
        for i in range(self.mem[L.CN]):
            c = self.mem[L.CSET + i]
            if not self.mem[c] and c not in avoid:
                return int(c)
        raise ValueError("no spare cell")

    def moves(self, side: int, lacking: int) -> Iterator[tuple[int, int]]:
        cells = self.relevant(side, lacking)
        cells.append(self.dummy(set(cells)))
        return itertools.combinations(cells, 2)

    def play(self, move: tuple[int, int], side: int) -> None:
        place(self.mem, move[0], side)
        place(self.mem, move[1], side)

    def take_back(self, move: tuple[int, int], side: int) -> None:
        unplace(self.mem, move[1], side)
        unplace(self.mem, move[0], side)

    def cells(self, move: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
        return self.frame.cell(move[0]), self.frame.cell(move[1])


def win_in_1(board: Board, side: int) -> bool:
    return board.mem[L.TN + side] > 0


def win_in_2(board: Board, side: int) -> tuple[int, int] | None:
    """A move of ``side`` after which the other side can neither win at once nor block
    every threat (so ``side`` wins with its next move); None if there is none (or a win
    in 1)."""
    if win_in_1(board, side):
        return None
    for move in board.moves(side, 4):
        board.play(move, side)
        try:
            if not win_in_1(board, 1 - side) and not board.blockable(side):
                return move
        finally:
            board.take_back(move, side)
    return None


def defences(board: Board, attacker: int) -> Iterator[tuple[int, int]]:
    """Every pair of the defender's stones that blocks all the attacker's threats, up to
    cells that cannot matter for a win in 2 after it."""
    defender = 1 - attacker
    windows = [set(w) for w in board.threats(attacker)]
    blocking = sorted(set().union(*windows)) if windows else []
    others = set(board.relevant(attacker, 4)) | set(board.relevant(defender, 4))
    others -= set(blocking)
    spare = [*sorted(others), board.dummy(others | set(blocking))]
    for a, b in itertools.combinations(blocking, 2):
        if all(a in w or b in w for w in windows):
            yield a, b
    for a in blocking:
        if all(a in w for w in windows):
            for b in spare:
                yield a, b


def win_in_3(board: Board, side: int) -> tuple[int, int] | None:
    """A threatening move of ``side`` after which every blocking defence still leaves it
    a win in 2; None if there is none among threatening moves."""
    defender = 1 - side
    for move in board.moves(side, 4):
        board.play(move, side)
        try:
            if win_in_1(board, defender) or not win_in_1(board, side):
                continue
            if all(_defended_then_won(board, side, block) for block in defences(board, side)):
                return move
        finally:
            board.take_back(move, side)
    return None


def _defended_then_won(board: Board, side: int, block: tuple[int, int]) -> bool:
    board.play(block, 1 - side)
    try:
        return win_in_2(board, side) is not None
    finally:
        board.take_back(block, 1 - side)


def forced_win_length(position: Position, most: int = 3) -> int | None:
    """The fewest moves (1..``most``) in which the side to move forces a win, as far as
    this solver sees; None beyond."""
    board = Board(position)
    if win_in_1(board, board.side):
        return 1
    if most >= 2 and win_in_2(board, board.side) is not None:
        return 2
    if most >= 3 and win_in_3(board, board.side) is not None:
        return 3
    return None
