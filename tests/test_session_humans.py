"""What only people do in a game: resign, and hear of the opponent's drop and return
(``game.session_humans``). ``GameSession`` fed events, no sockets, no sleeps."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel

from game import notation
from game.session import (
    Action,
    CloseSeat,
    GameOver,
    GameSession,
    RecordMove,
    SeatInfo,
    SendTo,
    SessionLimits,
)
from models import (
    EndCause,
    EndPacket,
    Match,
    MoveRequestPacket,
    NopePacket,
    OpponentStatusPacket,
    Player,
    ResultReason,
    SetupPacket,
)

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides
T = TypeVar("T", bound=BaseModel)
RESIGN = '{"type": "resign"}'
QUIET = Match(heartbeat=600_000)  # no heartbeats in the way


def human(name: str) -> SeatInfo:
    return SeatInfo("human", name=name, send_board=True)


def bot() -> SeatInfo:
    return SeatInfo("bot_ws", name="bot")


def started(
    x: SeatInfo, o: SeatInfo, limits: SessionLimits | None = None, match: Match = QUIET
) -> GameSession:
    session = GameSession("g", match, {X: x, O: o}, limits=limits, started_at=0.0)
    session.seat_connected(X, now=0.0)
    session.seat_connected(O, now=0.0)
    return session


def to(actions: Sequence[Action], side: Player, kind: type[T]) -> list[T]:
    return [
        a.packet
        for a in actions
        if isinstance(a, SendTo) and a.side is side and isinstance(a.packet, kind)
    ]


def game_over(actions: Sequence[Action]) -> GameOver:
    [over] = [a for a in actions if isinstance(a, GameOver)]
    return over


def answer(*pieces: tuple[int, int]) -> str:
    return json.dumps(
        {"type": "move_response", "move": {"pieces": [{"q": q, "r": r} for q, r in pieces]}}
    )


# --------------------------------------------------------------------- resign


def test_a_person_who_resigns_loses_by_forfeit_with_cause_resign() -> None:
    session = started(human("ann"), human("bo"))
    actions = session.receive(X, RESIGN, now=3.0)
    over = game_over(actions)
    assert (over.result.winner, over.result.reason, over.result.cause) == (
        O,
        ResultReason.FORFEIT,
        EndCause.RESIGN,
    )
    assert over.result.detail == "x resigned"
    # Both seats get the end (the resigner gets no nope) and are closed normally.
    for side in (X, O):
        [end] = to(actions, side, EndPacket)
        assert (end.winner, end.cause) == (O, EndCause.RESIGN)
    assert to(actions, X, NopePacket) == []
    assert sorted(a.side.value for a in actions if isinstance(a, CloseSeat)) == ["o", "x"]


def test_a_person_may_resign_when_it_is_not_their_turn() -> None:
    session = started(human("ann"), human("bo"))
    assert session.awaiting is O
    over = game_over(session.receive(X, RESIGN, now=1.0))
    assert over.result.winner is O


def test_a_person_may_resign_against_a_bot_and_the_record_keeps_the_moves() -> None:
    session = started(bot(), human("bo"))
    session.receive(O, answer((1, 1), (2, 1)), now=1.0)
    session.receive(X, answer((-1, -1), (-2, -1)), now=2.0)
    over = game_over(session.receive(O, RESIGN, now=3.0))
    assert over.result.winner is X and over.result.cause is EndCause.RESIGN
    assert len(over.record.moves) == 2
    assert over.record.result == over.result


def test_the_notation_of_a_resigned_game_says_resign() -> None:
    session = started(human("ann"), human("bo"))
    session.receive(O, answer((1, 1), (2, 1)), now=1.0)
    over = game_over(session.receive(O, RESIGN, now=2.0))
    text = notation.dumps(over.record)
    assert "endreason[resign]" in text
    assert notation.loads(text).result == over.result.model_copy(update={"detail": None})


def test_a_first_stone_everyone_saw_is_the_records_last_move_when_the_person_resigns() -> None:
    session = started(bot(), human("bo"), match=Match(clock_type="match", clock=60))
    session.receive(O, answer((1, 1)), now=1.0)  # shown to everyone at once
    actions = session.receive(O, RESIGN, now=4.0)
    over = game_over(actions)
    [end] = to(actions, X, EndPacket)
    [lone] = over.record.moves
    assert [(p.q, p.r) for p in lone.pieces] == [(1, 1)] and lone.side is O
    assert (lone.thinking_ms, lone.clock_ms) == (4000, 56_000)
    assert end.board is not None
    assert {(c.q, c.r) for c in end.board.cells} == {(0, 0), (1, 1)}  # the same board
    # Its notation is the upstream v2 example of a resignation after one stone.
    text = notation.dumps(over.record)
    assert text.endswith("1. [1,1] [/] {@56000};\n") and "endreason[resign]" in text
    [read] = notation.loads(text).moves
    assert (read.side, read.pieces, read.clock_ms) == (O, lone.pieces, 56_000)
    # The store gets it before the end, as every move.
    [index] = [a.index for a in actions if isinstance(a, RecordMove)]
    assert index == 0 and actions.index(next(a for a in actions if isinstance(a, RecordMove))) < (
        actions.index(next(a for a in actions if isinstance(a, GameOver)))
    )


def test_a_first_stone_stays_in_the_record_when_the_second_is_illegal() -> None:
    session = started(human("ann"), human("bo"))
    session.receive(O, answer((1, 1)), now=1.0)
    over = game_over(session.receive(O, answer((0, 0)), now=2.0))  # taken
    assert over.result.cause is EndCause.ILLEGAL_MOVE
    assert [[(p.q, p.r) for p in m.pieces] for m in over.record.moves] == [[(1, 1)]]


def test_resign_from_a_bot_is_a_protocol_error() -> None:
    session = started(bot(), human("bo"))
    actions = session.receive(X, RESIGN, now=1.0)
    over = game_over(actions)
    assert (over.result.winner, over.result.cause) == (O, EndCause.PROTOCOL_ERROR)
    [nope] = to(actions, X, NopePacket)
    assert "resign" in nope.reason


def test_resign_after_the_end_changes_nothing() -> None:
    session = started(human("ann"), human("bo"))
    session.receive(X, RESIGN, now=1.0)
    assert session.receive(O, RESIGN, now=2.0) == []
    assert session.result is not None and session.result.winner is O


# ------------------------------------------------------------ opponent_status


def test_the_opponent_hears_when_a_person_drops_with_the_window_left() -> None:
    session = started(human("ann"), human("bo"), SessionLimits(reconnect_s=60.0))
    actions = session.seat_disconnected(O, now=10.0)
    assert to(actions, X, OpponentStatusPacket) == [
        OpponentStatusPacket(side=O, connected=False, reconnect_by_ms=60_000)
    ]
    assert session.result is None


def test_the_opponent_hears_when_the_person_is_back() -> None:
    session = started(human("ann"), human("bo"), SessionLimits(reconnect_s=60.0))
    session.seat_disconnected(O, now=10.0)
    actions = session.seat_connected(O, now=25.5)
    assert to(actions, X, OpponentStatusPacket) == [OpponentStatusPacket(side=O, connected=True)]
    # The one who came back gets its position and its pending request, not a status.
    assert len(to(actions, O, SetupPacket)) == 1
    assert len(to(actions, O, MoveRequestPacket)) == 1
    assert to(actions, O, OpponentStatusPacket) == []


def test_a_person_back_while_the_opponent_is_away_hears_of_it() -> None:
    session = started(human("ann"), human("bo"), SessionLimits(reconnect_s=60.0))
    session.seat_disconnected(X, now=10.0)
    session.seat_disconnected(O, now=20.0)  # X is away: nobody to tell
    actions = session.seat_connected(O, now=30.0)
    assert to(actions, O, OpponentStatusPacket) == [
        OpponentStatusPacket(side=X, connected=False, reconnect_by_ms=40_000)
    ]


def test_the_opponent_still_wins_when_the_window_lapses() -> None:
    session = started(human("ann"), human("bo"), SessionLimits(reconnect_s=60.0))
    session.seat_disconnected(O, now=10.0)
    over = game_over(session.timer(now=70.0))
    assert (over.result.winner, over.result.cause) == (X, EndCause.DISCONNECT)


def test_a_bot_never_hears_of_a_person_dropping() -> None:
    session = started(bot(), human("bo"), SessionLimits(reconnect_s=60.0))
    assert session.seat_disconnected(O, now=10.0) == []
    actions = session.seat_connected(O, now=20.0)
    assert to(actions, X, OpponentStatusPacket) == []


def test_a_person_does_not_hear_of_a_bot_at_all() -> None:
    session = started(human("ann"), bot())
    actions = session.seat_disconnected(O, now=10.0)  # a bot's drop is its forfeit
    assert to(actions, X, OpponentStatusPacket) == []
    assert game_over(actions).result.cause is EndCause.DISCONNECT
