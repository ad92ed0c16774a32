"""The stateless HTTP API as pure functions: request -> job, decision -> response."""

from __future__ import annotations

import pytest

from bot import fallback
from bot.bot import MoveDecision
from bot.stateless import (
    StatelessRequestError,
    fallback_move,
    stateless_answer,
    stateless_job,
    stateless_problem,
)
from models import (
    Coord,
    Match,
    MoveAnswer,
    MoveOption,
    Player,
    PositionEvaluation,
    StatelessMoveRequest,
    StatelessV1Alpha,
    dump_packet,
    parse_body,
)

Hex = tuple[int, int]


def request(
    *stones: tuple[int, int, str], to_move: str = "o", time_limit: float | None = None
) -> StatelessMoveRequest:
    cells = [{"q": q, "r": r, "p": p} for q, r, p in stones or [(0, 0, "x")]]
    body: dict[str, object] = {"board": {"to_move": to_move, "cells": cells}}
    if time_limit is not None:
        body["time_limit"] = time_limit
    return StatelessMoveRequest.model_validate(body)


def decision(*pieces: Hex) -> MoveDecision:
    return MoveDecision.of(list(pieces))


def pieces_of(response_move: MoveAnswer) -> list[Hex]:
    return [piece.as_tuple() for piece in response_move.pieces]


TIMED = StatelessV1Alpha(move_time_limit=True)
UNTIMED = StatelessV1Alpha()


# ----------------------------------------------------------------------- jobs


def test_the_job_is_a_move_for_the_side_to_move_on_the_board() -> None:
    job = stateless_job(
        request((0, 0, "x"), (1, 0, "o"), (2, 0, "o"), to_move="x"), UNTIMED, Match(), 7
    )
    assert (job.job_id, job.kind, job.side) == (7, "move", Player.X)
    assert set(job.position.stones) == {(0, 0, "x"), (1, 0, "o"), (2, 0, "o")}
    assert (job.position.to_move, job.position.stones_left) == ("x", 2)


def test_the_job_plays_by_the_match_settings() -> None:
    job = stateless_job(request(), UNTIMED, Match(view_distance=3, win_distance=4), 1)
    assert (job.position.view_distance, job.position.win_distance) == (3, 4)
    assert job.match == Match(view_distance=3, win_distance=4)


def test_the_time_limit_is_ignored_when_not_declared() -> None:
    job = stateless_job(request(time_limit=5.0), UNTIMED, Match(), 1)
    assert (job.time_limit, job.answer_within) == (None, None)


def test_the_time_limit_is_honoured_less_a_network_margin_when_declared() -> None:
    job = stateless_job(request(time_limit=5.0), TIMED, Match(), 1)
    assert (job.time_limit, job.answer_within) == (5.0, 4.5)


def test_no_time_limit_means_unlimited_thinking() -> None:
    job = stateless_job(request(), TIMED, Match(), 1)
    assert (job.time_limit, job.answer_within) == (None, None)


def test_a_zero_time_limit_is_due_at_once() -> None:
    assert stateless_job(request(time_limit=0.0), TIMED, Match(), 1).answer_within == 0.0


def test_a_board_with_a_winning_line_is_refused() -> None:
    with pytest.raises(StatelessRequestError, match="6 in a row"):
        line = [(q, 0, "x") for q in range(6)]
        stateless_job(request(*line, *[(q, 1, "o") for q in range(5)]), UNTIMED, Match(), 1)


def test_a_board_with_two_stones_on_a_cell_is_refused() -> None:
    with pytest.raises(StatelessRequestError, match=r"two stones on \(1, 0\)"):
        stateless_job(request((0, 0, "x"), (1, 0, "o"), (1, 0, "x")), UNTIMED, Match(), 1)


def test_a_request_error_is_a_value_error_for_the_http_layer() -> None:
    assert issubclass(StatelessRequestError, ValueError)


@pytest.mark.parametrize(
    ("stones", "to_move", "reason"),
    [
        ((), "o", "the board is empty"),
        ((), "x", "the board is empty"),
        (((1, 0, "x"),), "o", r"no X stone on \(0, 0\)"),
        (((0, 0, "x"), (1, 0, "o"), (2, 0, "o")), "o", "1 X and 2 O stones with O to move"),
        (((0, 0, "x"), (1, 0, "o"), (40, 0, "o")), "x", r"\(40, 0\) is 40 from the origin"),
    ],
)
def test_a_board_that_cannot_come_from_the_standard_opening_is_refused(
    stones: tuple[tuple[int, int, str], ...], to_move: str, reason: str
) -> None:
    cells = [{"q": q, "r": r, "p": p} for q, r, p in stones]
    body = StatelessMoveRequest.model_validate({"board": {"to_move": to_move, "cells": cells}})
    with pytest.raises(StatelessRequestError, match=f"impossible board: {reason}.*'free_setup'"):
        stateless_job(body, UNTIMED, Match(), 1)


def test_with_free_setup_any_board_is_played_an_empty_one_from_the_origin() -> None:
    body = '{"board": {"to_move": "o", "cells": []}}'
    job = stateless_job(
        parse_body(StatelessMoveRequest, body), UNTIMED, Match(), 1, free_setup=True
    )
    response = stateless_answer(job, None)
    assert pieces_of(response.move)[0] == (0, 0)
    far = request((0, 0, "x"), (1, 0, "o"), (40, 0, "o"), to_move="x")
    assert stateless_job(far, UNTIMED, Match(), 1, free_setup=True).side is Player.X


# -------------------------------------------------------------------- answers


def test_a_legal_move_is_answered_as_decided() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    response = stateless_answer(job, decision((1, 0), (2, 0)))
    assert dump_packet(response) == b'{"move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}]}}'


def test_the_evaluation_and_considerations_are_answered() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    other = MoveOption(pieces=[Coord(q=0, r=1), Coord(q=0, r=2)])
    answer = MoveDecision(
        pieces=(Coord(q=1, r=0), Coord(q=2, r=0)),
        evaluation=PositionEvaluation(heuristic=0.5),
        considerations=[other],
    )
    response = stateless_answer(job, answer)
    assert response.move.evaluation == PositionEvaluation(heuristic=0.5)
    assert response.considerations is not None
    assert pieces_of(response.considerations[0]) == [(0, 1), (0, 2)]


def test_an_illegal_move_is_replaced_by_the_fallback() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    response = stateless_answer(job, decision((0, 0), (1, 0)))
    assert pieces_of(response.move) == pieces_of(fallback_move(job.position).to_option())


def test_no_move_is_replaced_by_the_fallback() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    assert pieces_of(stateless_answer(job, None).move) == [(-1, 0), (-2, 0)]


def test_the_answer_is_checked_against_the_position_asked_not_the_bots_copy() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    job.position.place(1, 0)  # the bot searched on its copy and left a stone behind
    assert pieces_of(stateless_answer(job, decision((1, 0), (2, 0))).move) == [(1, 0), (2, 0)]


def test_extras_that_are_not_valid_are_dropped_but_the_move_is_kept() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    answer = decision((1, 0), (2, 0))
    answer.considerations = [object()]  # type: ignore[list-item]
    response = stateless_answer(job, answer)
    assert pieces_of(response.move) == [(1, 0), (2, 0)] and response.considerations is None


def test_stateless_problem_names_what_is_wrong_with_a_move() -> None:
    job = stateless_job(request(), UNTIMED, Match(), 1)
    assert stateless_problem(job, decision((1, 0), (2, 0))) is None
    assert "taken" in (stateless_problem(job, decision((0, 0), (2, 0))) or "")
    assert stateless_problem(job, None) == "the bot has no move"


def test_the_fallback_is_the_one_the_websocket_session_uses() -> None:
    assert fallback_move is fallback.fallback_move
