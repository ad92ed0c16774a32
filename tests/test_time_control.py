"""Per-seat time controls: ``TimeControl`` (parsing, bounds), one clock per side in
``AnswerTimer``, and a ``GameSession`` whose seats have different clocks. No sockets,
no sleeps: time is passed in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from game import notation
from game.seat_errors import SeatStallError, SeatTimeoutError
from game.session import (
    Broadcast,
    GameOver,
    GameSession,
    RequestStatelessTurn,
    SeatInfo,
    SendTo,
    SessionLimits,
)
from game.session_timing import AnswerTimer
from models import (
    MAX_HOSTED_CLOCK_SECONDS,
    BoardUpdatePacket,
    BwsV1Alpha,
    EndCause,
    GameRecord,
    Match,
    MoveRequestPacket,
    NewGameRequest,
    Player,
    PlayerConfig,
    PlayerType,
    RecordPlayer,
    ResultReason,
    StatelessV1Alpha,
    TimeControl,
    TimeControlError,
)

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides


# ------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10+0.1", TimeControl(clock_type="incremental", clock=10.0, increment=0.1)),
        ("10+0", TimeControl(clock_type="incremental", clock=10.0)),
        ("60", TimeControl(clock_type="match", clock=60.0)),
        ("0.5", TimeControl(clock_type="match", clock=0.5)),
        ("turn=5", TimeControl(clock_type="turn", clock=5.0)),
        (" Turn=.25 ", TimeControl(clock_type="turn", clock=0.25)),
        ("none", TimeControl()),
        ("stall=30", TimeControl(stall_limit=30.0)),
    ],
)
def test_parse_reads_each_spelling(text: str, expected: TimeControl) -> None:
    assert TimeControl.parse(text) == expected


@pytest.mark.parametrize("text", ["10+0.1", "10+0", "60", "0.5", "turn=5", "none", "stall=30"])
def test_text_reads_back_as_the_same_time_control(text: str) -> None:
    control = TimeControl.parse(text)
    assert control.text == text
    assert TimeControl.parse(control.text) == control


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("40/10", "expected 'BASE+INC'"),
        ("", "expected 'BASE+INC'"),
        ("-5", "expected 'BASE+INC'"),
        ("10+", "expected 'BASE+INC'"),
        ("5/move", "expected 'BASE+INC'"),
        ("1e3", "expected 'BASE+INC'"),
        # In the wire contract's words, as every message of the API (wire.errors).
        ("0", "clock: expected more than 0, got 0.0"),
        ("turn=0", "clock: expected more than 0, got 0.0"),
        ("stall=0", "stall_limit: expected more than 0, got 0.0"),
        ("99999999999", "clock: expected at most 2147483.647, got 99999999999.0"),
        ("300+99999999", "increment: expected at most 2147483.647, got 99999999.0"),
    ],
)
def test_parse_refuses_bad_text_in_one_line(text: str, reason: str) -> None:
    with pytest.raises(TimeControlError) as caught:
        TimeControl.parse(text)
    message = str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert message.startswith(f"time control {text!r}: ")
    assert reason in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"clock_type": "turn"}, "clock_type 'turn' needs 'clock'"),
        ({"clock": 5.0}, "'clock' does not apply to clock_type 'none'"),
        ({"clock_type": "match", "clock": 5.0, "increment": 1.0}, "'increment' only applies"),
        ({"clock_type": "turn", "clock": 5.0, "stall_limit": 3.0}, "'stall_limit' only applies"),
        ({"stall_limit": float("inf")}, "finite number"),
    ],
)
def test_a_time_control_is_validated_like_a_match_clock(
    fields: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValidationError, match=problem):
        TimeControl.model_validate(fields)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("10+0.1", Match(clock_type="incremental", clock=10, increment=0.1)),
        ("turn=5", Match(clock_type="turn", clock=5)),
        ("60", Match(clock_type="match", clock=60)),
        ("stall=30", Match()),
    ],
)
def test_a_time_control_gives_the_match_clock_of_a_game_on_it(text: str, match: Match) -> None:
    assert Match.model_validate(TimeControl.parse(text).match_settings()) == match


def seat(time_control: str | None) -> PlayerConfig:
    control = None if time_control is None else TimeControl.parse(time_control)
    return PlayerConfig(type=PlayerType.HUMAN, time_control=control)


def test_a_new_game_holds_each_seats_clock_to_the_hosting_bounds() -> None:
    too_long = f"turn={MAX_HOSTED_CLOCK_SECONDS * 2:g}"
    with pytest.raises(ValidationError) as caught:
        NewGameRequest(player_x=seat("none"), player_o=seat(too_long))
    assert "player_o.time_control.clock: expected at most 86400 on this server" in str(caught.value)
    with pytest.raises(ValidationError, match=r"player_x\.time_control\.increment"):
        NewGameRequest(player_x=seat("60+4000"), player_o=seat(None))


def test_a_new_game_takes_time_controls_from_json() -> None:
    body = {
        "player_x": {"type": "human", "time_control": {"clock_type": "turn", "clock": 5}},
        "player_o": {"type": "human"},
    }
    request = NewGameRequest.model_validate(body)
    assert request.player_x.time_control == TimeControl.parse("turn=5")
    assert request.player_o.time_control is None


# ------------------------------------------------------------- AnswerTimer

INCREMENTAL_X = {X: TimeControl.parse("10+1")}
TURN_O = {O: TimeControl.parse("turn=2")}


def mixed_timer(stall_s: float | None = 300.0) -> AnswerTimer:
    """X: 10 s + 1 s a move; O: 2 s a move; the game's own clock is never used."""
    match = Match(clock_type="match", clock=1000)
    return AnswerTimer(match, stall_s=stall_s, seat_clocks={**INCREMENTAL_X, **TURN_O})


def test_each_side_is_timed_by_its_own_clock() -> None:
    timer = mixed_timer()
    assert timer.snapshot(now=0.0) == {X: 10_000, O: 2_000}
    timer.start(O, now=0.0)
    assert timer.stop(now=1.5) == 1500
    assert timer.snapshot(now=1.5) == {X: 10_000, O: 2_000}  # a turn clock keeps nothing
    timer.start(X, now=1.5)
    assert timer.snapshot(now=4.5) == {X: 7_000, O: 2_000}
    assert timer.stop(now=4.5) == 3000
    assert timer.remaining_ms(X) == 8_000  # 10 - 3 + 1


def test_a_side_without_a_clock_of_its_own_has_the_games() -> None:
    timer = AnswerTimer(Match(clock_type="match", clock=60), stall_s=None, seat_clocks=TURN_O)
    assert timer.snapshot(now=0.0) == {X: 60_000, O: 2_000}
    assert (timer.time_left(X, now=0.0), timer.time_left(O, now=0.0)) == (60.0, 2.0)


def test_each_side_flags_on_its_own_clock() -> None:
    timer = mixed_timer()
    timer.start(O, now=0.0)
    assert timer.deadline() == 2.0
    timer.check(now=1.999)
    with pytest.raises(SeatTimeoutError, match="o ran out of time"):
        timer.check(now=2.0)
    timer.stop(now=1.0)
    timer.start(X, now=1.0)
    assert timer.deadline() == 11.0
    timer.check(now=10.999)
    with pytest.raises(SeatTimeoutError, match="x ran out of time"):
        timer.check(now=11.0)


def test_move_time_limit_is_the_movers_own_time() -> None:
    timer = mixed_timer()
    timer.start(X, now=0.0)
    assert timer.time_left(X, now=4.0) == 6.0
    assert timer.time_left(O, now=4.0) == 2.0


@pytest.mark.parametrize(
    ("server_s", "seat_s", "effective"),
    [(300.0, 30.0, 30.0), (10.0, 30.0, 10.0), (None, 30.0, 30.0), (300.0, None, 300.0)],
)
def test_a_seats_stall_limit_is_the_stricter_of_its_own_and_the_servers(
    server_s: float | None, seat_s: float | None, effective: float
) -> None:
    own = TimeControl(stall_limit=seat_s)
    timer = AnswerTimer(Match(), stall_s=server_s, seat_clocks={O: own})
    assert timer.stall_limit(O) == effective
    assert timer.stall_limit(X) == server_s
    timer.start(O, now=0.0)
    assert timer.deadline() == effective
    with pytest.raises(SeatStallError, match=f"stall limit of {effective:g} s"):
        timer.check(now=effective)


# ---------------------------------------------------------------- a session


def ws_bot(time_control: str | None = None) -> SeatInfo:
    control = None if time_control is None else TimeControl.parse(time_control)
    return SeatInfo("bot_ws", declares=BwsV1Alpha(move_time_limit=True), time_control=control)


def mixed_game(limits: SessionLimits | None = None) -> tuple[GameSession, list[Any]]:
    """X on the game's clock (60 s + 1 s a move), O on 2 s a move."""
    match = Match(clock_type="incremental", clock=60, increment=1)
    seats = {X: ws_bot(), O: ws_bot("turn=2")}
    session = GameSession("g", match, seats, limits=limits, started_at=0.0)
    actions = session.seat_connected(X, now=0.0) + session.seat_connected(O, now=0.0)
    return session, actions


def move(*pieces: tuple[int, int], **evaluation: Any) -> str:
    body: dict[str, Any] = {"pieces": [{"q": q, "r": r} for q, r in pieces]}
    if evaluation:
        body["evaluation"] = evaluation
    return json.dumps({"type": "move_response", "move": body})


def request_to(actions: list[Any], side: Player) -> MoveRequestPacket:
    [request] = [
        a.packet
        for a in actions
        if isinstance(a, SendTo) and a.side is side and isinstance(a.packet, MoveRequestPacket)
    ]
    return request


def test_each_bot_is_told_its_own_move_time_limit_and_both_clocks() -> None:
    session, actions = mixed_game()
    first = request_to(actions, O)
    assert (first.move_time_limit, first.clock_x_ms, first.clock_o_ms) == (2.0, 60_000, 2_000)
    actions = session.receive(O, move((1, 0), (2, 0)), now=1.5)
    second = request_to(actions, X)
    assert (second.move_time_limit, second.clock_x_ms, second.clock_o_ms) == (60.0, 60_000, 2_000)
    [update] = [
        a.packet
        for a in actions
        if isinstance(a, Broadcast) and isinstance(a.packet, BoardUpdatePacket)
    ]
    assert (update.clock_x_ms, update.clock_o_ms) == (60_000, 2_000)
    session.receive(X, move((-1, 0), (-2, 0)), now=11.5)
    setup = session.spectator_setup(now=12.0)
    assert (setup.clock_x_ms, setup.clock_o_ms) == (60_000 - 10_000 + 1_000, 2_000 - 500)
    assert [(m.thinking_ms, m.clock_ms) for m in session.moves] == [(1500, 2000), (10_000, 51_000)]


def test_a_seat_that_overruns_its_own_clock_loses_on_time() -> None:
    session, _ = mixed_game()
    session.receive(O, move((1, 0), (2, 0)), now=1.0)
    session.receive(X, move((-1, 0), (-2, 0)), now=30.0)  # X's clock has time for that
    assert session.result is None
    actions = session.timer(now=32.0)  # O's 2 s are up
    [over] = [a for a in actions if isinstance(a, GameOver)]
    assert (over.result.winner, over.result.reason, over.result.cause) == (
        X,
        ResultReason.FORFEIT,
        EndCause.TIMEOUT,
    )
    assert over.record.player_o.time_control == TimeControl.parse("turn=2")
    assert over.record.player_x.time_control is None


def test_a_stateless_bot_is_given_its_own_clock_as_time_limit() -> None:
    control = TimeControl.parse("turn=3")
    seats = {
        X: ws_bot(),
        O: SeatInfo(
            "bot_stateless", declares=StatelessV1Alpha(move_time_limit=True), time_control=control
        ),
    }
    session = GameSession("g", Match(), seats, started_at=0.0)
    actions = session.seat_connected(X, now=0.0)
    [turn] = [a for a in actions if isinstance(a, RequestStatelessTurn)]
    assert (turn.request.time_limit, turn.time_limit) == (3.0, 3.0)


def test_a_seats_own_stall_limit_ends_its_game_with_stall() -> None:
    match = Match()
    seats = {X: ws_bot(), O: ws_bot("stall=5")}
    session = GameSession("g", match, seats, limits=SessionLimits(stall_s=300), started_at=0.0)
    session.seat_connected(X, now=0.0)
    session.seat_connected(O, now=0.0)
    assert session.next_deadline == 5.0
    [over] = [a for a in session.timer(now=5.0) if isinstance(a, GameOver)]
    assert over.result.cause is EndCause.STALL
    assert over.result.detail == "o forfeits: no answer within the stall limit of 5 s"


# ---------------------------------------------------------------- notation


def test_each_seats_clock_survives_the_notation() -> None:
    record = GameRecord(
        player_x=RecordPlayer(name="a", time_control=TimeControl.parse("10+0.1")),
        player_o=RecordPlayer(name="b", time_control=TimeControl.parse("turn=5")),
        match=Match(clock_type="match", clock=60),
    )
    text = notation.dumps(record)
    assert "timecontrolcross[10+0.1]" in text
    assert "timecontrolcircle[turn=5]" in text
    assert notation.loads(text) == record


def test_an_unreadable_seat_clock_tag_is_kept_as_a_tag() -> None:
    record = notation.loads("version[2]\ntimecontrolcross[40/10];\n1. [1,0] [2,0];")
    assert record.player_x.time_control is None
    assert record.tags == {"timecontrolcross": "40/10"}
