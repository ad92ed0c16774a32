"""How a game session ends, as values: the result of a finished position, the words a
result keeps, the status it shows, and the actions that end a game.

Pure functions, private to ``game.session.GameSession`` (which decides *when* a game
ends); kept apart so that the session holds the flow of a game and this module the
shape of its end.

>>> result, detail = result_of_outcome(Outcome(Termination.TURN_LIMIT, None), Player.O, 30)
>>> detail, status_of(result).value
('turn limit of 30 moves reached', 'draw')
"""

from __future__ import annotations

from collections.abc import Iterable

from game.rules import Outcome, Termination
from game.session_actions import Action, Broadcast, CloseSeat, GameOver, SendTo
from models import (
    Board,
    EndCause,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    Player,
    ResultReason,
)

__all__ = [
    "aborted",
    "end_actions",
    "end_packet",
    "explained",
    "result_of_outcome",
    "status_of",
]


def status_of(result: GameResult) -> GameStatus:
    """The status a finished game shows.

    >>> status_of(GameResult(winner=Player.X, reason=ResultReason.WIN)).value
    'x_wins'
    """
    if result.winner is None:
        return GameStatus.DRAW
    return GameStatus.X_WINS if result.winner is Player.X else GameStatus.O_WINS


def explained(result: GameResult, detail: str) -> GameResult:
    """``result`` with ``detail`` as its reason in words, when it has a cause to explain
    (a line needs no words; a reason already given is kept).

    >>> explained(aborted(), "stop").detail, explained(aborted("kept"), "stop").detail
    ('stop', 'kept')
    """
    if result.cause is None or result.detail is not None:
        return result
    # Validated again (not model_copy), so the detail is clipped like any other.
    return GameResult.model_validate({**result.model_dump(), "detail": detail})


def aborted(detail: str | None = None) -> GameResult:
    """A draw with cause ``aborted`` (a server stop, an internal error)."""
    return GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.ABORTED, detail=detail)


def result_of_outcome(
    outcome: Outcome, mover: Player, turn_limit: int | None
) -> tuple[GameResult, str]:
    """The result of a position the rules call over after ``mover``'s stone, and the
    line for the log: a line wins for the mover, the turn limit is a draw."""
    if outcome.termination is Termination.LINE:
        result = GameResult(winner=mover, reason=ResultReason.WIN)
        return result, f"{mover.value} made {len(outcome.line)} in a row"
    result = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT)
    return result, f"turn limit of {turn_limit} moves reached"


def end_actions(
    result: GameResult,
    detail: str,
    end: EndPacket,
    listening: Iterable[Player],
    code: int,
    record: GameRecord,
) -> list[Action]:
    """The actions that end a game: ``end`` to each seat that is ``listening`` (a
    connected websocket or human seat) and to the spectators, the seats closed with
    ``code``, then ``GameOver``."""
    listening = list(listening)
    return [
        *(SendTo(side, end) for side in listening),
        Broadcast(end),
        *(CloseSeat(side, code, detail) for side in listening),
        GameOver(result, record, detail),
    ]


def end_packet(result: GameResult, board: Board) -> EndPacket:
    """The ``end`` packet of ``result`` over the final ``board``."""
    return EndPacket(
        winner=result.winner, reason=result.reason, detail=result.end_detail, board=board
    )
