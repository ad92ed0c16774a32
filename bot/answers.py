"""The bot's answer to a job, made safe to send: its move when legal, else a legal
fallback (with a warning saying why); its evaluation when it can be encoded, else an
empty one. Pure functions of the job and the result.
"""

from __future__ import annotations

from functools import partial

from pydantic import ValidationError

from bot.bot import MoveDecision
from bot.fallback import fallback_move, move_problem
from bot.jobs import Send, ThinkJob
from game.hexgrid import Hex
from game.rules import Position
from models import (
    Coord,
    EvalResponsePacket,
    MoveOption,
    MoveResponsePacket,
    PositionEvaluation,
    dump_packet,
)

__all__ = ["describe_pieces", "eval_answer", "judged_answer", "move_answer", "plain_answer"]


def move_answer(job: ThinkJob, result: object, trouble: str | None) -> tuple[Send, frozenset[Hex]]:
    """The ``move_response`` for ``result``: the bot's move when legal, else the
    fallback, with a warning saying why."""
    return plain_answer(job, result) or judged_answer(job, result, trouble)


def judged_answer(
    job: ThinkJob, result: object, trouble: str | None
) -> tuple[Send, frozenset[Hex]]:
    """``move_answer`` the careful way, for any result: what is wrong with it, said."""
    position = job.asked  # move_problem and fallback_move leave it as it is
    decision: MoveDecision | None = None
    if isinstance(result, MoveDecision):
        problem = None if _plainly_legal(position, result) else move_problem(position, result)
        if problem is None:
            decision = result
        else:
            whose = "its best move so far" if trouble else "the bot's move"
            illegal = f"{whose} {describe_pieces(result)} is illegal: {problem}"
            trouble = f"{trouble}; {illegal}" if trouble else illegal
    elif trouble is None:
        trouble = f"the bot answered {type(result).__name__}, not a MoveDecision"
    warning = None
    if decision is None:
        # On a copy: folding the legal cells into the session's own position would make
        # every later copy of it dearer.
        decision = fallback_move(job.original_position())
        warning = f"job {job.job_id}: {trouble}; sent the fallback move {describe_pieces(decision)}"
    encoded: bytes | None
    if decision.evaluation is None and not decision.considerations:
        # The common answer, two stones and nothing else (checked legal, so plain ints).
        first, second = decision.pieces
        encoded = _PLAIN_MOVE_RESPONSE % (first.q, first.r, second.q, second.r)
        # The packet is made only if someone reads it: the adapter sends the bytes.
        send = Send(warning=warning, encoded=encoded, build=partial(_plain_packet, first, second))
        return send, frozenset(((first.q, first.r), (second.q, second.r)))
    try:
        packet = MoveResponsePacket(
            move=decision.to_option(), considerations=list(decision.considerations) or None
        )
        encoded = dump_packet(packet)  # what the bot added must also survive encoding
    except (ValidationError, TypeError, ValueError) as exc:
        packet = MoveResponsePacket(move=MoveOption(pieces=list(decision.pieces)))
        encoded = None
        note = f"job {job.job_id}: dropped the move's evaluation and considerations: {exc}"
        warning = note if warning is None else f"{warning}; {note}"
    stones = frozenset(piece.as_tuple() for piece in decision.pieces)
    return Send(packet, warning, encoded), stones


def plain_answer(job: ThinkJob, result: object) -> tuple[Send, frozenset[Hex]] | None:
    """``move_answer`` of the common answer, in one pass: a ``MoveDecision`` of two
    distinct ``Coord`` stones, nothing else, each legal before either is placed (see
    ``_plainly_legal``). None for anything else, which ``move_answer`` then judges the
    careful way (``judged_answer``). What it answers is what that way answers, whatever
    the bot's trouble was: a legal move is sent without a warning (a property test
    compares the two)."""
    if type(result) is not MoveDecision or result.evaluation is not None or result.considerations:
        return None
    if not _plainly_legal(job.asked, result):
        return None
    first, second = result.pieces
    q1, r1, q2, r2 = first.q, first.r, second.q, second.r
    # The packet is made only if someone reads it: the adapter sends the bytes.
    encoded = _PLAIN_MOVE_RESPONSE % (q1, r1, q2, r2)
    send = Send(None, None, encoded, build=partial(_plain_packet, first, second))
    return send, frozenset(((q1, r1), (q2, r2)))


def _plain_packet(first: Coord, second: Coord) -> MoveResponsePacket:
    # (Validating these Coords is quicker than pydantic's model_construct.)
    option = MoveOption(pieces=[first, second], evaluation=None)
    return MoveResponsePacket(move=option, considerations=None)


# dump_packet of a MoveResponsePacket with two pieces and nothing else.
_PLAIN_MOVE_RESPONSE = (
    b'{"type":"move_response","move":{"pieces":[{"q":%d,"r":%d},{"q":%d,"r":%d}]}}'
)


def _plainly_legal(position: Position, decision: MoveDecision) -> bool:
    """A quick yes for the common answer: 2 distinct ``Coord`` stones, each legal before
    either is placed (the second then stays legal after the first, which only adds a
    stone, and a first stone that wins needs the second to have been playable). False
    means "ask ``move_problem``", which also says why."""
    pieces = decision.pieces
    if type(pieces) is not tuple or len(pieces) != 2:
        return False
    first, second = pieces
    return (
        type(first) is Coord
        and type(second) is Coord
        and (first.q != second.q or first.r != second.r)
        and position.is_legal(first.q, first.r)
        and position.is_legal(second.q, second.r)
    )


def eval_answer(job: ThinkJob, result: object, trouble: str | None) -> Send:
    if isinstance(result, PositionEvaluation):
        try:
            packet = EvalResponsePacket(evaluation=result)
            return Send(packet, encoded=dump_packet(packet))
        except (ValidationError, TypeError, ValueError) as exc:
            trouble = f"the evaluation cannot be encoded: {exc}"
    elif trouble is None:
        trouble = f"the bot answered {type(result).__name__}, not a PositionEvaluation"
    warning = f"job {job.job_id}: {trouble}; sent an empty evaluation"
    return Send(EvalResponsePacket(evaluation=PositionEvaluation()), warning)


def describe_pieces(decision: MoveDecision) -> str:
    """The stones of a move as ``[(q, r), ...]``, whatever a bot put in it."""
    try:
        return str([p.as_tuple() if isinstance(p, Coord) else p for p in decision.pieces])
    except TypeError:
        return repr(decision.pieces)
