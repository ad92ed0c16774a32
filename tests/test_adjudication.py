"""Resign adjudication: ``ResignWatch`` fed recorded moves, and a ``GameSession`` that
ends a game on both bots' evaluations. No sockets, no sleeps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from game import notation
from game.adjudication import Adjudicator, ResignWatch, favoured_side
from game.session import Action, Broadcast, GameOver, GameSession, SeatInfo, SendTo
from game.store import RecordStatus
from models import (
    Adjudication,
    BoardUpdatePacket,
    BwsV1Alpha,
    Coord,
    EndCause,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    Match,
    NewGameRequest,
    Player,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResignAdjudication,
    ResultReason,
)
from ui.games_browser import describe_outcome
from ui.player_text import describe_result

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides
PIECES = [Coord(q=1, r=0), Coord(q=2, r=0)]


def played(side: Player, heuristic: float | None = None, win_in: int | None = None) -> RecordedMove:
    evaluation = None
    if heuristic is not None or win_in is not None:
        evaluation = PositionEvaluation(heuristic=heuristic, win_in=win_in)
    return RecordedMove(side=side, pieces=PIECES, evaluation=evaluation)


def feed(watch: ResignWatch, moves: list[RecordedMove]) -> list[Player | None]:
    return [watch.observe(move) for move in moves]


def alternating(*evaluations: float | None) -> list[RecordedMove]:
    """Moves O, X, O, X... with these heuristics (None: no evaluation)."""
    return [played(O if i % 2 == 0 else X, h) for i, h in enumerate(evaluations)]


# -------------------------------------------------------------- the settings


@pytest.mark.parametrize(
    "fields",
    [{"moves": 0, "score": 1.0}, {"moves": 101, "score": 1.0}, {"moves": 3, "score": 0.0}],
)
def test_resign_settings_are_bounded(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ResignAdjudication.model_validate(fields)


def test_a_new_game_takes_adjudication_from_json_and_has_none_by_default() -> None:
    seats = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}
    assert NewGameRequest.model_validate(seats).adjudication is None
    body = {**seats, "adjudication": {"resign": {"moves": 3, "score": 0.9}}}
    request = NewGameRequest.model_validate(body)
    assert request.adjudication == Adjudication(resign=ResignAdjudication(moves=3, score=0.9))


# ---------------------------------------------------------------- favoured side


@pytest.mark.parametrize(
    ("evaluation", "favoured"),
    [
        (None, None),
        (PositionEvaluation(), None),
        (PositionEvaluation(heuristic=0.9), X),
        (PositionEvaluation(heuristic=-0.9), O),
        (PositionEvaluation(heuristic=0.89), None),
        (PositionEvaluation(heuristic=float("nan")), None),
        (PositionEvaluation(win_in=4), X),
        (PositionEvaluation(win_in=-2, heuristic=0.95), O),
        (PositionEvaluation(win_in=0, heuristic=-0.95), O),
    ],
)
def test_an_evaluation_favours_a_side_by_the_score_or_a_forced_win(
    evaluation: PositionEvaluation | None, favoured: Player | None
) -> None:
    assert favoured_side(evaluation, 0.9) is favoured


# ---------------------------------------------------------------- the watch


def test_k_moves_of_each_side_agreeing_adjudicate_on_the_last_of_them() -> None:
    watch = ResignWatch(ResignAdjudication(moves=3, score=0.9))
    verdicts = feed(watch, alternating(0.9, 1.0, 0.95, 5.0, 0.9, 0.91))
    assert verdicts == [None] * 5 + [X]


def test_o_can_win_by_adjudication() -> None:
    watch = ResignWatch(ResignAdjudication(moves=1, score=0.5))
    assert feed(watch, alternating(-0.5, -0.7)) == [None, O]


def test_a_move_without_an_evaluation_resets_its_sides_count() -> None:
    watch = ResignWatch(ResignAdjudication(moves=2, score=0.9))
    #                                      O     X    O     X     O     X
    verdicts = feed(watch, alternating(0.95, 0.95, None, 0.95, 0.95, 0.95))
    # O's count restarted at its third move: O has two agreeing moves only at move 7.
    assert verdicts == [None] * 6
    assert watch.observe(played(O, 0.95)) is X


def test_an_evaluation_below_the_score_resets_its_sides_count() -> None:
    watch = ResignWatch(ResignAdjudication(moves=2, score=0.9))
    assert feed(watch, alternating(0.95, 0.95, 0.5, 0.95, 0.95)) == [None] * 5
    assert watch.observe(played(X, 0.95)) is None  # X has 3 moves, O 1 since its reset
    assert watch.observe(played(O, 0.95)) is X


def test_one_sided_agreement_is_not_enough() -> None:
    watch = ResignWatch(ResignAdjudication(moves=2, score=0.9))
    # O is sure X wins; X keeps no evaluation (or thinks otherwise): play on.
    verdicts = feed(watch, alternating(*[0.99, None] * 5))
    assert verdicts == [None] * 10
    verdicts = feed(watch, alternating(*[0.99, -0.99] * 5))
    assert verdicts == [None] * 10


def test_a_side_that_changes_its_mind_starts_counting_again() -> None:
    watch = ResignWatch(ResignAdjudication(moves=2, score=0.9))
    #                                       O      X     O     X     O
    verdicts = feed(watch, alternating(-0.95, -0.95, 0.95, 0.95, 0.95))
    assert verdicts == [None] * 5
    assert watch.observe(played(X, 0.95)) is X


def test_forced_wins_count_whatever_the_score() -> None:
    watch = ResignWatch(ResignAdjudication(moves=1, score=100.0))
    assert feed(watch, [played(O, win_in=-3), played(X, heuristic=-100.0)]) == [None, O]


def test_without_adjudication_nothing_is_adjudicated() -> None:
    adjudicator = Adjudicator(Adjudication())
    assert [adjudicator.observe(m) for m in alternating(*[1.0] * 10)] == [None] * 10


def test_the_adjudicated_result_is_a_win_with_cause_adjudication() -> None:
    result = ResignWatch(ResignAdjudication(moves=3, score=0.9)).result(X)
    assert result == GameResult(
        winner=X,
        reason=ResultReason.WIN,
        cause=EndCause.ADJUDICATION,
        detail="both bots' evaluations favoured x by at least 0.9 for 3 moves each",
    )
    assert result.end_detail == (
        "adjudication: both bots' evaluations favoured x by at least 0.9 for 3 moves each"
    )


# ---------------------------------------------------------------- a session

O_MOVES = [((1, 1), (2, 1)), ((-1, 2), (-2, 2))]
X_MOVES = [((-1, -1), (-2, -1)), ((1, -2), (2, -2))]


def move(stones: tuple[tuple[int, int], ...], heuristic: float) -> str:
    pieces = [{"q": q, "r": r} for q, r in stones]
    body = {"pieces": pieces, "evaluation": {"heuristic": heuristic}}
    return json.dumps({"type": "move_response", "move": body})


def test_a_session_adjudicates_when_both_bots_agree() -> None:
    bot = SeatInfo("bot_ws", declares=BwsV1Alpha())
    session = GameSession(
        "g",
        Match(),
        {X: bot, O: bot},
        started_at=0.0,
        adjudication=Adjudication(resign=ResignAdjudication(moves=2, score=0.9)),
    )
    session.seat_connected(X, now=0.0)
    session.seat_connected(O, now=0.0)
    now = 1.0
    actions: list[Action] = []
    for o_move, x_move in zip(O_MOVES, X_MOVES, strict=True):
        assert session.result is None
        session.receive(O, move(o_move, -0.95), now=now)
        actions = session.receive(X, move(x_move, -0.92), now=now + 1)
        now += 2
    [over] = [a for a in actions if isinstance(a, GameOver)]
    expected = GameResult(
        winner=O,
        reason=ResultReason.WIN,
        cause=EndCause.ADJUDICATION,
        detail="both bots' evaluations favoured o by at least 0.9 for 2 moves each",
    )
    assert over.result == expected
    assert over.record.result == expected
    assert len(over.record.moves) == 4
    assert session.status is GameStatus.O_WINS
    ends = {
        a.side: a.packet
        for a in actions
        if isinstance(a, SendTo) and isinstance(a.packet, EndPacket)
    }
    assert all(isinstance(a.packet, EndPacket) for a in actions if isinstance(a, SendTo))
    assert ends[X].detail == ends[O].detail == expected.end_detail
    [update] = [
        a.packet
        for a in actions
        if isinstance(a, Broadcast) and isinstance(a.packet, BoardUpdatePacket)
    ]
    assert (update.to_move, update.status) == (None, GameStatus.O_WINS)
    [spectators_end] = [
        a.packet for a in actions if isinstance(a, Broadcast) and isinstance(a.packet, EndPacket)
    ]
    assert spectators_end.detail == expected.end_detail
    assert spectators_end.cause is EndCause.ADJUDICATION


def test_a_session_without_adjudication_plays_on() -> None:
    bot = SeatInfo("bot_ws", declares=BwsV1Alpha())
    session = GameSession("g", Match(), {X: bot, O: bot}, started_at=0.0)
    session.seat_connected(X, now=0.0)
    session.seat_connected(O, now=0.0)
    for o_move, x_move in zip(O_MOVES, X_MOVES, strict=True):
        session.receive(O, move(o_move, -1.0), now=1.0)
        session.receive(X, move(x_move, -1.0), now=2.0)
    assert session.result is None


# ------------------------------------------------------------ where it shows


def test_an_adjudicated_result_survives_the_notation() -> None:
    moves = [
        RecordedMove(side=side, pieces=[Coord(q=q, r=r) for q, r in stones])
        for side, stones in [(O, O_MOVES[0]), (X, X_MOVES[0])]
    ]
    result = ResignWatch(ResignAdjudication(moves=1, score=0.5)).result(O)
    text = notation.dumps(GameRecord(moves=moves, result=result))
    assert "endreason[win]\nwinner[circle]\ncause[adjudication];" in text
    read = notation.loads(text)
    # The detail is free text, which notation does not carry.
    assert read.result == result.model_copy(update={"detail": None})


def test_clients_describe_an_adjudicated_win() -> None:
    result = ResignWatch(ResignAdjudication(moves=1, score=0.5)).result(O)
    ann, bob = RecordPlayer(name="Ann"), RecordPlayer(name="Bob")
    assert describe_result(result, ann, bob) == (
        "Bob (O) wins by adjudication: both bots agreed on the winner."
    )
    assert describe_outcome(RecordStatus.FINISHED, result) == "O wins (adjudication)"
