"""What only stateless bots do in a game: a turn's failed tries, and the flag that says
the bot was not reached (``game.session_stateless``). ``GameSession`` fed events, no
sockets, no sleeps."""

from __future__ import annotations

from collections.abc import Sequence

from game.session import (
    Action,
    GameOver,
    GameSession,
    RequestStatelessTurn,
    SeatInfo,
    SendTo,
    SessionLimits,
)
from models import (
    BwsV1Alpha,
    Coord,
    EndCause,
    EndPacket,
    Match,
    MoveAnswer,
    Player,
    StatelessMoveResponse,
    StatelessV1Alpha,
)

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides
FIVE_SECONDS = Match(clock_type="turn", clock=5, heartbeat=600_000)  # no heartbeats in the way
GATEWAY = "http://bot.example/stateless/v1-alpha/turn: HTTP 503 (expected 200 with a move)"
X_MOVE = '{"type": "move_response", "move": {"pieces": [{"q": -1, "r": 0}, {"q": -2, "r": 0}]}}'
NOT_REACHED = (
    "; its bot was not reached (2 failed tries, the last: ConnectionError: "
    f"{GATEWAY}: 'restarting')"
)


def started(match: Match = FIVE_SECONDS, limits: SessionLimits | None = None) -> GameSession:
    """X a websocket bot (connected: it hears the end), O a stateless bot, whose turn it
    is from t = 0."""
    seats = {
        X: SeatInfo("bot_ws", declares=BwsV1Alpha()),
        O: SeatInfo("bot_stateless", declares=StatelessV1Alpha()),
    }
    session = GameSession("g", match, seats, limits=limits, started_at=0.0)
    actions = session.seat_connected(X, now=0.0)
    assert [a.side for a in actions if isinstance(a, RequestStatelessTurn)] == [O]
    return session


def fail_twice(session: GameSession, side: Player = O) -> None:
    """Two tries of the turn of ``side`` fail, as a gateway answers while the bot
    behind it restarts; each is made again."""
    for now, why in [(0.1, "'busy'"), (0.3, "'restarting'")]:
        error = ConnectionError(f"{GATEWAY}: {why}")
        assert session.stateless_try_failed(side, error, now=now) == []


def game_over(actions: Sequence[Action]) -> GameOver:
    [over] = [a for a in actions if isinstance(a, GameOver)]
    return over


def end_to(actions: Sequence[Action], side: Player) -> EndPacket:
    [end] = [
        a.packet
        for a in actions
        if isinstance(a, SendTo) and a.side is side and isinstance(a.packet, EndPacket)
    ]
    return end


def stateless_move(*pieces: tuple[int, int]) -> StatelessMoveResponse:
    return StatelessMoveResponse(move=MoveAnswer(pieces=[Coord(q=q, r=r) for q, r in pieces]))


def test_a_stateless_bot_that_flags_while_its_tries_fail_was_not_reached() -> None:
    session = started()
    fail_twice(session)
    actions = session.timer(now=5.0)

    over = game_over(actions)
    assert (over.result.winner, over.result.cause) == (X, EndCause.TIMEOUT)  # the cause kept
    assert over.result.detail == f"o forfeits: o ran out of time{NOT_REACHED}"
    assert over.detail == over.result.detail  # the log's
    assert over.record.result == over.result
    assert end_to(actions, X).detail == f"timeout: {over.result.detail}"


def test_a_stateless_bot_that_stalls_while_its_tries_fail_was_not_reached() -> None:
    session = started(Match(heartbeat=600_000), SessionLimits(stall_s=30.0))
    fail_twice(session)
    over = game_over(session.timer(now=30.0))
    assert over.result.cause is EndCause.STALL
    assert over.result.detail == (
        f"o forfeits: no answer within the stall limit of 30 s{NOT_REACHED}"
    )


def test_a_stateless_bot_that_flags_with_no_failed_try_only_ran_out_of_time() -> None:
    session = started()
    over = game_over(session.timer(now=5.0))
    assert over.result.detail == "o forfeits: o ran out of time"


def test_a_stateless_answer_after_the_flag_was_a_late_answer_not_an_unreached_bot() -> None:
    session = started()
    fail_twice(session)
    over = game_over(session.stateless_answer(O, stateless_move((1, 0), (2, 0)), now=5.5))
    assert over.result.cause is EndCause.TIMEOUT
    assert over.result.detail == "o forfeits: o ran out of time"


def test_a_turns_failed_tries_are_forgotten_when_the_next_turn_begins() -> None:
    session = started()
    fail_twice(session)
    session.stateless_answer(O, stateless_move((1, 0), (2, 0)), now=1.0)
    session.receive(X, X_MOVE, now=2.0)
    assert session.awaiting is O
    over = game_over(session.timer(now=7.0))  # O's second turn: no try of it failed
    assert over.result.detail == "o forfeits: o ran out of time"


def test_a_try_that_fails_for_good_ends_the_seat_with_its_own_cause() -> None:
    session = started()
    fail_twice(session)
    error = ConnectionError(f"{GATEWAY}: 'gone' (3 tries)")
    over = game_over(session.stateless_answer(O, error, now=1.0))
    assert over.result.cause is EndCause.DISCONNECT
    assert "not reached" not in (over.result.detail or "")


def test_a_failed_try_reported_of_a_socket_bots_seat_is_ignored() -> None:
    session = started()
    session.stateless_answer(O, stateless_move((1, 0), (2, 0)), now=1.0)  # X to move
    assert session.stateless_try_failed(X, ConnectionError("refused"), now=1.5) == []
    over = game_over(session.timer(now=6.0))
    assert over.result.detail == "x forfeits: x ran out of time"
