"""The ladder's routes on the game server (``game.ladder``):

* ``GET /ladder`` — ``LadderStatus``: whether the server runs a ladder
  (``htttx-server --ladder``) and whether it is scheduling now, its settings, the games
  in flight and the bots it backs off from and why. A server without a ladder answers
  ``{"enabled": false, "running": false, ...}``.
* ``POST /ladder/pause`` — start no more ladder games (those in flight play on);
  ``POST /ladder/resume`` — start them again. On a cluster, through any worker given
  ``--ladder``: the pause is the cluster's (``game.cluster_ladder``). Both answer the
  status afterwards; they need the server's API token when it has one (like
  ``POST /game/new``); a server without a ladder answers 404, and a worker that cannot
  reach the cluster's Redis 503 (nothing changed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from game.ladder_switch import LadderSwitchUnknown
from game.route_query import unknown_query
from game.server_state import _runtime, _without_token
from wire.ladder import LadderStatus

__all__ = ["LADDER_MODELS", "ladder_paths", "ladder_routes"]

#: The ladder's models for the OpenAPI document's schemas (``game.openapi``).
LADDER_MODELS: Final[list[tuple[type[BaseModel], Literal["validation", "serialization"]]]] = [
    (LadderStatus, "serialization")
]

NO_LADDER = "this server runs no ladder: start it with htttx-server --ladder"


async def ladder_status(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return JSONResponse({"detail": unknown}, status_code=422)
    ladder = _runtime(request).ladder
    status = LadderStatus(enabled=False, running=False) if ladder is None else await ladder.status()
    return Response(status.model_dump_json(), media_type="application/json")


async def pause_ladder(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return JSONResponse({"detail": unknown}, status_code=422)
    if (refused := _without_token(request)) is not None:
        return refused
    ladder = _runtime(request).ladder
    if ladder is None:
        return JSONResponse({"detail": NO_LADDER}, status_code=404)
    try:
        await ladder.pause()
    except LadderSwitchUnknown as error:
        return _unswitched("pause", error)
    return Response((await ladder.status()).model_dump_json(), media_type="application/json")


async def resume_ladder(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return JSONResponse({"detail": unknown}, status_code=422)
    if (refused := _without_token(request)) is not None:
        return refused
    runtime = _runtime(request)
    ladder = runtime.ladder
    if ladder is None:
        return JSONResponse({"detail": NO_LADDER}, status_code=404)
    if runtime.closing:
        return JSONResponse({"detail": "the server is shutting down"}, status_code=503)
    try:
        await ladder.resume()
    except LadderSwitchUnknown as error:
        return _unswitched("resume", error)
    return Response((await ladder.status()).model_dump_json(), media_type="application/json")


def _unswitched(what: str, error: LadderSwitchUnknown) -> Response:
    """503: the pause could not be set (a cluster's Redis out of reach); nothing changed."""
    detail = f"cannot {what} the ladder now: {error}; nothing changed, try again"
    return JSONResponse({"detail": detail}, status_code=503)


def ladder_routes() -> list[Route]:
    return [
        Route("/ladder", ladder_status, methods=["GET"]),
        Route("/ladder/pause", pause_ladder, methods=["POST"]),
        Route("/ladder/resume", resume_ladder, methods=["POST"]),
    ]


def ladder_paths(
    body: Callable[[str], dict[str, Any]], error: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """The ladder's paths in the OpenAPI document."""
    status = {"description": "The ladder now", "content": body("LadderStatus")}

    def control(summary: str) -> dict[str, Any]:
        return {
            "post": {
                "summary": summary,
                "security": [{"bearer": []}, {}],
                "responses": {
                    "200": status,
                    "401": error("API token missing or wrong"),
                    "404": error("This server runs no ladder"),
                    "503": error(
                        "Shutting down, or the cluster's Redis is out of reach: try again"
                    ),
                },
            }
        }

    return {
        "/ladder": {
            "get": {
                "summary": "The ladder: settings, games in flight, counts, backoffs and why",
                "responses": {"200": status},
            }
        },
        "/ladder/pause": control("Start no more ladder games (those in flight play on)"),
        "/ladder/resume": control("Start ladder games again"),
    }
