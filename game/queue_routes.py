"""The routes of matchmaking for people: the ``/queue`` WebSocket
(``game.queue_socket``) and open challenges (``game.challenges``):

* ``POST /challenges`` — body ``ChallengeRequest`` -> 201 ``ChallengeView`` (with
  ``player_token`` when the name is new). 422 a bad body, name or time control; 409 a
  name taken (a bot's, or a person's without its token); 403 a wrong token; 429 too
  many open challenges; 503 shutting down.
* ``GET /challenges/{id}`` -> ``ChallengeView``; ``?token=<the creator's person
  token>`` adds ``matched`` (the creator's seat) once accepted. 404 unknown.
* ``POST /challenges/{id}/accept`` — body ``ChallengeAccept`` -> ``ChallengeAccepted``
  (the accepter's seat). 409 accepted already, expired, or one's own challenge; 503
  when the server cannot start the game now.

Every error is ``{"detail": reason}``. No API token is needed: these are for people
(the server's ``--api-token`` guards ``POST /game/new`` and tournaments).
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from bot.serve import read_body
from game.challenges import ChallengeError, Challenges
from game.discovery import DiscoveryError
from game.manager import ManagerClosed, TooManyGames
from game.queue_games import QueueRefusal
from game.queue_socket import queue_socket
from game.server_state import _runtime
from models import (
    ChallengeAccept,
    ChallengeRequest,
    ProtocolError,
    parse_body,
)

__all__ = ["MAX_CHALLENGE_BODY_BYTES", "queue_routes"]

#: A challenge body is a name, a token and a time control.
MAX_CHALLENGE_BODY_BYTES: Final = 4096


def _error(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(
        model.model_dump_json(exclude_none=True),
        status_code=status,
        media_type="application/json",
    )


def _challenges(request: Request) -> Challenges | Response:
    runtime = _runtime(request)
    if runtime.closing or runtime.challenges is None:
        return _error(503, "the server is shutting down")
    return runtime.challenges


async def _body(request: Request) -> bytes | Response:
    body = await read_body(request, MAX_CHALLENGE_BODY_BYTES)
    if body is None:
        return _error(413, f"request body over {MAX_CHALLENGE_BODY_BYTES} bytes")
    return body


async def create_challenge(request: Request) -> Response:
    challenges = _challenges(request)
    if isinstance(challenges, Response):
        return challenges
    body = await _body(request)
    if isinstance(body, Response):
        return body
    try:
        asked = parse_body(ChallengeRequest, body)
        view = await challenges.create(asked, str(request.base_url))
    except ProtocolError as error:
        return _error(422, str(error))
    except QueueRefusal as error:
        return _error(error.status, str(error))
    except ChallengeError as error:
        return _error(error.status, str(error))
    return _json(view, 201)


async def get_challenge(request: Request) -> Response:
    challenges = _challenges(request)
    if isinstance(challenges, Response):
        return challenges
    token = request.query_params.get("token")
    try:
        view = await challenges.view(
            request.path_params["challenge_id"], str(request.base_url), token or None
        )
    except QueueRefusal as error:
        return _error(error.status, str(error))
    except ChallengeError as error:
        return _error(error.status, str(error))
    return _json(view)


async def accept_challenge(request: Request) -> Response:
    challenges = _challenges(request)
    if isinstance(challenges, Response):
        return challenges
    body = await _body(request)
    if isinstance(body, Response):
        return body
    try:
        asked = parse_body(ChallengeAccept, body)
        accepted = await challenges.accept(request.path_params["challenge_id"], asked)
    except ProtocolError as error:
        return _error(422, str(error))
    except QueueRefusal as error:
        return _error(error.status, str(error))
    except ChallengeError as error:
        return _error(error.status, str(error))
    except (TooManyGames, ManagerClosed, DiscoveryError) as error:
        return _error(503, str(error))
    return _json(accepted)


def queue_routes() -> list[BaseRoute]:
    """``/queue`` and the challenge routes (see the module docstring)."""
    return [
        WebSocketRoute("/queue", queue_socket),
        Route("/challenges", create_challenge, methods=["POST"]),
        Route("/challenges/{challenge_id}", get_challenge, methods=["GET"]),
        Route("/challenges/{challenge_id}/accept", accept_challenge, methods=["POST"]),
    ]
