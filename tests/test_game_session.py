"""The server side of a game: ``GameSession`` fed events, no sockets, no sleeps."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from game import notation
from game.rules import Position, Termination
from game.session import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    Action,
    Broadcast,
    CloseSeat,
    DialFailure,
    GameOver,
    GameSession,
    RecordMove,
    RequestStatelessTurn,
    SeatInfo,
    SeatKind,
    SendTo,
    SessionLimits,
    SessionLimitsError,
)
from models import (
    MATCH_CONFIG_KEY,
    Board,
    BoardUpdatePacket,
    BwsConfigCapability,
    BwsV1Alpha,
    ClockType,
    ConfigPacket,
    Coord,
    EndCause,
    EndPacket,
    GameResult,
    GameStatus,
    HeartbeatPacket,
    Match,
    Meta,
    Move,
    MoveAnswer,
    MoveRequestPacket,
    NopePacket,
    Player,
    PositionEvaluation,
    ProtocolError,
    ResultReason,
    SetupPacket,
    StatelessMove,
    StatelessMoveResponse,
    StatelessV1Alpha,
    TimeControl,
    dump_packet,
)

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides
Hex = tuple[int, int]
T = TypeVar("T", bound=BaseModel)

# O builds a line on r = 1, X plays on r = -1: O wins with its third move.
O_LINE: list[tuple[Hex, Hex]] = [((1, 1), (2, 1)), ((3, 1), (4, 1)), ((5, 1), (6, 1))]
X_MOVES: list[tuple[Hex, Hex]] = [((-1, -1), (-2, -1)), ((-3, -1), (-4, -1))]

# ------------------------------------------------------------------- helpers


def bot(send_board: bool = False, **declares: Any) -> SeatInfo:
    return SeatInfo("bot_ws", declares=BwsV1Alpha(**declares), send_board=send_board)


def human() -> SeatInfo:
    # As GameManager seats a human by default: its requests carry the board.
    return SeatInfo("human", send_board=True)


def stateless(move_time_limit: bool = False) -> SeatInfo:
    return SeatInfo("bot_stateless", declares=StatelessV1Alpha(move_time_limit=move_time_limit))


def new_game(
    x: SeatInfo | None = None,
    o: SeatInfo | None = None,
    match: Match | None = None,
    limits: SessionLimits | None = None,
) -> GameSession:
    seats = {X: x or bot(), O: o or bot()}
    return GameSession("g", match or Match(), seats, limits=limits, started_at=0.0)


def started(
    x: SeatInfo | None = None,
    o: SeatInfo | None = None,
    match: Match | None = None,
    limits: SessionLimits | None = None,
) -> tuple[GameSession, list[Action]]:
    """A game whose seats both connected at t = 0: O has its first request."""
    session = new_game(x, o, match, limits)
    actions = session.seat_connected(X, now=0.0) + session.seat_connected(O, now=0.0)
    return session, actions


def answer(*pieces: Hex, evaluation: dict[str, Any] | None = None, **extra: Any) -> str:
    move: dict[str, Any] = {"pieces": [{"q": q, "r": r} for q, r in pieces]}
    if evaluation is not None:
        move["evaluation"] = evaluation
    return json.dumps({"type": "move_response", "move": move, **extra})


def to(actions: Sequence[Action], side: Player, kind: type[T]) -> list[T]:
    """The packets of type ``kind`` sent to ``side``."""
    return [
        a.packet
        for a in actions
        if isinstance(a, SendTo) and a.side is side and isinstance(a.packet, kind)
    ]


def broadcast(actions: Sequence[Action], kind: type[T]) -> list[T]:
    return [a.packet for a in actions if isinstance(a, Broadcast) and isinstance(a.packet, kind)]


def request_to(actions: Sequence[Action], side: Player) -> MoveRequestPacket:
    [request] = to(actions, side, MoveRequestPacket)
    return request


def game_over(actions: Sequence[Action]) -> GameOver:
    [over] = [a for a in actions if isinstance(a, GameOver)]
    return over


def moves_of(packet: MoveRequestPacket) -> list[tuple[str, list[Hex]]]:
    return [(m.side.value, [p.as_tuple() for p in m.pieces]) for m in packet.previous]


def cells_of(board: Board | None) -> list[tuple[int, int, str]]:
    assert board is not None
    return [(c.q, c.r, c.p.value) for c in board.cells]


def stateless_move(*pieces: Hex) -> StatelessMoveResponse:
    return StatelessMoveResponse(move=MoveAnswer(pieces=[Coord(q=q, r=r) for q, r in pieces]))


def play(session: GameSession, side: Player, move: tuple[Hex, Hex], now: float) -> list[Action]:
    return session.receive(side, answer(*move), now=now)


def forfeit(actions: Sequence[Action], loser: Player, cause: EndCause) -> GameOver:
    over = game_over(actions)
    assert over.result.winner is loser.other
    assert over.result.reason is ResultReason.FORFEIT
    assert over.result.cause is cause
    return over


# --------------------------------------------------------------------- start


def test_nothing_is_sent_until_both_seats_are_connected() -> None:
    session = new_game()
    assert session.seat_connected(X, now=0.0) == []
    assert session.status is GameStatus.WAITING


def test_game_starts_with_setup_to_each_seat_then_o_move_request() -> None:
    session, actions = started()
    assert [(a.side, type(a.packet)) for a in actions if isinstance(a, SendTo)] == [
        (X, SetupPacket),
        (O, SetupPacket),
        (O, MoveRequestPacket),
    ]
    assert to(actions, X, SetupPacket)[0].board == Board.standard()
    assert session.status is GameStatus.IN_PROGRESS
    assert session.awaiting is O


def test_config_goes_before_setup_only_to_a_bot_that_declares_it() -> None:
    config = ConfigPacket(depth=3)
    declaring = SeatInfo("bot_ws", declares=BwsV1Alpha(config=BwsConfigCapability()), config=config)
    silent = SeatInfo("bot_ws", declares=BwsV1Alpha(), config=config)
    _, actions = started(x=declaring, o=silent)
    assert [type(a.packet) for a in actions if isinstance(a, SendTo) and a.side is X] == [
        ConfigPacket,
        SetupPacket,
    ]
    assert to(actions, O, ConfigPacket) == []


def test_a_bot_that_reads_match_settings_gets_them_in_its_config() -> None:
    reads_match = BwsConfigCapability.model_validate({MATCH_CONFIG_KEY: True})
    match = Match(view_distance=3, win_distance=4, turn_limit=30)
    seat = SeatInfo("bot_ws", declares=BwsV1Alpha(config=reads_match), config=ConfigPacket(depth=2))
    _, actions = started(x=seat, o=bot(config=reads_match), match=match)
    [to_x] = to(actions, X, ConfigPacket)
    assert to_x.depth == 2  # the seat's own settings are kept
    for packet in (to_x, *to(actions, O, ConfigPacket)):
        assert Match.model_validate(packet.extensions()[MATCH_CONFIG_KEY]) == match


def test_match_settings_go_only_to_bots_that_say_they_read_them() -> None:
    plain_config = bot(config=BwsConfigCapability())
    _, actions = started(x=plain_config, match=Match(view_distance=3))
    assert to(actions, X, ConfigPacket) == []  # no seat settings, no x-match: no packet


def test_stateless_bots_start_at_the_first_timer_call() -> None:
    session = new_game(stateless(), stateless())
    assert session.next_deadline == 0.0
    [turn, _begun] = session.timer(now=0.0)
    assert isinstance(turn, RequestStatelessTurn)
    assert turn.side is O
    assert turn.request.board.to_move is O


# ------------------------------------------------------------ move requests


def test_first_move_request_has_empty_previous_and_no_board() -> None:
    _, actions = started()
    request = request_to(actions, O)
    assert request.side is O
    assert request.previous == []
    # A spec bot gets previous only: the field is left off the wire, not null.
    assert request.board is None
    assert b'"board"' not in dump_packet(request)


def test_previous_holds_own_last_move_then_the_opponents() -> None:
    session, _ = started()
    actions = play(session, O, O_LINE[0], now=1.0)
    assert moves_of(request_to(actions, X)) == [("o", [(1, 1), (2, 1)])]
    actions = play(session, X, X_MOVES[0], now=2.0)
    request = request_to(actions, O)
    assert moves_of(request) == [("o", [(1, 1), (2, 1)]), ("x", [(-1, -1), (-2, -1)])]
    assert request.board is None


def test_a_seat_with_send_board_gets_the_full_board_besides_previous() -> None:
    session, actions = started(x=bot(send_board=True), o=bot(send_board=True))
    assert cells_of(request_to(actions, O).board) == [(0, 0, "x")]
    play(session, O, O_LINE[0], now=1.0)
    actions = play(session, X, X_MOVES[0], now=2.0)
    request = request_to(actions, O)
    assert moves_of(request) == [("o", [(1, 1), (2, 1)]), ("x", [(-1, -1), (-2, -1)])]
    assert cells_of(request.board) == [
        (0, 0, "x"),
        (1, 1, "o"),
        (2, 1, "o"),
        (-1, -1, "x"),
        (-2, -1, "x"),
    ]


def test_move_time_limit_goes_only_to_bots_that_declare_it() -> None:
    match = Match(clock_type="match", clock=60)
    session, actions = started(x=bot(), o=bot(move_time_limit=True), match=match)
    assert request_to(actions, O).move_time_limit == 60.0
    actions = play(session, O, O_LINE[0], now=10.0)
    assert request_to(actions, X).move_time_limit is None


def test_a_clockless_games_request_tells_a_declaring_bot_the_stall_limit() -> None:
    # No clock, but the stall limit (300 s by default) is enforced: the bot is told it.
    session, actions = started(x=bot(move_time_limit=True), o=bot(move_time_limit=True))
    assert request_to(actions, O).move_time_limit == 300.0
    actions = play(session, O, O_LINE[0], now=10.0)
    assert request_to(actions, X).move_time_limit == 300.0  # X's own wait, from now


def test_a_clockless_games_request_tells_the_seats_own_stricter_stall_limit() -> None:
    strict = TimeControl.parse("stall=30")
    o = SeatInfo("bot_ws", declares=BwsV1Alpha(move_time_limit=True), time_control=strict)
    session, actions = started(x=bot(move_time_limit=True), o=o)
    assert request_to(actions, O).move_time_limit == 30.0
    actions = play(session, O, O_LINE[0], now=10.0)
    assert request_to(actions, X).move_time_limit == 300.0  # the server's, for X


def test_a_clockless_games_stall_limit_is_not_sent_to_a_bot_that_does_not_declare_it() -> None:
    _, actions = started(o=bot())
    assert request_to(actions, O).move_time_limit is None


def test_move_time_limit_is_absent_only_when_nothing_bounds_the_answer() -> None:
    _, actions = started(o=bot(move_time_limit=True), limits=SessionLimits(stall_s=None))
    assert request_to(actions, O).move_time_limit is None


# ------------------------------------------------------------------ a game


def test_scripted_bot_game_ends_in_a_win_for_the_line() -> None:
    session, _ = started()
    actions: list[Action] = []
    now = 0.0
    for o_move, x_move in zip(O_LINE, [*X_MOVES, None], strict=True):
        now += 1.0
        actions += play(session, O, o_move, now)
        if x_move is not None:
            now += 1.0
            actions += play(session, X, x_move, now)
    over = game_over(actions)
    assert over.result.winner is O
    assert over.result.reason is ResultReason.WIN
    assert over.record.result == over.result
    assert [m.side for m in over.record.moves] == [O, X, O, X, O]
    assert [a.index for a in actions if isinstance(a, RecordMove)] == [0, 1, 2, 3, 4]
    [end_x] = to(actions, X, EndPacket)
    assert end_x == to(actions, O, EndPacket)[0] == broadcast(actions, EndPacket)[0]
    assert (end_x.winner, end_x.reason, end_x.detail) == (O, ResultReason.WIN, None)
    assert len(cells_of(end_x.board)) == 11
    closes = [a for a in actions if isinstance(a, CloseSeat)]
    assert {(c.side, c.code) for c in closes} == {(X, CLOSE_NORMAL), (O, CLOSE_NORMAL)}
    assert session.next_deadline is None


def test_winning_first_stone_ends_the_game_and_the_second_is_ignored() -> None:
    session, _ = started(match=Match(win_distance=3))
    play(session, O, ((1, 1), (2, 1)), now=1.0)
    play(session, X, ((-1, -1), (-2, -1)), now=2.0)
    actions = session.receive(O, answer((3, 1), (0, 0)), now=3.0)  # (0, 0) is taken
    over = game_over(actions)
    assert over.result.winner is O
    assert over.record.moves[-1].pieces == [Coord(q=3, r=1)]
    [update] = broadcast(actions, BoardUpdatePacket)
    assert update.to_move is None
    assert update.status is GameStatus.O_WINS


def test_a_bot_may_answer_a_winning_first_stone_alone() -> None:
    session, _ = started(match=Match(win_distance=3))
    play(session, O, ((1, 1), (2, 1)), now=1.0)
    play(session, X, ((-1, -1), (-2, -1)), now=2.0)
    actions = session.receive(O, answer((3, 1)), now=3.0)
    over = game_over(actions)
    assert (over.result.winner, over.result.reason) == (O, ResultReason.WIN)
    assert over.record.moves[-1].pieces == [Coord(q=3, r=1)]
    assert notation.dumps(over.record).splitlines()[-1] == "3. [3,1] [/];"
    assert to(actions, O, NopePacket) == []


def test_a_stateless_bot_may_answer_a_winning_first_stone_alone() -> None:
    session = new_game(stateless(), stateless(), Match(win_distance=3))
    session.timer(now=0.0)
    session.stateless_answer(O, stateless_move((1, 1), (2, 1)), now=1.0)
    session.stateless_answer(X, stateless_move((-1, -1), (-2, -1)), now=2.0)
    over = game_over(session.stateless_answer(O, stateless_move((3, 1)), now=3.0))
    assert (over.result.winner, over.result.reason) == (O, ResultReason.WIN)
    assert over.record.moves[-1].pieces == [Coord(q=3, r=1)]


def test_a_bot_that_writes_its_integers_as_floats_plays_on() -> None:
    session, _ = started()
    pieces = '[{"q": 1.0, "r": 1.0}, {"q": 2e0, "r": 1}]'
    actions = session.receive(
        O, f'{{"type": "move_response", "move": {{"pieces": {pieces}}}}}', 1.0
    )
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert [p.as_tuple() for p in record.move.pieces] == [(1, 1), (2, 1)]
    assert session.awaiting is X and not session.over


def test_a_bots_lone_stone_that_does_not_win_is_a_protocol_error() -> None:
    session, _ = started()
    actions = session.receive(O, answer((1, 1)), now=1.0)
    over = forfeit(actions, O, EndCause.PROTOCOL_ERROR)
    [nope] = to(actions, O, NopePacket)
    assert nope.reason == (
        "move_response with 1 piece ([1,1]) that does not win: a move has 2 pieces, "
        "or 1 only when that stone wins"
    )
    assert over.record.moves == []
    assert cells_of(to(actions, X, EndPacket)[0].board) == [(0, 0, "x")]  # taken back


def test_a_stateless_bots_lone_stone_that_does_not_win_is_a_protocol_error() -> None:
    session = new_game(stateless(), stateless())
    session.timer(now=0.0)
    over = forfeit(
        session.stateless_answer(O, stateless_move((1, 1)), now=1.0), O, EndCause.PROTOCOL_ERROR
    )
    assert "the stateless response with 1 piece ([1,1]) that does not win" in over.detail


def test_each_move_is_recorded_as_played_with_evaluation_and_considerations() -> None:
    session, _ = started()
    considered = [{"pieces": [{"q": 3, "r": 3}, {"q": 4, "r": 4}]}]
    frame = answer((1, 1), (2, 1), evaluation={"heuristic": -0.25}, considerations=considered)
    actions = session.receive(O, frame, now=1.5)
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert record.index == 0
    assert record.move.pieces == [Coord(q=1, r=1), Coord(q=2, r=1)]
    assert record.move.evaluation == PositionEvaluation(heuristic=-0.25)
    assert [c.pieces for c in record.move.considerations] == [[Coord(q=3, r=3), Coord(q=4, r=4)]]
    assert record.move.thinking_ms == 1500
    [update] = broadcast(actions, BoardUpdatePacket)
    assert update.evaluation == PositionEvaluation(heuristic=-0.25)
    assert update.move == Move(side=O, pieces=[Coord(q=1, r=1), Coord(q=2, r=1)])
    assert update.to_move is X


def test_turn_limit_ends_in_a_draw() -> None:
    session, _ = started(match=Match(turn_limit=2))
    play(session, O, O_LINE[0], now=1.0)
    actions = play(session, X, X_MOVES[0], now=2.0)
    over = game_over(actions)
    assert over.result == over.record.result
    assert (over.result.winner, over.result.reason, over.result.cause) == (
        None,
        ResultReason.DRAW,
        EndCause.TURN_LIMIT,
    )
    [end] = to(actions, O, EndPacket)
    assert end.cause is EndCause.TURN_LIMIT
    assert end.detail == "turn_limit: turn limit of 2 moves reached" == over.result.end_detail


# -------------------------------------------------------------- heartbeats


def test_heartbeats_every_interval_with_waiting_true_only_for_the_awaited_seat() -> None:
    session, _ = started(match=Match(heartbeat=1000))
    assert session.next_deadline == 1.0
    actions = session.timer(now=1.0)
    assert to(actions, O, HeartbeatPacket) == [HeartbeatPacket(waiting=True)]
    assert to(actions, X, HeartbeatPacket) == [HeartbeatPacket(waiting=False)]
    assert session.next_deadline == 2.0
    play(session, O, O_LINE[0], now=1.5)
    actions = session.timer(now=2.0)
    assert to(actions, O, HeartbeatPacket) == [HeartbeatPacket(waiting=False)]
    assert to(actions, X, HeartbeatPacket) == [HeartbeatPacket(waiting=True)]


def test_timer_before_the_heartbeat_is_due_sends_nothing() -> None:
    session, _ = started(match=Match(heartbeat=1000))
    assert session.timer(now=0.999) == []


def test_late_timer_sends_one_heartbeat_not_a_burst() -> None:
    session, _ = started(match=Match(heartbeat=1000))
    actions = session.timer(now=5.5)
    assert len(to(actions, O, HeartbeatPacket)) == 1
    assert session.next_deadline == 6.0


def test_a_seat_waiting_for_its_opponent_gets_heartbeats() -> None:
    session = new_game(match=Match(heartbeat=1000))
    session.seat_connected(X, now=0.0)
    assert to(session.timer(now=1.0), X, HeartbeatPacket) == [HeartbeatPacket(waiting=False)]


# ------------------------------------------------------------------ failures


def test_timeout_when_the_clock_flags() -> None:
    session, _ = started(match=Match(clock_type="turn", clock=5, heartbeat=60_000))
    assert session.next_deadline == 5.0
    assert session.timer(now=4.9) == []
    actions = session.timer(now=5.0)
    forfeit(actions, O, EndCause.TIMEOUT)
    assert len(to(actions, O, NopePacket)) == 1


def test_an_answer_after_the_flag_is_a_timeout_even_before_the_timer_fires() -> None:
    session, _ = started(match=Match(clock_type="turn", clock=5))
    forfeit(play(session, O, O_LINE[0], now=5.2), O, EndCause.TIMEOUT)


def test_stall_in_a_game_without_a_clock() -> None:
    limits = SessionLimits(stall_s=30.0)
    session, _ = started(match=Match(heartbeat=60_000), limits=limits)
    assert session.next_deadline == 30.0
    forfeit(session.timer(now=30.0), O, EndCause.STALL)


HUGE_CLOCKS = [
    Match(clock_type="turn", clock=1e6),
    Match(clock_type="match", clock=1e6),
    Match(clock_type="incremental", clock=1e6, increment=1e6),
]


@pytest.mark.parametrize("match", HUGE_CLOCKS, ids=lambda match: match.clock_type)
@pytest.mark.parametrize("seat", [bot(), human()], ids=["bot", "human"])
def test_the_stall_limit_bounds_every_wait_whatever_the_clock(match: Match, seat: SeatInfo) -> None:
    session, _ = started(o=seat, match=match, limits=SessionLimits(stall_s=30.0))
    assert session.next_deadline is not None and session.next_deadline <= 30.0
    assert game_over_or_none(session.timer(now=29.9)) is None
    over = forfeit(session.timer(now=30.0), O, EndCause.STALL)
    assert over.result.detail == "o forfeits: no answer within the stall limit of 30 s"


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"stall_s": float("inf")}, "stall_s: expected a finite number of seconds > 0"),
        ({"stall_s": 0.0}, "stall_s: expected a finite number of seconds > 0"),
        ({"no_show_s": float("nan")}, "no_show_s: expected a finite number of seconds >= 0"),
        ({"reconnect_s": float("inf")}, "reconnect_s: expected a finite number of seconds"),
        ({"max_frame_bytes": 0}, "max_frame_bytes: expected at least 1, got 0"),
    ],
    ids=["infinite_stall", "zero_stall", "nan_no_show", "infinite_reconnect", "no_frames"],
)
def test_limits_that_would_not_bound_a_game_are_refused(
    limits: dict[str, Any], message: str
) -> None:
    with pytest.raises(SessionLimitsError, match=re.escape(message)):
        SessionLimits(**limits)


def test_a_clock_that_runs_out_before_the_stall_limit_is_a_timeout() -> None:
    limits = SessionLimits(stall_s=30.0)
    match = Match(clock_type="turn", clock=10, heartbeat=60_000)
    session, _ = started(match=match, limits=limits)
    assert session.next_deadline == 10.0
    forfeit(session.timer(now=10.0), O, EndCause.TIMEOUT)


def test_an_answer_after_the_stall_limit_is_a_stall_even_before_the_timer_fires() -> None:
    session, _ = started(match=HUGE_CLOCKS[1], limits=SessionLimits(stall_s=30.0))
    forfeit(play(session, O, O_LINE[0], now=31.0), O, EndCause.STALL)


def test_the_stall_limit_counts_from_the_first_request_of_a_split_move() -> None:
    limits = SessionLimits(stall_s=30.0)
    session, _ = started(o=human(), match=HUGE_CLOCKS[0], limits=limits)
    session.receive(O, answer((1, 1)), now=20.0)  # the first stone; the second is owed
    assert session.next_deadline is not None and session.next_deadline <= 30.0
    forfeit(session.timer(now=30.0), O, EndCause.STALL)


def test_move_time_limit_is_the_time_until_the_stall_limit_when_it_comes_first() -> None:
    limits = SessionLimits(stall_s=30.0)
    _, actions = started(o=bot(move_time_limit=True), match=HUGE_CLOCKS[0], limits=limits)
    assert request_to(actions, O).move_time_limit == 30.0


def test_a_stateless_turn_is_bounded_by_the_stall_limit_whatever_the_clock() -> None:
    session = new_game(stateless(), stateless(), HUGE_CLOCKS[0], SessionLimits(stall_s=30.0))
    [turn, _begun] = session.timer(now=0.0)
    assert isinstance(turn, RequestStatelessTurn) and turn.time_limit == 30.0
    forfeit(session.timer(now=30.0), O, EndCause.STALL)


@pytest.mark.parametrize(
    ("pieces", "why"),
    [(((0, 0), (1, 0)), "already taken"), (((1, 0), (20, 0)), "view_distance")],
    ids=["occupied", "out_of_view"],
)
def test_illegal_move_forfeits_with_a_nope_saying_why(pieces: tuple[Hex, Hex], why: str) -> None:
    session, _ = started()
    actions = play(session, O, pieces, now=1.0)
    over = forfeit(actions, O, EndCause.ILLEGAL_MOVE)
    [nope] = to(actions, O, NopePacket)
    assert why in nope.reason
    assert over.record.moves == []  # the legal first stone is taken back
    assert cells_of(to(actions, X, EndPacket)[0].board) == [(0, 0, "x")]


@pytest.mark.parametrize(
    "frame",
    [
        "not json",
        '{"type": "heartbeat", "waiting": false}',
        answer((1, 1)),
        answer((1, 1), (2, 1), (3, 1)),
        '{"type": "eval_response", "evaluation": {}}',
    ],
    ids=["garbage", "wrong_packet", "one_piece_from_a_bot", "three_pieces", "eval_response"],
)
def test_malformed_or_unasked_frames_are_protocol_errors(frame: str) -> None:
    session, _ = started()
    actions = session.receive(O, frame, now=1.0)
    forfeit(actions, O, EndCause.PROTOCOL_ERROR)
    assert len(to(actions, O, NopePacket)) == 1
    [nope] = to(actions, O, NopePacket)
    [end] = to(actions, X, EndPacket)
    assert end.cause is EndCause.PROTOCOL_ERROR
    assert end.detail == f"protocol_error: o forfeits: {nope.reason}"


def test_an_answer_nobody_asked_for_is_a_protocol_error() -> None:
    session, _ = started()
    actions = play(session, X, X_MOVES[0], now=1.0)
    forfeit(actions, X, EndCause.PROTOCOL_ERROR)
    assert "no move_request is pending" in to(actions, X, NopePacket)[0].reason


def test_a_second_answer_is_a_protocol_error() -> None:
    session, _ = started()
    play(session, O, O_LINE[0], now=1.0)
    actions = play(session, O, O_LINE[1], now=1.1)
    forfeit(actions, O, EndCause.PROTOCOL_ERROR)
    assert "second move_response" in to(actions, O, NopePacket)[0].reason


def test_an_answer_before_the_game_starts_is_a_protocol_error() -> None:
    session = new_game()
    session.seat_connected(O, now=0.0)
    forfeit(play(session, O, O_LINE[0], now=0.5), O, EndCause.PROTOCOL_ERROR)


def test_a_huge_frame_is_a_protocol_error() -> None:
    session, _ = started(limits=SessionLimits(max_frame_bytes=100))
    forfeit(session.receive(O, "x" * 101, now=1.0), O, EndCause.PROTOCOL_ERROR)


def test_a_bot_that_disconnects_forfeits_at_once() -> None:
    session, _ = started()
    actions = session.seat_disconnected(X, now=1.0)
    forfeit(actions, X, EndCause.DISCONNECT)
    assert to(actions, X, EndPacket) == []  # it is gone
    assert len(to(actions, O, EndPacket)) == 1
    assert [a.side for a in actions if isinstance(a, CloseSeat)] == [O]


def test_a_human_who_disconnects_forfeits_when_the_window_lapses() -> None:
    limits = SessionLimits(reconnect_s=60.0)
    session, _ = started(x=human(), match=Match(heartbeat=600_000), limits=limits)
    assert session.seat_disconnected(X, now=1.0) == []
    assert session.next_deadline == 61.0
    assert session.timer(now=60.9) == []
    forfeit(session.timer(now=61.0), X, EndCause.DISCONNECT)


def test_a_seat_that_never_connects_is_a_no_show() -> None:
    session = new_game(limits=SessionLimits(no_show_s=30.0))
    session.seat_connected(O, now=1.0)
    assert session.next_deadline == 1.0 + 4.0  # heartbeats go on meanwhile
    assert game_over_or_none(session.timer(now=29.0)) is None
    actions = session.timer(now=30.0)
    over = forfeit(actions, X, EndCause.NO_SHOW)
    assert over.record.moves == []
    assert len(to(actions, O, EndPacket)) == 1


def test_neither_seat_connecting_is_a_draw_by_no_show() -> None:
    session = new_game(limits=SessionLimits(no_show_s=30.0))
    assert session.next_deadline == 30.0
    over = game_over(session.timer(now=30.0))
    assert (over.result.winner, over.result.cause) == (None, EndCause.NO_SHOW)


REFUSED_404 = DialFailure("the bot's socket answered the handshake with HTTP 404", 404)
REFUSED_503 = DialFailure("the bot's socket answered the handshake with HTTP 503", 503)
NO_ANSWER = DialFailure("cannot open the bot's socket: connection refused")


def test_a_bot_whose_handshake_is_refused_for_good_is_a_no_show_at_once() -> None:
    session = new_game(limits=SessionLimits(no_show_s=30.0))
    session.seat_connected(O, now=0.5)
    actions = session.dial_failed(X, REFUSED_404, now=1.0)
    over = forfeit(actions, X, EndCause.NO_SHOW)
    assert over.result.detail == (
        "x forfeits: x could not connect: the bot's socket answered the handshake with HTTP 404"
    )
    [end] = to(actions, O, EndPacket)
    assert end.detail == f"no_show: {over.result.detail}"


def test_a_no_show_says_how_the_last_dial_failed() -> None:
    session = new_game(limits=SessionLimits(no_show_s=30.0))
    session.seat_connected(O, now=0.5)
    assert session.dial_failed(X, REFUSED_503, now=1.0) == []  # may pass: dialled again
    assert session.dial_failed(X, NO_ANSWER, now=2.0) == []
    over = forfeit(session.timer(now=30.0), X, EndCause.NO_SHOW)
    assert over.result.detail == (
        "x forfeits: x did not connect within 30 s "
        "(the last try: cannot open the bot's socket: connection refused)"
    )


def test_a_bot_refused_for_good_waits_for_an_opponent_that_may_still_come() -> None:
    # Had O never come either, the game would be a draw: X forfeits only once O is here.
    session = new_game(limits=SessionLimits(no_show_s=30.0))
    assert session.dial_failed(X, REFUSED_404, now=1.0) == []
    forfeit(session.seat_connected(O, now=3.0), X, EndCause.NO_SHOW)


def test_both_bots_refused_for_good_is_a_draw_by_no_show_at_once() -> None:
    session = new_game(limits=SessionLimits(no_show_s=30.0))
    session.dial_failed(X, REFUSED_404, now=1.0)
    over = game_over(session.dial_failed(O, DialFailure("HTTP 410", 410), now=1.5))
    assert (over.result.winner, over.result.cause) == (None, EndCause.NO_SHOW)
    assert over.result.detail == (
        "neither seat connected: x could not connect: the bot's socket answered the "
        "handshake with HTTP 404; o could not connect: HTTP 410"
    )


def test_a_dial_failure_after_the_seat_connected_changes_nothing() -> None:
    session, _ = started()
    assert session.dial_failed(X, REFUSED_404, now=1.0) == []
    assert session.result is None


@pytest.mark.parametrize(
    ("status", "final"),
    [
        (400, True),
        (403, True),
        (404, True),
        (408, False),
        (429, False),
        (500, False),
        (503, False),
        (None, False),
    ],
)
def test_only_a_handshake_refused_with_a_lasting_4xx_is_final(
    status: int | None, final: bool
) -> None:
    assert DialFailure("refused", status).final is final


def game_over_or_none(actions: Sequence[Action]) -> GameOver | None:
    overs = [a for a in actions if isinstance(a, GameOver)]
    return overs[0] if overs else None


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (TimeoutError("read timed out"), EndCause.TIMEOUT),
        (ConnectionRefusedError("refused"), EndCause.DISCONNECT),
        (ProtocolError("move.pieces: expected at least 2 items, got 1"), EndCause.PROTOCOL_ERROR),
    ],
)
def test_a_failed_stateless_turn_forfeits_with_its_cause(
    error: BaseException, cause: EndCause
) -> None:
    session = new_game(stateless(), stateless())
    session.timer(now=0.0)
    forfeit(session.stateless_answer(O, error, now=1.0), O, cause)


def test_a_clockless_stateless_turn_tells_a_declaring_bot_the_stall_limit() -> None:
    limits = SessionLimits(stall_s=45.0)
    session = new_game(
        stateless(move_time_limit=True), stateless(move_time_limit=True), None, limits
    )
    [turn, _begun] = session.timer(now=0.0)
    assert isinstance(turn, RequestStatelessTurn)
    assert turn.request.time_limit == 45.0
    assert turn.time_limit == 45.0
    response = StatelessMoveResponse(move=StatelessMove(pieces=[Coord(q=1, r=1), Coord(q=2, r=1)]))
    [turn] = [
        a
        for a in session.stateless_answer(O, response, now=5.0)
        if isinstance(a, RequestStatelessTurn)
    ]
    assert turn.side is X and turn.request.time_limit == 45.0


def test_a_clockless_stateless_turn_tells_the_seats_own_stricter_stall_limit() -> None:
    o = SeatInfo(
        "bot_stateless",
        declares=StatelessV1Alpha(move_time_limit=True),
        time_control=TimeControl.parse("stall=20"),
    )
    session = new_game(stateless(), o)
    [turn, _begun] = session.timer(now=0.0)
    assert isinstance(turn, RequestStatelessTurn) and turn.request.time_limit == 20.0


def test_stateless_bots_play_by_answers() -> None:
    session = new_game(
        stateless(), stateless(move_time_limit=True), Match(clock_type="turn", clock=5)
    )
    [turn, _begun] = session.timer(now=0.0)
    assert isinstance(turn, RequestStatelessTurn)
    assert turn.request.time_limit == 5.0
    assert turn.time_limit == 5.0
    response = StatelessMoveResponse(move=StatelessMove(pieces=[Coord(q=1, r=1), Coord(q=2, r=1)]))
    actions = session.stateless_answer(O, response, now=1.0)
    [turn] = [a for a in actions if isinstance(a, RequestStatelessTurn)]
    assert turn.side is X
    assert turn.request.time_limit is None  # X does not declare it
    assert len(turn.request.board.cells) == 3
    assert session.stateless_answer(O, response, now=1.1) == []  # nobody waits for it


def test_abort_ends_the_game_with_cause_aborted() -> None:
    session, _ = started()
    actions = session.abort("server shutting down", now=1.0)
    over = game_over(actions)
    assert (over.result.winner, over.result.reason, over.result.cause) == (
        None,
        ResultReason.DRAW,
        EndCause.ABORTED,
    )
    assert {a.code for a in actions if isinstance(a, CloseSeat)} == {CLOSE_GOING_AWAY}
    assert broadcast(actions, EndPacket)[0].cause is EndCause.ABORTED
    assert over.result.detail == "server shutting down"


def test_nothing_happens_after_the_game_is_over() -> None:
    session, _ = started()
    session.abort("test", now=1.0)
    assert session.receive(O, "garbage", now=2.0) == []
    assert session.timer(now=3.0) == []
    assert session.seat_disconnected(X, now=4.0) == []
    assert session.abort("again", now=5.0) == []


def test_a_seat_connecting_after_the_end_is_told_and_closed() -> None:
    session, _ = started(x=human())
    session.abort("test", now=1.0)
    actions = session.seat_connected(X, now=2.0)
    assert len(to(actions, X, EndPacket)) == 1
    assert [type(a) for a in actions] == [SendTo, CloseSeat]


SWEPT = GameResult(
    winner=None,
    reason=ResultReason.DRAW,
    cause=EndCause.ABORTED,
    detail="the worker w4 running it stopped (its lease expired)",
)


def test_a_game_the_store_has_over_already_ends_with_the_stored_result() -> None:
    session, _ = started()
    actions = session.recorded_over(SWEPT, now=1.0)
    assert game_over(actions).result == SWEPT == session.result
    assert broadcast(actions, EndPacket)[0].detail == "aborted: " + str(SWEPT.detail)
    assert {a.code for a in actions if isinstance(a, CloseSeat)} == {CLOSE_GOING_AWAY}
    assert session.recorded_over(SWEPT, now=2.0) == []  # ended so already


def test_an_end_decided_but_not_sent_gives_way_to_the_stored_one() -> None:
    session, _ = started(x=human(), o=human())
    mine = session.receive(X, '{"type": "resign"}', now=1.0)
    assert game_over(mine).result.winner is O
    # The adapter commits the end before sending it; the store refused it: the game
    # is over there already. Its end goes out instead, to the same seats.
    actions = session.recorded_over(SWEPT, now=1.5)
    assert game_over(actions).result == SWEPT == session.result == session.record().result
    for side in (X, O):
        [end] = to(actions, side, EndPacket)
        assert (end.winner, end.detail) == (None, "aborted: " + str(SWEPT.detail))
    assert broadcast(actions, EndPacket)[0].winner is None
    assert {a.side for a in actions if isinstance(a, CloseSeat)} == {X, O}
    late = session.seat_connected(X, now=2.0)  # a seat coming back is told the same
    assert to(late, X, EndPacket)[0].detail == "aborted: " + str(SWEPT.detail)


def test_the_stored_end_shows_the_board_and_moves_of_the_stored_record() -> None:
    # The store took the first move; the second (and a person's first stone after it)
    # it refused, the game being over there: the end's board is the record's.
    session, _ = started(o=human())
    play(session, O, O_LINE[0], now=1.0)
    play(session, X, X_MOVES[0], now=2.0)
    session.receive(O, answer((3, 1)), now=3.0)
    actions = session.recorded_over(SWEPT, now=4.0, moves=1)
    over = game_over(actions)
    assert [[p.as_tuple() for p in m.pieces] for m in over.record.moves] == [[(1, 1), (2, 1)]]
    [end] = broadcast(actions, EndPacket)
    assert cells_of(end.board) == [(0, 0, "x"), (1, 1, "o"), (2, 1, "o")]
    assert not any(isinstance(a, RecordMove) for a in actions)  # the stone is not recorded
    late = session.spectator_setup(now=5.0)  # a spectator joining now is told the same
    assert cells_of(late.board) == cells_of(end.board) and late.moves == over.record.moves


def test_a_bug_inside_the_session_aborts_the_game_instead_of_raising(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session, _ = started()

    def broken(self: Position, q: int, r: int) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Position, "place", broken)
    actions = session.receive(O, answer(*O_LINE[0]), now=1.0)
    over = game_over(actions)
    assert (over.result.reason, over.result.cause) == (ResultReason.DRAW, EndCause.ABORTED)
    assert "boom" in over.detail
    assert {a.code for a in actions if isinstance(a, CloseSeat)} == {CLOSE_INTERNAL_ERROR}


# -------------------------------------------------------------------- clocks


@pytest.mark.parametrize(
    ("kind", "increment", "o_after_first", "o_at_second_request"),
    [
        ("turn", 0.0, 30_000, 30.0),
        ("match", 0.0, 26_000, 26.0),
        ("incremental", 2.0, 28_000, 28.0),
    ],
)
def test_each_clock_charges_the_mover_and_reports_remaining_time(
    kind: ClockType, increment: float, o_after_first: int, o_at_second_request: float
) -> None:
    match = Match(clock_type=kind, clock=30, increment=increment)
    session, _ = started(o=bot(move_time_limit=True), match=match)
    actions = play(session, O, O_LINE[0], now=4.0)
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert record.move.thinking_ms == 4000
    assert record.move.clock_ms == o_after_first
    [update] = broadcast(actions, BoardUpdatePacket)
    assert (update.clock_o_ms, update.clock_x_ms) == (o_after_first, 30_000)
    actions = play(session, X, X_MOVES[0], now=5.0)
    request = request_to(actions, O)
    assert request.move_time_limit == o_at_second_request
    assert request.clock_o_ms == round(o_at_second_request * 1000)  # both clocks, every request
    assert request.clock_x_ms is not None
    [update] = broadcast(actions, BoardUpdatePacket)
    assert update.clock_x_ms == (30_000 if kind == "turn" else 29_000 + int(increment * 1000))


def test_a_game_without_a_clock_reports_no_time() -> None:
    session, _ = started()
    actions = play(session, O, O_LINE[0], now=2.0)
    [update] = broadcast(actions, BoardUpdatePacket)
    assert (update.clock_x_ms, update.clock_o_ms) == (None, None)
    assert b"clock_" not in dump_packet(request_to(actions, X))  # absent, not null
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert (record.move.clock_ms, record.move.thinking_ms) == (None, 2000)


def test_the_round_trip_is_not_charged_and_extends_the_deadline() -> None:
    match = Match(clock_type="match", clock=10, heartbeat=60_000)
    session = new_game(match=match)
    session.seat_connected(X, now=0.0)
    session.rtt_measured(O, 0.2)
    session.seat_connected(O, now=0.0)
    assert session.next_deadline == pytest.approx(10.2)
    actions = play(session, O, O_LINE[0], now=3.0)
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert record.move.thinking_ms == 2800
    assert record.move.clock_ms == 7200
    assert record.move.latency_ms == 200  # the round trip is kept with the move


def test_a_move_before_any_ping_has_no_latency() -> None:
    session, _ = started()
    actions = play(session, O, O_LINE[0], now=1.0)
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert record.move.latency_ms is None


def test_the_record_names_each_bot_with_its_capabilities_meta() -> None:
    meta = Meta(name="Deep", authors=["ann"], tags=["minimax"])
    seat = SeatInfo("bot_ws", name="deep", declares=BwsV1Alpha(), meta=meta)
    session, _ = started(x=seat)
    assert session.record().player_x.meta == meta
    assert session.record().player_o.meta is None


def test_a_huge_round_trip_is_capped() -> None:
    match = Match(clock_type="match", clock=10, heartbeat=60_000)
    session = new_game(match=match, limits=SessionLimits(max_rtt_s=0.5))
    session.rtt_measured(O, 30.0)
    session.seat_connected(X, now=0.0)
    session.seat_connected(O, now=0.0)
    assert session.next_deadline == pytest.approx(10.5)


# -------------------------------------------------------------------- humans


def test_a_human_may_answer_stone_by_stone() -> None:
    session, _ = started(o=human(), match=Match(clock_type="match", clock=60))
    actions = session.receive(O, answer((1, 1)), now=2.0)
    [update] = broadcast(actions, BoardUpdatePacket)
    assert update.move == Move(side=O, pieces=[Coord(q=1, r=1)])
    assert update.to_move is O
    second = request_to(actions, O)
    assert moves_of(second) == [("o", [(1, 1)])]
    assert cells_of(second.board) == [(0, 0, "x"), (1, 1, "o")]
    assert not any(isinstance(a, RecordMove) for a in actions)
    actions = session.receive(O, answer((2, 1)), now=5.0)
    [record] = [a for a in actions if isinstance(a, RecordMove)]
    assert record.move.pieces == [Coord(q=1, r=1), Coord(q=2, r=1)]
    assert record.move.thinking_ms == 5000  # the clock ran across both stones
    [update] = broadcast(actions, BoardUpdatePacket)
    assert update.move == Move(side=O, pieces=[Coord(q=2, r=1)])
    assert moves_of(request_to(actions, X)) == [("o", [(1, 1), (2, 1)])]
    actions = play(session, X, X_MOVES[0], now=6.0)
    assert moves_of(request_to(actions, O)) == [("o", [(2, 1)]), ("x", [(-1, -1), (-2, -1)])]


def test_a_human_may_answer_with_both_stones() -> None:
    session, _ = started(o=human())
    actions = play(session, O, O_LINE[0], now=1.0)
    assert len([a for a in actions if isinstance(a, RecordMove)]) == 1


def test_two_stones_for_the_second_stone_request_is_a_protocol_error() -> None:
    session, _ = started(o=human())
    session.receive(O, answer((1, 1)), now=1.0)
    forfeit(play(session, O, ((2, 1), (3, 1)), now=2.0), O, EndCause.PROTOCOL_ERROR)


def test_a_reconnecting_human_gets_setup_with_the_position_then_its_request() -> None:
    session, _ = started(o=human(), match=Match(clock_type="match", clock=60))
    play(session, O, O_LINE[0], now=1.0)
    session.seat_disconnected(O, now=1.5)
    actions = play(session, X, X_MOVES[0], now=2.0)
    assert to(actions, O, MoveRequestPacket) == []  # O is away
    actions = session.seat_connected(O, now=10.0)
    [setup] = to(actions, O, SetupPacket)
    assert cells_of(setup.board) == [
        (0, 0, "x"),
        (1, 1, "o"),
        (2, 1, "o"),
        (-1, -1, "x"),
        (-2, -1, "x"),
    ]
    request = request_to(actions, O)
    assert request.previous == []  # the setup already holds everything
    assert cells_of(request.board) == cells_of(setup.board)
    [record] = [a for a in play(session, O, O_LINE[1], now=11.0) if isinstance(a, RecordMove)]
    assert record.move.thinking_ms == 9000  # the clock ran while O was away


def test_the_clock_keeps_running_while_a_human_is_away() -> None:
    match = Match(clock_type="turn", clock=5, heartbeat=60_000)
    session, _ = started(o=human(), match=match)
    session.seat_disconnected(O, now=1.0)
    forfeit(session.timer(now=5.0), O, EndCause.TIMEOUT)


# ---------------------------------------------------------------- spectators


def test_a_late_spectator_gets_the_whole_game_so_far() -> None:
    match = Match(clock_type="match", clock=60)
    seats = {X: SeatInfo("bot_ws", name="lefty", url="http://bot"), O: SeatInfo("human", "ann")}
    session = GameSession("g7", match, seats, started_at=0.0)
    session.seat_connected(X, now=0.0)
    session.seat_connected(O, now=0.0)
    play(session, O, O_LINE[0], now=1.0)
    play(session, X, X_MOVES[0], now=3.0)
    setup = session.spectator_setup(now=4.0)
    assert setup.game_id == "g7"
    assert setup.moves is not None
    assert [m.pieces for m in setup.moves] == [
        [Coord(q=1, r=1), Coord(q=2, r=1)],
        [Coord(q=-1, r=-1), Coord(q=-2, r=-1)],
    ]
    assert len(cells_of(setup.board)) == 5
    assert setup.player_x is not None and setup.player_o is not None
    assert (setup.player_x.name, setup.player_x.bot_url, setup.player_o.name) == (
        "lefty",
        "http://bot",
        "ann",
    )
    assert setup.match == match
    assert (setup.to_move, setup.status) == (O, GameStatus.IN_PROGRESS)
    assert (setup.clock_x_ms, setup.clock_o_ms) == (58_000, 58_000)  # O's turn: 1 s running


def test_spectators_learn_the_game_began_from_a_fresh_setup() -> None:
    session = new_game(match=Match(clock_type="match", clock=60))
    session.seat_connected(X, now=0.0)
    assert session.spectator_setup(now=0.5).status is GameStatus.WAITING
    actions = session.seat_connected(O, now=1.0)
    [begun] = broadcast(actions, SetupPacket)
    # After the request O waits for (the game waits for it, the spectators do not).
    assert isinstance(actions[-1], Broadcast) and request_to(actions, O)
    play(session, O, O_LINE[0], now=3.0)  # built after the game moved on: shows the start
    assert (begun.status, begun.to_move, begun.moves) == (GameStatus.IN_PROGRESS, O, [])
    assert (begun.clock_x_ms, begun.clock_o_ms) == (60_000, 60_000)
    assert (begun.game_id, cells_of(begun.board)) == ("g", [(0, 0, "x")])


def test_a_spectator_of_a_finished_game_sees_the_result() -> None:
    session, _ = started()
    session.seat_disconnected(O, now=1.0)
    setup = session.spectator_setup(now=2.0)
    assert (setup.status, setup.to_move) == (GameStatus.X_WINS, None)


# ------------------------------------------------------------------ property

_SIDES = st.sampled_from([X, O])
_KINDS: st.SearchStrategy[SeatKind] = st.sampled_from(["bot_ws", "bot_stateless", "human"])
# Mostly answers (so games get somewhere), with every other event mixed in.
_EVENT_KINDS = ["answer"] * 12 + ["timer"] * 3 + ["rtt", "garbage", "connect", "disconnect"]
_EVENT_KINDS += ["fail", "idle"]
_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(_EVENT_KINDS),
        _SIDES,
        st.integers(min_value=0, max_value=1000),
        st.sampled_from([2] * 10 + [1, 1, 3]),
        st.floats(min_value=0.0, max_value=3.0),
    ),
    max_size=80,
)
_MATCHES = st.sampled_from(
    [
        Match(heartbeat=1000),
        Match(heartbeat=1000, turn_limit=4, win_distance=3),
        Match(heartbeat=1000, view_distance=1, win_distance=2),  # lines come quickly
        Match(clock_type="turn", clock=10, win_distance=4),
        Match(clock_type="match", clock=30),
        Match(clock_type="incremental", clock=20, increment=1.0, view_distance=2),
    ]
)


def _answer_cells(session: GameSession, seed: int, count: int) -> list[Hex]:
    """``count`` cells: mostly legal ones, sometimes an occupied one."""
    match = session.match
    stones = [(c.q, c.r, c.p.value) for c in session.board.cells]
    position = Position(
        match.view_distance, match.win_distance, setup=stones, reject_setup_lines=False
    )
    legal = sorted(position.legal_cells())
    picks = [legal[(seed * (i + 7)) % len(legal)] for i in range(count)]
    if seed % 17 == 0:
        picks[0] = (0, 0)
    return picks


def _replays_legally(
    moves: Sequence[Any], match: Match, result: GameResult
) -> set[tuple[int, int, str]]:
    """The record's stones, checked move by move under the rules."""
    position = Position(match.view_distance, match.win_distance, turn_limit=match.turn_limit)
    stones = {(0, 0, "x")}
    for index, move in enumerate(moves):
        assert move.side.value == position.to_move
        for piece in move.pieces:
            position.place(piece.q, piece.r)
            stones.add((piece.q, piece.r, move.side.value))
        if len(move.pieces) == 1:  # a winning first stone, or a person's last first stone
            assert index == len(moves) - 1
            if position.outcome is None:  # the game ended another way before the second
                assert result.cause is not None or result.reason is not ResultReason.WIN
            else:
                assert position.outcome.termination is Termination.LINE
    return stones


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    x=_KINDS,
    o=_KINDS,
    match=_MATCHES,
    connect_first=st.sampled_from([True, True, True, False]),
    events=_EVENTS,
)
def test_any_interleaving_ends_in_exactly_one_game_over_with_a_legal_record(
    x: SeatKind,
    o: SeatKind,
    match: Match,
    connect_first: bool,
    events: list[tuple[str, Player, int, int, float]],
) -> None:
    limits = SessionLimits(no_show_s=20.0, stall_s=25.0, reconnect_s=15.0)
    session = GameSession(
        "p", match, {X: SeatInfo(x), O: SeatInfo(o)}, limits=limits, started_at=0.0
    )
    actions: list[Action] = []
    now = 0.0
    if connect_first:  # most games get going; the rest show what happens before the start
        actions += session.seat_connected(X, now) + session.seat_connected(O, now)
        actions += session.timer(now)
    for kind, chosen_side, seed, count, step in events:
        now += step
        # Answers mostly come from the side asked, so games get somewhere.
        awaited = session.awaiting
        side = awaited if kind == "answer" and awaited and seed % 5 else chosen_side
        is_stateless = {X: x, O: o}[side] == "bot_stateless"
        if kind == "answer":
            cells = _answer_cells(session, seed, count)
            if is_stateless:
                if len(cells) == 2:
                    pieces = [Coord(q=q, r=r) for q, r in cells]
                    response = StatelessMoveResponse(move=StatelessMove(pieces=pieces))
                    actions += session.stateless_answer(side, response, now)
            else:
                actions += session.receive(side, answer(*cells), now)
        elif kind == "garbage":
            actions += session.receive(side, '{"type": "move_response"}', now)
        elif kind == "connect":
            actions += session.seat_connected(side, now)
        elif kind == "disconnect":
            actions += session.seat_disconnected(side, now)
        elif kind == "timer":
            deadline = session.next_deadline
            actions += session.timer(now if deadline is None else max(now, deadline))
        elif kind == "idle":
            now += 30.0
        elif kind == "rtt":
            actions += session.rtt_measured(side, step / 10)
        else:
            actions += session.stateless_answer(side, TimeoutError(), now)
    if not session.over:
        actions += session.abort("the test is over", now + 1.0)
    overs = [a for a in actions if isinstance(a, GameOver)]
    assert len(overs) == 1
    assert session.next_deadline is None
    over = overs[0]
    assert "internal error" not in over.detail  # a bug would hide behind "aborted"
    assert over.result == session.result == over.record.result
    stones = _replays_legally(over.record.moves, match, over.result)
    # What everyone was told the final board is, the record says too.
    [end] = [a.packet for a in actions if isinstance(a, Broadcast) and a.ends]
    assert isinstance(end, EndPacket) and set(cells_of(end.board)) == stones
    recorded = [a.move for a in actions if isinstance(a, RecordMove)]
    assert recorded == over.record.moves


def test_a_moves_board_update_is_built_only_when_read_and_shows_that_move() -> None:
    session, _ = started()
    first = play(session, O, ((1, 1), (2, 1)), now=1.0)
    [pending] = [a for a in first if isinstance(a, Broadcast)]
    assert not pending.built and not pending.ends  # nobody read it: no board copied
    play(session, X, ((-1, -1), (-2, -1)), now=2.0)

    update = pending.packet  # read after a later move: still the board of its own move
    assert isinstance(update, BoardUpdatePacket) and pending.built
    assert [(c.q, c.r) for c in update.board.cells] == [(0, 0), (1, 1), (2, 1)]
    assert [(c.q, c.r) for c in update.move.pieces] == [(1, 1), (2, 1)]
    assert update.to_move is X and update.status is GameStatus.IN_PROGRESS
    assert dump_packet(update.board) == dump_packet(Board(cells=update.board.cells))
