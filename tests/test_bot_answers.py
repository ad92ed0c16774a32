"""The bot's answer made safe to send (``bot.answers``): the one-pass ``plain_answer``
of the common answer is exactly what the careful ``judged_answer`` makes of it, and it
refuses everything else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.answers import judged_answer, move_answer, plain_answer
from bot.bot import MoveDecision
from bot.jobs import ThinkJob
from models import Coord, Match, MoveOption, Player, PositionEvaluation
from tests.random_games import unfinished_game

# Stones near the origin: on the board, next to it, and out of view of it.
_cells = st.tuples(st.integers(-12, 12), st.integers(-12, 12))


def _job(stones: int, seed: int) -> ThinkJob:
    position = unfinished_game(stones, seed=seed, reach=3)
    if position.stones_left != 2:  # a job is asked at the start of a move
        position.place(*sorted(position.legal_cells())[0])
    return ThinkJob(7, "move", position.copy(), Player(position.to_move), Match(), None, None)


@settings(max_examples=300, deadline=None)
@given(
    stones=st.integers(1, 40),
    seed=st.integers(0, 1000),
    first=_cells,
    second=_cells,
    extra=st.sampled_from(["none", "evaluation", "considerations"]),
    trouble=st.sampled_from([None, "time ran out"]),
)
def test_the_plain_answer_is_the_judged_one_or_none(
    stones: int,
    seed: int,
    first: tuple[int, int],
    second: tuple[int, int],
    extra: str,
    trouble: str | None,
) -> None:
    job = _job(stones, seed)
    decision = MoveDecision.of([first, second])
    if extra == "evaluation":
        decision.evaluation = PositionEvaluation(heuristic=0.5)
    elif extra == "considerations":
        decision.considerations = [MoveOption(pieces=list(decision.pieces))]
    judged_send, judged_stones = judged_answer(job, decision, trouble)
    plain = plain_answer(job, decision)
    legal = judged_send.warning is None
    if plain is None:
        # Refused: more than two stones, not legal, or legal only in order (the second
        # in view of the first alone), which the careful way tells.
        asked = job.asked
        in_view = asked.is_legal(*first) and asked.is_legal(*second)
        assert extra != "none" or not legal or first == second or not in_view
    else:
        send, stones_sent = plain
        assert extra == "none" and legal
        assert (send.packet, send.warning) == (judged_send.packet, judged_send.warning)
        assert send.data() == judged_send.data()
        assert stones_sent == judged_stones == frozenset({first, second})
    assert move_answer(job, decision, trouble)[0] == judged_send


def test_the_plain_answer_refuses_what_is_not_a_plain_move_decision() -> None:
    job = _job(9, seed=3)
    legal = sorted(job.asked.legal_cells())[:2]
    assert plain_answer(job, MoveDecision.of(legal)) is not None
    assert plain_answer(job, legal) is None  # not a MoveDecision yet
    assert plain_answer(job, None) is None
    same = MoveDecision.of([legal[0], legal[0]])
    assert plain_answer(job, same) is None
    odd = MoveDecision(pieces=(Coord(q=legal[0][0], r=legal[0][1]), legal[1]))  # type: ignore[arg-type]
    assert plain_answer(job, odd) is None  # a bare tuple where a Coord belongs
