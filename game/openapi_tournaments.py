"""The tournaments' and the series' part of the OpenAPI document (``game.openapi``):
the routes of ``game.tournament_routes`` and ``game.series_routes``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["series_paths", "tournament_paths"]


#: Why ``game.tournament_routes.start_within_cap`` refuses to start or resume one.
_OVER_CAP: Final = (
    "The client's live games, tournaments and series leave no room for its concurrency "
    "(--max-games-per-client)"
)


def _control_path(
    summary: str,
    conflict: str,
    parameter: dict[str, Any],
    what: str,
    content: dict[str, Any],
    error: Callable[[str], dict[str, Any]],
    *,
    resume: bool,
) -> dict[str, Any]:
    """A ``POST .../stop`` or ``.../resume`` of ``what`` (a tournament, a series): its
    view now (``content``), or 401, 403 (``game.tournament_routes.control_refused``),
    404, 409 (``conflict``), 422; a resume also 429 and 503
    (``game.tournament_routes.resume_within_cap``)."""
    starting = (
        {"429": error(_OVER_CAP), "503": error("The server is shutting down")} if resume else {}
    )
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
                **starting,
            },
            "security": [{"bearer": []}, {}],
        }
    }


def tournament_paths(
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

    def control(summary: str, conflict: str, *, resume: bool = False) -> dict[str, Any]:
        return _control_path(
            summary,
            conflict,
            tournament_id,
            "tournament",
            body("TournamentView"),
            error,
            resume=resume,
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
                    "429": error(_OVER_CAP),
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
                    "422": error("Bad limit"),
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
                    "422": error("A bad offset or limit"),
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
            resume=True,
        ),
    }


def series_paths(
    body: Callable[[str], dict[str, Any]], error: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """The routes of ``game.series_routes``."""
    series_id = {"name": "series_id", "in": "path", "required": True, "schema": {"type": "string"}}
    not_found = error("No such series")

    def control(summary: str, conflict: str, *, resume: bool = False) -> dict[str, Any]:
        return _control_path(
            summary, conflict, series_id, "series", body("SeriesView"), error, resume=resume
        )

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
                    "429": error(_OVER_CAP),
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
                    "422": error("Bad limit"),
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
            resume=True,
        ),
    }
