"""Bodies of the arena's routes: the bot registry (``/bots``) and ``GET /leaderboard``.

Ratings are on an Elo-like scale (``game.ratings``): ``rating`` is the estimate (mu),
``uncertainty`` twice its standard deviation (the rating is within ``rating +-
uncertainty``, about 95% sure), both rounded to integers.

>>> from models import parse_body
>>> reg = parse_body(BotRegistration, '{"name": "Hexa", "url": "http://127.0.0.1:9001"}')
>>> reg.ladder, reg.description
(True, None)
>>> parse_body(BotRegistration, '{"name": " Hexa", "url": "http://h"}')
Traceback (most recent call last):
...
models.ProtocolError: name: a player's name cannot start or end with spaces
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictStr

from wire.capabilities import Meta
from wire.names import Name
from wire.rest import MAX_URL_LENGTH, HostedBots

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_LEADERBOARD",
    "BotList",
    "BotRegistered",
    "BotRegistration",
    "BotStatus",
    "BotUpdate",
    "Leaderboard",
    "LeaderboardEntry",
    "PlayerKind",
    "PlayerName",
    "RatingHistory",
    "RatingPoint",
    "RegisteredBot",
]

#: A registered bot's description, in characters.
MAX_DESCRIPTION_CHARS: Final = 500
#: Entries of one ``GET /leaderboard`` at most (its ``limit``).
MAX_LEADERBOARD: Final = 1000

PlayerKind = Literal["bot", "human"]
#: ``active``: checked and schedulable; ``unreachable``: the last check failed (not
#: scheduled until one succeeds); ``retired``: deleted by its owner, kept for history.
BotStatus = Literal["active", "unreachable", "retired"]


def _trimmed(name: str) -> str:
    if not name:
        raise ValueError("a player's name cannot be empty")
    if name != name.strip():
        raise ValueError("a player's name cannot start or end with spaces")
    return name


#: A player's name in the arena: a ``Name`` (1 to 64 characters, no controls) without
#: spaces around it. Compared case-insensitively: "Hexa" and "HEXA" are one player.
PlayerName = Annotated[Name, AfterValidator(_trimmed)]

Description = Annotated[StrictStr, Field(max_length=MAX_DESCRIPTION_CHARS)]


class BotRegistration(BaseModel):
    """``POST /bots``: register a bot at ``url`` (what ``POST /game/new`` takes as
    ``bot_url``) under ``name``; ``ladder`` opts it in to the ladder's games."""

    model_config = ConfigDict(extra="forbid")

    name: PlayerName
    url: Annotated[StrictStr, Field(min_length=1, max_length=MAX_URL_LENGTH)]
    ladder: StrictBool = True
    description: Description | None = None


class BotUpdate(BaseModel):
    """``PATCH /bots/{name}`` (with the owner's token): what to change; absent fields
    stay. A new ``url`` is checked like a registration's."""

    model_config = ConfigDict(extra="forbid")

    url: Annotated[StrictStr, Field(min_length=1, max_length=MAX_URL_LENGTH)] | None = None
    ladder: StrictBool | None = None
    description: Description | None = None


class RegisteredBot(BaseModel):
    """A registered bot as ``GET /bots/{name}`` shows it: registration, last check,
    rating and record, and the ladder's backoff (a bot whose games keep failing is not
    scheduled before ``backoff_until``)."""

    name: str
    url: str
    description: str | None = None
    ladder: bool
    status: BotStatus
    #: ``token``: changed with its owner token; ``server``: the server's own.
    owner: Literal["token", "server"]
    check_error: str | None = None
    checked_at: datetime | None = None
    meta: Meta | None = None
    registered_at: datetime
    retired_at: datetime | None = None
    rating: int
    uncertainty: int
    provisional: bool
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    failures: dict[str, int] = Field(default_factory=dict)
    avg_think_ms: int | None = None
    last_game_at: datetime | None = None
    failures_in_row: int = 0
    backoff_until: datetime | None = None
    backoff_reason: str | None = None


class BotRegistered(RegisteredBot):
    """Answer to ``POST /bots``: the bot, and its ``owner_token``. The token is shown
    this once and never stored (only its hash): keep it, it is what ``PATCH`` and
    ``DELETE`` ask for (``Authorization: Bearer <owner_token>``)."""

    owner_token: str


class BotList(HostedBots):
    """Answer to ``GET /bots``: the hosted example bots (``bots``, as before) and the
    registered ones (``registered``, by name; retired ones too)."""

    registered: list[RegisteredBot] = Field(default_factory=list)


class LeaderboardEntry(BaseModel):
    """One player of the leaderboard. ``rank`` follows ``rating - uncertainty``
    (conservative: what the player is at least, about 97% sure). ``failures`` counts the
    forfeits it lost by cause (``timeout``, ``no_show``, ...); ``status`` is a
    registered bot's (None for people and unregistered bots)."""

    rank: int
    name: str
    kind: PlayerKind
    rating: int
    uncertainty: int
    provisional: bool
    games: int
    wins: int
    losses: int
    draws: int
    failures: dict[str, int] = Field(default_factory=dict)
    avg_think_ms: int | None = None
    last_seen: datetime | None = None
    status: BotStatus | None = None


class Leaderboard(BaseModel):
    """Answer to ``GET /leaderboard``: the players best first."""

    entries: list[LeaderboardEntry] = Field(default_factory=list)


class RatingPoint(BaseModel):
    """A player's rating right after one rated game: the game, its end, the opponent
    and the score (1 a win, 0.5 a draw, 0 a loss)."""

    game_id: str
    at: datetime
    rating: int
    uncertainty: int
    opponent: str
    score: float


class RatingHistory(BaseModel):
    """Answer to ``GET /bots/{name}/ratings``: the ratings after each game, newest first."""

    name: str
    points: list[RatingPoint] = Field(default_factory=list)
