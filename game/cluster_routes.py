"""The cluster's routes: ``GET /cluster`` (the workers whose lease holds; with
``?games=true`` each one's live games) and
``GET /cluster/games/{id}/setup`` (what a worker relaying a game it does not run asks
its owner for when a spectator joins; ``game.cluster_redis``). Without ``--redis``
both answer 404: the server runs alone."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from game.cluster import ENDED_HEADER, SETUP_HEADER
from game.route_query import unknown_query
from game.server_state import _runtime

__all__ = ["cluster_routes"]

NOT_CLUSTERED = "this server runs alone: it was started without --redis"
#: What ``?games=`` takes (the document says boolean); anything else is a 422.
_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no", "")


def _age(heartbeat: str, now: datetime) -> float:
    try:
        return (now - datetime.fromisoformat(heartbeat)).total_seconds()
    except ValueError:
        return float("inf")


async def cluster(request: Request) -> Response:
    if (unknown := unknown_query(request, ("games",))) is not None:
        return JSONResponse({"detail": unknown}, status_code=422)
    wanted = request.query_params.get("games", "false").strip().lower()
    if wanted not in _TRUE + _FALSE:
        detail = f"games: expected true or false, got {wanted[:40]!r}"
        return JSONResponse({"detail": detail}, status_code=422)
    runtime = _runtime(request)
    node = runtime.manager.cluster
    if node is None:
        return JSONResponse({"detail": NOT_CLUSTERED}, status_code=404)
    now = datetime.now(UTC)
    workers = await node.workers()
    remote = runtime.tournaments.remote
    leadership = runtime.queue_leadership  # game.cluster_queue
    listed = [info.public(_age(info.heartbeat, now), node.leases) for info in workers]
    if wanted in _TRUE:
        games = await node.games_of(workers)
        for entry, info in zip(listed, workers, strict=True):
            entry["games"] = games[info.id]
    return JSONResponse(
        {
            "worker": node.worker_id,
            "lease_s": node.leases.lease,
            "workers": listed,
            # The work queue (game.store.work) and what this worker coordinates.
            "work_queue": await runtime.store.work.counts(),
            "coordinating": sorted(remote.held) if remote is not None else [],
            "playing": len(runtime.work.playing) if runtime.work is not None else 0,
            "queue_leader": None if leadership is None else await leadership.leader(),
        }
    )


async def game_setup(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return JSONResponse({"detail": unknown}, status_code=422)
    manager = _runtime(request).manager
    if manager.cluster is None:
        return JSONResponse({"detail": NOT_CLUSTERED}, status_code=404)
    game_id = request.path_params["game_id"]
    found = await manager.cluster_setup(game_id)
    if found is None:
        return JSONResponse({"detail": f"game {game_id!r} does not run here"}, status_code=404)
    seen, packets, ended = found
    headers = {SETUP_HEADER: str(seen), ENDED_HEADER: "1" if ended else "0"}
    return PlainTextResponse("\n".join(packets), headers=headers)


def cluster_routes() -> list[BaseRoute]:
    return [
        Route("/cluster", cluster, methods=["GET"]),
        Route("/cluster/games/{game_id}/setup", game_setup, methods=["GET"]),
    ]
