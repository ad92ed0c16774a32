"""The search driver: loads a ``Position`` into the kernels' memory, looks for a forced
win by threats, then deepens an alpha-beta search until its share of the time is spent.

Time is kept in nodes: the kernels cannot read a clock (numba compiles no ``time``), so
each call gets a node budget, the time left times the speed measured so far in this
move (a first estimate before that). An iteration cut by its budget still counts for
the root moves it finished, whose scores are at its depth: the previous best is searched
first (the table's move), and a move that beat it there is played, reported with that
iteration's depth, exact score and scored root moves (``_overturns``); else the last
complete iteration's move, score and alternatives stand, all of one depth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.bots.search import layout as L
from bot.bots.search.backend import Backend, backend
from bot.bots.search.kernels import SPARE
from game.rules import Position, Side

Cell = tuple[int, int]
Move = tuple[Cell, Cell]

#: Nodes per second assumed before a move has measured any.
FIRST_SPEED = {"numba": 400_000, "python": 4_000}
MAX_DEPTH = 12
#: Share of a search's seconds by which root moves it only bounded are searched again
#: with a full window for their exact scores (the deepening stops by 0.4 of it).
RESEARCH = 0.6
#: The heuristic reported is tanh(score / HEURISTIC_SCALE).
HEURISTIC_SCALE = 600.0


@dataclass
class Line:
    """A root move and what the search thinks of it (for the side to move)."""

    move: Move
    score: int


@dataclass
class SearchResult:
    """What one search found: the move, its score for the side to move, the distance to
    a forced result if it knows one (``win_in`` > 0: the side to move wins, counting its
    move as the first; < 0: loses), and the other root moves it weighed, best first."""

    move: Move
    score: int
    win_in: int | None
    depth: int
    nodes: int
    seconds: float
    backend: str
    alternatives: list[Line] = field(default_factory=list)

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    def heuristic(self) -> float:
        """The score as a number in -1..1 for the side to move."""
        return math.tanh(self.score / HEURISTIC_SCALE)


def win_distance_of(score: int) -> int | None:
    """Moves to the end (counting the side to move's as the first), signed: positive when
    the side to move wins. None for a heuristic score."""
    if abs(score) <= L.WIN_SCORE - 1000:
        return None
    plies = L.WIN_SCORE - abs(score)
    return plies + 1 if score > 0 else -(plies + 1)


@dataclass
class _Loaded:
    """The memory the kernels last worked on and what is on it: a position whose stones
    extend these is brought up to date by placing the new stones alone."""

    key: tuple[str, L.Frame, int, int]  # kernels, frame, win_distance, touch radius
    mem: Any
    stones: list[tuple[int, int, Side]]


class Engine:
    """Searches positions with one set of kernels; keeps its transposition table, and
    the kernels' memory with the stones on it, from move to move while the stones fit
    the board's frame (a new frame clears both)."""

    def __init__(self, *, pure: bool = False, wait_for_compiler: bool = False) -> None:
        self.pure = pure
        self.wait_for_compiler = wait_for_compiler
        self._tables: dict[str, Any] = {}
        self._frame: L.Frame | None = None
        self._loaded: _Loaded | None = None
        #: Stones placed on the kernels' memory to load positions, over this engine's
        #: life: a move adds only the stones played since the last one it saw.
        self.stones_loaded = 0

    def kernels(self) -> Backend:
        return backend(pure=self.pure, wait=self.wait_for_compiler)

    def supports(self, position: Position) -> bool:
        return 4 <= position.win_distance <= L.MAX_WIN and position.stones_left == 2

    def search(
        self,
        position: Position,
        seconds: float,
        *,
        max_depth: int = MAX_DEPTH,
        max_nodes: int | None = None,
        threats: bool = True,
        expired: Callable[[], bool] = lambda: False,
        report: Callable[[SearchResult], None] = lambda result: None,
        lines: int = 5,
    ) -> SearchResult | None:
        """The best move for the side to move, searched for about ``seconds`` (or
        ``max_nodes`` nodes, or ``max_depth`` plies); None if this position is outside
        what the kernels handle (a huge board, a ``win_distance`` past ``MAX_WIN``).

        Its ``alternatives`` are root moves with exact scores at the depth of the move
        (up to ``lines``, the best included): those the search scored with a full
        window, and, in the time left (up to ``RESEARCH`` of ``seconds``), those it
        only found no better than the best, searched again with a full window."""
        started = time.monotonic()
        kernels = self.kernels()
        mem = self.load(position, kernels)
        if mem is None:
            return None
        frame = self._frame
        assert frame is not None
        tt = self._table(kernels, frame)
        mv, ms = kernels.move_buffers()
        stm = mem[L.STM]
        if mem[L.TN + stm] > 0:  # a win on the board: the caller plays it
            return None
        speed = float(FIRST_SPEED[kernels.name])
        total_nodes = 0
        limit = max_nodes if max_nodes is not None else 1 << 62

        def budget(fraction: float) -> int:
            left_time = seconds * fraction - (time.monotonic() - started)
            return int(min(max(left_time, 0.0) * speed, limit - total_nodes))

        def run(call: Callable[[], int], nodes: int, fraction: float) -> tuple[int, bool]:
            nonlocal total_nodes, speed
            mem[L.NODES] = 0
            mem[L.BUDGET] = max(nodes, 1)
            mem[L.ABORT] = 0
            # The pure kernels also stop at the clock (the compiled ones cannot read it).
            mem[L.STOP_AT] = max(1, int((started + min(seconds * fraction, 1e6)) * 1e9))
            mem[L.BEST] = -1  # the memory is kept: no best move of an earlier search
            t0 = time.monotonic()
            try:
                value = call()
            except BaseException:
                self._loaded = None  # it may hold stones of the search: load anew
                raise
            spent = time.monotonic() - t0
            done = int(mem[L.NODES])
            total_nodes += done
            if spent > 0.01 and done > 1000:
                speed = done / spent
            return int(value), bool(mem[L.ABORT])

        def result(move_code: int, score: int, depth: int, lines: list[Line]) -> SearchResult:
            a, b = divmod(int(move_code), L.NN)
            return SearchResult(
                move=(frame.cell(a), frame.cell(b)),
                score=score,
                win_in=win_distance_of(score),
                depth=depth,
                nodes=total_nodes,
                seconds=time.monotonic() - started,
                backend=kernels.name,
                alternatives=lines,
            )

        # A forced win by threats (each of our moves threatens, every defence answered).
        if threats:
            for depth in (0, 1):
                call = _bind(kernels.threat_move, mem, mv, ms, 0, depth)
                found, aborted = run(call, budget(0.3), 0.3)
                if aborted:
                    break
                if found:
                    plies = 2 * depth + 2
                    return result(mem[L.BEST], L.WIN_SCORE - plies, depth, [])
        best: SearchResult | None = None
        aborted = False
        bounded: list[Line] = []
        for depth in range(1, max_depth + 1):
            nodes = budget(1.0) if best is not None else max(budget(1.0), 200)
            if nodes <= 0 or (best is not None and expired()):
                break
            score, aborted = run(_bind(kernels.search_root, mem, tt, mv, ms, depth), nodes, 1.0)
            if aborted:
                # Its finished root moves have scores at this depth, the others -INF.
                if mem[L.BEST] >= 0:  # -1: no root move finished
                    exact, only_bounded = _root_lines(mem, mv, ms, int(mem[L.ROOTN]), frame)
                    if _overturns(best, exact, only_bounded):
                        top = exact[0]
                        best = result(_code(top.move, frame), top.score, depth, exact)
                break
            if mem[L.BEST] < 0:  # no move to search (no pair blocks every threat)
                break
            exact, bounded = _root_lines(mem, mv, ms, int(mem[L.ROOTN]), frame)
            best = result(mem[L.BEST], score, depth, exact)
            report(best)
            if best.win_in is not None:
                break
            elapsed = time.monotonic() - started
            if elapsed > seconds * 0.4:  # the next iteration would not finish
                break
        if best is not None and not aborted and best.win_in is None and bounded:
            # The moves the last iteration only bounded, best bound first, scored with a
            # full window at its depth while the time allows.
            for line in bounded[: max(0, lines - len(best.alternatives))]:
                nodes = budget(RESEARCH)
                if nodes <= 0 or expired():
                    break
                cells = (frame.index(*line.move[0]), frame.index(*line.move[1]))
                call = _bind(self._child, kernels, mem, tt, mv, ms, cells, best.depth)
                score, aborted = run(call, nodes, RESEARCH)
                if aborted:
                    break
                best.alternatives.append(Line(line.move, score))
            best.alternatives.sort(key=lambda line: -line.score)
        if best is not None:
            best.nodes = total_nodes
            best.seconds = time.monotonic() - started
        return best

    @staticmethod
    def _child(
        kernels: Backend, mem: Any, tt: Any, mv: Any, ms: Any, cells: tuple[int, int], depth: int
    ) -> int:
        """The score of a root move for the side to move, with a full window: the move
        made (its two cells' indices), the reply searched ``depth - 1`` deep at ply 1
        (as the root search does)."""
        a, b = cells
        stm = int(mem[L.STM])
        kernels.place(mem, a, stm)
        kernels.place(mem, b, stm)
        mem[L.STM] = 1 - stm
        try:
            return -int(kernels.negamax(mem, tt, mv, ms, depth - 1, -L.INF, L.INF, 1))
        finally:
            mem[L.STM] = stm
            kernels.unplace(mem, b, stm)
            kernels.unplace(mem, a, stm)

    def load(self, position: Position, kernels: Backend | None = None) -> Any:
        """The kernels' memory holding ``position`` (None if it is outside what they
        handle): the memory of the last position, with the stones played since placed
        on it, when its stones are the start of these; else a new one."""
        if not self.supports(position):
            return None
        kernels = kernels or self.kernels()
        stones = position.stones
        frame = self._frame
        loaded = self._loaded
        if loaded is not None and loaded.key[1] == frame and len(loaded.stones) <= len(stones):
            new = stones[len(loaded.stones) :]  # only these need to fit: the rest did
        else:
            new = stones
        if frame is None or not all(frame.fits(q, r) for q, r, _ in new):
            # A new frame only when the stones outgrow the last: the table's keys and
            # moves are cell indices in the frame, so it would be lost.
            frame = L.Frame.around([(q, r) for q, r, _ in stones])
            if not all(frame.fits(q, r) for q, r, _ in stones):
                return None
        key = (kernels.name, frame, position.win_distance, min(2, position.view_distance))
        count = len(loaded.stones) if loaded is not None else 0
        if loaded is None or loaded.key != key or stones[:count] != loaded.stones:
            mem = kernels.array(L.empty_mem(key[2], key[3]))
            loaded = self._loaded = _Loaded(key, mem, [])
            count = 0
        self._table(kernels, frame)  # a new frame: the table is cleared
        mem = loaded.mem
        # Forgotten until the stones are on: a failure half-way leaves no memory behind.
        self._loaded = None
        L.load(mem, frame, stones[count:], position.to_move, kernels.place)
        self.stones_loaded += len(stones) - count
        loaded.stones = stones
        self._loaded = loaded
        return mem

    def quick_moves(self, position: Position, count: int = 8) -> list[tuple[Move, int]] | None:
        """Moves chosen without a search, for an answer at once, best first with their
        static scores for the mover (what the search orders its root moves by): the
        pairs that spoil every threat of the opponent's when it has any, else the pairs
        of the best cells. Empty when no pair spoils every threat (the opponent wins
        next move); None when ``position`` is outside what the kernels handle."""
        kernels = self.kernels()
        mem = self.load(position, kernels)
        frame = self._frame
        if mem is None or frame is None:
            return None
        stm = int(mem[L.STM])
        mv, ms = kernels.move_buffers()
        if mem[L.TN + 1 - stm] > 0:
            n = int(kernels.gen_blocks(mem, mv, 0, stm, SPARE))
        else:
            n = int(kernels.gen_pairs(mem, mv, 0, stm, int(mem[L.KROOT])))
        kernels.order_moves(mem, mv, ms, 0, n, -1)
        moves = []
        for i in range(min(n, count)):
            a, b = divmod(int(mv[i]), L.NN)
            moves.append(((frame.cell(a), frame.cell(b)), int(ms[i])))
        return moves

    def winning_gaps(
        self, position: Position, limit: int = 64, *, opponent: bool = False
    ) -> list[list[Cell]] | None:
        """The empty cells of the side to move's windows that lack two stones or less
        (and hold none of the opponent's), fewest first: every win on the board, up to
        ``limit`` windows (``opponent``: the opponent's, its threats). Read from the
        loaded memory (no pass over the board); None when ``position`` is outside what
        the kernels handle."""
        mem = self.load(position)
        frame = self._frame
        if mem is None or frame is None:
            return None
        stm = int(mem[L.STM]) ^ int(opponent)
        win = int(mem[L.WIN])
        windows = []
        for j in range(min(int(mem[L.TN + stm]), limit)):
            w = int(mem[L.TSET + stm * L.TCAP + j])
            axis, start = divmod(w, L.NN)
            step = (L.N, 1, L.N - 1)[axis]
            cells = [start + k * step for k in range(win)]
            windows.append([frame.cell(c) for c in cells if mem[L.BOARD + c] == 0])
        windows.sort(key=len)
        return windows

    def _table(self, kernels: Backend, frame: L.Frame) -> Any:
        if frame != self._frame:  # cell indices changed: the old entries mean nothing
            self._tables.clear()
            self._frame = frame
        table = self._tables.get(kernels.name)
        if table is None:
            table = self._tables[kernels.name] = kernels.table()
        return table


def _bind(function: Callable[..., Any], *args: Any) -> Callable[[], int]:
    return lambda: int(function(*args))


def _code(move: Move, frame: L.Frame) -> int:
    return frame.index(*move[0]) * L.NN + frame.index(*move[1])


def _overturns(last: SearchResult | None, exact: list[Line], bounded: list[Line]) -> bool:
    """Whether an unfinished iteration's best move is played instead of ``last``, the
    last complete iteration's (None: there is none), given the root moves it finished
    (``exact`` and ``bounded``, as ``_root_lines`` sorts them): when ``last``'s move is
    among them and another beat it. That one, ``exact[0]``, then has an exact score at
    this depth (it raised alpha with a full window) above every other finished move's,
    ``last``'s included. With ``last``'s move unfinished (the table lost the root's
    entry, and with it the move searched first), beating the others proves nothing
    against it: ``last`` stands, with its own depth, score and alternatives."""
    if not exact:
        return False
    if last is None:
        return True
    return exact[0].move != last.move and any(line.move == last.move for line in exact + bounded)


def _root_lines(
    mem: Any, mv: Any, ms: Any, count: int, frame: L.Frame
) -> tuple[list[Line], list[Line]]:
    """The root moves the last iteration scored exactly, and those it only found no
    better than the best so far (their scores upper bounds), each best first."""
    exact: list[Line] = []
    bounded: list[Line] = []
    for i in range(count):
        code = int(mv[i])
        score = int(ms[i])
        if score <= -L.INF:
            continue
        a, b = divmod(code, L.NN)
        (exact if mem[L.ROOTX + i] else bounded).append(Line((frame.cell(a), frame.cell(b)), score))
    exact.sort(key=lambda line: -line.score)
    bounded.sort(key=lambda line: -line.score)
    return exact, bounded
