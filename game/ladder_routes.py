"""The ladder's routes on the game server (``game.ladder``):

* ``GET /ladder`` — ``LadderStatus``: whether the server runs a ladder
  (``htttx-server --ladder``) and whether it is scheduling now, its settings, the games
  in flight and the bots it backs off from and why. A server without a ladder answers
  ``{"enabled": false, "running": false, ...}``.
* ``POST /ladder/pause`` — start no more ladder games (those in flight play on);
  ``POST /ladder/resume`` — start them again. Both answer the status afterwards; they
  need the server's API token when it has one (like ``POST /game/new``), and a server
  without a ladder answers 404.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from game.server_state import _runtime, _without_token
from wire.ladder import LadderStatus

__all__ = ["ladder_routes"]

NO_LADDER = "this server runs no ladder: start it with htttx-server --ladder"


async def ladder_status(request: Request) -> Response:
    ladder = _runtime(request).ladder
    status = LadderStatus(enabled=False, running=False) if ladder is None else await ladder.status()
    return Response(status.model_dump_json(), media_type="application/json")


async def pause_ladder(request: Request) -> Response:
    if (refused := _without_token(request)) is not None:
        return refused
    ladder = _runtime(request).ladder
    if ladder is None:
        return JSONResponse({"detail": NO_LADDER}, status_code=404)
    await ladder.pause()
    return Response((await ladder.status()).model_dump_json(), media_type="application/json")


async def resume_ladder(request: Request) -> Response:
    if (refused := _without_token(request)) is not None:
        return refused
    runtime = _runtime(request)
    ladder = runtime.ladder
    if ladder is None:
        return JSONResponse({"detail": NO_LADDER}, status_code=404)
    if runtime.closing:
        return JSONResponse({"detail": "the server is shutting down"}, status_code=503)
    ladder.start()
    return Response((await ladder.status()).model_dump_json(), media_type="application/json")


def ladder_routes() -> list[Route]:
    return [
        Route("/ladder", ladder_status, methods=["GET"]),
        Route("/ladder/pause", pause_ladder, methods=["POST"]),
        Route("/ladder/resume", resume_ladder, methods=["POST"]),
    ]
