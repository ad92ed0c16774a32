"""Games that start from an opening (``GameSession(opening=...)``): what each kind of
seat is told, the record, the turn limit. Pure: no sockets, no sleeps.

The last tests relay the session's packets to our own bot side (``bot.session``), which
checks every rule of the spec a capability does not lift: a bot that declares only
``free_setup`` or only ``move_skips`` must see no violation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from bot.bot import MoveDecision
from bot.session import BotSession, Close, Send, Think
from game import notation
from game.opening_rules import OpeningDecidedError, OpeningIllegalStoneError
from game.session import (
    Action,
    GameOver,
    GameSession,
    OpeningSeatError,
    RecordMove,
    RequestStatelessTurn,
    SeatInfo,
    SendTo,
)
from models import (
    OPENING_MOVES_TAG,
    BwsV1Alpha,
    Coord,
    EndCause,
    Match,
    Move,
    MoveRequestPacket,
    Player,
    ResultReason,
    SetupPacket,
    dump_packet,
)
from tests.test_game_session import answer, cells_of, moves_of, request_to, to
from ui.seat import HumanSeat, MoveRequested, SeatStarted

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides
Hex = tuple[int, int]

# Two moves: O, then X; O is to move after it.
BOOK: list[tuple[Player, list[Hex]]] = [(O, [(1, 1), (-2, 2)]), (X, [(-1, 3), (-2, 1)])]
BOOK_STONES = [(0, 0, "x"), (1, 1, "o"), (-2, 2, "o"), (-1, 3, "x"), (-2, 1, "x")]


def wire(moves: Sequence[tuple[Player, list[Hex]]]) -> list[Move]:
    return [Move(side=side, pieces=[Coord(q=q, r=r) for q, r in stones]) for side, stones in moves]


def free_setup() -> SeatInfo:
    return SeatInfo("bot_ws", declares=BwsV1Alpha(free_setup=True))


def move_skips() -> SeatInfo:
    return SeatInfo("bot_ws", declares=BwsV1Alpha(move_skips=True))


def both() -> SeatInfo:
    return SeatInfo("bot_ws", declares=BwsV1Alpha(free_setup=True, move_skips=True))


def human() -> SeatInfo:
    # As GameManager seats a human by default: its requests carry the board.
    return SeatInfo("human", send_board=True)


def opened(
    x: SeatInfo,
    o: SeatInfo,
    opening: Sequence[tuple[Player, list[Hex]]] = BOOK,
    match: Match | None = None,
    tags: dict[str, str] | None = None,
) -> tuple[GameSession, list[Action]]:
    """A game from ``opening`` whose seats both connected at t = 0."""
    session = GameSession(
        "g", match or Match(), {X: x, O: o}, started_at=0.0, opening=wire(opening), tags=tags
    )
    actions = session.seat_connected(X, now=0.0) + session.seat_connected(O, now=0.0)
    return session, actions


# ------------------------------------------------------------ what each seat is told


def test_a_free_setup_bot_gets_the_whole_position_in_setup_and_an_empty_previous() -> None:
    _, actions = opened(free_setup(), free_setup())
    for side in (X, O):
        [setup] = to(actions, side, SetupPacket)
        assert cells_of(setup.board) == BOOK_STONES
    request = request_to(actions, O)
    assert (request.side, request.previous) == (O, [])
    assert request.board is None  # the setup told it all: previous only, as the spec says


def test_a_free_setup_bots_next_previous_holds_only_what_was_played_since() -> None:
    session, _ = opened(free_setup(), free_setup())
    actions = session.receive(O, answer((2, 1), (3, 1)), now=1.0)
    assert moves_of(request_to(actions, X)) == [("o", [(2, 1), (3, 1)])]


def test_a_move_skips_bot_gets_the_standard_setup_and_every_opening_move_in_previous() -> None:
    session, actions = opened(move_skips(), move_skips())
    for side in (X, O):
        [setup] = to(actions, side, SetupPacket)
        assert cells_of(setup.board) == [(0, 0, "x")]
    request = request_to(actions, O)
    assert moves_of(request) == [("o", [(1, 1), (-2, 2)]), ("x", [(-1, 3), (-2, 1)])]
    assert request.board is None  # previous alone tells it the opening
    # X learns the opening with O's first move after it, grouped by move.
    actions = session.receive(O, answer((2, 1), (3, 1)), now=1.0)
    assert moves_of(request_to(actions, X)) == [
        ("o", [(1, 1), (-2, 2)]),
        ("x", [(-1, 3), (-2, 1)]),
        ("o", [(2, 1), (3, 1)]),
    ]


def test_a_seat_with_send_board_also_gets_the_opening_in_its_requests_board() -> None:
    seat = SeatInfo("bot_ws", declares=BwsV1Alpha(move_skips=True), send_board=True)
    _, actions = opened(seat, seat)
    request = request_to(actions, O)
    assert moves_of(request) == [("o", [(1, 1), (-2, 2)]), ("x", [(-1, 3), (-2, 1)])]
    assert cells_of(request.board) == BOOK_STONES


def test_a_bot_declaring_both_learns_the_opening_from_its_setup() -> None:
    _, actions = opened(both(), move_skips())
    assert cells_of(to(actions, X, SetupPacket)[0].board) == BOOK_STONES
    assert cells_of(to(actions, O, SetupPacket)[0].board) == [(0, 0, "x")]


def test_after_an_opening_of_odd_length_x_gets_the_first_request() -> None:
    session, actions = opened(move_skips(), free_setup(), opening=BOOK[:1])
    assert session.awaiting is X
    assert to(actions, O, MoveRequestPacket) == []
    assert moves_of(request_to(actions, X)) == [("o", [(1, 1), (-2, 2)])]


def test_a_human_gets_the_whole_position_in_setup() -> None:
    _, actions = opened(human(), human())
    assert cells_of(to(actions, X, SetupPacket)[0].board) == BOOK_STONES
    assert request_to(actions, O).previous == []


@pytest.mark.parametrize("side", [X, O])
def test_our_desktop_clients_seat_shows_the_opening_and_takes_the_request(side: Player) -> None:
    session, actions = opened(human(), human(), opening=BOOK[:1])
    seat = HumanSeat(side.value)
    [started] = seat.receive(dump_packet(to(actions, side, SetupPacket)[0]))
    assert isinstance(started, SeatStarted)
    assert sorted((q, r, p) for (q, r), p in started.stones.items()) == sorted(BOOK_STONES[:3])
    if side is O:  # O is asked after X's first move
        actions = session.receive(X, answer((2, 1), (3, 1)), now=1.0)
    request = request_to(actions, side)
    [asked] = seat.receive(dump_packet(request))
    assert isinstance(asked, MoveRequested) and asked.side == side.value
    assert sorted((q, r, p) for (q, r), p in asked.stones.items()) == sorted(
        cells_of(request.board)
    )


def test_a_reconnecting_human_gets_the_position_with_the_opening() -> None:
    session, _ = opened(free_setup(), human())
    session.seat_disconnected(O, now=1.0)
    actions = session.seat_connected(O, now=2.0)
    assert cells_of(to(actions, O, SetupPacket)[0].board) == BOOK_STONES
    assert request_to(actions, O).previous == []


def test_a_stateless_bot_reads_the_opening_from_its_full_board() -> None:
    seat = SeatInfo("bot_stateless")
    session = GameSession("g", Match(), {X: seat, O: seat}, started_at=0.0, opening=wire(BOOK))
    [turn, _begun] = session.timer(now=0.0)
    assert isinstance(turn, RequestStatelessTurn) and turn.side is O
    board = turn.request.board
    assert (cells_of(board), board.to_move) == (BOOK_STONES, O)


def test_a_spectator_gets_the_opening_as_moves_of_the_history() -> None:
    session, _ = opened(free_setup(), move_skips())
    setup = session.spectator_setup(now=0.5)
    assert setup.moves is not None
    assert [(m.side, [p.as_tuple() for p in m.pieces]) for m in setup.moves] == BOOK
    assert (cells_of(setup.board), setup.to_move) == (BOOK_STONES, O)


# ---------------------------------------------------------------------- the record


def test_the_record_begins_with_the_opening_and_says_how_long_it_is() -> None:
    match = Match(clock_type="match", clock=60)
    session, _ = opened(free_setup(), free_setup(), match=match, tags={"round": "3"})
    actions = session.receive(O, answer((2, 1), (3, 1)), now=1.5)
    record = session.record()
    book = [(m.side, [p.as_tuple() for p in m.pieces]) for m in record.moves[:2]]
    assert book == BOOK
    # Nobody played the opening: no clock, no thinking time.
    assert all(m.clock_ms is None and m.thinking_ms is None for m in record.moves[:2])
    # The clock started with the first request, after the opening.
    assert (record.moves[2].thinking_ms, record.moves[2].clock_ms) == (1500, 58_500)
    assert record.tags == {"round": "3", OPENING_MOVES_TAG: "2"}
    assert [a.index for a in actions if isinstance(a, RecordMove)] == [2]


def test_a_game_without_an_opening_has_no_opening_tag() -> None:
    session = GameSession(
        "g", Match(), {X: free_setup(), O: free_setup()}, started_at=0.0, tags={"a": "b"}
    )
    assert session.record().tags == {"a": "b"}


def test_a_record_with_an_opening_round_trips_through_notation_with_its_tags() -> None:
    session, _ = opened(free_setup(), free_setup(), tags={"round": "3", "book": "book-01"})
    session.receive(O, answer((2, 1), (3, 1)), now=1.0)
    record = session.record()
    again = notation.loads(notation.dumps(record))
    assert again.tags == record.tags
    assert [m.pieces for m in again.moves] == [m.pieces for m in record.moves]


def test_the_turn_limit_counts_the_opening_moves() -> None:
    session, _ = opened(free_setup(), free_setup(), match=Match(turn_limit=3))
    actions = session.receive(O, answer((2, 1), (3, 1)), now=1.0)
    [over] = [a for a in actions if isinstance(a, GameOver)]
    assert (over.result.reason, over.result.cause) == (ResultReason.DRAW, EndCause.TURN_LIMIT)
    assert len(over.record.moves) == 3


# --------------------------------------------------------------- refused up front


def test_a_websocket_bot_declaring_neither_feature_cannot_start_from_an_opening() -> None:
    plain = SeatInfo("bot_ws", declares=BwsV1Alpha())
    with pytest.raises(OpeningSeatError, match="o: the bot declares neither free_setup"):
        GameSession("g", Match(), {X: free_setup(), O: plain}, started_at=0.0, opening=wire(BOOK))
    # Without an opening it plays as always.
    GameSession("g", Match(), {X: free_setup(), O: plain}, started_at=0.0, opening=[])


@pytest.mark.parametrize(
    ("opening", "match", "error"),
    [
        ([(O, [(1, 0), (10, 0)])], Match(), OpeningIllegalStoneError),
        (
            [(O, [(1, 0), (2, 0)]), (X, [(0, 1), (0, 2)])],
            Match(win_distance=3),
            OpeningDecidedError,
        ),
        (BOOK, Match(turn_limit=2), OpeningDecidedError),
    ],
    ids=["out-of-view", "won", "turn-limit-reached"],
)
def test_an_opening_the_rules_refuse_cannot_start_a_game(
    opening: list[tuple[Player, list[Hex]]], match: Match, error: type[Exception]
) -> None:
    seats = {X: free_setup(), O: free_setup()}
    with pytest.raises(error, match=r"opening\[\d\]"):
        GameSession("g", match, seats, started_at=0.0, opening=wire(opening))


# ------------------------------------------------- our bot side sees no violation


def relay(session: GameSession, bots: dict[Player, BotSession], moves: int) -> list[Any]:
    """Carry the session's packets to the bots and their answers back for ``moves``
    moves; each bot answers with the first two legal cells of the position it built.
    Returns what the bots saw: (side, stones of the position they were asked about)."""
    seen: list[Any] = []
    pending = session.seat_connected(X, now=0.0) + session.seat_connected(O, now=0.0)
    now = 0.0
    while pending and len(seen) < moves:
        action = pending.pop(0)
        if not isinstance(action, SendTo):
            continue
        now += 0.01
        for reply in bots[action.side].receive(dump_packet(action.packet), now):
            assert not isinstance(reply, Close), reply
            if isinstance(reply, Think):
                position = reply.job.position
                # The position the bot built is the game's board at that moment.
                assert sorted(position.stones) == sorted(cells_of(session.board))
                seen.append((reply.job.side, sorted(position.stones)))
                cells = sorted(position.legal_cells())[:2]
                for sent in bots[action.side].job_done(
                    reply.job.job_id, MoveDecision.of(cells), now
                ):
                    assert isinstance(sent, Send), sent
                    pending.extend(session.receive(action.side, sent.data(), now))
    assert not session.over, session.result
    return seen


@pytest.mark.parametrize(
    "declares",
    [{"free_setup": True}, {"move_skips": True}, {"free_setup": True, "move_skips": True}],
    ids=["free-setup", "move-skips", "both"],
)
@pytest.mark.parametrize("opening", [BOOK, BOOK[:1]], ids=["even", "odd"])
def test_bots_declaring_a_way_to_learn_the_opening_play_from_it_without_a_violation(
    declares: dict[str, bool], opening: list[tuple[Player, list[Hex]]]
) -> None:
    capabilities = BwsV1Alpha(**declares)
    seat = SeatInfo("bot_ws", declares=capabilities)
    session = GameSession("g", Match(), {X: seat, O: seat}, started_at=0.0, opening=wire(opening))
    bots = {side: BotSession(capabilities) for side in Player}
    seen = relay(session, bots, moves=4)
    first_side, first_stones = seen[0]
    stones = [(0, 0, "x")] + [(q, r, side.value) for side, cells in opening for q, r in cells]
    assert first_side is (O if len(opening) % 2 == 0 else X)
    assert first_stones == sorted(stones)
    assert len(session.moves) == len(opening) + 4
