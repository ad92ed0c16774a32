"""Adjudication: ending a game early on the bots' own word, the way cutechess's
``-resign movecount=K score=S twosided=true`` does. Pure: fed the recorded moves, no
time, no I/O; ``game.session`` calls it after each move.

*Resign adjudication* (``ResignAdjudication(moves=K, score=S)``). Each mover may report
an evaluation with its move (``PositionEvaluation``, always from X's point of view).
One evaluation *favours* a side when:

* ``win_in`` is set and not 0: X when positive, O when negative (a forced win is
  decisive whatever ``score`` is; it also wins over a ``heuristic`` that disagrees, as a
  proof says more than an estimate);
* otherwise ``heuristic >= S`` favours X and ``heuristic <= -S`` favours O.

Each side has a streak: how many of its own last moves in a row favoured one same side.
A move without an evaluation, or with one that favours nobody, resets the mover's
streak to 0; one that favours the other side starts it again at 1. The game is
adjudicated for a side when both streaks favour it and are at least K long: both bots,
over their last K moves each, agree who wins (one bot's conviction alone is not
enough). The result is a ``win`` for that side with cause ``adjudication``.

>>> from models import Coord, Player, PositionEvaluation, RecordedMove, ResignAdjudication
>>> def played(side: Player, heuristic: float | None) -> RecordedMove:
...     evaluation = None if heuristic is None else PositionEvaluation(heuristic=heuristic)
...     pieces = [Coord(q=1, r=0), Coord(q=2, r=0)]
...     return RecordedMove(side=side, pieces=pieces, evaluation=evaluation)
>>> watch = ResignWatch(ResignAdjudication(moves=2, score=0.9))
>>> [watch.observe(played(side, h)) for side, h in
...  [(Player.O, -0.95), (Player.X, -0.99), (Player.O, -1.0), (Player.X, -0.9)]]
[None, None, None, <Player.O: 'o'>]
>>> watch.detail(Player.O)
"both bots' evaluations favoured o by at least 0.9 for 2 moves each"
>>> watch.result(Player.O).end_detail
"adjudication: both bots' evaluations favoured o by at least 0.9 for 2 moves each"
"""

from __future__ import annotations

import math

from models import (
    Adjudication,
    EndCause,
    GameResult,
    Player,
    PositionEvaluation,
    RecordedMove,
    ResignAdjudication,
    ResultReason,
)

__all__ = ["Adjudicator", "ResignWatch", "favoured_side"]


def favoured_side(evaluation: PositionEvaluation | None, score: float) -> Player | None:
    """The side ``evaluation`` says is winning by at least ``score``, if any.

    >>> favoured_side(PositionEvaluation(heuristic=0.5), 0.5)
    <Player.X: 'x'>
    >>> favoured_side(PositionEvaluation(heuristic=0.9, win_in=-3), 0.5)
    <Player.O: 'o'>
    >>> favoured_side(PositionEvaluation(heuristic=-0.49), 0.5) is None
    True
    """
    if evaluation is None:
        return None
    if evaluation.win_in:  # 0 would be a win already on the board: no one to favour here
        return Player.X if evaluation.win_in > 0 else Player.O
    heuristic = evaluation.heuristic
    if heuristic is None or math.isnan(heuristic):
        return None
    if heuristic >= score:
        return Player.X
    if heuristic <= -score:
        return Player.O
    return None


class ResignWatch:
    """Both sides' streaks of decisive evaluations (see the module docstring)."""

    def __init__(self, settings: ResignAdjudication) -> None:
        self.settings = settings
        self._streaks: dict[Player, tuple[Player | None, int]] = {
            side: (None, 0) for side in Player
        }

    def observe(self, move: RecordedMove) -> Player | None:
        """Count ``move``; the side the game is adjudicated for, or None to play on."""
        favoured = favoured_side(move.evaluation, self.settings.score)
        before, length = self._streaks[move.side]
        if favoured is None:
            self._streaks[move.side] = (None, 0)
        else:
            self._streaks[move.side] = (favoured, length + 1 if favoured is before else 1)
        sides = {streak[0] for streak in self._streaks.values()}
        shortest = min(streak[1] for streak in self._streaks.values())
        if len(sides) == 1 and favoured is not None and shortest >= self.settings.moves:
            return favoured
        return None

    def detail(self, winner: Player) -> str:
        """The reason in words, for ``GameResult.detail``."""
        settings = self.settings
        return (
            f"both bots' evaluations favoured {winner.value} by at least {settings.score:g} "
            f"for {settings.moves} move{'s' if settings.moves != 1 else ''} each"
        )

    def result(self, winner: Player) -> GameResult:
        """The result of a game adjudicated for ``winner``."""
        return GameResult(
            winner=winner,
            reason=ResultReason.WIN,
            cause=EndCause.ADJUDICATION,
            detail=self.detail(winner),
        )


class Adjudicator:
    """Every adjudication rule a game was given (``None``: none; the game plays on).

    >>> Adjudicator(None).observe(RecordedMove(side=Player.O, pieces=[{"q": 1, "r": 0}]))
    """

    def __init__(self, settings: Adjudication | None) -> None:
        resign = None if settings is None else settings.resign
        self._resign = None if resign is None else ResignWatch(resign)

    def observe(self, move: RecordedMove) -> GameResult | None:
        """Count a recorded move; the result when it ends the game, else None."""
        if self._resign is None:
            return None
        winner = self._resign.observe(move)
        return None if winner is None else self._resign.result(winner)
