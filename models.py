"""Shared wire types of htttx-arena: coordinates, boards, packets, capabilities, REST bodies.

Every packet of the HTTTX Bot API (``../shared/spec``) and of our protocol
(``../shared/protocol.md``) is a pydantic model here. Names stay compatible with the
original prototype (``Coord``, ``Cell``, ``Player``, ``Match``, ``PlayerConfig``,
``NewGameRequest``, ``GameStatus``), so code written for it imports unchanged.

The pure game core (``game.rules``) does not import this module; conversion between
plain ``(q, r)`` tuples and these models happens at the boundary.

Reading and writing the wire goes through three functions, never through
``json`` + ``model_validate`` / ``model_dump_json`` by hand:

- ``parse_packet(data, allowed=...)`` turns one WebSocket frame into a packet model;
- ``parse_body(Model, data)`` does the same for HTTP bodies (stateless API,
  capabilities, REST requests);
- ``dump_packet(model)`` encodes either, leaving optional fields out instead of
  writing ``null`` (the spec's optional fields must be absent).

Anything malformed raises ``ProtocolError`` (a ``ValueError``) whose message names the
field and what was expected, e.g. ``move_response.move.pieces[0].q: expected an
integer, got '0'``.

The definitions live in the ``wire`` package, one concept per module: ``basics``
(sides, coordinates, close codes), ``match`` (settings), ``records`` (evaluations, moves,
results, records), ``board`` (boards on the wire), ``packets`` (every packet, packet
sets), ``stateless``, ``names``, ``capabilities``, ``rest`` (REST bodies), ``errors`` and
``codec``.
This module re-exports all of them: import from ``models``.
"""

from __future__ import annotations

from wire.basics import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL_ERROR,
    CLOSE_INVALID_DATA,
    CLOSE_MESSAGE_TOO_BIG,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR,
    CLOSE_TRY_AGAIN_LATER,
    CLOSE_UNSUPPORTED_DATA,
    MAX_CLOSE_REASON_BYTES,
    Cell,
    Coord,
    GameStatus,
    Player,
    clip_close_reason,
)
from wire.board import (
    Board,
    GrowingBoard,
    Milliseconds,
    Move,
    Seconds,
)
from wire.capabilities import (
    MATCH_CONFIG_KEY,
    BasicWebsocketCapability,
    BasicWebsocketVersions,
    BwsConfigCapability,
    BwsV1Alpha,
    Capabilities,
    Meta,
    StatelessCapability,
    StatelessV1Alpha,
    StatelessVersions,
)
from wire.codec import (
    JsonInput,
    dump_packet,
    parse_body,
    parse_packet,
)
from wire.errors import (
    MAX_ECHO_CHARS,
    ProtocolError,
    clip_text,
)
from wire.match import (
    DEFAULT_TURN_LIMIT,
    MAX_CLOCK_SECONDS,
    MAX_HEARTBEAT_MS,
    MAX_HOSTED_CLOCK_SECONDS,
    MAX_HOSTED_INCREMENT_SECONDS,
    MAX_HOSTED_VIEW_DISTANCE,
    MAX_INT32,
    MAX_TURN_LIMIT,
    MIN_HEARTBEAT_MS,
    TIME_CONTROL_SYNTAX,
    ClockType,
    Match,
    TimeControl,
    TimeControlError,
)
from wire.names import (
    MAX_NAME_LENGTH,
    Name,
)
from wire.packets import (
    CLIENT_PACKETS,
    HUMAN_CLIENT_PACKETS,
    PACKETS,
    SERVER_PACKETS,
    SPECTATOR_PACKETS,
    AnalysisPacket,
    BoardUpdatePacket,
    ClientPacket,
    ConfigPacket,
    EndPacket,
    EvalRequestPacket,
    EvalResponsePacket,
    HeartbeatPacket,
    HumanClientPacket,
    HumanMoveResponsePacket,
    InterruptPacket,
    MoveRequestPacket,
    MoveResponsePacket,
    NopePacket,
    Packet,
    PacketSet,
    ServerPacket,
    SetupPacket,
    SpectatorPacket,
)
from wire.records import (
    MAX_RESULT_DETAIL_CHARS,
    NOTATION_FIELD_TAGS,
    OPENING_MOVES_TAG,
    EndCause,
    GameRecord,
    GameResult,
    HumanMoveOption,
    MoveAnswer,
    MoveOption,
    PlayerType,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)
from wire.rest import (
    MAX_CONFIG_BYTES,
    MAX_INT64,
    MAX_OPENING_MOVES,
    MAX_TAG_VALUE_LENGTH,
    MAX_TAGS,
    MAX_URL_LENGTH,
    MIN_INT64,
    RESERVED_TAG_KEYS,
    Adjudication,
    HostedBot,
    HostedBots,
    NewGameRequest,
    NewGameResponse,
    PlayerConfig,
    ResignAdjudication,
)
from wire.stateless import (
    StatelessBoard,
    StatelessMove,
    StatelessMoveRequest,
    StatelessMoveResponse,
)

__all__ = [
    "CLIENT_PACKETS",
    "CLOSE_GOING_AWAY",
    "CLOSE_INTERNAL_ERROR",
    "CLOSE_INVALID_DATA",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "CLOSE_PROTOCOL_ERROR",
    "CLOSE_TRY_AGAIN_LATER",
    "CLOSE_UNSUPPORTED_DATA",
    "DEFAULT_TURN_LIMIT",
    "HUMAN_CLIENT_PACKETS",
    "MATCH_CONFIG_KEY",
    "MAX_CLOCK_SECONDS",
    "MAX_CLOSE_REASON_BYTES",
    "MAX_CONFIG_BYTES",
    "MAX_ECHO_CHARS",
    "MAX_HEARTBEAT_MS",
    "MAX_HOSTED_CLOCK_SECONDS",
    "MAX_HOSTED_INCREMENT_SECONDS",
    "MAX_HOSTED_VIEW_DISTANCE",
    "MAX_INT32",
    "MAX_INT64",
    "MAX_NAME_LENGTH",
    "MAX_OPENING_MOVES",
    "MAX_RESULT_DETAIL_CHARS",
    "MAX_TAGS",
    "MAX_TAG_VALUE_LENGTH",
    "MAX_TURN_LIMIT",
    "MAX_URL_LENGTH",
    "MIN_HEARTBEAT_MS",
    "MIN_INT64",
    "NOTATION_FIELD_TAGS",
    "OPENING_MOVES_TAG",
    "PACKETS",
    "RESERVED_TAG_KEYS",
    "SERVER_PACKETS",
    "SPECTATOR_PACKETS",
    "TIME_CONTROL_SYNTAX",
    "Adjudication",
    "AnalysisPacket",
    "BasicWebsocketCapability",
    "BasicWebsocketVersions",
    "Board",
    "BoardUpdatePacket",
    "BwsConfigCapability",
    "BwsV1Alpha",
    "Capabilities",
    "Cell",
    "ClientPacket",
    "ClockType",
    "ConfigPacket",
    "Coord",
    "EndCause",
    "EndPacket",
    "EvalRequestPacket",
    "EvalResponsePacket",
    "GameRecord",
    "GameResult",
    "GameStatus",
    "GrowingBoard",
    "HeartbeatPacket",
    "HostedBot",
    "HostedBots",
    "HumanClientPacket",
    "HumanMoveOption",
    "HumanMoveResponsePacket",
    "InterruptPacket",
    "JsonInput",
    "Match",
    "Meta",
    "Milliseconds",
    "Move",
    "MoveAnswer",
    "MoveOption",
    "MoveRequestPacket",
    "MoveResponsePacket",
    "Name",
    "NewGameRequest",
    "NewGameResponse",
    "NopePacket",
    "Packet",
    "PacketSet",
    "Player",
    "PlayerConfig",
    "PlayerType",
    "PositionEvaluation",
    "ProtocolError",
    "RecordPlayer",
    "RecordedMove",
    "ResignAdjudication",
    "ResultReason",
    "Seconds",
    "ServerPacket",
    "SetupPacket",
    "SpectatorPacket",
    "StatelessBoard",
    "StatelessCapability",
    "StatelessMove",
    "StatelessMoveRequest",
    "StatelessMoveResponse",
    "StatelessV1Alpha",
    "StatelessVersions",
    "TimeControl",
    "TimeControlError",
    "clip_close_reason",
    "clip_text",
    "dump_packet",
    "parse_body",
    "parse_packet",
]
