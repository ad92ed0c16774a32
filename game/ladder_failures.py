"""Which bot failed a ladder game (``game.ladder``): pure. The registry counts each
failure towards the bot's backoff (``BotRegistry.record_ladder_results``), so a bot is
blamed only for what it did: forfeiting a game, or not answering as it was created.

>>> from models import ResultReason
>>> failures_of(GameResult(winner=Player.O, reason=ResultReason.FORFEIT,
...                        cause=EndCause.DISCONNECT), Pairing("a", "b"))
{'a': ('disconnect', None), 'b': None}
"""

from __future__ import annotations

from game.ladder_pairing import Pairing
from models import EndCause, GameResult, Player, ResultReason

__all__ = ["failures_of", "seat_of"]


def failures_of(result: GameResult, pair: Pairing) -> dict[str, tuple[str, str | None] | None]:
    """Each bot's part in a finished ladder game: None (it did its part) or the failure
    (the ``EndCause`` value and the result's detail) the registry counts.

    >>> won = GameResult(winner=Player.X, reason=ResultReason.WIN)
    >>> failures_of(won, Pairing("a", "b"))
    {'a': None, 'b': None}
    >>> late = GameResult(winner=Player.X, reason=ResultReason.FORFEIT,
    ...                   cause=EndCause.TIMEOUT, detail="o: out of time")
    >>> failures_of(late, Pairing("a", "b"))
    {'a': None, 'b': ('timeout', 'o: out of time')}
    >>> nobody = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
    >>> failures_of(nobody, Pairing("a", "b"))
    {'a': ('no_show', None), 'b': ('no_show', None)}
    """
    parts: dict[str, tuple[str, str | None] | None] = {pair.x: None, pair.o: None}
    cause = result.cause
    if cause is None or cause in (EndCause.TURN_LIMIT, EndCause.ADJUDICATION, EndCause.RESIGN):
        return parts
    failure = (cause.value, result.detail)
    if result.reason is ResultReason.FORFEIT and result.winner is not None:
        parts[pair.o if result.winner is Player.X else pair.x] = failure
    elif cause is EndCause.NO_SHOW:  # neither came: a draw with a cause
        parts = dict.fromkeys(parts, failure)
    return parts


def seat_of(text: str) -> Player | None:
    """The seat a ``GameManager.create_game`` discovery error names (its message starts
    ``player_x:`` or ``player_o:``): the bot that did not answer.

    >>> seat_of("player_o: http://b/capabilities.json: connection refused")
    <Player.O: 'o'>
    >>> seat_of("the server is full") is None
    True
    """
    if text.startswith("player_x:"):
        return Player.X
    if text.startswith("player_o:"):
        return Player.O
    return None
