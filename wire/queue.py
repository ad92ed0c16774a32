"""Matchmaking for people on the wire: the ``/queue`` WebSocket's packets and the REST
bodies of open challenges (``POST /challenges``, ``GET /challenges/{id}``,
``POST /challenges/{id}/accept``). Served by ``game.queue_socket`` and
``game.queue_routes``; documented in ``docs/extensions.md`` ("The queue protocol").

A client reads the server with ``parse_packet(data, allowed=QUEUE_SERVER_PACKETS)``;
the server reads a client with ``QUEUE_CLIENT_PACKETS``. Time controls are the text a
tournament's ``tc`` takes (``TimeControl.parse``: ``"300+5"``, ``"600"``, ``"turn=30"``,
``"none"``), written back in their canonical form.

>>> from models import parse_packet
>>> join = parse_packet(
...     '{"type":"queue_join","name":"alice","time_control":"300+5.0","bot_after_s":30}',
...     allowed=QUEUE_CLIENT_PACKETS,
... )
>>> join.name, join.time_control, join.bot_after_s, join.player_token
('alice', '300+5', 30.0, None)
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from wire.arena import PlayerKind, PlayerName
from wire.basics import Player
from wire.match import TimeControl, TimeControlError
from wire.packets import NopePacket, PacketSet

__all__ = [
    "CHALLENGE_STATUSES",
    "DEFAULT_QUEUE_TIME_CONTROL",
    "MAX_BOT_AFTER_S",
    "MAX_PLAYER_TOKEN_LENGTH",
    "QUEUE_CLIENT_PACKETS",
    "QUEUE_SERVER_PACKETS",
    "ChallengeAccept",
    "ChallengeAccepted",
    "ChallengeCreatePacket",
    "ChallengeCreatedPacket",
    "ChallengeRequest",
    "ChallengeSide",
    "ChallengeStatus",
    "ChallengeView",
    "MatchedOpponent",
    "MatchedPacket",
    "PlayerTokenPacket",
    "QueueClientPacket",
    "QueueJoinPacket",
    "QueueLeavePacket",
    "QueueServerPacket",
    "QueueWaitingPacket",
]

#: The time control of a queue join or a challenge that names none.
DEFAULT_QUEUE_TIME_CONTROL: Final = "300+5"
#: The longest wait a person may ask for before being paired with a bot (seconds).
MAX_BOT_AFTER_S: Final = 3600.0
#: Person tokens are the server's ``secrets.token_urlsafe(32)``: 43 characters.
MAX_PLAYER_TOKEN_LENGTH: Final = 200

ChallengeSide: TypeAlias = Literal["x", "o", "random"]
ChallengeStatus: TypeAlias = Literal["open", "accepted", "expired", "cancelled"]
CHALLENGE_STATUSES: Final[tuple[ChallengeStatus, ...]] = (
    "open",
    "accepted",
    "expired",
    "cancelled",
)


def _canonical_time_control(text: str) -> str:
    """A time control as ``TimeControl.parse`` reads it, written back canonically
    (``"300+5.0"`` -> ``"300+5"``); ``ValueError`` with the reason otherwise (the field's
    name goes before it: ``time_control: clock: expected more than 0, got 0.0``)."""
    try:
        return TimeControl.parse(text).text
    except TimeControlError as error:
        raise ValueError(error.reason) from None


TimeControlText = Annotated[
    StrictStr, Field(max_length=64), AfterValidator(_canonical_time_control)
]
"""A time control in tournament syntax, kept in its canonical text."""

PlayerToken = Annotated[StrictStr, Field(min_length=1, max_length=MAX_PLAYER_TOKEN_LENGTH)]


# ---------------------------------------------------------------- client to server


class QueueJoinPacket(BaseModel):
    """Wait for an opponent. ``name``: a new name is claimed for this person (the
    server answers ``player_token`` once); a person's known name needs its
    ``player_token``; a registered bot's name is refused. ``bot_after_s``: after so
    many seconds without a person, play a ladder bot of similar rating (``null``:
    people only)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["queue_join"] = "queue_join"
    name: PlayerName
    player_token: PlayerToken | None = None
    time_control: TimeControlText = DEFAULT_QUEUE_TIME_CONTROL
    bot_after_s: (
        Annotated[StrictFloat, Field(ge=0, le=MAX_BOT_AFTER_S, allow_inf_nan=False)] | None
    ) = None


class QueueLeavePacket(BaseModel):
    """Stop waiting (the socket stays open: the client may join again)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["queue_leave"] = "queue_leave"


class ChallengeCreatePacket(BaseModel):
    """Open a challenge others accept by its link; the server answers
    ``challenge_created`` and, once someone accepts, ``matched`` on this socket.
    ``side`` is the creator's."""

    model_config = ConfigDict(frozen=True)

    type: Literal["challenge_create"] = "challenge_create"
    name: PlayerName
    player_token: PlayerToken | None = None
    time_control: TimeControlText = DEFAULT_QUEUE_TIME_CONTROL
    side: ChallengeSide = "random"


# ---------------------------------------------------------------- server to client


class PlayerTokenPacket(BaseModel):
    """The person token of a name claimed just now: sent once; keep it to use the name
    again (the server keeps only its hash)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["player_token"] = "player_token"
    name: StrictStr
    token: StrictStr


class QueueWaitingPacket(BaseModel):
    """You are in the queue: on join and whenever the number of people waiting
    changes. ``rating`` is yours (rounded), ``since_ms`` how long you have waited,
    ``time_control`` what you wait for, ``bot_in_ms`` when a bot will be found for you
    (absent for people only)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["queue_waiting"] = "queue_waiting"
    players_waiting: Annotated[StrictInt, Field(ge=0)]
    rating: StrictInt
    since_ms: Annotated[StrictInt, Field(ge=0)]
    time_control: StrictStr | None = None
    bot_in_ms: Annotated[StrictInt, Field(ge=0)] | None = None


class ChallengeCreatedPacket(BaseModel):
    """The challenge is open: share ``url`` (the page ``/c/<id>``)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["challenge_created"] = "challenge_created"
    challenge_id: StrictStr
    url: StrictStr


class MatchedOpponent(BaseModel):
    """Who you play."""

    model_config = ConfigDict(frozen=True)

    name: StrictStr
    kind: PlayerKind
    rating: StrictInt


class MatchedPacket(BaseModel):
    """Your game: connect to ``ws_url`` (``/ws?token=<token>``, relative to the server)
    as ``side`` within the server's no-show limit, ``connect_within_s`` seconds from the
    game's creation (a seat that does not come loses by ``no_show``). The queue socket
    closes after it."""

    model_config = ConfigDict(frozen=True)

    type: Literal["matched"] = "matched"
    game_id: StrictStr
    side: Player
    token: StrictStr
    ws_url: StrictStr
    opponent: MatchedOpponent
    time_control: StrictStr
    rated: StrictBool
    challenge_id: StrictStr | None = None
    connect_within_s: StrictFloat | StrictInt | None = None


QueueClientPacket: TypeAlias = Annotated[
    QueueJoinPacket | QueueLeavePacket | ChallengeCreatePacket, Field(discriminator="type")
]
"""What a client sends on ``/queue``."""

QueueServerPacket: TypeAlias = Annotated[
    PlayerTokenPacket | QueueWaitingPacket | ChallengeCreatedPacket | MatchedPacket | NopePacket,
    Field(discriminator="type"),
]
"""What the server sends on ``/queue`` (``nope``, then the socket closes)."""

QUEUE_CLIENT_PACKETS: PacketSet[QueueClientPacket] = PacketSet("queue client", QueueClientPacket)
QUEUE_SERVER_PACKETS: PacketSet[QueueServerPacket] = PacketSet("queue server", QueueServerPacket)


# ----------------------------------------------------------- open challenges (REST)


class ChallengeRequest(BaseModel):
    """``POST /challenges``: like ``challenge_create``, for a person with a name (and its
    token once it has one). A field it does not know is refused, as by every REST body."""

    model_config = ConfigDict(extra="forbid")

    name: PlayerName
    player_token: PlayerToken | None = None
    time_control: TimeControlText = DEFAULT_QUEUE_TIME_CONTROL
    side: ChallengeSide = "random"


class ChallengeView(BaseModel):
    """``GET /challenges/{id}`` (and the answer to ``POST /challenges``, with
    ``player_token`` when the name was claimed just now). ``matched`` is the creator's
    seat, only with ``?token=<the creator's player token>`` once accepted and while the
    game runs."""

    challenge_id: StrictStr
    url: StrictStr
    creator: StrictStr
    creator_rating: StrictInt
    time_control: StrictStr
    side: ChallengeSide
    status: ChallengeStatus
    created_at: StrictStr
    expires_at: StrictStr
    accepted_by: StrictStr | None = None
    game_id: StrictStr | None = None
    player_token: StrictStr | None = None
    matched: MatchedPacket | None = None


class ChallengeAccept(BaseModel):
    """``POST /challenges/{id}/accept``: who accepts (a person's name and token, as for
    the queue). A field it does not know is refused."""

    model_config = ConfigDict(extra="forbid")

    name: PlayerName
    player_token: PlayerToken | None = None


class ChallengeAccepted(BaseModel):
    """The accepter's seat: connect to ``ws_url`` within ``connect_within_s`` seconds
    (the server's no-show limit). ``player_token`` when the name was claimed just now."""

    game_id: StrictStr
    side: Player
    token: StrictStr
    ws_url: StrictStr
    opponent: MatchedOpponent
    time_control: StrictStr
    rated: StrictBool
    player_token: StrictStr | None = None
    connect_within_s: StrictFloat | StrictInt | None = None
