"""The arena's routes: the bot registry (``/bots``) and ``GET /leaderboard``.

* ``POST /bots`` — body ``BotRegistration``; 201 ``BotRegistered`` (the bot and its
  ``owner_token``, shown this once). The bot's capabilities are fetched and checked as
  for a game, under the server's address policy: 422 for a bad URL, a forbidden
  address or a bot that cannot be reached (the reason in ``detail``), 409 for a name
  already a bot's or a person's (case-insensitively), 401 without the server's API
  token when it has one (as ``POST /game/new``: a private server registers only its
  operator's bots; a public arena runs without one), 413, 503 (shutting down).
* ``GET /bots`` — ``BotList``: the hosted example bots (``bots``, as before) and the
  registered ones (``registered``) with rating, record, failures and backoff.
* ``GET /bots/{name}`` — ``RegisteredBot``; ``PATCH /bots/{name}`` (``BotUpdate``) and
  ``DELETE /bots/{name}`` (retire) with ``Authorization: Bearer <owner_token>``: 401
  without a token, 403 for a wrong one or a server-owned bot, 404, 409 (retired), 422
  (a new URL refused). The owner token is asked instead of the API token.
* ``GET /bots/{name}/ratings`` (``limit`` 1-1000, default 100) — ``RatingHistory``.
* ``GET /leaderboard`` (``kind`` ``bot`` | ``human`` | ``all``, ``limit`` 1-1000,
  default 100) — ``Leaderboard``, ranked by ``rating - uncertainty``.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from game.arena_errors import (
    ArenaError,
    BotRetired,
    InvalidPlayerName,
    NameTaken,
    ServerOwnedBot,
    UnknownBot,
    WrongToken,
)
from game.discovery import DiscoveryError
from game.rating_book import RATING_HISTORY_MAX, PlayerStanding
from game.route_bodies import creation_body, parsed_body
from game.route_query import unknown_query
from game.server_state import HOSTED_BOTS, _runtime, _settings, bearer_token
from models import (
    MAX_LEADERBOARD,
    BotList,
    BotUpdate,
    HostedBot,
    Leaderboard,
    LeaderboardEntry,
    RatingHistory,
    clip_text,
)
from wire.arena import BotRegistration

__all__ = ["MAX_BOT_BODY_BYTES", "arena_routes", "leaderboard_of"]

#: A registration or an update is small.
MAX_BOT_BODY_BYTES: Final = 16 * 1024
MAX_DETAIL_CHARS: Final = 500
DEFAULT_LIMIT: Final = 100

_STATUS: Final[dict[type[ArenaError], int]] = {
    InvalidPlayerName: 422,
    NameTaken: 409,
    BotRetired: 409,
    WrongToken: 403,
    ServerOwnedBot: 403,
    UnknownBot: 404,
}


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {"detail": clip_text(detail, MAX_DETAIL_CHARS)}, status_code=status, headers=headers
    )


def _arena_error(error: ArenaError) -> JSONResponse:
    return _error(_STATUS.get(type(error), 422), str(error))


def _json(body: str, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type="application/json")


def _count(text: str, name: str, low: int, high: int) -> int | Response:
    """A query parameter that must be an integer from ``low`` to ``high``, or its 422."""
    if text.isascii() and text.isdecimal() and len(text) <= 9 and low <= int(text) <= high:
        return int(text)
    return _error(422, f"{name}: expected an integer from {low} to {high}, got {text[:20]!r}")


def _no_token() -> JSONResponse:
    return _error(
        401,
        "the bot's owner token is required: send 'Authorization: Bearer <owner_token>'",
        {"WWW-Authenticate": "Bearer"},
    )


# ------------------------------------------------------------------ the routes


async def register_bot(request: Request) -> Response:
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    registration = await creation_body(
        request,
        BotRegistration,
        max_bytes=MAX_BOT_BODY_BYTES,
        closing="the server is shutting down; it takes no registrations",
        error=_error,
    )
    if isinstance(registration, Response):
        return registration
    try:
        registered = await _runtime(request).registry.register(registration)
    except ArenaError as error:
        return _arena_error(error)
    except DiscoveryError as error:  # names the URL and what was wrong
        return _error(422, str(error))
    return _json(registered.model_dump_json(), 201)


async def list_bots(request: Request) -> Response:
    """The hosted example bots (URLs built from the request, so they name the server as
    the caller reached it) and the registered bots."""
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    hosted: list[HostedBot] = []
    if _settings(request).host_example_bots:
        base = str(request.base_url).rstrip("/")
        hosted = [
            HostedBot(
                name=path.rsplit("/", 1)[-1], url=base + path, meta=bot_class.capabilities().meta
            )
            for path, bot_class in HOSTED_BOTS.items()
        ]
    registered = await _runtime(request).registry.registered()
    return _json(BotList(bots=hosted, registered=registered).model_dump_json())


async def bot(request: Request) -> Response:
    """``GET``, ``PATCH`` and ``DELETE`` of one registered bot."""
    if (unknown := unknown_query(request, ())) is not None:
        return _error(422, unknown)
    registry = _runtime(request).registry
    name = request.path_params["name"]
    if request.method == "GET":
        found = await registry.get(name)
        if found is None:
            return _error(404, f"no bot is registered as {name[:80]!r}")
        return _json(found.model_dump_json())
    token = bearer_token(request)
    if token is None:
        return _no_token()
    try:
        if request.method == "DELETE":
            changed = await registry.retire(name, token)
        else:
            update = await parsed_body(
                request, BotUpdate, max_bytes=MAX_BOT_BODY_BYTES, error=_error
            )
            if isinstance(update, Response):
                return update
            changed = await registry.update(name, token, update)
    except ArenaError as error:
        return _arena_error(error)
    except DiscoveryError as error:
        return _error(422, str(error))
    return _json(changed.model_dump_json())


async def bot_ratings(request: Request) -> Response:
    runtime = _runtime(request)
    name = request.path_params["name"]
    if (unknown := unknown_query(request, ("limit",))) is not None:
        return _error(422, unknown)
    limit = _count(
        request.query_params.get("limit", str(DEFAULT_LIMIT)), "limit", 1, RATING_HISTORY_MAX
    )
    if isinstance(limit, Response):
        return limit
    found = await runtime.registry.get(name)
    if found is None:
        return _error(404, f"no bot is registered as {name[:80]!r}")
    points = await runtime.ratings.history(found.name, limit)
    return _json(RatingHistory(name=found.name, points=points).model_dump_json())


def leaderboard_of(standings: list[PlayerStanding], limit: int) -> Leaderboard:
    """The first ``limit`` of ``standings`` (best first) as the wire's entries.

    >>> from game.ratings import Rating
    >>> one = PlayerStanding("Hexa", "bot", Rating(1600.4, 80.2), 12, 8, 3, 1, {}, 250, None)
    >>> entry = leaderboard_of([one], 10).entries[0]
    >>> entry.rank, entry.rating, entry.uncertainty, entry.provisional
    (1, 1600, 160, False)
    """
    entries = [
        LeaderboardEntry(
            rank=rank,
            name=standing.name,
            kind="human" if standing.kind == "human" else "bot",
            rating=round(standing.rating.mu),
            uncertainty=round(2 * standing.rating.sigma),
            provisional=standing.provisional,
            games=standing.games,
            wins=standing.wins,
            losses=standing.losses,
            draws=standing.draws,
            failures=standing.failures,
            avg_think_ms=standing.avg_think_ms,
            last_seen=standing.last_seen,
            status=standing.status,
        )
        for rank, standing in enumerate(standings[:limit], start=1)
    ]
    return Leaderboard(entries=entries)


async def leaderboard(request: Request) -> Response:
    if (unknown := unknown_query(request, ("kind", "limit"))) is not None:
        return _error(422, unknown)
    params = request.query_params
    kind = params.get("kind", "all")
    if kind not in ("bot", "human", "all"):
        return _error(422, f"kind: expected bot, human or all, got {kind[:20]!r}")
    limit = _count(params.get("limit", str(DEFAULT_LIMIT)), "limit", 1, MAX_LEADERBOARD)
    if isinstance(limit, Response):
        return limit
    standings = await _runtime(request).ratings.standings(None if kind == "all" else kind)
    return _json(leaderboard_of(standings, limit).model_dump_json())


def arena_routes() -> list[Route]:
    """The routes above, for ``game.server.create_app``."""
    return [
        Route("/bots", register_bot, methods=["POST"]),
        Route("/bots", list_bots, methods=["GET"]),
        Route("/bots/{name}", bot, methods=["GET", "PATCH", "DELETE"]),
        Route("/bots/{name}/ratings", bot_ratings, methods=["GET"]),
        Route("/leaderboard", leaderboard, methods=["GET"]),
    ]
