"""The tournament routes of the game server, adapting HTTP to ``TournamentDirector``.

* ``POST /tournaments`` — body ``TournamentRequest``; answers ``TournamentCreated``
  (201) once the tournament is stored and started, or ``{"detail": reason}`` with 401
  (API token), 413, 422 (anything invalid: a bad SPRT, an illegal opening, a ``cmd``
  bot, a bot URL the server may not reach) or 503 (shutting down).
* ``GET /tournaments`` — newest first (``limit``, 1-500, default 100).
* ``GET /tournaments/{id}`` — ``TournamentView``: settings, progress, standings, each
  pair's statistics, the SPRT, the crosstable and the games in flight.
* ``GET /tournaments/{id}/games`` — ``TournamentGames``: its started games in game
  order with their bots, record ids and results (``offset``, ``limit`` 1-500, default 100;
  ``next_offset``: the next page's, null after the last game started).
* ``POST /tournaments/{id}/stop`` and ``POST /tournaments/{id}/resume`` — the view
  afterwards; 404 for no such tournament, 409 when it is not in a state to do that,
  403 for a request that is not its creator's (``control_refused``).

Who may stop and resume a tournament (or a series): ``POST /tournaments`` answers a
``control_token`` (``TournamentCreated``), shown that once, its sha256 stored with the
tournament (``game.secret_tokens``, as a bot's ``owner_token``). Stop and resume take
``Authorization: Bearer`` with that token or with the server's API token
(``HTTTX_API_TOKEN``, the operator's); anything else is a 403, so on an open arena
(no API token) nobody stops another's tournament. A tournament without a control
token (created before there were any, or by ``htttx-tournament`` through its own
server's director) is controlled as it always was: with the API token when the server
has one (401 without it), by anyone when it has none.

The games themselves are ordinary games: ``GET /games``, ``/spectate/<game_id>`` and the
notation routes show them, named after their tournament.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from game.discovery import DiscoveryError
from game.openings import OpeningError
from game.route_bodies import creation_body
from game.route_query import unknown_query
from game.secret_tokens import hash_token, new_token, token_matches
from game.server_state import (
    _runtime,
    _settings,
    _without_token,
    bearer_token,
    client_address,
    has_api_token,
)
from game.tournament_games import is_counted
from game.tournament_runner import (
    TournamentError,
    TournamentFinishedError,
    TournamentRunningError,
    UnknownTournamentError,
)
from game.tournament_schedule import Schedule
from models import GameResult, clip_text
from wire.tournaments import (
    MAX_BOOK_CHARS,
    TournamentCreated,
    TournamentGame,
    TournamentGames,
    TournamentRequest,
)

__all__ = ["MAX_TOURNAMENT_BODY_BYTES", "control_refused", "tournament_routes"]

#: A request may carry a whole opening book.
MAX_TOURNAMENT_BODY_BYTES: Final = 4 * MAX_BOOK_CHARS + 64 * 1024
MAX_DETAIL_CHARS: Final = 500
MAX_LIST: Final = 500


def _error(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": clip_text(detail, MAX_DETAIL_CHARS)}, status_code=status)


async def create_tournament(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)  # ?dry_run=1 must not start one as if it were a trial
    tournament = await creation_body(
        request,
        TournamentRequest,
        max_bytes=MAX_TOURNAMENT_BODY_BYTES,
        closing="the server is shutting down; it takes no new tournaments",
        error=_error,
    )
    if isinstance(tournament, Response):
        return tournament
    tournaments = _runtime(request).tournaments
    control_token = new_token()

    async def create() -> str:
        run = await tournaments.create(tournament, control_hash=hash_token(control_token))
        return run.tournament_id

    try:
        started = await start_within_cap(request, tournament.concurrency, create)
    except (TournamentError, OpeningError, DiscoveryError) as error:
        return _error(422, str(error))
    if isinstance(started, Response):
        return started
    created = TournamentCreated(tournament_id=started, control_token=control_token)
    body_out = created.model_dump_json()
    return Response(body_out, status_code=201, media_type="application/json")


def _count(text: str, name: str, low: int, high: int) -> int | Response:
    """A query parameter that must be an integer from ``low`` to ``high``, or its 422."""
    # ASCII digits, and few: int() refuses strings of over 4300 digits with a ValueError.
    if text.isascii() and text.isdecimal() and len(text) <= 9 and low <= int(text) <= high:
        return int(text)
    return _error(422, f"{name}: expected an integer from {low} to {high}, got {text[:20]!r}")


async def list_tournaments(request: Request) -> Response:
    if (unknown := unknown_query(request, ("limit",))) is not None:
        return _error(422, unknown)
    limit = _count(request.query_params.get("limit", "100"), "limit", 1, MAX_LIST)
    if isinstance(limit, Response):
        return limit
    page = await _runtime(request).tournaments.page(limit)
    return Response(page.model_dump_json(), media_type="application/json")


async def get_tournament(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    tournament_id: str = request.path_params["tournament_id"]
    view = await _runtime(request).tournaments.view(tournament_id)
    if view is None:
        return _error(404, f"no tournament {tournament_id[:80]!r}")
    return Response(view.model_dump_json(), media_type="application/json")


async def tournament_games(request: Request) -> Response:
    runtime = _runtime(request)
    tournament_id: str = request.path_params["tournament_id"]
    if (unknown := unknown_query(request, ("offset", "limit"))) is not None:
        return _error(422, unknown)
    params = request.query_params
    offset = _count(params.get("offset", "0"), "offset", 0, 10**9)
    limit = _count(params.get("limit", "100"), "limit", 1, MAX_LIST)
    if isinstance(offset, Response):
        return offset
    if isinstance(limit, Response):
        return limit
    stored = await runtime.store.tournaments.get(tournament_id)
    if stored is None:
        return _error(404, f"no tournament {tournament_id[:80]!r}")
    settings = TournamentRequest.model_validate(stored.request)
    view = await runtime.tournaments.view(tournament_id)
    games_counted = 0 if view is None else view.games_counted
    # Bots and rounds come from the schedule by game number; the book is not needed.
    names = [bot.name for bot in settings.bots]
    schedule = Schedule(names, settings.format, rounds=settings.rounds, openings=0)
    # One row past the page says whether another page follows: the schedule's length
    # does not (the games not started yet are not rows).
    rows = await runtime.store.tournaments.games(tournament_id, offset=offset, limit=limit + 1)
    next_offset = offset + limit if len(rows) > limit else None
    items = []
    for row in rows[:limit]:
        scheduled = schedule.game(row.idx)
        status, result = row.game_status, row.game_result
        # A game being played is read from memory, ahead of the store's group commit.
        if (live := runtime.manager.live_progress(row.game_id)) is not None:
            status, result = "running", None if live.result is None else live.result.model_dump()
        items.append(
            TournamentGame(
                number=row.idx + 1,
                round=scheduled.round + 1,  # as in the record's tags: from 1
                x=scheduled.x,
                o=scheduled.o,
                game_id=row.game_id,
                counted=is_counted(row, games_counted),
                status=status,
                result=None if result is None else GameResult.model_validate(result),
            )
        )
    page = TournamentGames(
        items=items, offset=offset, games_total=stored.games_total, next_offset=next_offset
    )
    return Response(page.model_dump_json(), media_type="application/json")


async def control_refused(
    request: Request, tournament_id: str, kind: str, action: str
) -> Response | None:
    """The refusal of a request to ``action`` (stop, resume) the tournament or series
    ``tournament_id`` (``kind`` names it in the reason) that carries neither its
    control token nor the server's API token (403), or None when it may go on. One
    without a control token (or none at all: its route answers 404) falls back on
    the API token alone, as before control tokens (see the module docstring)."""
    control_hash = await _runtime(request).store.tournaments.control_hash(tournament_id)
    if control_hash is None:
        return _without_token(request)
    if token_matches(bearer_token(request), control_hash) or has_api_token(request):
        return None
    created_by = "POST /series" if kind == "series" else "POST /tournaments"
    return _error(
        403,
        f"only the creator of {kind} {tournament_id[:80]!r} may {action} it: send "
        f"'Authorization: Bearer <control_token>' (the control_token {created_by} answered "
        "with) or the server's API token",
    )


async def _control(request: Request, action: str) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    runtime = _runtime(request)
    tournament_id: str = request.path_params["tournament_id"]
    if (refused := await control_refused(request, tournament_id, "tournament", action)) is not None:
        return refused
    try:
        if action == "stop":
            await runtime.tournaments.stop(tournament_id)
        else:
            refused = await resume_within_cap(request, tournament_id, runtime.tournaments.resume)
            if refused is not None:
                return refused
    except UnknownTournamentError as error:
        return _error(404, str(error))
    except (TournamentRunningError, TournamentFinishedError) as error:
        return _error(409, str(error))
    except (TournamentError, OpeningError, DiscoveryError) as error:
        return _error(422, str(error))
    view = await runtime.tournaments.view(tournament_id)
    assert view is not None
    return Response(view.model_dump_json(), media_type="application/json")


async def resume_within_cap(
    request: Request, tournament_id: str, resume: Callable[[str], Awaitable[object]]
) -> Response | None:
    """``resume(tournament_id)`` (a stopped tournament or series) unless the server is
    shutting down (503) or the client has no room for its games (``start_within_cap``,
    429): the refusal, or None once it runs again. Raises what ``resume`` raises."""
    if _runtime(request).closing:
        return _error(503, "the server is shutting down")

    async def start() -> str:
        await resume(tournament_id)
        return tournament_id

    games = await stored_concurrency(request, tournament_id)
    started = await start_within_cap(request, games, start)
    return started if isinstance(started, Response) else None


async def stored_concurrency(request: Request, tournament_id: str) -> int:
    """The ``concurrency`` of the stored tournament or series ``tournament_id``; 1 when
    there is none (its resume answers 404)."""
    stored = await _runtime(request).store.tournaments.get(tournament_id)
    return 1 if stored is None else TournamentRequest.model_validate(stored.request).concurrency


async def start_within_cap(
    request: Request, games: int, start: Callable[[], Awaitable[str]]
) -> str | Response:
    """``start()`` a tournament or series that plays ``games`` at once (creating or
    resuming it; its id) unless the client's live games, tournaments and series leave
    no room for them under ``--max-games-per-client`` (429, ``_Runtime.refuse_games``).
    While it runs, its ``games`` count among the client's."""
    runtime, client = _runtime(request), client_address(request)
    most = _settings(request).max_games_per_client
    if (refusal := runtime.refuse_games(client, games, most)) is not None:
        return _error(429, refusal)
    with runtime.holding(client, games):
        tournament_id = await start()
        runtime.started_tournament(client, tournament_id)
    return tournament_id


async def stop_tournament(request: Request) -> Response:
    return await _control(request, "stop")


async def resume_tournament(request: Request) -> Response:
    return await _control(request, "resume")


def tournament_routes() -> list[Route]:
    return [
        Route("/tournaments", create_tournament, methods=["POST"]),
        Route("/tournaments", list_tournaments, methods=["GET"]),
        Route("/tournaments/{tournament_id}", get_tournament, methods=["GET"]),
        Route("/tournaments/{tournament_id}/games", tournament_games, methods=["GET"]),
        Route("/tournaments/{tournament_id}/stop", stop_tournament, methods=["POST"]),
        Route("/tournaments/{tournament_id}/resume", resume_tournament, methods=["POST"]),
    ]
