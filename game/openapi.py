"""The game server's OpenAPI 3.1 document (``_openapi``, schemas from the pydantic
models) and the self-contained ``/docs`` page listing its routes (``_docs_page``)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, Final

from pydantic.json_schema import models_json_schema

from game.game_wait import MAX_WAIT_S
from game.ladder_routes import LADDER_MODELS, ladder_paths
from game.openapi_arena import ARENA_MODELS, arena_paths
from game.openapi_tournaments import series_paths, tournament_paths
from game.queue_routes import challenge_paths
from game.server_state import HOSTED_BOTS
from game.store import (
    MAX_BOT_URL_FILTER,
    MAX_PAGE_SIZE,
    MAX_PLAYER_FILTER,
    GamePage,
    RecordStatus,
)
from models import (
    ChallengeAccept,
    ChallengeAccepted,
    ChallengeRequest,
    ChallengeView,
    GameRecord,
    HostedBots,
    NewGameRequest,
    NewGameResponse,
)
from wire.series import SeriesCreated, SeriesPage, SeriesRequest, SeriesView
from wire.tournaments import (
    TournamentCreated,
    TournamentGames,
    TournamentPage,
    TournamentRequest,
    TournamentView,
)

__all__: list[str] = []


#: What ``GET /health`` answers (``game.game_routes.health``): no wire model of its own.
_HEALTH: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["ok", "shutting down"]},
        "live_games": {"type": "integer", "description": "absent while shutting down"},
        "worker": {"type": "string", "description": "a cluster's worker (--redis): its id"},
        "workers": {
            "type": ["integer", "null"],
            "description": "how many workers' leases hold; null: Redis out of reach",
        },
        "cluster_error": {"type": "string", "description": "why workers is null"},
    },
    "required": ["status"],
}


#: Each operation's ``operationId``: the name of its function in a generated client
#: (openapi-generator, openapi-python-client), which would otherwise make one up from
#: the path (``gamesGameIdGet``). Part of the contract: never renamed. A route without
#: one here fails the document's build (a KeyError), so a new route cannot forget it.
_OPERATION_IDS: Final[dict[tuple[str, str], str]] = {
    ("post", "/game/new"): "create_game",
    ("get", "/games"): "list_games",
    ("get", "/games/{game_id}"): "get_game",
    ("get", "/games/{game_id}/notation"): "get_game_notation",
    ("get", "/health"): "get_health",
    ("get", "/cluster"): "get_cluster",
    ("get", "/cluster/games/{game_id}/setup"): "get_cluster_game_setup",
    ("post", "/tournaments"): "create_tournament",
    ("get", "/tournaments"): "list_tournaments",
    ("get", "/tournaments/{tournament_id}"): "get_tournament",
    ("get", "/tournaments/{tournament_id}/games"): "list_tournament_games",
    ("post", "/tournaments/{tournament_id}/stop"): "stop_tournament",
    ("post", "/tournaments/{tournament_id}/resume"): "resume_tournament",
    ("post", "/challenges"): "create_challenge",
    ("get", "/challenges/{challenge_id}"): "get_challenge",
    ("delete", "/challenges/{challenge_id}"): "cancel_challenge",
    ("post", "/challenges/{challenge_id}/accept"): "accept_challenge",
    ("post", "/series"): "create_series",
    ("get", "/series"): "list_series",
    ("get", "/series/{series_id}"): "get_series",
    ("post", "/series/{series_id}/stop"): "stop_series",
    ("post", "/series/{series_id}/resume"): "resume_series",
    ("get", "/bots"): "list_bots",
    ("post", "/bots"): "register_bot",
    ("get", "/bots/{name}"): "get_bot",
    ("patch", "/bots/{name}"): "update_bot",
    ("delete", "/bots/{name}"): "retire_bot",
    ("get", "/bots/{name}/ratings"): "get_bot_ratings",
    ("get", "/leaderboard"): "get_leaderboard",
    ("get", "/ladder"): "get_ladder",
    ("post", "/ladder/pause"): "pause_ladder",
    ("post", "/ladder/resume"): "resume_ladder",
}
#: Why ``game.cross_site`` refuses a request, before any route sees it.
_CROSS_SITE: Final = (
    "A browser sent it from a page of another site (Sec-Fetch-Site, or Origin not this "
    "server): only this server's own page, or a client that is not a browser, may change "
    "anything"
)
#: Why ``game.store_outage_guard`` answers 503, whatever route met the outage.
_STORE_OUT_OF_REACH: Final = (
    "The game store is out of reach for the moment (PostgreSQL restarting, its network "
    "cut, SQLite locked too long): try again after Retry-After seconds"
)
_RETRY_AFTER: Final = {
    "Retry-After": {
        "description": "Seconds to wait before trying again (the store out of reach)",
        "schema": {"type": "integer"},
    }
}


def _add_middleware_refusals(paths: dict[str, Any], error: Callable[[str], dict[str, Any]]) -> None:
    """The answers of the app's middleware, which come from any route whatever it does:
    403 to a request that changes something from another site's page (``game.cross_site``)
    and 503 with ``Retry-After`` from a route that met the store out of reach
    (``game.store_outage_guard``). OpenAPI has no responses for a whole API, so each
    operation lists them; where its route has a 403 or 503 of its own (the same
    ``Error`` body), the description says both. ``GET /health`` reads no store and its
    503 is its own body: left as it is."""
    for item in paths.values():
        for method, operation in item.items():
            responses = operation["responses"]
            if method != "get":
                _merge_response(responses, "403", error(_CROSS_SITE))
            own = responses.get("503")
            if own is None or own.get("content") == error("")["content"]:
                _merge_response(responses, "503", {**error(_STORE_OUT_OF_REACH)})
                responses["503"]["headers"] = _RETRY_AFTER


def _merge_response(responses: dict[str, Any], status: str, added: dict[str, Any]) -> None:
    """``added`` as the answer ``status`` of ``responses``; after the route's own reason
    when it has one for that status (both bodies being ``Error``)."""
    own = responses.get(status)
    if own is None:
        responses[status] = added
    else:
        responses[status] = {
            **own,
            "description": f"{own['description']}; or: {added['description']}",
        }


def _cluster_paths(error: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """``GET /cluster`` and the setup route a worker asks a game's owner for."""
    worker = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "url": {"type": "string", "description": "where the other workers reach it"},
            "started": {"type": "string", "format": "date-time"},
            "heartbeat": {"type": "string", "format": "date-time"},
            "live_games": {"type": "integer", "description": "as of its last heartbeat"},
            "max_games": {"type": "integer"},
            "load": {"type": "number", "description": "live_games / max_games"},
            "run": {
                "type": "string",
                "description": "this process's random id (a restart is a new run)",
            },
            "status": {"type": "string", "enum": ["live", "late"]},
            "games": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the ids of its live games (only with ?games=true)",
            },
        },
    }
    listing = {
        "type": "object",
        "properties": {
            "worker": {"type": "string", "description": "the id of the worker answering"},
            "lease_s": {"type": "number"},
            "workers": {"type": "array", "items": worker},
            "work_queue": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "description": "the work queue's tournament and ladder games by status "
                "(queued, leased, done, failed, cancelled; absent: none)",
            },
            "coordinating": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the tournaments (and 'ladder') this worker coordinates",
            },
            "playing": {
                "type": "integer",
                "description": "the work queue's games this worker plays now",
            },
            "queue_leader": {
                "type": ["string", "null"],
                "description": "the worker that pairs the people of /queue (none yet: null)",
            },
        },
    }
    return {
        "/cluster": {
            "get": {
                "summary": "The cluster's workers whose lease holds, oldest first",
                "parameters": [
                    {
                        "name": "games",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "boolean", "default": False},
                        "description": "list each worker's live games (true, 1, yes; false, 0, no)",
                    }
                ],
                "responses": {
                    "200": {
                        "description": "The workers",
                        "content": {"application/json": {"schema": listing}},
                    },
                    "404": error("The server runs alone (started without --redis)"),
                },
            }
        },
        "/cluster/games/{game_id}/setup": {
            "get": {
                "summary": "For another worker: a live game's spectator setup",
                "description": (
                    "The setup packet, the analysis packets so far and the end if it went "
                    "out, one JSON packet per line; x-htttx-updates: the board updates "
                    "the setup shows; x-htttx-ended: 1 once the end went out. The game "
                    "is analysed (--analysis-bot) while the asking worker relays it."
                ),
                "parameters": [
                    {
                        "name": "game_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {
                    "200": {"description": "The packets", "content": {"text/plain": {}}},
                    "404": error("Not a live game of this worker, or no cluster"),
                },
            }
        },
    }


def _openapi(hosted: bool) -> dict[str, Any]:
    """An OpenAPI 3.1 document of the REST routes, schemas from the pydantic models."""
    ref = "#/components/schemas/{model}"
    _, schemas = models_json_schema(
        [
            (NewGameRequest, "validation"),
            (NewGameResponse, "serialization"),
            (GameRecord, "serialization"),
            (GamePage, "serialization"),
            (HostedBots, "serialization"),
            (TournamentRequest, "validation"),
            (TournamentCreated, "serialization"),
            (TournamentPage, "serialization"),
            (TournamentView, "serialization"),
            (TournamentGames, "serialization"),
            (ChallengeRequest, "validation"),
            (ChallengeView, "serialization"),
            (ChallengeAccept, "validation"),
            (ChallengeAccepted, "serialization"),
            (SeriesRequest, "validation"),
            (SeriesCreated, "serialization"),
            (SeriesPage, "serialization"),
            (SeriesView, "serialization"),
            *ARENA_MODELS,
            *LADDER_MODELS,
        ],
        ref_template=ref,
    )
    schemas = dict(schemas.get("$defs", {}))
    schemas["Error"] = {
        "type": "object",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
    }

    def body(name: str) -> dict[str, Any]:
        return {"application/json": {"schema": {"$ref": ref.format(model=name)}}}

    def error(text: str) -> dict[str, Any]:
        return {"description": text, "content": body("Error")}

    game_id = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}
    not_found = error("No such game")
    health = {"application/json": {"schema": _HEALTH}}
    paths: dict[str, Any] = {
        "/game/new": {
            "post": {
                "summary": "Create a game between two bots, two humans, or one of each",
                "description": (
                    "Bots are named by URL; their capabilities are fetched before the "
                    "answer. Human seats get a token for /ws?token=. A game may start "
                    "from an opening (moves played after X's stone; a websocket bot must "
                    "then declare free_setup or move_skips, else 422) and carry tags for "
                    "its record and notation export. When the server has an API token, "
                    "send 'Authorization: Bearer <token>'."
                ),
                "requestBody": {"required": True, "content": body("NewGameRequest")},
                "responses": {
                    "200": {
                        "description": "The game was created",
                        "content": body("NewGameResponse"),
                    },
                    "401": error("API token missing or wrong"),
                    "413": error("Body too large"),
                    "422": error("Invalid request, or a bot that cannot be seated"),
                    "429": error("Too many live games for this client"),
                    "503": error("The server is full or shutting down"),
                },
                "security": [{"bearer": []}, {}],
            }
        },
        "/games": {
            "get": {
                "summary": "Games, newest first (live and over)",
                "parameters": [
                    {
                        "name": "status",
                        "in": "query",
                        "schema": {"type": "string", "enum": [s.value for s in RecordStatus]},
                    },
                    {
                        "name": "player",
                        "in": "query",
                        "description": (
                            "Only games where either seat's name equals this, compared "
                            "case-insensitively (Unicode case folding); no prefix match"
                        ),
                        "schema": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": MAX_PLAYER_FILTER,
                        },
                    },
                    {
                        "name": "bot_url",
                        "in": "query",
                        "description": (
                            "Only games where either seat's bot_url equals this, exactly "
                            "as the seat gave it (one bot, where a name may be several)"
                        ),
                        "schema": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": MAX_BOT_URL_FILTER,
                        },
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_PAGE_SIZE,
                            "default": 50,
                        },
                    },
                    {
                        "name": "cursor",
                        "in": "query",
                        "description": "next_cursor of the previous page",
                        "schema": {"type": "string"},
                    },
                ],
                "responses": {
                    "200": {"description": "A page of games", "content": body("GamePage")},
                    "422": error("Bad status, player, bot_url, limit or cursor"),
                },
            }
        },
        "/games/{game_id}": {
            "get": {
                "summary": "The record of a game: players, settings, moves, result",
                "description": (
                    "A running game's record is as it stands (result null). With wait, "
                    "a long poll: the answer comes once the game is over (its final "
                    "record, committed) or after wait seconds (the record as it stands), "
                    "or at once when the server begins shutting down. An unknown game "
                    "is a 404 at once."
                ),
                "parameters": [
                    game_id,
                    {
                        "name": "wait",
                        "in": "query",
                        "description": (
                            "Seconds to wait for the game to end, a decimal number "
                            f"(digits and at most one point) from 0 to {MAX_WAIT_S}; 0 or "
                            "absent: answer at once"
                        ),
                        "schema": {
                            "type": "number",
                            "minimum": 0,
                            "maximum": MAX_WAIT_S,
                            "default": 0,
                        },
                    },
                ],
                "responses": {
                    "200": {"description": "The game record", "content": body("GameRecord")},
                    "404": not_found,
                    "422": error("Bad wait"),
                },
            }
        },
        "/games/{game_id}/notation": {
            "get": {
                "summary": "The game in HTTTX notation, version 2",
                "parameters": [
                    game_id,
                    {
                        "name": "download",
                        "in": "query",
                        "description": (
                            "1: answer with 'Content-Disposition: attachment; "
                            'filename="<game_id>.htttx"\' (the id cut down to letters, '
                            "digits, '.', '_' and '-'), so a browser saves the file"
                        ),
                        "schema": {"type": "string", "enum": ["0", "1"], "default": "0"},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "HTTTX notation text",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    "404": not_found,
                    "422": error("Bad download value"),
                },
            }
        },
        "/health": {
            "get": {
                "summary": "Liveness: 200 while serving, 503 while shutting down",
                "description": (
                    "{status, live_games}; a cluster's worker (--redis) adds worker (its "
                    "id) and workers (how many workers' leases hold; null if Redis is "
                    "out of reach, with cluster_error)."
                ),
                "responses": {
                    "200": {"description": "Serving", "content": health},
                    "503": {"description": "Stopping", "content": health},
                },
            }
        },
        **_cluster_paths(error),
    }
    paths.update(tournament_paths(body, error))
    paths.update(challenge_paths(body, error))
    paths.update(series_paths(body, error))
    paths.update(arena_paths(body, error))
    paths.update(ladder_paths(body, error))
    # Every route refuses a query parameter it does not take (game.route_query): it
    # takes those its operation lists, none when it lists none.
    unknown_parameter = error(
        "A query parameter this route does not take (named, with the ones it takes)"
    )
    for item in paths.values():
        for operation in item.values():
            _merge_response(operation["responses"], "422", unknown_parameter)
    _add_middleware_refusals(paths, error)
    for path, item in paths.items():
        for method, operation in item.items():
            operation["operationId"] = _OPERATION_IDS[method, path]
    description = (
        "HTTTX game server. WebSockets (not described by OpenAPI): /ws?token=<token> plays "
        "a human seat with the bot protocol; /spectate/{game_id} follows a live game; "
        "/queue pairs people (docs/extensions.md, 'The queue protocol'). Every operation "
        "below refuses a query parameter it does not list (422, naming it and the ones it "
        "takes); a WebSocket ignores those it does not read."
    )
    if hosted:
        description += " Example bots: " + ", ".join(HOSTED_BOTS) + "."
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "htttx-arena game server",
            "version": "0.1.0",
            "description": description,
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _docs_page(document: dict[str, Any]) -> str:
    """A self-contained page listing the routes: nothing loads from the internet."""
    rows = "".join(
        f"<tr><td><code>{html.escape(method.upper())}</code></td>"
        f"<td><code>{html.escape(path)}</code></td>"
        f"<td>{html.escape(operation.get('summary', ''))}</td></tr>"
        for path, item in document["paths"].items()
        for method, operation in item.items()
    )
    info = document["info"]
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(info['title'])}</title></head><body>"
        f"<h1>{html.escape(info['title'])}</h1><p>{html.escape(info['description'])}</p>"
        f"<table border='1' cellpadding='4'><tr><th>Method</th><th>Path</th><th></th></tr>"
        f"{rows}</table><p>Schemas: <a href='/openapi.json'>/openapi.json</a> "
        "(OpenAPI 3.1).</p></body></html>"
    )
