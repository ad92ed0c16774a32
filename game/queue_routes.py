"""The routes of matchmaking for people: the ``/queue`` WebSocket
(``game.queue_socket``) and open challenges (``game.challenges``):

* ``POST /challenges`` — body ``ChallengeRequest`` -> 201 ``ChallengeView`` (with
  ``player_token`` when the name is new). 422 a bad body, name or time control; 409 a
  name taken (a bot's, or a person's without its token); 403 a wrong token; 429 too
  many open challenges; 503 shutting down.
* ``GET /challenges/{id}`` -> ``ChallengeView``; ``?token=<the creator's person
  token>`` adds ``matched`` (the creator's seat) once accepted. 404 unknown.
* ``POST /challenges/{id}/accept`` — body ``ChallengeAccept`` -> ``ChallengeAccepted``
  (the accepter's seat). 409 accepted already, expired, cancelled, or one's own
  challenge; 503 when the server cannot start the game now.
* ``DELETE /challenges/{id}?token=<the creator's person token>`` -> ``ChallengeView``,
  now ``cancelled``. 403 no token or not the creator's; 404 unknown; 409 accepted,
  expired or cancelled already.

Every error is ``{"detail": reason}``. No API token is needed: these are for people
(the server's ``--api-token`` guards ``POST /game/new`` and tournaments).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from game.challenges import ChallengeError, Challenges
from game.discovery import DiscoveryError
from game.manager import ManagerClosed, TooManyGames
from game.queue_games import QueueRefusal
from game.queue_socket import queue_socket
from game.route_bodies import parsed_body
from game.route_query import unknown_query
from game.server_state import _runtime
from models import ChallengeAccept, ChallengeRequest

__all__ = ["MAX_CHALLENGE_BODY_BYTES", "challenge_paths", "queue_routes"]

#: A challenge body is a name, a token and a time control.
MAX_CHALLENGE_BODY_BYTES: Final = 4096

_Asked = TypeVar("_Asked", bound=BaseModel)


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


async def _challenges_asked(
    request: Request, model: type[_Asked]
) -> tuple[Challenges, _Asked] | Response:
    """The challenges and what the body asks of them (a ``model``); or the 503 while
    the server shuts down, the 413 or the 422."""
    challenges = _challenges(request)
    if isinstance(challenges, Response):
        return challenges
    asked = await parsed_body(request, model, max_bytes=MAX_CHALLENGE_BODY_BYTES, error=_error)
    return asked if isinstance(asked, Response) else (challenges, asked)


async def create_challenge(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)  # ?token= too: the body's player_token counts
    found = await _challenges_asked(request, ChallengeRequest)
    if isinstance(found, Response):
        return found
    challenges, asked = found
    try:
        view = await challenges.create(asked, str(request.base_url))
    except (QueueRefusal, ChallengeError) as error:  # each says its HTTP status
        return _error(error.status, str(error))
    return _json(view, 201)


async def get_challenge(request: Request) -> Response:
    if (unknown := unknown_query(request, ("token",))) is not None:
        return _error(422, unknown)
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


async def cancel_challenge(request: Request) -> Response:
    if (unknown := unknown_query(request, ("token",))) is not None:
        return _error(422, unknown)
    challenges = _challenges(request)
    if isinstance(challenges, Response):
        return challenges
    token = request.query_params.get("token")
    try:
        view = await challenges.cancel(
            request.path_params["challenge_id"], token or None, str(request.base_url)
        )
    except (QueueRefusal, ChallengeError) as error:  # each says its HTTP status
        return _error(error.status, str(error))
    return _json(view)


async def accept_challenge(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)  # ?token= too: the body's player_token counts
    found = await _challenges_asked(request, ChallengeAccept)
    if isinstance(found, Response):
        return found
    challenges, asked = found
    try:
        accepted = await challenges.accept(request.path_params["challenge_id"], asked)
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
        Route("/challenges/{challenge_id}", cancel_challenge, methods=["DELETE"]),
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
            },
            "delete": {
                "summary": "Cancel your open challenge (nobody can accept it any more)",
                "description": (
                    "Only its creator can, with their player token. A challenge created "
                    "on a /queue socket is also cancelled by queue_leave and when that "
                    "socket closes."
                ),
                "parameters": [
                    challenge_id,
                    {
                        "name": "token",
                        "in": "query",
                        "required": True,
                        "description": "The creator's player token",
                        "schema": {"type": "string"},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "Cancelled: the challenge, now 'cancelled'",
                        "content": body("ChallengeView"),
                    },
                    "403": error("No player token, or not the creator's"),
                    "404": error("No such challenge"),
                    "409": error("Accepted, expired or cancelled already"),
                },
            },
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
                    "409": error("Accepted already, expired, cancelled, or your own challenge"),
                    "503": error("The server cannot start the game now"),
                },
            }
        },
    }
