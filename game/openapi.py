"""The game server's OpenAPI 3.1 document (``_openapi``, schemas from the pydantic
models) and the self-contained ``/docs`` page listing its routes (``_docs_page``)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from pydantic.json_schema import models_json_schema

from game.game_wait import MAX_WAIT_S
from game.ladder_routes import LADDER_MODELS, ladder_paths
from game.openapi_arena import ARENA_MODELS, arena_paths
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
                        "description": "list each worker's live games",
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
                    "422": error(
                        "Bad status, player, bot_url, limit or cursor, or a query "
                        "parameter it does not take (named, with the ones it takes)"
                    ),
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
                    "422": error("Bad wait, or another query parameter"),
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
                    "422": error("Bad download value, or another query parameter"),
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
                    "200": {"description": "Serving"},
                    "503": {"description": "Stopping"},
                },
            }
        },
        **_cluster_paths(error),
    }
    paths.update(_tournament_paths(body, error))
    paths.update(challenge_paths(body, error))
    paths.update(_series_paths(body, error))
    paths.update(arena_paths(body, error))
    paths.update(ladder_paths(body, error))
    # Every GET route refuses a query parameter it does not take (game.route_query):
    # those that document no 422 of their own take none, or only the one they list.
    unknown_parameter = error("A query parameter this route does not take (named in detail)")
    for item in paths.values():
        if "get" in item:
            item["get"]["responses"].setdefault("422", unknown_parameter)
    description = (
        "HTTTX game server. WebSockets (not described by OpenAPI): /ws?token=<token> plays "
        "a human seat with the bot protocol; /spectate/{game_id} follows a live game; "
        "/queue pairs people (docs/extensions.md, 'The queue protocol')."
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


def _control_path(
    summary: str,
    conflict: str,
    parameter: dict[str, Any],
    what: str,
    content: dict[str, Any],
    error: Callable[[str], dict[str, Any]],
) -> dict[str, Any]:
    """A ``POST .../stop`` or ``.../resume`` of ``what`` (a tournament, a series): its
    view now (``content``), or 401, 403 (``game.tournament_routes.control_refused``),
    404, 409 (``conflict``), 422."""
    return {
        "post": {
            "summary": summary,
            "description": (
                f"Send 'Authorization: Bearer <control_token>', the token that creating the "
                f"{what} answered (only its creator has it), or the server's API token. A "
                f"{what} created without a control token (by htttx-tournament, or by an "
                "older server) takes the API token alone, and anyone's request on a server "
                "without one."
            ),
            "parameters": [parameter],
            "responses": {
                "200": {"description": f"The {what} now", "content": content},
                "401": error(
                    f"A {what} without a control token, and the server's API token missing or wrong"
                ),
                "403": error(f"Neither the {what}'s control token nor the server's API token"),
                "404": error(f"No such {what}"),
                "409": error(conflict),
                "422": error("A bot that cannot be reached any more"),
            },
            "security": [{"bearer": []}, {}],
        }
    }


def _tournament_paths(
    body: Callable[[str], dict[str, Any]], error: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """The routes of ``game.tournament_routes``."""
    tournament_id = {
        "name": "tournament_id",
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
    }
    not_found = error("No such tournament")

    def control(summary: str, conflict: str) -> dict[str, Any]:
        return _control_path(
            summary, conflict, tournament_id, "tournament", body("TournamentView"), error
        )

    return {
        "/tournaments": {
            "post": {
                "summary": "Start a round robin or gauntlet (game pairs, colours swapped)",
                "description": (
                    "Bots are named by URL and checked before the answer ('cmd' bots only "
                    "on the command line, htttx-tournament). Games are ordinary games: "
                    "listed in /games, spectated at /spectate/{game_id}. The answer's "
                    "control_token, shown this once, is what stop and resume ask for."
                ),
                "requestBody": {"required": True, "content": body("TournamentRequest")},
                "responses": {
                    "201": {"description": "Started", "content": body("TournamentCreated")},
                    "401": error("API token missing or wrong"),
                    "413": error("Body too large"),
                    "422": error("Invalid request: settings, SPRT, book, or a bot"),
                    "503": error("The server is shutting down"),
                },
                "security": [{"bearer": []}, {}],
            },
            "get": {
                "summary": "Tournaments, newest first",
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
                    }
                ],
                "responses": {
                    "200": {"description": "Tournaments", "content": body("TournamentPage")},
                    "422": error("Bad limit, or another query parameter"),
                },
            },
        },
        "/tournaments/{tournament_id}": {
            "get": {
                "summary": "Progress, standings, pair statistics, SPRT and crosstable",
                "parameters": [tournament_id],
                "responses": {
                    "200": {"description": "The tournament", "content": body("TournamentView")},
                    "404": not_found,
                },
            }
        },
        "/tournaments/{tournament_id}/games": {
            "get": {
                "summary": "The tournament's started games in game order, with bots and results",
                "parameters": [
                    tournament_id,
                    {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 500},
                    },
                ],
                "responses": {
                    "200": {"description": "A page of games", "content": body("TournamentGames")},
                    "404": not_found,
                    "422": error("A bad offset or limit, or another query parameter"),
                },
            }
        },
        "/tournaments/{tournament_id}/stop": control(
            "Stop a running tournament (its games in flight are aborted, not counted)",
            "Not running",
        ),
        "/tournaments/{tournament_id}/resume": control(
            "Go on with a stopped, interrupted or failed tournament from the stored results",
            "Running already, or finished",
        ),
    }


def _series_paths(
    body: Callable[[str], dict[str, Any]], error: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """The routes of ``game.series_routes``."""
    series_id = {"name": "series_id", "in": "path", "required": True, "schema": {"type": "string"}}
    not_found = error("No such series")

    def control(summary: str, conflict: str) -> dict[str, Any]:
        return _control_path(summary, conflict, series_id, "series", body("SeriesView"), error)

    return {
        "/series": {
            "post": {
                "summary": "Start a series: best of N or first to K, sides alternating",
                "description": (
                    "Two bots by URL, one game at a time, stopped as soon as the score "
                    "decides it. Each game's record has the tags Series, SeriesRule and "
                    "SeriesScore (the score before it); spectators get them in setup. The "
                    "answer's control_token, shown this once, is what stop and resume ask for."
                ),
                "requestBody": {"required": True, "content": body("SeriesRequest")},
                "responses": {
                    "201": {"description": "Started", "content": body("SeriesCreated")},
                    "401": error("API token missing or wrong"),
                    "413": error("Body too large"),
                    "422": error("Invalid request: the rule, a seat, a book, or a bot"),
                    "503": error("The server is shutting down"),
                },
                "security": [{"bearer": []}, {}],
            },
            "get": {
                "summary": "Series, newest first, with their scores",
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
                    }
                ],
                "responses": {
                    "200": {"description": "Series", "content": body("SeriesPage")},
                    "422": error("Bad limit, or another query parameter"),
                },
            },
        },
        "/series/{series_id}": {
            "get": {
                "summary": "The score, the status and every game with its links",
                "parameters": [series_id],
                "responses": {
                    "200": {"description": "The series", "content": body("SeriesView")},
                    "404": not_found,
                },
            }
        },
        "/series/{series_id}/stop": control(
            "Stop a running series (its game in flight is aborted, played again on resume)",
            "Not running",
        ),
        "/series/{series_id}/resume": control(
            "Go on with a stopped or interrupted series from the stored results",
            "Running already, or finished",
        ),
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
