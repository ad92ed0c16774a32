"""Bodies of the game server's REST API."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

# Pure (plain tuples, no pydantic): the opening is replayed by the very check the game
# session plays it with, so a request that passes here always starts.
from game.opening_rules import MAX_OPENING_MOVES as MAX_OPENING_MOVES  # re-exported
from game.opening_rules import InvalidOpeningError, play_opening
from game.rules import Position
from wire.board import Move
from wire.capabilities import Meta
from wire.errors import MAX_ECHO_CHARS, _problems, clip_text
from wire.match import (
    DEFAULT_TURN_LIMIT,
    MAX_HEARTBEAT_MS,
    MAX_HOSTED_CLOCK_SECONDS,
    MAX_HOSTED_INCREMENT_SECONDS,
    MAX_HOSTED_VIEW_DISTANCE,
    MAX_TURN_LIMIT,
    Match,
    TimeControl,
    hosting_problems,
)
from wire.names import Name, _is_control
from wire.packets import ConfigPacket
from wire.records import NOTATION_FIELD_TAGS, OPENING_MOVES_TAG, PlayerType

#: Bot URLs: the de facto limit of browsers and servers.
MAX_URL_LENGTH: Final = 2048
#: A seat's ``config`` as JSON; its integers (``depth``, ``x-`` values) fit 64 bits.
MAX_CONFIG_BYTES: Final = 4096
MIN_INT64: Final = -(2**63)
MAX_INT64: Final = 2**63 - 1

#: Tags one game may be given (``NewGameRequest.tags``) at most: enough for a
#: tournament's round, opening, pairing and id, few enough to keep every record small.
MAX_TAGS: Final = 16
#: The longest tag value, in characters.
MAX_TAG_VALUE_LENGTH: Final = 200
#: A tag key: a letter, then at most 31 letters, digits or ``_``. A subset of what HTTTX
#: notation allows, so every key is written and read back as it came.
TAG_KEY_PATTERN: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")
#: Keys a request may not give (compared ignoring case, so no tag passes for one):
#: ``version`` and the tags notation writes from the record's own fields (a tag there
#: would replace the true value in the export), and the server's ``opening_moves``.
RESERVED_TAG_KEYS: Final = frozenset({"version", *NOTATION_FIELD_TAGS, OPENING_MOVES_TAG})


def _out_of_int64(value: object, path: str = "") -> str | None:
    """The path of the first integer in JSON data ``value`` outside 64 bits, or None.

    Iterative: the data came from a peer and may be nested as deep as its body allows.
    """
    stack: list[tuple[str, object]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if not MIN_INT64 <= item <= MAX_INT64:
                return where
        elif isinstance(item, Mapping):
            for key, v in item.items():
                key_text = clip_text(str(key), MAX_ECHO_CHARS)  # the peer chose the key
                stack.append((f"{where}.{key_text}" if where else key_text, v))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
    return None


class PlayerConfig(BaseModel):
    """One seat of ``POST /game/new``: a bot (by URL) or a human (who gets a token).

    ``config`` holds the settings sent to a bot in its ``config`` packet (``depth``,
    ``x-`` keys); it is checked here so a bad value is refused at creation: a valid
    packet, at most ``MAX_CONFIG_BYTES`` of JSON, every integer within 64 bits.
    ``time_control`` times this seat instead of the game's clock (``match_config``'s
    ``clock_type``, ``clock`` and ``increment``); absent, the game's clock times it.
    ``send_board`` says whether the seat's ``move_request`` carries ``board``, the full
    board (protocol.md's extension); absent, the server's ``--send-board`` decides.
    A field it does not know is refused (a misspelt ``bot_ur1`` must not seat a human).
    """

    model_config = ConfigDict(extra="forbid")

    type: PlayerType
    bot_url: Annotated[StrictStr, Field(max_length=MAX_URL_LENGTH)] | None = None
    name: Name | None = None
    config: dict[str, Any] | None = None
    time_control: TimeControl | None = None
    send_board: (
        Annotated[
            StrictBool,
            Field(
                description=(
                    "Whether this seat's move_request carries 'board', the full board "
                    "(an extension of the spec, read by the prototype's bots): true for a "
                    "prototype bot, false for previous only, as the spec says. Absent: the "
                    "server's --send-board decides ('auto', the default: humans get it, "
                    "websocket bots do not; 'always': every seat gets it). Stateless bots "
                    "always get the board: it is their request."
                )
            ),
        ]
        | None
    ) = None

    @model_validator(mode="after")
    def _bot_has_url(self) -> PlayerConfig:
        if self.type is PlayerType.BOT and not self.bot_url:
            raise ValueError("a bot seat needs 'bot_url', the address of the bot")
        return self

    @field_validator("config")
    @classmethod
    def _config_is_a_valid_packet(cls, config: dict[str, Any] | None) -> dict[str, Any] | None:
        if config is None:
            return None
        if (where := _out_of_int64(config)) is not None:
            raise ValueError(f"{where}: expected an integer within 64 bits (-2^63 to 2^63-1)")
        try:
            size = str(len(orjson.dumps(config)))
        except orjson.JSONEncodeError:
            size = "over 255 levels of nesting"
        if not size.isdecimal() or int(size) > MAX_CONFIG_BYTES:
            raise ValueError(f"expected at most {MAX_CONFIG_BYTES} bytes of JSON, got {size}")
        try:
            ConfigPacket.model_validate({**config, "type": "config"})
        except ValidationError as exc:
            raise ValueError("; ".join(_problems(exc))) from None
        return config

    def config_packet(self) -> ConfigPacket | None:
        """The ``config`` packet for this seat, or ``None`` if it has no settings."""
        if self.config is None:
            return None
        return ConfigPacket.model_validate({**self.config, "type": "config"})


class ResignAdjudication(BaseModel):
    """Adjudicate a game both bots agree is lost (cutechess's ``-resign movecount=K
    score=S twosided=true``): when, over the last ``moves`` moves of each side, every
    evaluation the movers reported favours the same side by at least ``score``
    (``heuristic >= score`` for X, ``<= -score`` for O; a ``win_in`` counts as
    decisive for its side), that side wins. ``game.adjudication`` has the details.

    >>> ResignAdjudication(moves=3, score=0.9).moves
    3

    A field it does not know is refused, as in the requests that hold it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    moves: Annotated[StrictInt, Field(ge=1, le=100)]
    score: Annotated[StrictFloat, Field(gt=0, allow_inf_nan=False)]


class Adjudication(BaseModel):
    """How the server may end a game early on the bots' word (off by default). A field it
    does not know is refused (a misspelt ``resing`` must not leave it off)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    resign: ResignAdjudication | None = None


class NewGameRequest(BaseModel):
    """Body of ``POST /game/new``.

    ``match_config`` is held to what the server hosts, tighter than any ``Match``: see
    ``MAX_HOSTED_VIEW_DISTANCE`` and the other hosting bounds; so is each seat's
    ``time_control``. A game without a ``turn_limit`` gets ``DEFAULT_TURN_LIMIT``, so
    every game ends. ``adjudication`` (off when absent) lets the bots' evaluations end
    the game (``ResignAdjudication``).

    ``opening`` (moves after X's stone, O's first) is replayed under ``match_config`` by
    ``game.opening_rules.play_opening``, the check the game plays it with, so a bad one
    is refused here with the move and stone named; ``tags`` go into the record and are
    held to what HTTTX notation can write back (``RESERVED_TAG_KEYS``, ``MAX_TAGS``).

    >>> from models import parse_body
    >>> request = parse_body(NewGameRequest, '{"player_x": {"type": "human"}, '
    ...                      '"player_o": {"type": "human"}}')
    >>> request.match_config.turn_limit == DEFAULT_TURN_LIMIT
    True
    >>> parse_body(NewGameRequest, '{"player_x": {"type": "human"}, "player_o": '
    ...            '{"type": "human"}, "opening": [{"side": "o", "pieces": '
    ...            '[{"q": 1, "r": 0}, {"q": 1, "r": 0}]}]}')
    Traceback (most recent call last):
    ...
    models.ProtocolError: opening[0].pieces[1]: (1, 0) is already taken by o

    A field it does not know is refused, as by every REST body (a misspelt
    ``adjudicaton`` must not be ignored).
    """

    model_config = ConfigDict(extra="forbid")

    player_x: PlayerConfig
    player_o: PlayerConfig
    match_config: Match = Field(
        default_factory=Match,
        description=(
            f"Held to what the server hosts: view_distance at most {MAX_HOSTED_VIEW_DISTANCE}, "
            f"turn_limit at most {MAX_TURN_LIMIT} (absent or null: {DEFAULT_TURN_LIMIT}), "
            f"heartbeat at most {MAX_HEARTBEAT_MS} ms, clock at most "
            f"{MAX_HOSTED_CLOCK_SECONDS:g} s, increment at most "
            f"{MAX_HOSTED_INCREMENT_SECONDS:g} s."
        ),
    )
    name: Name | None = None
    adjudication: Adjudication | None = None
    opening: list[Move] | None = Field(
        default=None,
        description=(
            "Moves already played after X's stone at (0,0), O's first: the game starts "
            "from the position they reach, and the record's first moves are these. "
            f"At most {MAX_OPENING_MOVES} moves of 2 stones each, sides alternating; every "
            "stone legal under match_config and no line made (the turn limit counts these "
            "moves too). A websocket bot must declare free_setup (its setup holds the "
            "stones) or move_skips (its first move_request's previous holds the moves)."
        ),
    )
    tags: dict[StrictStr, StrictStr] | None = Field(
        default=None,
        description=(
            f"Tags for the game's record and its notation export: at most {MAX_TAGS}; keys "
            "a letter then up to 31 letters, digits or '_', none of notation's own "
            f"({', '.join(sorted(RESERVED_TAG_KEYS))}, in any case); values at most "
            f"{MAX_TAG_VALUE_LENGTH} characters, without control characters or ']'."
        ),
    )

    @field_validator("tags")
    @classmethod
    def _tags_are_writable(cls, tags: dict[str, str] | None) -> dict[str, str] | None:
        if tags is None:
            return None
        if len(tags) > MAX_TAGS:
            raise ValueError(f"expected at most {MAX_TAGS} tags, got {len(tags)}")
        for key, value in tags.items():
            shown = repr(clip_text(key, MAX_ECHO_CHARS))  # the peer chose the key
            if not TAG_KEY_PATTERN.fullmatch(key):
                raise ValueError(
                    f"key {shown}: expected a letter, then at most 31 letters, digits or '_'"
                )
            if key.lower() in RESERVED_TAG_KEYS:
                raise ValueError(
                    f"key {shown} is reserved: the server writes it (or notation derives it "
                    "from the record); choose another key"
                )
            if len(value) > MAX_TAG_VALUE_LENGTH:
                raise ValueError(
                    f"the value of {shown}: expected at most {MAX_TAG_VALUE_LENGTH} "
                    f"characters, got {len(value)}"
                )
            for index, char in enumerate(value):
                if char == "]":  # it would end the tag in notation
                    raise ValueError(
                        f"the value of {shown}: expected no ']' (it ends a notation tag), "
                        f"got one at position {index}"
                    )
                if _is_control(char):
                    raise ValueError(
                        f"the value of {shown}: expected no control characters, got "
                        f"U+{ord(char):04X} at position {index}"
                    )
        return tags

    @model_validator(mode="after")
    def _hosted_settings(self) -> NewGameRequest:
        match = self.match_config
        problems = hosting_problems(
            [
                ("match_config.view_distance", match.view_distance, MAX_HOSTED_VIEW_DISTANCE),
                ("match_config.turn_limit", match.turn_limit, MAX_TURN_LIMIT),
                ("match_config.heartbeat", match.heartbeat, MAX_HEARTBEAT_MS),
                ("match_config.clock", match.clock, MAX_HOSTED_CLOCK_SECONDS),
                ("match_config.increment", match.increment, MAX_HOSTED_INCREMENT_SECONDS),
            ]
        )
        for seat, player in (("player_x", self.player_x), ("player_o", self.player_o)):
            if player.time_control is not None:  # held to the game clock's bounds
                where = f"{seat}.time_control."
                problems += [where + problem for problem in player.time_control.hosting_problems()]
        if problems:
            raise ValueError("; ".join(problems))
        if match.turn_limit is None:
            self.match_config = match.model_copy(update={"turn_limit": DEFAULT_TURN_LIMIT})
        return self

    @model_validator(mode="after")
    def _opening_is_playable(self) -> NewGameRequest:
        # After _hosted_settings (validators run in the order defined): the settings are
        # in bounds and the turn limit is set, so the replay checks what will be played.
        if not self.opening:
            return self
        match = self.match_config
        position = Position(match.view_distance, match.win_distance, turn_limit=match.turn_limit)
        moves = [(move.side.value, [p.as_tuple() for p in move.pieces]) for move in self.opening]
        try:
            play_opening(position, moves)
        except InvalidOpeningError as exc:
            raise ValueError(str(exc)) from None
        return self


class NewGameResponse(BaseModel):
    """Answer to ``POST /game/new``: the game and a token for each human seat."""

    game_id: str
    token_x: str | None = None
    token_o: str | None = None


class HostedBot(BaseModel):
    """A bot the game server hosts on its own port: ``url`` is what ``POST /game/new``
    takes as ``bot_url``; ``meta`` comes from the bot's capabilities."""

    name: str
    url: str
    meta: Meta | None = None


class HostedBots(BaseModel):
    """Answer to ``GET /bots``: the hosted bots, in a stable order."""

    bots: list[HostedBot]
