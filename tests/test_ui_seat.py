"""``ui.seat.HumanSeat``: the person's side of the bot protocol, fed packets directly
(no sockets, no Qt)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import pytest

from game.hexgrid import Hex
from game.rules import Position
from models import (
    Board,
    Cell,
    Coord,
    EndPacket,
    HeartbeatPacket,
    Match,
    Move,
    MoveRequestPacket,
    NopePacket,
    Player,
    ResultReason,
    SetupPacket,
    dump_packet,
)
from ui.seat import (
    CellOutOfViewError,
    CellTakenError,
    GameEnded,
    GameFinishedError,
    HeartbeatSeen,
    HumanSeat,
    IllegalStoneError,
    MoveRequested,
    NotYourTurnError,
    OpponentStatus,
    Refused,
    SeatEvent,
    SeatStarted,
    SecondStoneMissingError,
    Violation,
)

# ------------------------------------------------------------------- helpers

SETUP = dump_packet(SetupPacket()).decode()


def board(stones: Iterable[tuple[Hex, str]]) -> Board:
    return Board(cells=[Cell(q=q, r=r, p=Player(side)) for (q, r), side in stones])


def request(
    side: str,
    stones: Iterable[tuple[Hex, str]] | None = None,
    previous: Iterable[tuple[str, list[Hex]]] = (),
    **extra: object,
) -> str:
    packet = MoveRequestPacket.model_validate(
        {
            "side": side,
            "previous": [
                Move(side=Player(s), pieces=[Coord(q=q, r=r) for q, r in cells])
                for s, cells in previous
            ],
            "board": None if stones is None else board(stones),
            **extra,
        }
    )
    return dump_packet(packet).decode()


def heartbeat(waiting: bool) -> str:
    return dump_packet(HeartbeatPacket(waiting=waiting)).decode()


def pieces(answer: str) -> list[Hex]:
    data = json.loads(answer)
    assert data["type"] == "move_response"
    return [(piece["q"], piece["r"]) for piece in data["move"]["pieces"]]


def started_seat(side: str = "o", **options: Match) -> HumanSeat:
    seat = HumanSeat(side, **options)
    assert seat.receive(SETUP) == [SeatStarted({(0, 0): "x"})]
    return seat


def only(events: Sequence[SeatEvent]) -> SeatEvent:
    assert len(events) == 1, events
    return events[0]


# ---------------------------------------------------------------------- game


def test_a_whole_game_as_o_until_the_second_stone_of_a_move_wins() -> None:
    seat = started_seat("o")
    referee = Position()
    x_moves = iter([[(0, 1), (0, 2)], [(-1, 1), (-1, 2)]])
    o_moves = [[(1, 0), (2, 0)], [(3, 0), (4, 0)], [(5, 0), (6, 0)]]
    for number, (first, second) in enumerate(o_moves):
        stones = [((q, r), side) for q, r, side in referee.stones]
        event = only(seat.receive(request("o", stones)))
        assert isinstance(event, MoveRequested)
        assert event.side == "o" and seat.awaiting
        assert event.stones == dict(stones)
        assert event.legal == frozenset(referee.legal_cells())
        assert pieces(seat.answer(first, second)) == [first, second]
        assert not seat.awaiting
        referee.place_move(first, second)
        assert seat.stones == {(q, r): side for q, r, side in referee.stones}
        if number < 2:
            referee.place_move(*next(x_moves))
    assert referee.outcome is not None and referee.outcome.winner == "o"
    end = EndPacket(
        winner=Player.O,
        reason=ResultReason.WIN,
        board=board(((q, r), side) for q, r, side in referee.stones),
    )
    event = only(seat.receive(dump_packet(end).decode()))
    assert event == GameEnded(end)
    assert seat.over and not seat.awaiting
    assert seat.position is not None and seat.position.outcome is not None
    assert seat.position.outcome.line == tuple((q, 0) for q in range(1, 7))
    with pytest.raises(GameFinishedError):
        seat.answer((7, 0), (8, 0))
    assert seat.receive(heartbeat(False)) == []  # nothing after the end


def test_the_end_board_shows_the_opponents_winning_line() -> None:
    seat = started_seat("x")
    stones = [((0, 0), "x"), ((1, 0), "o"), ((2, 0), "o")]
    assert isinstance(only(seat.receive(request("x", stones))), MoveRequested)
    seat.answer((0, 1), (0, 2))
    # O then plays 4 more in a row over two moves; the end board lists stones in order.
    final = [
        *stones,
        ((0, 1), "x"),
        ((0, 2), "x"),
        ((3, 0), "o"),
        ((4, 0), "o"),
        ((0, 3), "x"),
        ((0, 4), "x"),
        ((5, 0), "o"),
        ((6, 0), "o"),
    ]
    end = EndPacket(winner=Player.O, reason=ResultReason.WIN, board=board(final))
    assert isinstance(only(seat.receive(dump_packet(end).decode())), GameEnded)
    assert seat.position is not None and seat.position.outcome is not None
    assert seat.position.outcome.line == tuple((q, 0) for q in range(1, 7))


def test_a_request_without_board_adds_previous_to_the_known_board() -> None:
    seat = started_seat("x")
    event = only(seat.receive(request("x", previous=[("o", [(1, 0), (2, 0)])])))
    assert isinstance(event, MoveRequested)
    assert event.stones == {(0, 0): "x", (1, 0): "o", (2, 0): "o"}
    assert event.previous[0].pieces == [Coord(q=1, r=0), Coord(q=2, r=0)]
    seat.answer((0, 1), (0, 2))
    second = only(
        seat.receive(request("x", previous=[("x", [(0, 1), (0, 2)]), ("o", [(3, 0), (4, 0)])]))
    )
    assert isinstance(second, MoveRequested)
    assert len(second.stones) == 7 and second.stones[(4, 0)] == "o"


def test_requests_carry_the_clocks_and_time_limit() -> None:
    seat = started_seat("o")
    event = only(
        seat.receive(
            request("o", [((0, 0), "x")], clock_x_ms=60000, clock_o_ms=59000, move_time_limit=59.0)
        )
    )
    assert isinstance(event, MoveRequested)
    assert (event.clock_x_ms, event.clock_o_ms, event.time_limit_s) == (60000, 59000, 59.0)


# -------------------------------------------------------------- first stone wins


def five_in_a_row_for_o() -> list[tuple[Hex, str]]:
    return [
        ((0, 0), "x"),
        *(((q, 0), "o") for q in range(1, 6)),
        ((0, 1), "x"),
        ((0, 2), "x"),
        ((0, 3), "x"),
        ((0, 4), "x"),
    ]


def test_a_winning_first_stone_is_sent_with_any_legal_second_stone() -> None:
    seat = started_seat("o")
    stones = five_in_a_row_for_o()
    seat.receive(request("o", stones))
    assert seat.winning_first_stone((6, 0))
    assert not seat.winning_first_stone((7, 0))
    assert not seat.winning_first_stone((0, 0))  # taken: no stone at all
    first, second = pieces(seat.answer((6, 0), None))
    assert first == (6, 0)
    assert second != first and second not in dict(stones)
    before = Position(setup=[(q, r, side) for (q, r), side in stones], to_move="o")
    assert before.is_legal(*second)
    assert seat.position is not None and seat.position.outcome is not None
    assert seat.position.outcome.winner == "o"


def test_a_winning_first_stone_keeps_a_given_second_stone() -> None:
    seat = started_seat("o")
    seat.receive(request("o", five_in_a_row_for_o()))
    assert pieces(seat.answer((6, 0), (-1, 0))) == [(6, 0), (-1, 0)]


def test_one_stone_that_does_not_win_is_not_a_move() -> None:
    seat = started_seat("o")
    seat.receive(request("o", five_in_a_row_for_o()))
    with pytest.raises(SecondStoneMissingError, match="choose a second stone"):
        seat.answer((7, 0), None)
    assert seat.awaiting  # nothing was sent; the person may try again


# -------------------------------------------------------------- illegal moves


def test_illegal_stones_say_why_and_change_nothing() -> None:
    seat = started_seat("o", match=Match(view_distance=2))
    seat.receive(request("o", [((0, 0), "x")]))
    with pytest.raises(CellTakenError, match="already taken") as taken:
        seat.answer((0, 0), (1, 0))
    assert taken.value.cell == (0, 0)
    with pytest.raises(CellOutOfViewError, match="out of view") as far:
        seat.answer((1, 0), (5, 0))
    assert far.value.cell == (5, 0) and isinstance(far.value, IllegalStoneError)
    with pytest.raises(CellTakenError, match="your first stone"):
        seat.answer((1, 0), (1, 0))
    assert seat.awaiting and seat.stones == {(0, 0): "x"}
    # The first stone brings new cells into view for the second.
    assert pieces(seat.answer((2, 0), (4, 0))) == [(2, 0), (4, 0)]


def test_no_move_before_a_request_or_after_answering() -> None:
    seat = HumanSeat("o")
    with pytest.raises(NotYourTurnError):
        seat.answer((1, 0), (2, 0))
    seat.receive(SETUP)
    with pytest.raises(NotYourTurnError):
        seat.answer((1, 0), (2, 0))
    seat.receive(request("o", [((0, 0), "x")]))
    seat.answer((1, 0), (2, 0))
    with pytest.raises(NotYourTurnError, match="not your turn"):
        seat.answer((3, 0), (4, 0))


# --------------------------------------------------------------- bad packets


@pytest.mark.parametrize(
    ("frames", "reason"),
    [
        (["not json"], "bad packet"),
        (['{"type": "move_response", "move": {"pieces": []}}'], "not accepted here"),
        (['{"type": "teleport"}'], "unknown type"),
        ([SETUP, SETUP], "a second setup"),
        ([request("o", [((0, 0), "x")])], "before setup"),
        ([SETUP, request("x", [((0, 0), "x")])], "this seat plays o"),
        ([SETUP, request("o"), request("o")], "unanswered"),
        ([SETUP, '{"type": "eval_request", "side": "o"}'], "evaluation"),
        ([SETUP, '{"type": "interrupt"}'], "interruptible"),
        ([SETUP, '{"type": "config"}'], "config after setup"),
        ([SETUP, request("o", [((0, 0), "x"), ((0, 0), "o")])], "two stones"),
        ([SETUP, request("o", [*five_in_a_row_for_o(), ((6, 0), "o")])], "impossible board"),
        ([heartbeat(True)], "waiting for a move"),
    ],
)
def test_a_server_that_breaks_the_protocol_is_a_violation(frames: list[str], reason: str) -> None:
    seat = HumanSeat("o")
    events = [event for frame in frames for event in seat.receive(frame)]
    violation = events[-1]
    assert isinstance(violation, Violation), events
    assert reason in violation.reason
    assert seat.over and not seat.awaiting
    assert seat.receive(SETUP) == []  # the seat is closed


def test_config_before_setup_may_carry_the_match() -> None:
    seat = HumanSeat("o")
    assert seat.receive('{"type": "config", "x-match": {"view_distance": 2}}') == []
    assert seat.match.view_distance == 2
    seat.receive(SETUP)
    event = only(seat.receive(request("o", [((0, 0), "x")])))
    assert isinstance(event, MoveRequested) and len(event.legal) == 18


def test_an_invalid_match_in_config_is_a_violation() -> None:
    seat = HumanSeat("o")
    event = only(seat.receive('{"type": "config", "x-match": {"view_distance": 0}}'))
    assert isinstance(event, Violation) and "x-match" in event.reason


# ----------------------------------------------------------------- heartbeats


def test_heartbeats_are_reported_while_they_make_sense() -> None:
    seat = started_seat("o")
    assert seat.receive(heartbeat(False)) == [HeartbeatSeen(False)]
    seat.receive(request("o", [((0, 0), "x")]))
    assert seat.receive(heartbeat(True)) == [HeartbeatSeen(True)]
    seat.answer((1, 0), (2, 0))
    # Sent before the server read the answer: they crossed it on the wire.
    assert seat.receive(heartbeat(True)) == [HeartbeatSeen(True)]
    assert seat.receive(heartbeat(True)) == [HeartbeatSeen(True)]
    assert seat.receive(heartbeat(False)) == [HeartbeatSeen(False)]
    assert seat.heartbeats == 5 and seat.last_heartbeat_waiting is False
    event = only(seat.receive(heartbeat(True)))
    assert isinstance(event, Violation) and "asked for none" in event.reason


# ------------------------------------------------------------------ nope, end


def test_a_nope_refuses_the_seat_and_the_end_still_arrives() -> None:
    seat = started_seat("o")
    seat.receive(request("o", [((0, 0), "x")]))
    nope = NopePacket(reason="illegal move: (9, 9) is out of view")
    assert seat.receive(dump_packet(nope).decode()) == [Refused(nope.reason)]
    assert seat.over and not seat.awaiting
    with pytest.raises(GameFinishedError):
        seat.answer((1, 0), (2, 0))
    assert seat.receive(heartbeat(True)) == []
    end = EndPacket(winner=Player.X, reason=ResultReason.FORFEIT, detail="illegal_move")
    assert seat.receive(dump_packet(end).decode()) == [GameEnded(end)]
    assert seat.receive(dump_packet(end).decode()) == []


def test_an_end_without_board_keeps_the_known_position() -> None:
    seat = started_seat("o")
    seat.receive(request("o", [((0, 0), "x")]))
    end = EndPacket(winner=None, reason=ResultReason.DRAW, detail="aborted")
    [event] = seat.receive(dump_packet(end).decode())
    assert isinstance(event, GameEnded) and event.packet.cause is not None
    assert seat.stones == {(0, 0): "x"} and seat.over


# ------------------------------------------------------ people against people


def opponent_status(side: str, connected: bool, reconnect_by_ms: int | None = None) -> str:
    packet: dict[str, object] = {"type": "opponent_status", "side": side, "connected": connected}
    if reconnect_by_ms is not None:
        packet["reconnect_by_ms"] = reconnect_by_ms
    return json.dumps(packet)


def test_the_opponent_dropping_and_coming_back_are_events_whatever_the_turn() -> None:
    seat = started_seat("o")
    assert only(seat.receive(opponent_status("x", False, 45_000))) == OpponentStatus(
        "x", False, 45_000
    )
    assert isinstance(only(seat.receive(request("o", [((0, 0), "x")]))), MoveRequested)
    # News about the opponent leaves the pending request alone.
    assert only(seat.receive(opponent_status("x", True))) == OpponentStatus("x", True, None)
    assert seat.awaiting
    assert not seat.over


def test_an_opponent_status_without_a_side_is_a_violation() -> None:
    seat = started_seat("o")
    event = only(seat.receive('{"type": "opponent_status", "side": "z", "connected": true}'))
    assert isinstance(event, Violation)


def test_resigning_sends_resign_and_no_move_can_follow() -> None:
    seat = started_seat("o")
    assert isinstance(only(seat.receive(request("o", [((0, 0), "x")]))), MoveRequested)
    assert json.loads(seat.resign()) == {"type": "resign"}
    assert not seat.awaiting
    with pytest.raises(GameFinishedError):
        seat.answer((1, 0), (2, 0))
    with pytest.raises(GameFinishedError):
        seat.resign()
    # Heartbeats that crossed the resignation are no violation; the end is reported.
    assert only(seat.receive(heartbeat(True))) == HeartbeatSeen(True)
    end = EndPacket(winner=Player.X, reason=ResultReason.FORFEIT)
    assert only(seat.receive(dump_packet(end).decode())) == GameEnded(end)
    assert seat.over


def test_a_request_that_crossed_the_resignation_asks_nothing() -> None:
    seat = started_seat("x")
    seat.resign()
    assert seat.receive(request("x", [((0, 0), "x"), ((1, 0), "o"), ((2, 0), "o")])) == []
    assert not seat.awaiting


def test_a_finished_game_cannot_be_resigned() -> None:
    seat = started_seat("o")
    end = EndPacket(winner=Player.X, reason=ResultReason.WIN)
    seat.receive(dump_packet(end).decode())
    with pytest.raises(GameFinishedError):
        seat.resign()
