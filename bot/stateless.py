"""The stateless HTTP API (``POST <api_root>/turn``), as two pure functions.

``stateless_job`` turns a request into the same ``ThinkJob`` the WebSocket session
makes, and ``stateless_answer`` turns what the bot decided into the response, a legal
fallback standing in for an illegal (or missing) move. The HTTP layer (``bot.serve``)
only reads the body, runs the job and writes the answer; it turns a
``StatelessRequestError`` into a 4xx with the error's message.

Protocol: ``../shared/spec/stateless-v1-alpha.yaml``.

>>> from models import StatelessV1Alpha, parse_body
>>> request = parse_body(StatelessMoveRequest,
...     '{"board": {"to_move": "o", "cells": [{"q": 0, "r": 0, "p": "x"}]}, "time_limit": 2}')
>>> job = stateless_job(request, StatelessV1Alpha(move_time_limit=True), Match(), job_id=1)
>>> job.side, job.time_limit, job.answer_within
(<Player.O: 'o'>, 2.0, 1.6)
>>> stateless_answer(job, MoveDecision.of([(1, 0), (2, 0)])).move.pieces
[Coord(q=1, r=0), Coord(q=2, r=0)]
>>> stateless_answer(job, MoveDecision.of([(0, 0), (2, 0)])).move.pieces  # (0, 0) is taken
[Coord(q=-1, r=0), Coord(q=-2, r=0)]
"""

from __future__ import annotations

from pydantic import ValidationError

from bot.bot import MoveDecision
from bot.fallback import fallback_move, move_problem
from bot.session import ThinkJob, answer_within
from game.reachable import UnreachablePositionError, check_reachable
from game.rules import InvalidSetupError, Position
from models import (
    Match,
    MoveOption,
    StatelessMove,
    StatelessMoveRequest,
    StatelessMoveResponse,
    StatelessV1Alpha,
)

__all__ = [
    "StatelessRequestError",
    "fallback_move",
    "stateless_answer",
    "stateless_job",
    "stateless_problem",
]


class StatelessRequestError(ValueError):
    """A well-formed request for a position no game can reach (two stones on a cell, a
    winning line already, a board that cannot come from the standard opening): the
    client's fault, answered with a 4xx."""


def stateless_job(
    request: StatelessMoveRequest,
    capabilities: StatelessV1Alpha,
    match: Match,
    job_id: int,
    *,
    free_setup: bool = False,
) -> ThinkJob:
    """The job for one ``/turn`` request: ``board.to_move`` to move with 2 stones on
    ``board.cells``. ``time_limit`` is honoured only when the bot declares
    ``move_time_limit`` (else the bot thinks without a limit).

    Raises ``StatelessRequestError`` for an impossible board: one that legal play from
    the standard opening cannot reach (``game.reachable``; an empty board included),
    unless ``free_setup`` (the bot declares it for its socket, so it plays any board).
    """
    board = request.board
    seen: set[tuple[int, int]] = set()
    for cell in board.cells:
        if (cell.q, cell.r) in seen:
            raise StatelessRequestError(f"board.cells has two stones on ({cell.q}, {cell.r})")
        seen.add((cell.q, cell.r))
    stones = [(cell.q, cell.r, cell.p.value) for cell in board.cells]
    try:
        if not free_setup:
            # O(stones), before any work per cell.
            check_reachable(stones, board.to_move.value, match.view_distance)
        position = Position(
            match.view_distance,
            match.win_distance,
            setup=stones,
            to_move=board.to_move.value,
            reject_setup_lines=True,
        )
    except UnreachablePositionError as exc:
        raise StatelessRequestError(
            f"impossible board: {exc} (the bot does not declare 'free_setup', so the "
            f"board must come from the standard opening)"
        ) from None
    except InvalidSetupError as exc:
        raise StatelessRequestError(f"impossible board: {exc}") from None
    limit = request.time_limit if capabilities.move_time_limit else None
    return ThinkJob(
        job_id=job_id,
        kind="move",
        position=position,
        side=board.to_move,
        match=match,
        time_limit=limit,
        answer_within=answer_within(limit),
    )


def stateless_answer(job: ThinkJob, decision: MoveDecision | None) -> StatelessMoveResponse:
    """The response for ``job``: ``decision`` when it is a legal move in the position
    asked (not the bot's copy, which it may have changed), else the fallback move.

    Pass None when the bot has no move (it raised, or ran out of time without reporting
    one). ``stateless_problem`` says what was wrong, for the log.
    """
    position = job.asked  # move_problem and fallback_move leave it as it is
    if decision is None or move_problem(position, decision) is not None:
        decision = fallback_move(position)
    try:
        return StatelessMoveResponse(
            move=_stateless_move(decision.to_option()),
            considerations=[_stateless_move(option) for option in decision.considerations] or None,
        )
    except (ValidationError, AttributeError, TypeError):
        # What the bot added around its move (an evaluation that is not one, odd
        # considerations) must not cost the move itself.
        return StatelessMoveResponse(move=StatelessMove(pieces=list(decision.pieces)))


def stateless_problem(job: ThinkJob, decision: MoveDecision | None) -> str | None:
    """Why ``stateless_answer`` will not send ``decision`` as it is (None: it will)."""
    if decision is None:
        return "the bot has no move"
    problem = move_problem(job.asked, decision)
    return None if problem is None else f"the bot's move is illegal: {problem}"


def _stateless_move(option: MoveOption) -> StatelessMove:
    return StatelessMove(pieces=option.pieces, evaluation=option.evaluation)
