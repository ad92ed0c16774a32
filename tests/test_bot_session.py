"""The bot side of the protocol: ``BotSession`` fed packets, no sockets, no sleeps."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bot import MoveDecision
from bot.fallback import fallback_move
from bot.lent_positions import LentPositionChanged
from bot.request_boards import derive_position
from bot.session import (
    CLOSE_INTERNAL_ERROR,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR,
    CLOSE_UNSUPPORTED_DATA,
    Action,
    BotSession,
    Cancel,
    Close,
    Configure,
    Reset,
    Send,
    Think,
    ThinkJob,
)
from bot.session_errors import InvalidMatchError
from bot.session_packets import game_over, read_match
from game.rules import Position
from models import (
    BwsConfigCapability,
    BwsV1Alpha,
    Coord,
    EndPacket,
    EvalResponsePacket,
    Match,
    MoveOption,
    MoveRequestPacket,
    MoveResponsePacket,
    Player,
    PositionEvaluation,
    dump_packet,
    parse_packet,
)

Hex = tuple[int, int]
Json = dict[str, Any]

# ------------------------------------------------------------------- helpers


def frame(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def cells(*stones: tuple[int, int, str]) -> list[Json]:
    return [{"q": q, "r": r, "p": p} for q, r, p in stones]


def setup(*stones: tuple[int, int, str]) -> str:
    return frame("setup", board={"cells": cells(*stones)}) if stones else frame("setup")


def move(side: str, *pieces: Hex) -> Json:
    return {"side": side, "pieces": [{"q": q, "r": r} for q, r in pieces]}


def move_request(
    side: str,
    *previous: Json,
    board: Sequence[tuple[int, int, str]] | None = None,
    limit: float | None = None,
) -> str:
    fields: Json = {"side": side, "previous": list(previous)}
    if board is not None:
        fields["board"] = {"cells": cells(*board)}
    if limit is not None:
        fields["move_time_limit"] = limit
    return frame("move_request", **fields)


def eval_request(side: str, limit: float | None = None) -> str:
    if limit is None:
        return frame("eval_request", side=side)
    return frame("eval_request", side=side, evaluation_time_limit=limit)


def heartbeat(waiting: bool) -> str:
    return frame("heartbeat", waiting=waiting)


def decision(*pieces: Hex) -> MoveDecision:
    return MoveDecision.of(list(pieces))


def only_think(actions: list[Action]) -> ThinkJob:
    assert len(actions) == 1 and isinstance(actions[0], Think), actions
    return actions[0].job


def only_send(actions: list[Action]) -> Send:
    assert len(actions) == 1 and isinstance(actions[0], Send), actions
    return actions[0]


def sent_move(actions: list[Action]) -> list[Hex]:
    packet = only_send(actions).packet
    assert isinstance(packet, MoveResponsePacket)
    return [piece.as_tuple() for piece in packet.move.pieces]


def closing(actions: list[Action]) -> Close:
    assert actions and isinstance(actions[-1], Close), actions
    return actions[-1]


def stones(position: Position) -> set[tuple[int, int, str]]:
    return set(position.stones)


def started(capabilities: BwsV1Alpha | None = None, **match: Any) -> BotSession:
    """A session after the standard setup."""
    session = BotSession(capabilities or BwsV1Alpha(), match=Match(**match) if match else None)
    session.receive(setup(), now=0.0)
    return session


def answered_o(session: BotSession, *pieces: Hex, now: float = 1.0) -> None:
    """O's first request, answered with ``pieces``."""
    job = only_think(session.receive(move_request("o"), now=now))
    session.job_done(job.job_id, decision(*pieces), now=now)


# ----------------------------------------------------------- setup and moves


def test_setup_resets_the_bot_to_the_standard_start() -> None:
    actions = BotSession(BwsV1Alpha()).receive(setup(), now=0.0)
    assert len(actions) == 1 and isinstance(actions[0], Reset)
    assert stones(actions[0].position) == {(0, 0, "x")}
    assert actions[0].position.to_move == "o"


def test_setup_with_the_standard_board_spelled_out_is_accepted() -> None:
    actions = BotSession(BwsV1Alpha()).receive(setup((0, 0, "x")), now=0.0)
    assert isinstance(actions[0], Reset)


def test_move_request_starts_a_move_job_for_the_side_with_two_stones_to_play() -> None:
    job = only_think(started().receive(move_request("o"), now=1.0))
    assert (job.kind, job.side, job.time_limit, job.answer_within) == ("move", Player.O, None, None)
    assert stones(job.position) == {(0, 0, "x")}
    assert (job.position.to_move, job.position.stones_left) == ("o", 2)


def test_job_done_sends_the_bots_move() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    send = only_send(session.job_done(job.job_id, decision((1, 0), (2, 0)), now=2.0))
    assert send.warning is None
    assert dump_packet(send.packet) == (
        b'{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}]}}'
    )


def test_move_response_carries_the_evaluation_and_considerations() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    other = MoveOption(pieces=[Coord(q=0, r=1), Coord(q=0, r=2)])
    answer = MoveDecision(
        pieces=(Coord(q=1, r=0), Coord(q=2, r=0)),
        evaluation=PositionEvaluation(heuristic=-0.25),
        considerations=[other],
    )
    packet = only_send(session.job_done(job.job_id, answer, now=2.0)).packet
    assert isinstance(packet, MoveResponsePacket)
    assert packet.move.evaluation == PositionEvaluation(heuristic=-0.25)
    assert packet.considerations == [other]


@pytest.mark.parametrize("request_frame", [move_request("o"), eval_request("o")])
def test_a_request_before_setup_closes_as_out_of_order(request_frame: str) -> None:
    session = BotSession(BwsV1Alpha(evaluation=True))
    close = closing(session.receive(request_frame, now=0.0))
    assert close.code == CLOSE_PROTOCOL_ERROR
    assert "before setup; a session starts with a setup packet" in close.reason


def test_a_binary_frame_closes_with_unsupported_data() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    cancel, close = session.receive_binary(24, now=2.0)
    assert cancel == Cancel(job.job_id)
    assert close == Close(
        CLOSE_UNSUPPORTED_DATA,
        "binary frame of 24 bytes; the protocol sends each packet as JSON in a text frame",
    )
    assert session.closed and session.receive_binary(24, now=3.0) == []


def test_frames_may_be_bytes() -> None:
    job = only_think(started().receive(move_request("o").encode(), now=1.0))
    assert job.side is Player.O


def test_job_ids_are_unique_across_requests() -> None:
    session = started()
    first = only_think(session.receive(move_request("o"), now=1.0))
    session.job_done(first.job_id, decision((1, 0), (2, 0)), now=1.0)
    second = only_think(
        session.receive(
            move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0))), 2.0
        )
    )
    assert second.job_id != first.job_id


# ------------------------------------------------------------ board tracking


def test_the_board_follows_previous() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)))
    job = only_think(session.receive(request, now=2.0))
    assert stones(job.position) == {
        (0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (-1, 0, "x"), (-2, 0, "x")
    }  # fmt: skip
    assert (job.position.to_move, job.position.stones_left) == ("o", 2)


def test_the_bots_own_move_is_not_on_the_board_until_a_request_confirms_it() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    answered_o(session, (1, 0), (2, 0))
    job = only_think(session.receive(eval_request("o"), now=2.0))
    assert stones(job.position) == {(0, 0, "x")}


def test_the_board_field_is_trusted_over_previous() -> None:
    # The prototype's server: ``previous`` holds only the opponent's move.
    session = started()
    answered_o(session, (1, 0), (2, 0))
    board = [(0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (-1, 0, "x"), (-2, 0, "x")]
    job = only_think(
        session.receive(move_request("o", move("x", (-1, 0), (-2, 0)), board=board), now=2.0)
    )
    assert stones(job.position) == set(board)


def test_an_x_bot_plays_from_prototype_style_requests() -> None:
    session = started()
    board = [(0, 0, "x"), (1, 0, "o"), (2, 0, "o")]
    job = only_think(
        session.receive(move_request("x", move("o", (1, 0), (2, 0)), board=board), now=1.0)
    )
    assert stones(job.position) == set(board)
    assert job.position.to_move == "x"


def test_the_bot_may_change_its_copy_of_the_position() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    job.position.place(1, 0)
    job.position.place(2, 0)  # the bot explored, and left its stones
    assert sent_move(session.job_done(job.job_id, decision((1, 0), (2, 0)), now=2.0)) == [
        (1, 0),
        (2, 0),
    ]


def test_a_whole_game_is_tracked_from_previous_and_from_board_alike() -> None:
    referee = Position()
    from_previous = started()
    from_board = started()
    last_bot_move: Json | None = None
    for turn in range(12):
        if referee.to_move == "x":  # the opponent moves
            opponent = fallback_move(referee).pieces
            for piece in opponent:
                referee.place(piece.q, piece.r)
            theirs = move("x", *(piece.as_tuple() for piece in opponent))
            previous = [last_bot_move, theirs] if last_bot_move else [theirs]
            board = list(referee.stones)
            now = float(turn)
            job = only_think(from_previous.receive(move_request("o", *previous), now=now))
            twin = only_think(from_board.receive(move_request("o", theirs, board=board), now=now))
            assert stones(job.position) == stones(twin.position) == stones(referee)
            answer = fallback_move(job.position)
            from_previous.job_done(job.job_id, answer, now=now)
            from_board.job_done(twin.job_id, answer, now=now)
            for piece in answer.pieces:
                referee.place(piece.q, piece.r)
            last_bot_move = move("o", *(piece.as_tuple() for piece in answer.pieces))
        else:  # O's first move, before the loop's rhythm sets in
            job = only_think(from_previous.receive(move_request("o"), now=0.0))
            twin = only_think(from_board.receive(move_request("o", board=referee.stones), now=0.0))
            answer = fallback_move(job.position)
            from_previous.job_done(job.job_id, answer, now=0.0)
            from_board.job_done(twin.job_id, answer, now=0.0)
            for piece in answer.pieces:
                referee.place(piece.q, piece.r)
            last_bot_move = move("o", *(piece.as_tuple() for piece in answer.pieces))
    assert len(referee) > 20


def test_a_move_request_board_with_a_winning_line_closes() -> None:
    line = [(q, 0, "o") for q in range(1, 7)]
    crosses = [(0, r, "x") for r in range(5)]  # one X more than O, as with O to move
    actions = started().receive(move_request("x", board=[*crosses, *line]), now=1.0)
    close = closing(actions)
    assert close.code == CLOSE_POLICY_VIOLATION
    assert "6 in a row" in close.reason


def test_a_previous_stone_on_a_taken_cell_closes() -> None:
    close = closing(started().receive(move_request("x", move("o", (0, 0), (1, 0))), now=1.0))
    assert close.code == CLOSE_POLICY_VIOLATION
    assert "previous[0]" in close.reason and "(0, 0)" in close.reason


def test_a_board_with_two_stones_on_a_cell_closes() -> None:
    board = [(0, 0, "x"), (1, 0, "o"), (1, 0, "o")]
    close = closing(started().receive(move_request("x", board=board), now=1.0))
    assert "two stones on (1, 0)" in close.reason


@pytest.mark.parametrize(
    ("board", "side", "reason"),
    [
        ([(1, 0, "x"), (2, 0, "o"), (3, 0, "o")], "x", r"no X stone on \(0, 0\)"),
        ([(0, 0, "x"), (1, 0, "o"), (2, 0, "o")], "o", "1 X and 2 O stones with O to move"),
        ([(0, 0, "x"), (1, 0, "o"), (90, 0, "o")], "x", r"\(90, 0\) is 90 from the origin"),
    ],
)
def test_a_board_no_game_can_reach_closes_with_the_reason(
    board: list[tuple[int, int, str]], side: str, reason: str
) -> None:
    close = closing(started().receive(move_request(side, board=board), now=1.0))
    assert close.code == CLOSE_POLICY_VIOLATION
    assert re.search(f"impossible board: {reason}.*does not declare 'free_setup'", close.reason)


def test_with_free_setup_any_board_is_played() -> None:
    far = [(0, 0, "x"), (1, 0, "o"), (300_000, 0, "o")]
    session = started(BwsV1Alpha(free_setup=True))
    job = only_think(session.receive(move_request("x", board=far), now=1.0))
    assert stones(job.position) == set(far)


def test_with_free_move_order_the_counts_may_be_anything() -> None:
    crowded = [(0, 0, "x"), (1, 0, "x"), (2, 0, "x")]
    session = started(BwsV1Alpha(free_move_order=True))
    job = only_think(session.receive(move_request("o", board=crowded), now=1.0))
    assert stones(job.position) == set(crowded)


# --------------------------------------------------------------- time limits


def test_move_time_limit_is_ignored_when_not_declared() -> None:
    job = only_think(started().receive(move_request("o", limit=5.0), now=1.0))
    assert (job.time_limit, job.answer_within) == (None, None)


@pytest.mark.parametrize(("limit", "within"), [(10.0, 9.5), (1.0, 0.8)])
def test_move_time_limit_is_honoured_less_a_network_margin_when_declared(
    limit: float, within: float
) -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=limit), now=1.0))
    assert job.time_limit == limit
    assert job.answer_within == pytest.approx(within)


def test_answer_due_sends_the_best_move_so_far_when_it_is_legal() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    actions = session.answer_due(job.job_id, decision((0, 1), (0, 2)), now=2.6)
    assert sent_move(actions) == [(0, 1), (0, 2)]
    assert only_send(actions).warning is None


def test_answer_due_sends_a_fallback_when_the_best_move_is_illegal() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    actions = session.answer_due(job.job_id, decision((0, 0), (0, 2)), now=2.6)
    assert sent_move(actions) == [(-1, 0), (-2, 0)]
    warning = only_send(actions).warning
    assert warning is not None and "time ran out" in warning and "taken" in warning


def test_answer_due_sends_a_fallback_when_the_bot_reported_nothing() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    actions = session.answer_due(job.job_id, None, now=2.6)
    assert sent_move(actions) == [(-1, 0), (-2, 0)]
    assert "time ran out" in (only_send(actions).warning or "")


def test_a_late_result_after_answer_due_is_ignored() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    session.answer_due(job.job_id, None, now=2.6)
    assert session.job_done(job.job_id, decision((1, 0), (2, 0)), now=3.0) == []


def test_answer_due_after_the_answer_was_sent_is_ignored() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    session.job_done(job.job_id, decision((1, 0), (2, 0)), now=1.5)
    assert session.answer_due(job.job_id, None, now=2.6) == []


def test_the_answer_sent_at_the_deadline_is_the_move_the_next_request_must_confirm() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    session.answer_due(job.job_id, decision((0, 1), (0, 2)), now=2.6)
    session.job_done(job.job_id, decision((1, 0), (2, 0)), now=3.0)  # late, ignored
    request = move_request("o", move("o", (0, 1), (0, 2)), move("x", (-1, 0), (-2, 0)))
    assert only_think(session.receive(request, now=4.0)).kind == "move"


def test_evaluation_time_limit_is_ignored_when_not_declared() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    assert only_think(session.receive(eval_request("o", limit=3.0), now=1.0)).time_limit is None


def test_evaluation_time_limit_is_honoured_when_declared() -> None:
    session = started(BwsV1Alpha(evaluation=True, evaluation_time_limit=True))
    job = only_think(session.receive(eval_request("o", limit=3.0), now=1.0))
    assert (job.time_limit, job.answer_within) == (3.0, 2.5)


def test_an_evaluation_out_of_time_is_answered_with_an_empty_evaluation() -> None:
    session = started(BwsV1Alpha(evaluation=True, evaluation_time_limit=True))
    job = only_think(session.receive(eval_request("o", limit=3.0), now=1.0))
    send = only_send(session.answer_due(job.job_id, None, now=3.5))
    assert send.packet == EvalResponsePacket(evaluation=PositionEvaluation())
    assert send.warning is not None


def test_match_time_limits_do_not_reach_bots_that_do_not_declare_them() -> None:
    job = only_think(started().receive(move_request("o", limit=0.001), now=1.0))
    assert job.answer_within is None


# ------------------------------------------------------------ bad answers


def test_a_bot_that_raises_gets_a_fallback_move() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    actions = session.job_failed(job.job_id, RuntimeError("boom"), now=2.0)
    assert sent_move(actions) == [(-1, 0), (-2, 0)]
    assert "boom" in (only_send(actions).warning or "")


@pytest.mark.parametrize(
    ("pieces", "why"),
    [
        (((0, 0), (1, 0)), "taken"),
        (((20, 0), (1, 0)), "farther than view_distance"),
        (((1, 0), (1, 0)), "both stones"),
    ],
    ids=["occupied", "out_of_view", "same_cell_twice"],
)
def test_an_illegal_move_is_replaced_by_a_fallback(pieces: tuple[Hex, Hex], why: str) -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    actions = session.job_done(job.job_id, decision(*pieces), now=2.0)
    assert sent_move(actions) == [(-1, 0), (-2, 0)]
    assert why in (only_send(actions).warning or "")


def test_a_result_that_is_not_a_move_is_replaced_by_a_fallback() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    actions = session.job_done(job.job_id, PositionEvaluation(heuristic=0.0), now=2.0)
    assert sent_move(actions) == [(-1, 0), (-2, 0)]


def test_a_move_whose_extras_cannot_be_sent_is_sent_without_them() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    answer = decision((1, 0), (2, 0))
    answer.considerations = ["not a move"]  # type: ignore[list-item]
    actions = session.job_done(job.job_id, answer, now=2.0)
    assert sent_move(actions) == [(1, 0), (2, 0)]
    assert "considerations" in (only_send(actions).warning or "")


def test_a_winning_first_stone_is_a_legal_answer() -> None:
    crosses = [(0, 0, "x"), (5, -1, "x"), (6, -1, "x"), (-3, 3, "x"), (-3, 4, "x"), (-4, 4, "x")]
    board = [*crosses, *[(q, 1, "o") for q in range(5)]]
    session = started()
    job = only_think(session.receive(move_request("o", board=board), now=1.0))
    actions = session.job_done(job.job_id, decision((5, 1), (0, 5)), now=2.0)
    assert only_send(actions).warning is None


def test_results_of_unknown_jobs_are_ignored() -> None:
    session = started()
    only_think(session.receive(move_request("o"), now=1.0))
    assert session.job_done(99, decision((1, 0), (2, 0)), now=2.0) == []
    assert session.job_failed(99, RuntimeError(), now=2.0) == []
    assert session.answer_due(99, None, now=2.0) == []


# ---------------------------------------------------------------- evaluation


def test_eval_request_closes_when_evaluation_is_not_declared() -> None:
    close = closing(started().receive(eval_request("o"), now=1.0))
    assert close.code == CLOSE_PROTOCOL_ERROR and "'evaluation'" in close.reason


def test_eval_request_starts_an_eval_job() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    job = only_think(session.receive(eval_request("o"), now=1.0))
    assert (job.kind, job.side, job.position.to_move) == ("eval", Player.O, "o")


def test_an_evaluation_is_sent_as_eval_response() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    job = only_think(session.receive(eval_request("o"), now=1.0))
    send = only_send(session.job_done(job.job_id, PositionEvaluation(win_in=-3), now=2.0))
    assert send.packet == EvalResponsePacket(evaluation=PositionEvaluation(win_in=-3))


def test_an_evaluator_that_raises_gets_an_empty_evaluation_sent() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    job = only_think(session.receive(eval_request("o"), now=1.0))
    send = only_send(session.job_failed(job.job_id, ValueError("no idea"), now=2.0))
    assert send.packet == EvalResponsePacket(evaluation=PositionEvaluation())
    assert "no idea" in (send.warning or "")


def test_an_eval_request_while_a_move_is_pending_closes() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    session.receive(move_request("o"), now=1.0)
    cancel, close = session.receive(eval_request("o"), now=2.0)
    assert isinstance(cancel, Cancel) and isinstance(close, Close)
    assert "unanswered" in close.reason


# -------------------------------------------------------------------- config


def test_config_closes_when_config_is_not_declared() -> None:
    close = closing(BotSession(BwsV1Alpha()).receive(frame("config", depth=3), now=0.0))
    assert close.code == CLOSE_PROTOCOL_ERROR and "'config'" in close.reason


def test_config_before_setup_configures_the_bot() -> None:
    session = BotSession(BwsV1Alpha(config=BwsConfigCapability()))
    actions = session.receive(json.dumps({"type": "config", "depth": 4, "x-seed": 7}), now=0.0)
    assert actions == [Configure(depth=4, extras={"x-seed": 7})]


def test_config_passes_only_x_keys_to_the_bot() -> None:
    session = BotSession(BwsV1Alpha(config=BwsConfigCapability()))
    packet = {"type": "config", "future_setting": 1, "x-style": "calm"}
    assert session.receive(json.dumps(packet), now=0.0) == [
        Configure(depth=None, extras={"x-style": "calm"})
    ]


def test_config_after_setup_closes_without_dynamic() -> None:
    session = started(BwsV1Alpha(config=BwsConfigCapability()))
    close = closing(session.receive(frame("config", depth=3), now=1.0))
    assert "'config.dynamic'" in close.reason


def test_config_after_setup_is_accepted_with_dynamic() -> None:
    session = started(BwsV1Alpha(config=BwsConfigCapability(dynamic=True)))
    assert session.receive(frame("config", depth=3), now=1.0) == [Configure(3, {})]


def test_dynamic_config_while_thinking_leaves_the_job_running() -> None:
    session = started(BwsV1Alpha(config=BwsConfigCapability(dynamic=True)))
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert session.receive(frame("config", depth=3), now=1.5) == [Configure(3, {})]
    assert sent_move(session.job_done(job.job_id, decision((1, 0), (2, 0)), 2.0))


def test_x_match_in_config_sets_the_match_of_jobs() -> None:
    session = BotSession(BwsV1Alpha(config=BwsConfigCapability()))
    settings = {"view_distance": 10, "win_distance": 5, "heartbeat": 2000}
    [configure] = session.receive(json.dumps({"type": "config", "x-match": settings}), now=0.0)
    assert configure == Configure(depth=None, extras={"x-match": settings})
    session.receive(setup(), now=0.5)
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert job.match == Match(view_distance=10, win_distance=5, heartbeat=2000)
    assert (job.position.view_distance, job.position.win_distance) == (10, 5)


def test_an_invalid_x_match_closes_with_the_reason() -> None:
    session = BotSession(BwsV1Alpha(config=BwsConfigCapability()))
    packet = {"type": "config", "x-match": {"view_distance": 0}}
    close = closing(session.receive(json.dumps(packet), now=0.0))
    assert close.code == CLOSE_PROTOCOL_ERROR
    assert "x-match" in close.reason and "view_distance" in close.reason


def test_without_x_match_jobs_get_the_match_given_to_the_session() -> None:
    job = only_think(started(view_distance=3).receive(move_request("o"), now=1.0))
    assert job.match.view_distance == 3


# ---------------------------------------------------------------- free_setup


def test_a_free_setup_board_closes_without_free_setup() -> None:
    close = closing(BotSession(BwsV1Alpha()).receive(setup((0, 0, "x"), (1, 0, "o")), 0.0))
    assert "'free_setup'" in close.reason and "o (1, 0)" in close.reason


def test_any_setup_board_is_accepted_with_free_setup() -> None:
    session = BotSession(BwsV1Alpha(free_setup=True))
    [reset] = session.receive(setup((3, 3, "o"), (4, 4, "x")), now=0.0)
    assert isinstance(reset, Reset)
    job = only_think(session.receive(move_request("x"), now=1.0))
    assert stones(job.position) == {(3, 3, "o"), (4, 4, "x")}


def test_an_empty_setup_board_is_accepted_with_free_setup() -> None:
    session = BotSession(BwsV1Alpha(free_setup=True))
    session.receive(frame("setup", board={"cells": []}), now=0.0)
    job = only_think(session.receive(move_request("x"), now=1.0))
    assert sent_move(session.job_done(job.job_id, fallback_move(job.position), 2.0))


def test_a_setup_with_a_winning_line_closes() -> None:
    session = BotSession(BwsV1Alpha(free_setup=True))
    close = closing(session.receive(setup(*[(q, 0, "x") for q in range(6)]), now=0.0))
    assert close.code == CLOSE_POLICY_VIOLATION and "in a row" in close.reason


# ----------------------------------------------------------- resettable_state


def test_a_second_setup_closes_without_resettable_state() -> None:
    close = closing(started().receive(setup(), now=1.0))
    assert "'resettable_state'" in close.reason


def test_a_setup_after_a_request_closes_without_resettable_state() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    assert closing(session.receive(setup(), now=2.0)).code == CLOSE_PROTOCOL_ERROR


def test_a_second_setup_resets_the_board_with_resettable_state() -> None:
    session = started(BwsV1Alpha(resettable_state=True))
    answered_o(session, (1, 0), (2, 0))
    session.receive(move_request("o", move("o", (1, 0), (2, 0)), move("x", (3, 0), (4, 0))), 2.0)
    actions = session.receive(setup(), now=3.0)
    assert isinstance(actions[-1], Reset)
    job = only_think(session.receive(move_request("o"), now=4.0))
    assert stones(job.position) == {(0, 0, "x")}


def test_a_setup_while_thinking_cancels_the_job_with_resettable_state() -> None:
    session = started(BwsV1Alpha(resettable_state=True))
    job = only_think(session.receive(move_request("o"), now=1.0))
    cancel, reset = session.receive(setup(), now=2.0)
    assert cancel == Cancel(job.job_id) and isinstance(reset, Reset)
    assert session.job_done(job.job_id, decision((1, 0), (2, 0)), now=3.0) == []


# ---------------------------------------------------------------- move_skips


def test_a_substituted_bot_move_closes_without_move_skips() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (3, 0)), move("x", (-1, 0), (-2, 0)))
    close = closing(session.receive(request, now=2.0))
    assert "'move_skips'" in close.reason and "[(1, 0), (2, 0)]" in close.reason


def test_a_substituted_bot_move_is_played_with_move_skips() -> None:
    session = started(BwsV1Alpha(move_skips=True))
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (3, 0)), move("x", (-1, 0), (-2, 0)))
    job = only_think(session.receive(request, now=2.0))
    assert (3, 0, "o") in stones(job.position) and (2, 0, "o") not in stones(job.position)


def test_a_bot_move_in_another_stone_order_is_the_same_move() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (2, 0), (1, 0)), move("x", (-1, 0), (-2, 0)))
    assert only_think(session.receive(request, now=2.0)).kind == "move"


def test_a_skipped_bot_move_closes_without_move_skips() -> None:
    session = started(BwsV1Alpha(dual_sided=True))
    answered_o(session, (1, 0), (2, 0))
    close = closing(session.receive(move_request("x", move("o", (3, 0), (4, 0))), now=2.0))
    assert "'move_skips'" in close.reason


def test_a_board_without_the_bots_move_closes_without_move_skips() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    board = [(0, 0, "x"), (1, 0, "o"), (3, 0, "o"), (-1, 0, "x"), (-2, 0, "x")]
    request = move_request("o", move("x", (-1, 0), (-2, 0)), board=board)
    assert "board does not hold" in closing(session.receive(request, now=2.0)).reason


def test_a_board_without_the_bots_move_is_played_with_move_skips() -> None:
    session = started(BwsV1Alpha(move_skips=True))
    answered_o(session, (1, 0), (2, 0))
    board = [(0, 0, "x"), (1, 0, "o"), (3, 0, "o"), (-1, 0, "x"), (-2, 0, "x")]
    request = move_request("o", move("x", (-1, 0), (-2, 0)), board=board)
    assert stones(only_think(session.receive(request, now=2.0)).position) == set(board)


def test_more_than_two_previous_moves_close_without_move_skips() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    request = move_request(
        "o",
        move("o", (1, 0), (2, 0)),
        move("x", (-1, 0), (-2, 0)),
        move("o", (3, 0), (4, 0)),
        move("x", (-3, 0), (-4, 0)),
    )
    assert "at most 2" in closing(session.receive(request, now=2.0)).reason


def test_more_than_two_previous_moves_are_played_with_move_skips() -> None:
    session = started(BwsV1Alpha(move_skips=True))
    answered_o(session, (1, 0), (2, 0))
    request = move_request(
        "o",
        move("o", (1, 0), (2, 0)),
        move("x", (-1, 0), (-2, 0)),
        move("o", (3, 0), (4, 0)),
        move("x", (-3, 0), (-4, 0)),
    )
    assert len(only_think(session.receive(request, now=2.0)).position) == 9


# ---------------------------------------------------------------- dual_sided


def test_a_request_for_the_other_side_closes_without_dual_sided() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    close = closing(session.receive(move_request("x", move("o", (1, 0), (2, 0))), now=2.0))
    assert "'dual_sided'" in close.reason


def test_an_eval_request_for_the_other_side_closes_without_dual_sided() -> None:
    session = started(BwsV1Alpha(evaluation=True))
    answered_o(session, (1, 0), (2, 0))
    assert "'dual_sided'" in closing(session.receive(eval_request("x"), now=2.0)).reason


def test_a_dual_sided_bot_plays_both_sides_in_turn() -> None:
    session = started(BwsV1Alpha(dual_sided=True))
    answered_o(session, (1, 0), (2, 0))
    job = only_think(session.receive(move_request("x", move("o", (1, 0), (2, 0))), now=2.0))
    assert (job.side, job.position.to_move, len(job.position)) == (Player.X, "x", 3)
    session.job_done(job.job_id, decision((-1, 0), (-2, 0)), now=3.0)
    job = only_think(session.receive(move_request("o", move("x", (-1, 0), (-2, 0))), now=4.0))
    assert (job.side, len(job.position)) == (Player.O, 5)


def test_a_dual_sided_request_out_of_turn_closes_without_free_move_order() -> None:
    session = started(BwsV1Alpha(dual_sided=True))
    close = closing(session.receive(move_request("x"), now=1.0))
    assert "o is due to move" in close.reason and "'free_move_order'" in close.reason


# ----------------------------------------------------------- free_move_order


def test_previous_moves_that_do_not_alternate_close_without_free_move_order() -> None:
    session = started(BwsV1Alpha(move_skips=True))
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (2, 0)), move("o", (3, 0), (4, 0)))
    close = closing(session.receive(request, now=2.0))
    assert "previous[1]" in close.reason and "'free_move_order'" in close.reason


def test_previous_moves_in_any_order_are_played_with_free_move_order() -> None:
    session = started(BwsV1Alpha(free_move_order=True))
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (2, 0)), move("o", (3, 0), (4, 0)))
    assert len(only_think(session.receive(request, now=2.0)).position) == 5


def test_a_request_for_the_side_that_just_moved_closes_without_free_move_order() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    close = closing(session.receive(move_request("o", move("o", (1, 0), (2, 0))), now=2.0))
    assert "the request is for o right after a move by o" in close.reason


def test_an_x_bot_asked_to_move_before_o_closes() -> None:
    close = closing(started().receive(move_request("x"), now=1.0))
    assert "o is due to move, but the request is for x" in close.reason


# --------------------------------------------------------------- interruptible


def test_interrupt_closes_when_interruptible_is_not_declared() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    cancel, close = session.receive(frame("interrupt"), now=2.0)
    assert cancel == Cancel(job.job_id)
    assert isinstance(close, Close) and "'interruptible'" in close.reason


def test_interrupt_cancels_the_job_and_drops_the_request() -> None:
    session = started(BwsV1Alpha(interruptible=True))
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert session.receive(frame("interrupt"), now=2.0) == [Cancel(job.job_id)]
    assert session.job_done(job.job_id, decision((1, 0), (2, 0)), now=3.0) == []


def test_interrupt_rolls_back_the_previous_of_the_dropped_request() -> None:
    session = started(BwsV1Alpha(interruptible=True))
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)))
    session.receive(request, now=2.0)
    session.receive(frame("interrupt"), now=3.0)
    job = only_think(session.receive(request, now=4.0))  # the same moves, sent again
    assert len(job.position) == 5


def test_interrupt_with_nothing_pending_is_harmless() -> None:
    session = started(BwsV1Alpha(interruptible=True))
    assert session.receive(frame("interrupt"), now=1.0) == []
    assert not session.closed


def test_a_second_request_while_one_is_pending_closes() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    cancel, close = session.receive(move_request("o"), now=2.0)
    assert cancel == Cancel(job.job_id)
    assert isinstance(close, Close) and "unanswered" in close.reason


# ---------------------------------------------------------------- heartbeats


def test_a_heartbeat_not_waiting_is_ignored() -> None:
    session = started()
    assert session.receive(heartbeat(False), now=100.0) == []


def test_a_heartbeat_waiting_with_nothing_pending_closes() -> None:
    close = closing(started().receive(heartbeat(True), now=1.0))
    assert close.code == CLOSE_POLICY_VIOLATION and "no request is pending" in close.reason


def test_a_heartbeat_waiting_while_thinking_never_closes() -> None:
    session = started(heartbeat=100)
    job = only_think(session.receive(move_request("o"), now=1.0))
    for second in range(2, 600):  # thinking for ten minutes, heartbeats every second
        assert session.receive(heartbeat(True), now=float(second)) == []
    assert sent_move(session.job_done(job.job_id, decision((1, 0), (2, 0)), now=600.0))


def test_a_heartbeat_not_waiting_while_thinking_leaves_the_job_running() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert session.receive(heartbeat(False), now=2.0) == []
    assert sent_move(session.job_done(job.job_id, decision((1, 0), (2, 0)), now=3.0))


def test_a_heartbeat_that_crossed_the_answer_is_tolerated() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0), now=10.0)
    assert session.receive(heartbeat(True), now=10.05) == []


def test_a_heartbeat_waiting_long_after_the_answer_closes() -> None:
    session = started(heartbeat=1000)
    answered_o(session, (1, 0), (2, 0), now=10.0)
    assert closing(session.receive(heartbeat(True), now=13.0)).code == CLOSE_POLICY_VIOLATION


def test_the_crossing_grace_follows_the_observed_heartbeat_interval() -> None:
    session = started(heartbeat=1000)
    session.receive(heartbeat(False), now=0.0)
    session.receive(heartbeat(False), now=3.0)  # the server beats every 3 s, not 1 s
    answered_o(session, (1, 0), (2, 0), now=4.0)
    assert session.receive(heartbeat(True), now=9.0) == []


def test_a_heartbeat_waiting_while_a_late_job_still_runs_does_not_close() -> None:
    session = started(BwsV1Alpha(move_time_limit=True), heartbeat=1000)
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    session.answer_due(job.job_id, None, now=2.6)
    assert session.receive(heartbeat(True), now=60.0) == []


# ---------------------------------------------------------------- bad packets


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"side": "o"}', "type: missing"),
        ('{"type": "dance"}', "unknown type 'dance'"),
        ('{"type": "move_response", "move": {"pieces": []}}', "not accepted here"),
        ('{"type": "move_request", "side": "z", "previous": []}', "side"),
        ('{"type": "move_request", "side": "o"}', "previous"),
        ('{"type": "heartbeat", "waiting": "yes"}', "waiting"),
        ('{"type": "setup", "board": {"cells": [{"q": 0, "r": 0}]}}', "p"),
        ('{"type": "move_request", "side": "o", "previous": [], "move_time_limit": -1}', "limit"),
        ('{"type": "end", "winner": "x", "reason": "draw"}', "draw has no winner"),
        (
            '{"type": "move_request", "side": "o", "previous": [], "move_time_limit": 1e400}',
            "move_time_limit: a number out of range",
        ),
    ],
    ids=[
        "not_json",
        "not_an_object",
        "no_type",
        "unknown_type",
        "bot_packet",
        "bad_side",
        "no_previous",
        "bad_waiting",
        "cell_without_side",
        "negative_time_limit",
        "inconsistent_end",
        "time_limit_no_float_holds",
    ],
)
def test_a_malformed_packet_closes_with_the_reason(data: str, expected: str) -> None:
    close = closing(started().receive(data, now=1.0))
    assert close.code == CLOSE_PROTOCOL_ERROR
    assert close.reason.startswith("bad packet: ") and expected in close.reason


def test_a_frame_that_is_not_text_closes() -> None:
    close = closing(started().receive(None, now=1.0))  # type: ignore[arg-type]
    assert close.code == CLOSE_PROTOCOL_ERROR


def test_a_bad_packet_while_thinking_cancels_the_job_then_closes() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert session.receive("garbage", now=2.0)[0] == Cancel(job.job_id)


def test_closing_is_final() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    session.receive("garbage", now=2.0)
    assert session.closed
    assert session.receive(move_request("o"), now=3.0) == []
    assert session.job_done(job.job_id, decision((1, 0), (2, 0)), now=3.0) == []
    assert session.answer_due(job.job_id, None, now=3.0) == []
    assert session.connection_lost(now=3.0) == []


# ------------------------------------------------------------------ end, nope


def test_end_closes_normally_with_the_result() -> None:
    packet = {"type": "end", "winner": "x", "reason": "forfeit", "detail": "timeout"}
    close = closing(started().receive(json.dumps(packet), now=1.0))
    assert close == Close(CLOSE_NORMAL, "game over: x won by forfeit (timeout)")


def test_end_in_a_draw_closes_normally() -> None:
    close = closing(started().receive(frame("end", winner=None, reason="draw"), now=1.0))
    assert close == Close(CLOSE_NORMAL, "game over: draw")


def test_end_while_thinking_cancels_the_job() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    cancel, close = session.receive(frame("end", winner="o", reason="win"), now=2.0)
    assert cancel == Cancel(job.job_id) and isinstance(close, Close)


def test_nope_closes_with_the_servers_reason() -> None:
    close = closing(started().receive(frame("nope", reason="two answers"), now=1.0))
    assert close == Close(CLOSE_NORMAL, "server said nope: two answers")


# ------------------------------------------------------------ connection_lost


def test_connection_lost_cancels_the_running_job() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert session.connection_lost(now=2.0) == [Cancel(job.job_id)]
    assert session.closed


def test_connection_lost_cancels_a_late_job_still_running() -> None:
    session = started(BwsV1Alpha(move_time_limit=True))
    job = only_think(session.receive(move_request("o", limit=2.0), now=1.0))
    session.answer_due(job.job_id, None, now=2.6)
    assert session.connection_lost(now=3.0) == [Cancel(job.job_id)]


def test_connection_lost_with_nothing_running_returns_nothing() -> None:
    assert started().connection_lost(now=1.0) == []


# ------------------------------------------------------------------ property

_VALID_FRAMES = [
    setup(),
    setup((0, 0, "x"), (1, 0, "o")),
    frame("config", depth=2),
    json.dumps({"type": "config", "x-match": {"view_distance": 4}}),
    json.dumps({"type": "config", "x-match": {"view_distance": "far"}}),
    move_request("o"),
    move_request("x", move("o", (1, 0), (2, 0))),
    move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0))),
    move_request("x", board=[(0, 0, "x"), (1, 0, "o"), (2, 0, "o")], limit=1.0),
    eval_request("o", limit=0.5),
    eval_request("x"),
    heartbeat(True),
    heartbeat(False),
    frame("interrupt"),
    frame("end", winner="x", reason="win"),
    frame("nope", reason="no"),
]

_capabilities = st.builds(
    BwsV1Alpha,
    move_time_limit=st.booleans(),
    evaluation_time_limit=st.booleans(),
    config=st.one_of(st.none(), st.builds(BwsConfigCapability, dynamic=st.booleans())),
    free_setup=st.booleans(),
    move_skips=st.booleans(),
    dual_sided=st.booleans(),
    free_move_order=st.booleans(),
    evaluation=st.booleans(),
    resettable_state=st.booleans(),
    interruptible=st.booleans(),
)

_results = st.sampled_from(
    [
        decision((1, 0), (2, 0)),
        decision((0, 0), (1, 0)),
        decision((-1, 0), (-2, 0)),
        PositionEvaluation(heuristic=0.5),
    ]
)

_events = st.one_of(
    st.tuples(st.just("receive"), st.sampled_from(_VALID_FRAMES)),
    st.tuples(st.just("receive"), st.text(max_size=40)),
    st.tuples(st.just("receive"), st.binary(max_size=40)),
    st.tuples(st.just("job_done"), _results),
    st.tuples(st.just("job_failed"), st.just(RuntimeError("boom"))),
    st.tuples(st.just("answer_due"), st.one_of(st.none(), _results)),
    st.tuples(st.just("connection_lost"), st.none()),
)


@settings(max_examples=300, deadline=None)
@given(capabilities=_capabilities, events=st.lists(_events, max_size=30))
def test_no_input_sequence_raises_and_closing_is_final(
    capabilities: BwsV1Alpha, events: list[tuple[str, Any]]
) -> None:
    session = BotSession(capabilities)
    last_job = 1
    done = False  # a Close was issued, or the connection was lost
    for step, (kind, value) in enumerate(events):
        now = float(step)
        if kind == "receive":
            actions = session.receive(value, now)
        elif kind == "job_done":
            actions = session.job_done(last_job, value, now)
        elif kind == "job_failed":
            actions = session.job_failed(last_job, value, now)
        elif kind == "answer_due":
            actions = session.answer_due(last_job, value, now)
        else:
            actions = session.connection_lost(now)
        if done:
            assert actions == []
            continue
        closes = [action for action in actions if isinstance(action, Close)]
        assert len(closes) <= 1 and (not closes or actions[-1] is closes[0])
        assert all(close.code != CLOSE_INTERNAL_ERROR for close in closes), closes
        for action in actions:
            if isinstance(action, Think):
                last_job = action.job.job_id
            if isinstance(action, Send):
                dump_packet(action.packet)
        done = bool(closes) or kind == "connection_lost"
        assert session.closed == done


# ------------------------------------------------- derived positions (incremental)


def rebuilding(capabilities: BwsV1Alpha | None = None, **match: Any) -> BotSession:
    """A session that builds every position from scratch, as the reference."""
    session = BotSession(capabilities or BwsV1Alpha(), match=Match(**match) if match else None)
    session._derive_positions = False
    return session


def assert_same_position(derived: Position, reference: Position) -> None:
    assert derived is not reference
    assert derived.stones == reference.stones  # the same stones, in the same order
    assert derived.setup == reference.setup
    assert (derived.to_move, derived.stones_left) == (reference.to_move, reference.stones_left)
    assert (derived.moves_played, derived.outcome) == (reference.moves_played, reference.outcome)
    assert (derived.view_distance, derived.win_distance) == (
        reference.view_distance,
        reference.win_distance,
    )
    assert list(derived.legal_cells()) == list(reference.legal_cells())


def assert_same_actions(derived: list[Action], reference: list[Action]) -> None:
    assert [type(action) for action in derived] == [type(action) for action in reference]
    for mine, theirs in zip(derived, reference, strict=True):
        if isinstance(mine, Think):
            assert isinstance(theirs, Think)
            assert (mine.job.job_id, mine.job.kind, mine.job.side) == (
                theirs.job.job_id,
                theirs.job.kind,
                theirs.job.side,
            )
            assert mine.job.position is not mine.job.asked
            assert_same_position(mine.job.position, theirs.job.position)
            assert_same_position(mine.job.asked, theirs.job.asked)
        elif isinstance(mine, Reset):
            assert isinstance(theirs, Reset)
            assert_same_position(mine.position, theirs.position)
        elif isinstance(mine, Send):
            assert isinstance(theirs, Send)
            assert (mine.packet, mine.warning, mine.data()) == (
                theirs.packet,
                theirs.warning,
                theirs.data(),
            )
        else:
            assert mine == theirs


def test_a_request_that_adds_the_moves_of_previous_derives_the_position() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    board = [(0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (-1, 0, "x"), (-2, 0, "x")]
    request = move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)), board=board)
    job = only_think(session.receive(request, now=2.0))
    assert job.position.stones == board
    assert (job.position.to_move, job.position.stones_left) == ("o", 2)
    assert (job.position.setup, job.position.moves_played) == (board, 0)
    reference = Position(setup=board, to_move="o")
    assert set(job.position.legal_cells()) == set(reference.legal_cells())


def test_a_bug_answering_closes_the_session_as_an_internal_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))

    def broken(*args: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr("bot.session.move_answer", broken)
    [close] = session.job_done(job.job_id, decision((1, 0), (2, 0)), now=2.0)
    assert isinstance(close, Close) and close.code == CLOSE_INTERNAL_ERROR
    assert "KeyError('oops')" in close.reason and session.closed


def test_the_same_board_asked_again_is_the_confirmed_position_and_another_is_rebuilt() -> None:
    # move_skips: a server may ask the same position again, board and all (previous
    # empty); a board of the same size with other stones is not the confirmed one.
    session = started(BwsV1Alpha(move_skips=True))
    board = [(0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (-1, 0, "x"), (-2, 0, "x")]
    first = only_think(session.receive(move_request("o", board=board), now=1.0))
    session.job_done(first.job_id, decision((3, 0), (4, 0)), now=1.5)
    again = only_think(session.receive(move_request("o", board=board), now=2.0))
    assert again.asked is first.asked  # derived: nothing new, nobody changes it
    session.job_done(again.job_id, decision((3, 0), (4, 0)), now=2.5)
    other = [*board[:4], (-1, -1, "x")]
    rebuilt = only_think(session.receive(move_request("o", board=other), now=3.0))
    assert rebuilt.asked.stones == other
    assert_same_position(rebuilt.asked, Position(setup=other, to_move="o"))


def test_the_bot_never_holds_the_sessions_position() -> None:
    session = started()
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)))
    job = only_think(session.receive(request, now=2.0))
    job.position.place(3, 0)
    job.position.place(4, 0)  # the bot explored and left its stones on its copy
    assert len(job.asked) == 5 and job.asked.stones_left == 2
    session.job_done(job.job_id, decision((3, 0), (4, 0)), now=3.0)
    request = move_request("o", move("o", (3, 0), (4, 0)), move("x", (-3, 0), (-4, 0)))
    later = only_think(session.receive(request, now=4.0))
    assert later.position.stones == [
        (0, 0, "x"),
        (1, 0, "o"),
        (2, 0, "o"),
        (-1, 0, "x"),
        (-2, 0, "x"),
        (3, 0, "o"),
        (4, 0, "o"),
        (-3, 0, "x"),
        (-4, 0, "x"),
    ]
    assert later.position is not job.position and later.position is not later.asked
    assert later.asked.stones == later.position.stones


def test_a_request_moves_the_sessions_position_on_in_place_and_an_interrupt_rebuilds_it() -> None:
    # O(new stones) a request however long the game: the confirmed position is advanced,
    # not copied; an interrupt, rare, restores the board as it was before the request.
    session = started(BwsV1Alpha(interruptible=True))
    answered_o(session, (1, 0), (2, 0))
    request = move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)))
    first = only_think(session.receive(request, now=2.0))
    session.job_done(first.job_id, decision((3, 0), (4, 0)), now=3.0)
    request = move_request("o", move("o", (3, 0), (4, 0)), move("x", (-3, 0), (-4, 0)))
    second = only_think(session.receive(request, now=4.0))
    assert second.asked is first.asked and len(second.asked) == 9
    assert session.receive(frame("interrupt"), now=5.0) == [Cancel(second.job_id)]
    # Asked again: the same request builds on the board as it was (5 stones), not on one
    # that kept the interrupted request's stones (which would now be taken cells).
    again = only_think(session.receive(request, now=6.0))
    assert again.position.stones == second.position.stones
    assert again.asked is not second.asked and len(again.asked) == 9


def test_the_fast_move_response_encodes_like_dump_packet() -> None:
    session = started()
    job = only_think(session.receive(move_request("o"), now=1.0))
    send = only_send(session.job_done(job.job_id, decision((-1, 0), (1, -1)), now=2.0))
    assert send.data() == dump_packet(send.packet)
    assert send.packet == MoveResponsePacket(
        move=MoveOption(pieces=[Coord(q=-1, r=0), Coord(q=1, r=-1)])
    )


def test_an_answer_that_needs_its_first_stone_for_the_second_is_legal() -> None:
    session = started(view_distance=1)
    job = only_think(session.receive(move_request("o"), now=1.0))
    assert sent_move(session.job_done(job.job_id, decision((1, 0), (2, 0)), now=2.0)) == [
        (1, 0),
        (2, 0),
    ]


_PERTURBATIONS = ["none", "none", "none", "no_board", "prototype", "taken", "lacks_answer"]


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    small=st.booleans(),
    capabilities=st.sampled_from(
        [BwsV1Alpha(), BwsV1Alpha(move_skips=True), BwsV1Alpha(free_move_order=True)]
    ),
)
def test_derived_positions_equal_positions_built_from_scratch(
    data: st.DataObject, small: bool, capabilities: BwsV1Alpha
) -> None:
    """Random legal games, as a game server sends them (``board`` and ``previous``),
    now and then bent (no board, the prototype's ``previous``, a taken cell, a board
    without the bot's move): the deriving session answers exactly like one that builds
    every position from scratch, error messages included."""
    match: dict[str, Any] = {"view_distance": 2, "win_distance": 4} if small else {}
    derived, reference = (
        BotSession(capabilities, match=Match(**match)),
        rebuilding(capabilities, **match),
    )
    referee = Position(**match)
    assert_same_actions(derived.receive(setup(), 0.0), reference.receive(setup(), 0.0))

    def pick() -> Hex:
        return data.draw(st.sampled_from(sorted(referee.legal_cells())))

    mine: Json | None = None
    for turn in range(data.draw(st.integers(1, 25))):
        now = float(turn)
        previous: list[Json] = []
        if mine is not None:
            previous.append(mine)
            if referee.to_move != "x":
                break
            theirs = [pick()]
            referee.place(*theirs[0])
            if referee.is_game_over():
                break
            theirs.append(pick())
            referee.place(*theirs[1])
            if referee.is_game_over():
                break
            previous.append(move("x", *theirs))
        board: list[tuple[int, int, str]] | None = list(referee.stones)
        how = data.draw(st.sampled_from(_PERTURBATIONS))
        if how == "no_board":
            board = None
        elif how == "prototype":
            previous = previous[-1:]
        elif how == "taken" and len(referee) > 1:
            taken = referee.stones[0][:2]
            previous[-1:] = [move("x", taken, (taken[0] + 50, taken[1]))] if previous else []
            board = [*referee.stones, (*taken, "x")]
        elif how == "lacks_answer" and mine is not None:
            kept = {(p["q"], p["r"]) for p in mine["pieces"]}
            board = [stone for stone in referee.stones if stone[:2] not in kept]
        request = move_request("o", *previous, board=board)
        actions = derived.receive(request, now)
        assert_same_actions(actions, reference.receive(request, now))
        if not actions or not isinstance(actions[0], Think):
            assert derived.closed and reference.closed
            return
        job = actions[0].job
        if data.draw(st.booleans()):  # the bot searched on its copy and left stones
            job.position.place(*sorted(job.position.legal_cells())[0])
        first = pick()
        referee.place(*first)
        if referee.is_game_over():
            break
        second = pick()
        referee.place(*second)
        answer = decision(first, second)
        assert_same_actions(
            derived.job_done(job.job_id, answer, now), reference.job_done(job.job_id, answer, now)
        )
        mine = move("o", first, second)
        if referee.is_game_over():
            break


def test_a_changed_view_distance_rebuilds_the_position() -> None:
    capabilities = BwsV1Alpha(config=BwsConfigCapability(dynamic=True))
    session = started(capabilities)
    answered_o(session, (1, 0), (2, 0))
    session.receive(json.dumps({"type": "config", "x-match": {"view_distance": 3}}), now=2.0)
    request = move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)))
    job = only_think(session.receive(request, now=3.0))
    assert job.position.view_distance == 3
    assert job.position.stones == Position(setup=job.position.stones, to_move="o").stones


_BOARD_1 = [(0, 0, "x"), (1, 0, "o"), (2, 0, "o"), (-1, 0, "x"), (-2, 0, "x")]
_BOARD_2 = [*_BOARD_1, (3, 0, "o"), (4, 0, "o"), (-3, 0, "x"), (-4, 0, "x")]
_GAME_FRAMES = [
    setup(),
    move_request("o"),
    move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0))),
    move_request("o", move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0)), board=_BOARD_1),
    move_request("o", move("o", (3, 0), (4, 0)), move("x", (-3, 0), (-4, 0))),
    move_request("o", move("o", (3, 0), (4, 0)), move("x", (-3, 0), (-4, 0)), board=_BOARD_2),
    move_request("o", move("x", (-3, 0), (-4, 0)), board=_BOARD_2),
    eval_request("o"),
    eval_request("x"),
    frame("interrupt"),
    json.dumps({"type": "config", "x-match": {"view_distance": 4}}),
]
_game_answers = st.sampled_from([decision((1, 0), (2, 0)), decision((3, 0), (4, 0))])
# Mostly a game's frames and answers (so that positions get derived), now and then anything.
_game_events = st.integers(0, 5).flatmap(
    lambda pick: (
        _events
        if pick == 0
        else st.tuples(st.just("job_done"), _game_answers)
        if pick < 3
        else st.tuples(st.just("receive"), st.sampled_from(_GAME_FRAMES))
    )
)


@settings(max_examples=300, deadline=None)
@given(capabilities=_capabilities, events=st.lists(_game_events, min_size=6, max_size=30))
def test_any_input_sequence_gets_the_same_actions_with_derived_positions(
    capabilities: BwsV1Alpha, events: list[tuple[str, Any]]
) -> None:
    derived, reference = BotSession(capabilities), rebuilding(capabilities)
    last_job = 1
    for step, (kind, value) in enumerate(events):
        now = float(step)
        if kind == "receive":
            actions, expected = derived.receive(value, now), reference.receive(value, now)
        elif kind == "job_done":
            actions = derived.job_done(last_job, value, now)
            expected = reference.job_done(last_job, value, now)
        elif kind == "job_failed":
            actions = derived.job_failed(last_job, value, now)
            expected = reference.job_failed(last_job, value, now)
        elif kind == "answer_due":
            actions = derived.answer_due(last_job, value, now)
            expected = reference.answer_due(last_job, value, now)
        else:
            actions, expected = derived.connection_lost(now), reference.connection_lost(now)
        assert_same_actions(actions, expected)
        for action in actions:
            if isinstance(action, Think):
                last_job = action.job.job_id


# ------------------------------------------------------- what packets say (helpers)


def test_read_match_reads_valid_settings_and_names_the_key_of_invalid_ones() -> None:
    assert read_match({"view_distance": 5}) == Match(view_distance=5)
    with pytest.raises(InvalidMatchError, match=r"x-match.*view_distance"):
        read_match({"view_distance": 0})
    with pytest.raises(InvalidMatchError, match="not valid match settings"):
        read_match(["not", "an", "object"])


def test_game_over_words_a_draw_and_a_win_with_its_detail() -> None:
    draw = parse_packet('{"type": "end", "winner": null, "reason": "draw"}')
    won = parse_packet('{"type": "end", "winner": "x", "reason": "forfeit", "detail": "timeout"}')
    assert isinstance(draw, EndPacket) and isinstance(won, EndPacket)
    assert game_over(draw) == "game over: draw"
    assert game_over(won) == "game over: x won by forfeit (timeout)"


def test_a_move_request_of_another_model_class_takes_the_generic_dispatch() -> None:
    """``_dispatch`` looks the packet of every move up by its exact class first; any
    other packet (here a subclass, which the fast check does not match) still reaches
    the same handler through the ``match`` statement."""

    class Subclassed(MoveRequestPacket):
        pass

    session = BotSession(BwsV1Alpha())
    session.receive('{"type": "setup"}', now=0.0)
    packet = Subclassed(type="move_request", side=Player.O, previous=[])
    [think] = session._dispatch(packet, 0.0)
    assert isinstance(think, Think) and think.job.side is Player.O


@pytest.mark.parametrize(
    "previous",
    [
        [move("o", (1, 0), (0, 0))],  # the second stone on a taken cell
        [move("o", (1, 0), (2, 0)), move("o", (3, 0), (4, 0))],  # O twice in a row
        [move("o", (1, 0))],  # one stone: O would still have one to place
    ],
)
def test_stones_that_do_not_fit_leave_the_confirmed_position_as_it_was(
    previous: list[Json],
) -> None:
    # derive_position places them on the session's own position: what it placed of
    # them must be taken back before the full path decides.
    confirmed = Position()
    before = (confirmed.stones, confirmed.to_move, confirmed.stones_left, confirmed.moves_played)
    request = parse_packet(move_request("x", *previous))
    assert isinstance(request, MoveRequestPacket)
    assert derive_position(request, confirmed, None, Match()) is None
    after = (confirmed.stones, confirmed.to_move, confirmed.stones_left, confirmed.moves_played)
    assert after == before


# ------------------------------------------------------- the bot's position, lent


def lending() -> BotSession:
    """A session whose bot keeps no position (``BaseBot.keeps_positions`` False)."""
    session = BotSession(BwsV1Alpha(move_time_limit=True), lend_positions=True)
    session.receive(setup(), now=0.0)
    return session


def next_request(o: tuple[Hex, Hex], x: tuple[Hex, Hex] = ((-1, 0), (-2, 0))) -> str:
    return move_request("o", move("o", *o), move("x", *x))


def test_a_bot_that_keeps_no_position_gets_its_last_one_back_brought_up_to_date() -> None:
    session = lending()
    first = only_think(session.receive(move_request("o"), now=1.0))
    first.position.place(1, 0)
    first.position.undo()  # what a search does: tries a stone, takes it back
    session.job_done(first.job_id, decision((1, 0), (2, 0)), now=1.5)
    second = only_think(session.receive(next_request(((1, 0), (2, 0))), now=2.0))
    assert second.position is first.position  # O(new stones): no copy of the board
    assert second.position is not second.asked
    assert second.position.stones == second.asked.stones
    lent, asked = second.position, second.asked
    assert (lent.to_move, lent.stones_left, lent.setup, lent.moves_played) == (
        asked.to_move,
        asked.stones_left,
        asked.setup,
        asked.moves_played,
    )


def test_a_position_the_bot_changed_or_still_holds_is_not_lent_again() -> None:
    session = lending()
    first = only_think(session.receive(move_request("o"), now=1.0))
    first.position.place(3, 3)  # left on its copy
    session.job_done(first.job_id, decision((1, 0), (2, 0)), now=1.5)
    # The bot's author is told: the declaration saves nothing then.
    with pytest.warns(LentPositionChanged, match="left the position it was lent changed"):
        second = only_think(session.receive(next_request(((1, 0), (2, 0))), now=2.0))
    assert second.position is not first.position
    assert second.position.stones == second.asked.stones
    # A call past its time: answered for it, but its thread may still be on its copy.
    session.answer_due(second.job_id, decision((3, 0), (4, 0)), now=3.0)
    third = only_think(session.receive(next_request(((3, 0), (4, 0)), ((-3, 0), (-4, 0))), now=4.0))
    assert third.position is not second.position


def test_a_bot_that_keeps_its_positions_gets_a_new_copy_every_time() -> None:
    session = started()  # lend_positions is off unless the bot says it keeps none
    first = only_think(session.receive(move_request("o"), now=1.0))
    session.job_done(first.job_id, decision((1, 0), (2, 0)), now=1.5)
    second = only_think(session.receive(next_request(((1, 0), (2, 0))), now=2.0))
    assert second.position is not first.position
