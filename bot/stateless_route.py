"""The stateless route of a bot server: ``POST <api_root>/turn`` reads the body (bounded),
makes the job (``bot.stateless``), runs it on a fresh bot in the pool, and answers in
time, a legal fallback standing in for a missing or illegal move.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time

from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response

from bot.bot import BaseBot, Deadline, MoveDecision
from bot.jobs import ThinkJob, time_left
from bot.pool import BotPool
from bot.stateless import stateless_answer, stateless_job, stateless_problem
from models import (
    Match,
    ProtocolError,
    StatelessMoveRequest,
    StatelessV1Alpha,
    dump_packet,
    parse_body,
)

__all__ = ["MAX_BODY_BYTES", "read_body", "stateless_turn"]

# One logger for the whole bot server.
log = logging.getLogger("bot.serve")

#: Largest stateless request body; a bigger one is refused with 413.
MAX_BODY_BYTES = 1 << 20


_stateless_job_ids = itertools.count(1)


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None if it is over ``limit`` bytes (a declared length over it
    is refused before reading; otherwise reading stops at the limit). Raises Starlette's
    ``ClientDisconnect`` if the client hangs up first. The game server reads its REST
    bodies with it too."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdecimal() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


async def _client_gone(request: Request) -> None:
    """Returns when the HTTP client disconnects (after the body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _read_turn(
    body: bytes, capabilities: StatelessV1Alpha, free_setup: bool, job_id: int
) -> ThinkJob:
    """The job of a ``/turn`` body; raises ``ProtocolError`` for a malformed body and
    ``StatelessRequestError`` for a board no game can reach."""
    turn = parse_body(StatelessMoveRequest, body)
    return stateless_job(turn, capabilities, Match(), job_id, free_setup=free_setup)


async def stateless_turn(
    request: Request,
    bot_class: type[BaseBot],
    capabilities: StatelessV1Alpha,
    pool: BotPool,
    free_setup: bool,
) -> Response:
    """``POST .../turn``: one move from a fresh bot, answered within the time limit.

    The limit counts from the request's arrival (its head, when this is called), as a
    socket's counts from its frame's (``bot.connection``): the client's clock runs from
    its sending, so the time its body takes to come in, and to be read, is the bot's.
    """
    received = time.monotonic()
    try:
        body = await read_body(request, MAX_BODY_BYTES)
    except ClientDisconnect:
        # Hung up before its body was all in (a game that ended, a client that gave
        # up): nobody to answer, and not the bot server's error to log.
        log.info("%s: the stateless client went away mid-request", bot_class.__name__)
        return Response(status_code=499)  # nobody reads it; for the access log
    if body is None:
        return PlainTextResponse(f"request body over {MAX_BODY_BYTES} bytes", status_code=413)
    try:
        # Decoding up to MAX_BODY_BYTES, then screening and building the position, is
        # O(cells) of CPU: off the event loop, like the bot's own work.
        job_id = next(_stateless_job_ids)
        job = await asyncio.to_thread(_read_turn, body, capabilities, free_setup, job_id)
    except ProtocolError as error:
        status = 400 if str(error).startswith("not valid JSON") else 422
        return PlainTextResponse(str(error), status_code=status)
    except ValueError as error:  # a position no game can reach, a finished game, ...
        return PlainTextResponse(str(error), status_code=422)

    elapsed = time.monotonic() - received
    deadline = Deadline(time_left(job.time_limit, elapsed))
    thinking = asyncio.ensure_future(pool.run_once(bot_class, job, deadline))
    # Without a time limit the client may wait forever (the spec allows it), but not
    # after it has hung up.
    watcher = asyncio.ensure_future(_client_gone(request))
    try:
        await asyncio.wait(
            {thinking, watcher},
            timeout=time_left(job.answer_within, elapsed),
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        watcher.cancel()
    decision: MoveDecision | None = None
    if not thinking.done():
        decision = deadline.best
        deadline.cancel()
        thinking.cancel()  # abandons the call; the bot's late answer is not wanted
        if watcher.done() and not watcher.cancelled():
            log.info("%s: the stateless client went away", bot_class.__name__)
            return Response(status_code=499)  # nobody reads it; for the access log
    elif (failure := thinking.exception()) is not None:
        log.error("%s: the bot failed on a stateless turn", bot_class.__name__, exc_info=failure)
    else:
        decision = thinking.result()
    if (problem := stateless_problem(job, decision)) is not None:
        log.warning("%s: stateless turn: %s; sent the fallback move", bot_class.__name__, problem)
    answer = stateless_answer(job, decision)  # None or illegal: the fallback move
    return Response(dump_packet(answer), media_type="application/json")
