"""``SearchBot``: the strongest example bot, a game-tree search over pairs of stones.

Each move:

1. a win on the board (a window of ours lacking at most two stones) is played at once;
2. a threat-space search looks for a forced win by threats alone (every move of ours
   makes threats, every pair of blocks answered);
3. iterative deepening PVS alpha-beta over pair moves (forced blocks only when the
   opponent threatens; else pairs of the best cells, ordered by the transposition
   table's move, then by the position each leads to), with a Zobrist-keyed table and an
   evaluation from the windows' stone counts kept incrementally, and forced blocks
   searched on past the nominal depth.

The core (``bot.bots.search``) is compiled with numba when it is installed: a bot server
does it before it says it is ready (``SearchBot.warm_up``); elsewhere, in a background
thread on first use (the first moves are searched by the pure-Python kernels meanwhile).
Without numba, or with ``HTTTX_SEARCH_PURE=1`` or ``SearchBot(pure=True)``, it runs as
plain Python, about a hundred times slower.

It uses part of the time it is given (``Deadline``, from the game's move time limit and
clock; in a game without a clock, whose limit is the server's stall limit, no more than
without a limit: see ``SearchBot._seconds``), reports a move chosen without a search
(the win; else the best block of every threat, or pair of the best cells) before it
searches and its best move after every
iteration, and falls back to ``ThreatBot`` for what the search does not handle
(``win_distance`` outside 4..8, a board spread wider than the search's square).

>>> from game.rules import Position, Side
>>> position = Position(setup=[(0, 0, "x"), *((q, 0, "o") for q in range(1, 5))],
...                     to_move="o")
>>> decision = SearchBot(pure=True).play(position.copy(), Player.O, Match(), Deadline(0.2))
>>> position.place_move(*(stone.as_tuple() for stone in decision.pieces))
>>> position.outcome.winner, decision.evaluation.win_in
('o', -1)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import ClassVar

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.bots._features import position_bot_capabilities
from bot.bots.search.backend import compiled_backend
from bot.bots.search.engine import Engine, SearchResult
from bot.bots.threat_bot import (
    ThreatBot,
    WindowCensus,
    _decision,
    _move_wins,
    _signed,
    _stone_wins,
    _winning_move,
)
from bot.capabilities import Capabilities, Meta
from game.hexgrid import Hex, ring
from game.rules import Position, Side
from models import Coord, Match, MoveOption, Player, PositionEvaluation

#: Considerations reported with a move.
CONSIDERATIONS = 4


def think_time(remaining: float, clock: str = "none", increment: float = 0.0) -> float:
    """Seconds to search when ``remaining`` are left for this answer: a bit under half
    of a short limit (the rest is the network's and the framework's margin), a twelfth
    of a long one, never more than 30 s.

    >>> think_time(1.0), think_time(60.0), think_time(math.inf)
    (0.45, 5.0, 5.0)

    When the game's settings say ``remaining`` is a clock for the whole game
    (``clock`` ``"match"`` or ``"incremental"``), a twelfth of it plus most of the
    increment, whatever it holds: a fixed floor would spend a short clock in a few moves.

    >>> round(think_time(10.0, "incremental", 0.1), 3), think_time(2.0, "match")
    (0.913, 0.16666666666666666)
    """
    if math.isinf(remaining):
        return 5.0
    if clock in ("match", "incremental"):
        return min(30.0, 0.45 * remaining, remaining / 12 + 0.8 * increment)
    if remaining <= 3.0:
        return 0.45 * remaining
    return min(30.0, max(1.35, remaining / 12))


class SearchBot(BaseBot):
    """Alpha-beta (PVS) with a transposition table and threat-space search; see the
    module's docstring."""

    name = "SearchBot"
    #: It keeps no position after answering: the engine copies the stones into its own
    #: arrays, and what it tries on the position it takes back.
    keeps_positions = False
    #: Without a time limit (``Deadline(None)``), seconds per move.
    default_seconds: ClassVar[float] = 5.0

    def __init__(
        self,
        *,
        pure: bool = False,
        seconds: float | None = None,
        max_depth: int | None = None,
        max_nodes: int | None = None,
        wait_for_compiler: bool = False,
    ) -> None:
        super().__init__()
        self.engine = Engine(pure=pure, wait_for_compiler=wait_for_compiler)
        if not pure:
            compiled_backend(wait=False)  # compiles in the background from now on
        self.seconds = seconds
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.last: SearchResult | None = None

    @classmethod
    def warm_up(cls) -> None:
        """Compile the kernels, or load them from numba's disk cache, before a bot server
        says the bot is ready: compiling takes some 15 s on an idle core (a minute and
        more on a busy machine), loading about 2 s, and a first game played meanwhile
        would be played by the kernels a hundred times slower. Nothing to do without
        numba or with ``HTTTX_SEARCH_PURE=1``."""
        compiled_backend(wait=True)

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name="SearchBot",
                description="Iterative deepening alpha-beta over stone pairs with a "
                "transposition table and threat-space search (numba-compiled when "
                "available).",
                tags=["search", "alpha-beta", "threat-search"],
            ),
            evaluation=True,
            evaluation_time_limit=True,
        )

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        self.deadline = deadline
        me: Side = player.value
        winning = self._winning_move(position, me)
        if winning is not None:
            decision = _decision(winning, PositionEvaluation(win_in=_signed(1, me)))
            deadline.report(decision)
            return decision
        # Reported before the search: if the time runs out first (a thread starved of
        # the CPU, a slow start), this is the move sent, not a thoughtless fallback.
        safe = self._safe_decision(position, player, match, deadline)
        deadline.report(safe)
        seconds = self._seconds(deadline, match)

        def report(found: SearchResult) -> None:
            if _is_legal(position, found.move):
                deadline.report(self._decision(found, me))

        found = self.engine.search(
            position,
            seconds,
            max_depth=self.max_depth or 12,
            max_nodes=self.max_nodes,
            expired=lambda: deadline.expired,
            report=report,
        )
        self.last = found
        if found is None or not _is_legal(position, found.move):
            return safe
        return self._decision(found, me)

    def evaluate_position(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> PositionEvaluation:
        """The search's opinion of the position with ``player`` to move."""
        decision = self.play(position.copy(), player, match, deadline)
        return decision.evaluation or PositionEvaluation()

    def _safe_decision(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        """A move without a search: the best of the engine's blocks of every threat (or,
        with none, of its pairs of the best cells); when no pair blocks every threat, the
        pair that blocks the most (a loss next move, reported as such); ThreatBot's move
        when the engine does not handle the position."""
        moves = self.engine.quick_moves(position)
        for move, score in moves or []:
            if _is_legal(position, move):
                return MoveDecision(
                    pieces=(_coord(move[0]), _coord(move[1])),
                    evaluation=_evaluation(score, player.value),
                )
        threats = self.engine.winning_gaps(position, 4096, opponent=True) if moves == [] else None
        block = _most_blocking(position, threats) if threats else None
        if block is not None:
            them: Side = "o" if player.value == "x" else "x"
            return _decision(block, PositionEvaluation(win_in=_signed(2, them)))
        return MoveDecision.of(ThreatBot().play(position, player, match, deadline))

    def _winning_move(self, position: Position, me: Side) -> tuple[Hex, Hex] | None:
        """Two stones that win now, the winning one last: from the windows the engine
        keeps counted (no pass over the board), or, for rules the engine does not
        search or a win its windows see but not legally, from a census of the board."""
        gaps = self.engine.winning_gaps(position)
        if gaps is not None:
            if not gaps:
                return None  # the engine counts every window: no win on the board
            for cells in gaps:
                for move in _completions(position, cells):
                    if _move_wins(position, move):
                        return move
        return _winning_move(position, WindowCensus(position, me))

    def _seconds(self, deadline: Deadline, match: Match) -> float:
        """Seconds to search: ``think_time`` of the time left. In a game without a clock
        (``clock_type`` ``none``; a stateless request, which carries no settings, reads
        so too) a limit is a cap, not a budget: our server then sends its stall limit
        (300 s by default), and the bot thinks ``default_seconds`` as it does without any
        limit, less only when the limit is short."""
        remaining = deadline.remaining()
        budget = think_time(remaining, match.clock_type, match.increment)
        if match.clock_type == "none":
            budget = min(budget, self.default_seconds)
        if self.seconds is not None:
            return min(self.seconds, budget)
        if math.isinf(remaining):
            return self.default_seconds
        return budget

    def _decision(self, found: SearchResult, me: str) -> MoveDecision:
        considerations = [
            MoveOption(
                pieces=[_coord(line.move[0]), _coord(line.move[1])],
                evaluation=_evaluation(line.score, me),
            )
            for line in found.alternatives
            if line.move != found.move
        ][:CONSIDERATIONS]
        return MoveDecision(
            pieces=(_coord(found.move[0]), _coord(found.move[1])),
            evaluation=_evaluation(found.score, me),
            considerations=considerations,
        )


def _evaluation(score: int, me: str) -> PositionEvaluation:
    """A score for ``me`` (the mover) as an evaluation from X's point of view."""
    from bot.bots.search.engine import HEURISTIC_SCALE, win_distance_of

    sign = 1 if me == "x" else -1
    win_in = win_distance_of(score)
    if win_in is not None:
        return PositionEvaluation(win_in=sign * win_in)
    return PositionEvaluation(heuristic=sign * math.tanh(score / HEURISTIC_SCALE))


#: The cells weighed for a block when none blocks every threat (a lost position).
_BLOCKERS = 40


def _most_blocking(position: Position, threats: list[list[Hex]]) -> tuple[Hex, Hex] | None:
    """A legal pair of cells that spoils the most of ``threats`` (each a window's empty
    cells): the cell in the most, then the cell in the most of the rest."""
    count = Counter(cell for gaps in threats for cell in gaps)
    ranked = sorted(count, key=lambda cell: (-count[cell], cell))[:_BLOCKERS]
    for first in ranked:
        rest = Counter(cell for gaps in threats if first not in gaps for cell in gaps)
        seconds = sorted(
            (cell for cell in ranked if cell != first), key=lambda cell: (-rest[cell], cell)
        )
        for second in seconds:
            if _is_legal(position, (first, second)):
                return first, second
    return None


def _completions(position: Position, gaps: list[Hex]) -> Iterator[tuple[Hex, Hex]]:
    """Moves that fill a window lacking ``gaps``, the winning stone last: both orders of
    two gaps; one gap after one of the nearest cells that does not end the game alone
    (a first stone that wins would leave the second unplayed)."""
    if len(gaps) == 2:
        yield gaps[0], gaps[1]
        yield gaps[1], gaps[0]
    elif len(gaps) == 1:
        (winner,) = gaps
        for radius in (1, 2):
            for cell in ring(winner, radius):
                if position.is_legal(*cell) and not _stone_wins(position, cell):
                    yield cell, winner
                    return


def _is_legal(position: Position, move: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    first, second = move
    if first == second or not position.is_legal(*first):
        return False
    position.place(*first)
    try:
        return not position.is_game_over() and position.is_legal(*second)
    finally:
        position.undo()


def _coord(cell: tuple[int, int]) -> Coord:
    return Coord(q=int(cell[0]), r=int(cell[1]))
