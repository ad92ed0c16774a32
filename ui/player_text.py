"""The texts the desktop client shows about players and games: names, a bot's details,
how a game ended, an evaluation, a clock. Pure functions (no Qt), tested on their own;
``ui.player_panel`` shows them, ``ui.game_session`` words the end of a game with them.
"""

from __future__ import annotations

from models import (
    EndCause,
    GameResult,
    Player,
    PlayerType,
    PositionEvaluation,
    RecordPlayer,
    ResultReason,
)

__all__ = [
    "describe_evaluation",
    "describe_result",
    "describe_verdict",
    "evaluation_share",
    "format_clock",
    "player_details",
    "player_name",
]

_CAUSES: dict[EndCause, str] = {
    EndCause.TIMEOUT: "ran out of time",
    EndCause.ILLEGAL_MOVE: "made an illegal move",
    EndCause.PROTOCOL_ERROR: "broke the protocol",
    EndCause.DISCONNECT: "disconnected",
    EndCause.NO_SHOW: "never connected",
    EndCause.STALL: "stopped answering",
    EndCause.RESIGN: "resigned",
    EndCause.ABORTED: "the game was aborted",
    EndCause.TURN_LIMIT: "the turn limit was reached",
    EndCause.ADJUDICATION: "both bots agreed on the winner",
}


def format_clock(ms: int | None) -> str:
    """Remaining time as ``m:ss.d`` (``h:mm:ss`` from an hour up); "—" without a clock.

    >>> format_clock(83_450), format_clock(3_725_000), format_clock(-5), format_clock(None)
    ('1:23.4', '1:02:05', '0:00.0', '—')
    """
    if ms is None:
        return "\u2014"
    ms = max(ms, 0)
    if ms >= 3_600_000:
        seconds = ms // 1000
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    tenths = ms // 100
    return f"{tenths // 600}:{tenths // 10 % 60:02d}.{tenths % 10}"


def player_name(player: RecordPlayer, side: str) -> str:
    """The name to show: the given name, else the bot's own name, else "Human"/"Bot"."""
    if player.name:
        return player.name
    if player.meta is not None and player.meta.name:
        return player.meta.name
    if player.type is PlayerType.HUMAN:
        return "Human"
    if player.type is PlayerType.BOT:
        return "Bot"
    return f"Player {side.upper()}"


def player_details(player: RecordPlayer) -> str:
    """Second line of a card: "Human", or "Bot · v1.2 · tactical, fast" (the bot's own
    name too when the seat was given another).

    >>> from models import Meta
    >>> player_details(RecordPlayer(name="Mine", type=PlayerType.BOT,
    ...                             meta=Meta(name="threat", version="1.2", tags=["fast"])))
    'Bot · threat · v1.2 · fast'
    """
    if player.type is PlayerType.HUMAN:
        return "Human"
    if player.type is None and player.meta is None:
        return ""
    parts = ["Bot"]
    meta = player.meta
    if meta is not None:
        if meta.name and player.name and meta.name != player.name:
            parts.append(meta.name)
        if meta.version:
            parts.append(f"v{meta.version}" if meta.version[:1].isdigit() else meta.version)
        if meta.tags:
            parts.append(", ".join(meta.tags))
    return " \u00b7 ".join(parts)


def describe_result(result: GameResult, player_x: RecordPlayer, player_o: RecordPlayer) -> str:
    """One sentence about how the game ended, naming the players.

    >>> describe_result(GameResult(winner=Player.X, reason=ResultReason.WIN),
    ...                 RecordPlayer(name="Ann"), RecordPlayer(name="Bob"))
    'Ann (X) wins with a line.'
    """
    names = {"x": player_name(player_x, "x"), "o": player_name(player_o, "o")}
    if result.reason is ResultReason.DRAW:
        if result.cause is EndCause.TURN_LIMIT:
            return "Draw: the turn limit was reached."
        if result.cause is EndCause.ABORTED:
            return "The game was aborted (the server stopped it)."
        return "Draw."
    assert result.winner is not None  # GameResult guarantees it for wins and forfeits
    winner = result.winner.value
    loser = Player(winner).other.value
    won = f"{names[winner]} ({winner.upper()}) wins"
    if result.reason is ResultReason.WIN:
        if result.cause is EndCause.ADJUDICATION:  # the bots' evaluations, not a line
            return f"{won} by adjudication: {_CAUSES[EndCause.ADJUDICATION]}."
        return f"{won} with a line."
    cause = _CAUSES.get(result.cause, "forfeited") if result.cause else "forfeited"
    if result.cause is EndCause.ABORTED:
        return f"{won}: {cause}."
    return f"{won}: {names[loser]} ({loser.upper()}) {cause}."


def describe_verdict(result: GameResult) -> str:
    """A few words on how the game came out, for the evaluation bar: who won, a draw,
    or an aborted game (no winner, and no draw either: the game was stopped).

    >>> describe_verdict(GameResult(winner=Player.O, reason=ResultReason.FORFEIT,
    ...                             cause=EndCause.TIMEOUT))
    'O won'
    >>> describe_verdict(GameResult(winner=None, reason=ResultReason.DRAW))
    'Draw'
    >>> describe_verdict(GameResult(winner=None, reason=ResultReason.DRAW,
    ...                             cause=EndCause.ABORTED))
    'Aborted'
    """
    if result.winner is not None:
        return f"{result.winner.value.upper()} won"
    return "Aborted" if result.cause is EndCause.ABORTED else "Draw"


def describe_evaluation(evaluation: PositionEvaluation) -> str:
    """The evaluation bar's caption: "X wins in 2", "+0.35 (X better)", "even"."""
    if evaluation.win_in is not None and evaluation.win_in != 0:
        side = "X" if evaluation.win_in > 0 else "O"
        return f"{side} wins in {abs(evaluation.win_in)}"
    value = evaluation.heuristic or 0.0
    if abs(value) < 0.005:
        return "Even"
    return f"{value:+.2f} ({'X' if value > 0 else 'O'} better)"


def evaluation_share(evaluation: PositionEvaluation) -> float:
    """X's share of the bar in [0, 1]: 0.5 even, 1 a forced win for X."""
    if evaluation.win_in is not None and evaluation.win_in != 0:
        return 1.0 if evaluation.win_in > 0 else 0.0
    value = max(-1.0, min(1.0, evaluation.heuristic or 0.0))
    return 0.5 + value / 2
