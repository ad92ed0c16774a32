"""The arena's part of the OpenAPI document: the routes of ``game.registry_routes``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

from pydantic import BaseModel

from game.rating_book import RATING_HISTORY_MAX
from models import (
    MAX_LEADERBOARD,
    BotList,
    BotRegistered,
    BotRegistration,
    BotUpdate,
    Leaderboard,
    RatingHistory,
    RegisteredBot,
)

__all__ = ["ARENA_MODELS", "arena_paths"]

#: The arena's models for the document's schemas, with the mode they appear in.
ARENA_MODELS: Final[list[tuple[type[BaseModel], Literal["validation", "serialization"]]]] = [
    (BotRegistration, "validation"),
    (BotUpdate, "validation"),
    (BotRegistered, "serialization"),
    (RegisteredBot, "serialization"),
    (BotList, "serialization"),
    (RatingHistory, "serialization"),
    (Leaderboard, "serialization"),
]

Maker = Callable[[str], dict[str, Any]]


def _limit(maximum: int) -> dict[str, Any]:
    return {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": maximum, "default": 100},
    }


def arena_paths(body: Maker, error: Maker) -> dict[str, Any]:
    """The paths of the bot registry and the leaderboard."""
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    not_found = error("No bot is registered under that name")
    owner: list[dict[str, list[str]]] = [{"bearer": []}]

    def changed(summary: str, description: str) -> dict[str, Any]:
        return {
            "summary": summary,
            "description": description,
            "parameters": [name],
            "responses": {
                "200": {"description": "The bot now", "content": body("RegisteredBot")},
                "401": error("Owner token missing"),
                "403": error("Wrong owner token, or the server's own bot"),
                "404": not_found,
                "409": error("The bot is retired"),
                "422": error("Invalid body, or a new URL that cannot be played"),
            },
            "security": owner,
        }

    update = changed(
        "Change a registered bot (url, ladder, description) with its owner token",
        "Send 'Authorization: Bearer <owner_token>'. A new URL is checked like a "
        "registration's and makes the bot active again.",
    )
    update["requestBody"] = {"required": True, "content": body("BotUpdate")}
    update["responses"]["413"] = error("Body too large")
    retire = changed(
        "Retire a registered bot with its owner token",
        "It is never scheduled again; its name, history and leaderboard line stay "
        "(status 'retired').",
    )
    return {
        "/bots": {
            "get": {
                "summary": "The hosted example bots, and the registered bots with their ratings",
                "description": (
                    "Each hosted bot's 'url' can be passed as 'bot_url' to /game/new. "
                    "'registered' lists every registered bot (retired ones too) with its "
                    "rating, record, failures by cause and the ladder's backoff."
                ),
                "responses": {"200": {"description": "Bots", "content": body("BotList")}},
            },
            "post": {
                "summary": "Register a bot under a name (case-insensitively unique)",
                "description": (
                    "The bot's capabilities are fetched and checked as for a game, under "
                    "the server's address policy. The answer holds the owner token, shown "
                    "this once. When the server has an API token, send 'Authorization: "
                    "Bearer <token>'."
                ),
                "requestBody": {"required": True, "content": body("BotRegistration")},
                "responses": {
                    "201": {"description": "Registered", "content": body("BotRegistered")},
                    "401": error("API token missing or wrong"),
                    "409": error("The name is already a bot's or a person's"),
                    "413": error("Body too large"),
                    "422": error("Invalid body, a bad URL, a forbidden address, unreachable"),
                    "503": error("The server is shutting down"),
                },
                "security": [{"bearer": []}, {}],
            },
        },
        "/bots/{name}": {
            "get": {
                "summary": "One registered bot: registration, last check, rating, record",
                "parameters": [name],
                "responses": {
                    "200": {"description": "The bot", "content": body("RegisteredBot")},
                    "404": not_found,
                },
            },
            "patch": update,
            "delete": retire,
        },
        "/bots/{name}/ratings": {
            "get": {
                "summary": "A registered bot's rating after each rated game, newest first",
                "parameters": [name, _limit(RATING_HISTORY_MAX)],
                "responses": {
                    "200": {"description": "Its history", "content": body("RatingHistory")},
                    "404": not_found,
                    "422": error("Bad limit"),
                },
            }
        },
        "/leaderboard": {
            "get": {
                "summary": "Rated players, best first (by rating - uncertainty)",
                "description": (
                    "OpenSkill (Plackett-Luce) ratings on an Elo-like scale: 'rating' is "
                    "the estimate, 'uncertainty' two standard deviations. Only rated games "
                    "count (the ladder's, the queue's, rated series)."
                ),
                "parameters": [
                    {
                        "name": "kind",
                        "in": "query",
                        "schema": {
                            "type": "string",
                            "enum": ["bot", "human", "all"],
                            "default": "all",
                        },
                    },
                    _limit(MAX_LEADERBOARD),
                ],
                "responses": {
                    "200": {"description": "The leaderboard", "content": body("Leaderboard")},
                    "422": error("Bad kind or limit"),
                },
            }
        },
    }
