"""The body of a REST request, read the same way by every route that takes one.

A route that creates something (``POST /game/new``, ``/bots``, ``/tournaments``,
``/series``), once its query is checked (``game.route_query``: 422 for a parameter it
does not take), refuses a request without the server's API token (401), then one
that comes while the server shuts down (503), then reads a body of at most so many
bytes (413) and parses it as its model (422, the ``ProtocolError``'s reason). The
routes that change something of their own (``PATCH /bots/{name}``, the challenges)
guard themselves and only read and parse. Each route states what differs: the model,
the byte cap, its 503 reason, and ``error``, how its errors look (some clip the
reason, as it may quote what the client sent).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from bot.serve import read_body
from game.server_state import _runtime, _without_token
from models import ProtocolError, parse_body

__all__ = ["ErrorResponse", "creation_body", "parsed_body"]

_Model = TypeVar("_Model", bound=BaseModel)

log = logging.getLogger("game.server")

#: A route's error response: the status and the reason (``{"detail": reason}``).
ErrorResponse = Callable[[int, str], Response]


async def parsed_body(
    request: Request, model: type[_Model], *, max_bytes: int, error: ErrorResponse
) -> _Model | Response:
    """The request's body as ``model``; or 413 for a body over ``max_bytes`` bytes, 422
    for one that is not a valid ``model``, 499 (for the access log: nobody reads it)
    when the client hangs up before its body is all in."""
    try:
        body = await read_body(request, max_bytes)
    except ClientDisconnect:
        # Not the server's error to log with a traceback: nothing was asked for.
        log.info("%s %s: the client went away mid-request", request.method, request.url.path)
        return Response(status_code=499)
    if body is None:
        return error(413, f"request body over {max_bytes} bytes")
    try:
        return parse_body(model, body)
    except ProtocolError as invalid:
        return error(422, str(invalid))


async def creation_body(
    request: Request,
    model: type[_Model],
    *,
    max_bytes: int,
    closing: str,
    error: ErrorResponse,
) -> _Model | Response:
    """``parsed_body`` for a route that creates something: first the 401 without the
    server's API token, and 503 with the reason ``closing`` while it shuts down."""
    if (refused := _without_token(request)) is not None:
        return refused
    if _runtime(request).closing:
        return error(503, closing)
    return await parsed_body(request, model, max_bytes=max_bytes, error=error)
