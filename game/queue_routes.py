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

from collections.abc import Callable
from typing import Any, Final

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

__all__ = ["MAX_CHALLENGE_BODY_BYTES", "challenge_paths", "queue_routes"]

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
    except (QueueRefusal, ChallengeError) as error:  # each says its HTTP status
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
    except (QueueRefusal, ChallengeError) as error:  # each says its HTTP status
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
    except (QueueRefusal, ChallengeError) as error:  # each says its HTTP status
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


def challenge_paths(
    body: Callable[[str], dict[str, Any]], error: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """The OpenAPI paths of the challenge routes (``game.openapi``)."""
    challenge_id = {
        "name": "challenge_id",
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
    }
    refused = {
        "403": error("A wrong person token"),
        "409": error("A name taken (a bot's, or a person's without its token)"),
        "413": error("Body too large"),
        "422": error("A bad body, name or time control"),
    }
    return {
        "/challenges": {
            "post": {
                "summary": "Open a challenge: a game with a seat for whoever follows its link",
                "description": (
                    "A new name is claimed for the person (the answer's player_token, "
                    "shown once); a known person's name needs its player_token. The "
                    "challenge's page is its url (/c/{challenge_id})."
                ),
                "requestBody": {"required": True, "content": body("ChallengeRequest")},
                "responses": {
                    "201": {"description": "Opened", "content": body("ChallengeView")},
                    **refused,
                    "429": error("Too many open challenges for this person"),
                    "503": error("The server is shutting down"),
                },
            }
        },
        "/challenges/{challenge_id}": {
            "get": {
                "summary": "A challenge: open, accepted (with its game) or expired",
                "parameters": [
                    challenge_id,
                    {
                        "name": "token",
                        "in": "query",
                        "description": (
                            "The creator's player token: adds 'matched', the creator's "
                            "seat, once accepted and while the game runs"
                        ),
                        "schema": {"type": "string"},
                    },
                ],
                "responses": {
                    "200": {"description": "The challenge", "content": body("ChallengeView")},
                    "403": error("Not the creator's player token"),
                    "404": error("No such challenge"),
                },
            }
        },
        "/challenges/{challenge_id}/accept": {
            "post": {
                "summary": "Accept a challenge: the game starts, the answer is your seat",
                "parameters": [challenge_id],
                "requestBody": {"required": True, "content": body("ChallengeAccept")},
                "responses": {
                    "200": {"description": "Your seat", "content": body("ChallengeAccepted")},
                    **refused,
                    "404": error("No such challenge"),
                    "409": error("Accepted already, expired, or your own challenge"),
                    "503": error("The server cannot start the game now"),
                },
            }
        },
    }
