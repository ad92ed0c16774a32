"""The series routes of the game server, adapting HTTP to ``game.series.SeriesDesk``.

* ``POST /series`` — body ``SeriesRequest``; answers ``SeriesCreated`` (201) once the
  series is stored and started, or ``{"detail": reason}`` with 401 (API token), 413,
  422 (anything invalid: both or neither of ``best_of``/``first_to``, a human seat, an
  unknown field, a bot URL the server may not reach, a rated series' player that is not
  a registered bot at that URL) or 503 (shutting down).
* ``GET /series`` — ``SeriesPage``, newest first (``limit``, 1-500, default 100).
* ``GET /series/{id}`` — ``SeriesView``: the score, the status, every started game
  with the score before it and its links.
* ``POST /series/{id}/stop`` and ``POST /series/{id}/resume`` — the view afterwards;
  404 for no such series, 409 when it is not in a state to do that, 403 without the
  ``control_token`` that ``POST /series`` answered (``SeriesCreated``) or the server's
  API token: the rule of ``game.tournament_routes``, whose ``control_refused`` it is.

A series is also a tournament: ``GET /tournaments/{id}`` shows it with its standings.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from game.discovery import DiscoveryError
from game.openings import OpeningError
from game.route_bodies import creation_body
from game.route_query import unknown_query
from game.secret_tokens import hash_token, new_token
from game.series import MAX_SERIES_LIST, SeriesDesk
from game.server_state import _runtime
from game.tournament_routes import (
    MAX_TOURNAMENT_BODY_BYTES,
    _count,
    _error,
    control_refused,
    resume_within_cap,
    start_within_cap,
)
from game.tournament_runner import (
    TournamentError,
    TournamentFinishedError,
    TournamentRunningError,
    UnknownTournamentError,
)
from wire.series import SeriesCreated, SeriesRequest

__all__ = ["MAX_SERIES_BODY_BYTES", "series_routes"]

#: A request may carry a whole opening book, as a tournament's may.
MAX_SERIES_BODY_BYTES: Final = MAX_TOURNAMENT_BODY_BYTES


def _desk(request: Request) -> SeriesDesk:
    runtime = _runtime(request)
    return SeriesDesk(runtime.tournaments, runtime.registry)


async def create_series(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    series = await creation_body(
        request,
        SeriesRequest,
        max_bytes=MAX_SERIES_BODY_BYTES,
        closing="the server is shutting down; it takes no new series",
        error=_error,
    )
    if isinstance(series, Response):
        return series
    desk = _desk(request)
    control_token = new_token()
    control_hash = hash_token(control_token)
    try:
        started = await start_within_cap(
            request,
            series.tournament().concurrency,
            lambda: desk.create(series, control_hash=control_hash),
        )
    except (TournamentError, OpeningError, DiscoveryError) as error:
        return _error(422, str(error))
    if isinstance(started, Response):
        return started
    answer = SeriesCreated(series_id=started, control_token=control_token).model_dump_json()
    return Response(answer, status_code=201, media_type="application/json")


async def list_series(request: Request) -> Response:
    if (unknown := unknown_query(request, ("limit",))) is not None:
        return _error(422, unknown)
    limit = _count(request.query_params.get("limit", "100"), "limit", 1, MAX_SERIES_LIST)
    if isinstance(limit, Response):
        return limit
    page = await _desk(request).page(limit)
    return Response(page.model_dump_json(), media_type="application/json")


async def get_series(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    series_id: str = request.path_params["series_id"]
    view = await _desk(request).view(series_id)
    if view is None:
        return _error(404, f"no series {series_id[:80]!r}")
    return Response(view.model_dump_json(), media_type="application/json")


async def _control(request: Request, action: str) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    desk = _desk(request)
    series_id: str = request.path_params["series_id"]
    if (refused := await control_refused(request, series_id, "series", action)) is not None:
        return refused
    try:
        if action == "stop":
            view = await desk.stop(series_id)
        else:
            if (refused := await resume_within_cap(request, series_id, desk.resume)) is not None:
                return refused
            resumed = await desk.view(series_id)
            assert resumed is not None  # resume raises for an unknown series
            view = resumed
    except UnknownTournamentError as error:
        return _error(404, str(error).replace("tournament", "series"))
    except (TournamentRunningError, TournamentFinishedError) as error:
        return _error(409, str(error).replace("tournament", "series"))
    except (TournamentError, OpeningError, DiscoveryError) as error:
        return _error(422, str(error))
    return Response(view.model_dump_json(), media_type="application/json")


async def stop_series(request: Request) -> Response:
    return await _control(request, "stop")


async def resume_series(request: Request) -> Response:
    return await _control(request, "resume")


def series_routes() -> list[Route]:
    return [
        Route("/series", create_series, methods=["POST"]),
        Route("/series", list_series, methods=["GET"]),
        Route("/series/{series_id}", get_series, methods=["GET"]),
        Route("/series/{series_id}/stop", stop_series, methods=["POST"]),
        Route("/series/{series_id}/resume", resume_series, methods=["POST"]),
    ]
