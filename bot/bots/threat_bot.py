"""``ThreatBot``: wins when it can, blocks when it must, otherwise extends its lines.

Everything is counted in *windows*: the runs of ``win_distance`` consecutive cells along
one of the three axes. A side wins by filling a window. A window holding stones of both
sides is dead; a live window with ``n`` stones of one side needs ``win_distance - n``
more. Since a move places two stones, a window of the opponent's that lacks at most two
stones (and holds none of ours) is a *threat*: unless we put a stone in it now, the
opponent can complete it on its next move.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.bots._features import position_bot_capabilities
from bot.capabilities import Capabilities, Meta
from game.hexgrid import AXES, Hex, distance
from game.rules import Position, Side
from models import Coord, Match, Player, PositionEvaluation

#: (q, r) of a window's first cell, and the index of its axis in ``AXES``.
WindowKey = tuple[int, int, int]

# Candidate cells for a blocking move besides the blocking cells themselves: the best
# scoring ones, for the stone a block leaves free.
_SPARE_CANDIDATES = 8
# Blocking candidates are paired exhaustively; beyond this many (a position riddled with
# threats, lost anyway) only the ones that block the most are paired.
_MAX_BLOCKING_CANDIDATES = 40


def _attack_weight(stones: int) -> int:
    """The worth of a live window holding ``stones`` of our own: each stone multiplies
    it, so a cell that lengthens a line beats several that start new ones."""
    return 0 if stones == 0 else 6**stones


def _defence_weight(stones: int) -> int:
    """The worth of spoiling a live window of the opponent's: less than building one of
    ours as long (the bot blocks real threats outright, not through these weights)."""
    return _attack_weight(stones) // 2


class WindowCensus:
    """The live windows of a position, counted from one side's point of view, and the
    score of every empty cell in them; kept up to date stone by stone.

    A cell's score is the sum, over the windows through it, of the attack weight of a
    window holding only our stones and the defence weight of one holding only theirs.

    >>> position = Position(setup=[(0, 0, "x"), (1, 0, "x"), (0, 2, "o")], to_move="x")
    >>> census = WindowCensus(position, "x")
    >>> census.live_windows("x", at_least=2)  # the windows along +q through both stones
    [(-4, 0, 0), (-3, 0, 0), (-2, 0, 0), (-1, 0, 0), (0, 0, 0)]
    >>> census.scores[(-1, 0)], census.scores[(2, 0)]  # (2, 0) is also on a line of O's
    (150, 162)
    """

    def __init__(self, position: Position, me: Side) -> None:
        self.me: Side = me
        self.them: Side = "o" if me == "x" else "x"
        self.win_distance = position.win_distance
        self.board: dict[Hex, Side] = {}
        # [our stones, their stones] per window that holds any stone.
        self.counts: dict[WindowKey, list[int]] = {}
        self.scores: dict[Hex, int] = {}
        counts = self.counts
        reach = range(self.win_distance)
        for q, r, side in position.stones:
            self.board[(q, r)] = side
            slot = side != me  # 0: our stone, 1: theirs
            for axis, (dq, dr) in enumerate(AXES):
                for offset in reach:
                    key = (q - offset * dq, r - offset * dr, axis)
                    count = counts.get(key)
                    if count is None:
                        counts[key] = count = [0, 0]
                    count[slot] += 1
        for key, (ours, theirs) in counts.items():
            if not (ours and theirs):  # dead windows are worth nothing: skip the call
                self._spread(key, self._worth(ours, theirs))

    def windows_through(self, cell: Hex) -> Iterator[WindowKey]:
        q, r = cell
        for axis, (dq, dr) in enumerate(AXES):
            for offset in range(self.win_distance):
                yield q - offset * dq, r - offset * dr, axis

    def cells_of(self, key: WindowKey) -> Iterator[Hex]:
        q, r, axis = key
        dq, dr = AXES[axis]
        for offset in range(self.win_distance):
            yield q + offset * dq, r + offset * dr

    def empty_cells_of(self, key: WindowKey) -> list[Hex]:
        return [cell for cell in self.cells_of(key) if cell not in self.board]

    def live_windows(self, side: Side, *, at_least: int) -> list[WindowKey]:
        """The windows holding ``at_least`` stones of ``side`` and none of the other's,
        in a deterministic order (the most filled first, then by key)."""
        mine = side == self.me
        found = [
            (ours if mine else theirs, key)
            for key, (ours, theirs) in self.counts.items()
            if (ours if mine else theirs) >= at_least and not (theirs if mine else ours)
        ]
        found.sort(key=lambda item: (-item[0], item[1]))
        return [key for _, key in found]

    def place(self, cell: Hex, side: Side) -> None:
        """Record a stone of ``side`` on the empty ``cell``."""
        touched = list(self.windows_through(cell))
        for key in touched:  # take out what these windows gave while the cell was empty
            ours, theirs = self.counts.get(key, (0, 0))
            self._spread(key, -self._worth(ours, theirs))
        self.board[cell] = side
        self.scores.pop(cell, None)
        for key in touched:
            count = self.counts.setdefault(key, [0, 0])
            count[side != self.me] += 1
            self._spread(key, self._worth(*count))

    def strength(self) -> dict[Side, int]:
        """How much each side has built: the attack weights of its live windows."""
        ours = theirs = 0
        for our_stones, their_stones in self.counts.values():
            if not their_stones:
                ours += _attack_weight(our_stones)
            elif not our_stones:
                theirs += _attack_weight(their_stones)
        return {self.me: ours, self.them: theirs}

    def _worth(self, ours: int, theirs: int) -> int:
        if ours and theirs:
            return 0  # a dead window: nobody can win in it
        return _attack_weight(ours) if ours else _defence_weight(theirs)

    def _spread(self, key: WindowKey, worth: int) -> None:
        """Add ``worth`` to the score of every empty cell of the window (the hot loop:
        the census of a 500-stone position runs it thousands of times)."""
        if not worth:
            return
        q, r, axis = key
        dq, dr = AXES[axis]
        board = self.board
        scores = self.scores
        for offset in range(self.win_distance):
            cell = (q + offset * dq, r + offset * dr)
            if cell not in board:
                scores[cell] = scores.get(cell, 0) + worth


class ThreatBot(BaseBot):
    """For every move, in order of priority:

    1. win, if one or two stones complete a window of ours;
    2. block, if the opponent has threats (windows it can complete next move): the pair
       of cells that spoils the most of them, the better scoring pair on a tie;
    3. otherwise extend: each stone on the empty cell with the best score (see
       ``WindowCensus``), which grows our longest open line and spoils theirs.

    It reports an evaluation of the move: ``win_in`` when it sees a forced result (1: it
    wins now; 2 for the opponent: a threat it cannot block; 3: threats the opponent
    cannot block), else a heuristic in [-1, 1]; both from X's point of view.

    >>> from game.rules import Position
    >>> position = Position(setup=[(0, 0, "x"), *((q, 0, "o") for q in range(1, 5))],
    ...                     to_move="o")
    >>> decision = ThreatBot().play(position.copy(), Player.O, Match(), Deadline(None))
    >>> position.place_move(*(stone.as_tuple() for stone in decision.pieces))
    >>> position.outcome.winner, decision.evaluation.win_in
    ('o', -1)
    """

    #: It keeps no position after answering (its census is its own, built per call;
    #: the stones it tries are taken back): the server may lend it the same one again.
    keeps_positions = False

    name = "ThreatBot"

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name="ThreatBot",
                description="Wins when it can, blocks the opponent's immediate wins, "
                "otherwise extends its longest open line.",
                tags=["heuristic", "threat-search"],
            ),
            evaluation=True,
            evaluation_time_limit=True,
        )

    def play(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> MoveDecision:
        self.deadline = deadline
        me: Side = player.value
        census = WindowCensus(position, me)
        winning = _winning_move(position, census)
        if winning is not None:
            return _decision(winning, PositionEvaluation(win_in=_signed(1, me)))
        threats = census.live_windows(census.them, at_least=census.win_distance - 2)
        block = _blocking_move(position, census, threats, deadline) if threats else None
        if block is None:
            move = _greedy_move(position, census)
        else:
            move = block
            for cell in move:
                census.place(cell, me)
        return _decision(move, _evaluation_after(census))

    def evaluate_position(
        self, position: Position, player: Player, match: Match, deadline: Deadline
    ) -> PositionEvaluation:
        """The position with ``player`` to move: ``win_in`` 1 when ``player`` wins now,
        2 for the opponent when ``player`` cannot block all its threats, else the
        heuristic."""
        self.deadline = deadline
        me: Side = player.value
        census = WindowCensus(position, me)
        if _winning_move(position, census) is not None:
            return PositionEvaluation(win_in=_signed(1, me))
        threats = census.live_windows(census.them, at_least=census.win_distance - 2)
        if threats and not _two_stones_block(threats, _spoiled_threats(census, threats, position)):
            return PositionEvaluation(win_in=_signed(2, census.them))
        return PositionEvaluation(heuristic=_heuristic(census))


# ------------------------------------------------------------------------ winning


def _winning_move(position: Position, census: WindowCensus) -> tuple[Hex, Hex] | None:
    """Two stones that win, the winning one last, checked with the engine."""
    me = census.me
    for key in census.live_windows(me, at_least=census.win_distance - 2):
        gaps = census.empty_cells_of(key)
        if len(gaps) == 1:
            # One stone wins. Play another first: a first stone that wins ends the game
            # and the second would not be placed, so it goes last to keep both valid.
            (winner,) = gaps
            first = _harmless_stone(position, census, winner)
            if first is not None and _move_wins(position, (first, winner)):
                return first, winner
        elif len(gaps) == 2:
            for move in ((gaps[0], gaps[1]), (gaps[1], gaps[0])):
                if _move_wins(position, move):
                    return move
    if census.win_distance <= 2:
        # A window without a stone (not in the census) lacks only win_distance stones:
        # any two neighbours on an axis, the first not winning alone.
        for first in sorted(position.legal_cells(), key=_order):
            for dq, dr in AXES:
                for second in ((first[0] + dq, first[1] + dr), (first[0] - dq, first[1] - dr)):
                    if _move_wins(position, (first, second)):
                        return first, second
    return None


def _move_wins(position: Position, move: tuple[Hex, Hex]) -> bool:
    """Whether the side to move wins with exactly this move (the second stone winning)."""
    first, second = move
    if not position.is_legal(*first):
        return False
    position.place(*first)
    try:
        if position.is_game_over() or not position.is_legal(*second):
            return False
        position.place(*second)
        won = position.outcome is not None and position.outcome.winner is not None
        position.undo()
        return won
    finally:
        position.undo()


# ----------------------------------------------------------------------- blocking


def _blocking_move(
    position: Position, census: WindowCensus, threats: list[WindowKey], deadline: Deadline
) -> tuple[Hex, Hex] | None:
    """The legal pair that spoils the most threats, the higher scoring on a tie; None if
    the time ran out before any pair was weighed."""
    spoiled = _spoiled_threats(census, threats, position)
    blockers = sorted(spoiled, key=lambda cell: (-spoiled[cell].bit_count(), _order(cell)))
    candidates = blockers[:_MAX_BLOCKING_CANDIDATES]
    spares = _ranked_cells(position, census, avoid=set(candidates))
    candidates += itertools.islice(spares, _SPARE_CANDIDATES)
    best: tuple[tuple[int, int], tuple[Hex, Hex]] | None = None
    for i, first in enumerate(candidates):
        if deadline.expired:
            break
        for second in candidates[i + 1 :]:
            value = (
                (spoiled.get(first, 0) | spoiled.get(second, 0)).bit_count(),
                census.scores.get(first, 0) + census.scores.get(second, 0),
            )
            if best is None or value > best[0]:
                best = (value, (first, second))
    if best is None:
        return None
    first, second = best[1]
    # Both cells are legal now; with a short view_distance the second may only come
    # into view through the first, so try both orders.
    for move in ((first, second), (second, first)):
        if _is_legal_move(position, move):
            return move
    return None


def _spoiled_threats(
    census: WindowCensus, threats: list[WindowKey], position: Position | None = None
) -> dict[Hex, int]:
    """For each empty cell in a threat (legal in ``position``, if given), the threats a
    stone there spoils, as a bit set."""
    spoiled: dict[Hex, int] = {}
    for index, key in enumerate(threats):
        for cell in census.empty_cells_of(key):
            if position is None or position.is_legal(*cell):
                spoiled[cell] = spoiled.get(cell, 0) | (1 << index)
    return spoiled


def _two_stones_block(threats: list[WindowKey], spoiled: dict[Hex, int]) -> bool:
    """Whether one or two of the cells in ``spoiled`` spoil every threat."""
    everything = (1 << len(threats)) - 1
    masks = list(spoiled.values())
    return any(
        first | second == everything
        for i, first in enumerate(masks)
        for second in [first, *masks[i + 1 :]]  # [first]: one stone may be enough
    )


def _is_legal_move(position: Position, move: tuple[Hex, Hex]) -> bool:
    first, second = move
    if not position.is_legal(*first):
        return False
    position.place(*first)
    try:
        return not position.is_game_over() and position.is_legal(*second)
    finally:
        position.undo()


# ---------------------------------------------------------------------- extending


def _greedy_move(position: Position, census: WindowCensus) -> tuple[Hex, Hex]:
    """Each stone on the best scoring legal cell, the second scored after the first is
    placed (it may lengthen the same line). The census ends with both stones placed;
    ``position`` ends as it came (the first stone is placed while the second is
    chosen, then taken back)."""
    first = _best_cell(position, census, avoid=set()) or _any_legal_cell(position, avoid=set())
    census.place(first, census.me)
    position.place(*first)
    placed = True
    try:
        if position.is_game_over():
            # Only when the first stone wins, which _winning_move would have found unless
            # view_distance kept it from pairing the stones; any second stone will do.
            position.undo()
            placed = False
        second = _best_cell(position, census, avoid={first})
        second = second or _any_legal_cell(position, avoid={first})
    finally:
        if placed:
            position.undo()
    census.place(second, census.me)
    return first, second


def _best_cell(position: Position, census: WindowCensus, *, avoid: set[Hex]) -> Hex | None:
    """The best scoring legal cell not in ``avoid``, ties broken as in ``_ranked_cells``.

    Linear passes rather than a sort, as this runs for every stone; and legality is only
    asked of the best cells (when ``view_distance < win_distance - 1`` a scored cell
    may be out of view).
    """
    scores = census.scores
    passed = set(avoid)
    while True:
        top = max((score for cell, score in scores.items() if cell not in passed), default=None)
        if top is None:
            return None
        tied = [cell for cell, score in scores.items() if score == top and cell not in passed]
        tied.sort(key=_order)
        for cell in tied:
            if position.is_legal(*cell):
                return cell
        passed.update(tied)


def _harmless_stone(position: Position, census: WindowCensus, winner: Hex) -> Hex | None:
    """The best legal cell besides ``winner`` that does not end the game by itself."""
    for cell in _ranked_cells(position, census, avoid={winner}):
        if not _stone_wins(position, cell):
            return cell
    unscored = set(position.legal_cells()) - census.scores.keys() - {winner}
    for cell in sorted(unscored, key=_order):
        if not _stone_wins(position, cell):
            return cell
    return None


def _ranked_cells(position: Position, census: WindowCensus, *, avoid: set[Hex]) -> Iterator[Hex]:
    """The scored legal cells, best first; ties go to the cell nearest the origin, then
    by ``(q, r)``, so the bot is deterministic."""
    scores = census.scores
    for cell in sorted(scores, key=lambda cell: (-scores[cell], _order(cell))):
        if cell not in avoid and position.is_legal(*cell):
            yield cell


def _stone_wins(position: Position, cell: Hex) -> bool:
    position.place(*cell)
    won = position.is_game_over()
    position.undo()
    return won


def _any_legal_cell(position: Position, *, avoid: set[Hex]) -> Hex:
    """When no cell scores (no live window anywhere): the legal cell nearest the origin."""
    return min((cell for cell in position.legal_cells() if cell not in avoid), key=_order)


def _order(cell: Hex) -> tuple[int, int, int]:
    return distance(cell, (0, 0)), cell[0], cell[1]


# --------------------------------------------------------------------- evaluation


def _evaluation_after(census: WindowCensus) -> PositionEvaluation:
    """The evaluation of a move, from the census of the position it leads to (the
    opponent to move); ``win_in`` counts our move as the first."""
    win = census.win_distance
    their_threats = census.live_windows(census.them, at_least=win - 2)
    if their_threats:
        return PositionEvaluation(win_in=_signed(2, census.them))
    our_threats = census.live_windows(census.me, at_least=win - 2)
    # Legality aside: cells of our windows are in view whenever view_distance is at least
    # win_distance - 1, as it usually is; when it is not, this may see a win too soon.
    if our_threats and not _two_stones_block(our_threats, _spoiled_threats(census, our_threats)):
        return PositionEvaluation(win_in=_signed(3, census.me))
    return PositionEvaluation(heuristic=_heuristic(census))


def _heuristic(census: WindowCensus) -> float:
    """X's share of what both sides have built, from -1 (all O's) to 1 (all X's)."""
    strength = census.strength()
    total = strength["x"] + strength["o"]
    return 0.0 if total == 0 else (strength["x"] - strength["o"]) / total


def _signed(moves: int, side: Side) -> int:
    return moves if side == "x" else -moves


def _decision(move: Iterable[Hex], evaluation: PositionEvaluation | None = None) -> MoveDecision:
    first, second = (Coord(q=q, r=r) for q, r in move)
    return MoveDecision(pieces=(first, second), evaluation=evaluation)
