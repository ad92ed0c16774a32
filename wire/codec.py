"""Reading the wire: ``parse_packet``, ``parse_body`` (writing it is ``wire.dumping``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Annotated,
    Any,
    TypeAlias,
    TypeVar,
    Union,
    cast,
    overload,
)

import msgspec
from pydantic import BaseModel, TypeAdapter, ValidationError

from wire.basics import Cell, Coord, Player
from wire.board import Board, Move
from wire.errors import ProtocolError, _describe, _problems
from wire.packets import (
    HUMAN_CLIENT_PACKETS,
    PACKETS,
    MoveRequestPacket,
    P,
    Packet,
    PacketSet,
)
from wire.trusted import trusted

#
# Speed. Decoding a 500-stone board into 500 pydantic models costs more than parsing
# the JSON, and a server sends one such board per move to each seat and spectator. So:
#
# - one msgspec pass reads the packet into an "envelope" (its fields as plain JSON
#   values, the board as msgspec structs, type-checked);
# - the board's Cell objects come from an intern table: Cells are frozen, and a game
#   resends the same stones with every move, so nearly every lookup hits;
# - pydantic then validates the packet, the board already built;
# - except for ``move_request``, the packet of every move (a bot reads one per move):
#   its envelope is fully typed (side, moves, board; the same checks as the models),
#   so without a limit or clocks, which pydantic still checks, the packet is built
#   from the checked values with no second pass (``wire.trusted``).
#
# Anything the fast path does not take (a malformed frame, a board with a wrong type,
# a ``config`` packet whose unknown keys must be kept) goes the careful way: pydantic
# validates plain JSON values and produces the error messages. The fast path only ever
# accepts what pydantic would accept; it never explains a refusal.

JsonInput: TypeAlias = str | bytes | bytearray | memoryview
M = TypeVar("M", bound=BaseModel)


class _WireCell(msgspec.Struct, frozen=True, gc=False):
    """A cell as msgspec reads it (the same checks as ``Cell``); hashable, so it keys
    the intern table."""

    q: int
    r: int
    p: Player


class _WireBoard(msgspec.Struct, gc=False):
    cells: list[_WireCell]


class _WireCoord(msgspec.Struct, frozen=True, gc=False):
    """A piece of a move as msgspec reads it (the same checks as ``Coord``); hashable,
    so it keys the intern table."""

    q: int
    r: int


class _WireMove(msgspec.Struct, gc=False):
    """A ``Move`` as msgspec reads it: the same checks, 1 or 2 pieces."""

    side: Player
    pieces: Annotated[list[_WireCoord], msgspec.Meta(min_length=1, max_length=2)]


class _MoveRequestEnvelope(
    msgspec.Struct, tag_field="type", tag="move_request", gc=False, kw_only=True
):
    """The packet of every move, read typed in one msgspec pass (the generic envelope
    leaves ``side`` and ``previous`` as plain JSON for pydantic to walk again): its
    moves come out as ``Move`` models built from checked values. The limits and clocks
    stay plain JSON, for pydantic to judge."""

    side: Player
    previous: list[_WireMove]
    board: _WireBoard | msgspec.UnsetType | None = msgspec.UNSET
    move_time_limit: Any = msgspec.UNSET
    clock_x_ms: Any = msgspec.UNSET
    clock_o_ms: Any = msgspec.UNSET


class _CellInterner:
    """Frozen ``Cell`` objects shared between boards; bounded, cleared when full.

    Safe across threads: a race can only build an equal Cell twice.
    """

    LIMIT = 1 << 16

    def __init__(self) -> None:
        self._cells: dict[_WireCell, Cell] = {}
        self._build = TypeAdapter(list[Cell]).validate_python

    def board(self, wire: _WireBoard) -> Board:
        return trusted(Board, {"cells": self.cells(wire.cells)}, {"cells"})

    def cells(self, wire_cells: list[_WireCell]) -> list[Cell]:
        known = self._cells
        # A stone not seen before leaves a hole (None); a Cell is always true.
        cells: list[Cell | None] = list(map(known.get, wire_cells))
        if not all(cells):
            holes = [(i, wire) for i, wire in enumerate(wire_cells) if cells[i] is None]
            # A game adds a few stones per move; a board never seen adds them all.
            unique = list(dict.fromkeys(wire for _, wire in holes))
            built = self._build([{"q": w.q, "r": w.r, "p": w.p} for w in unique])
            fresh = dict(zip(unique, built, strict=True))
            if len(known) + len(fresh) > self.LIMIT:
                known.clear()
            known.update(fresh)
            for i, wire in holes:  # from ``fresh``: another thread may clear ``known``
                cells[i] = fresh[wire]
        return cast(list[Cell], cells)  # no holes left

    def clear(self) -> None:
        self._cells.clear()

    def __len__(self) -> int:
        return len(self._cells)


_cell_interner = _CellInterner()

#: Coords of moves read from the wire, shared (they are frozen, and the same pieces come
#: back move after move: in ``previous``, then on the board); bounded, cleared when full.
_coords: dict[_WireCoord, Coord] = {}


def _coord(wire: _WireCoord) -> Coord:
    coord = _coords.get(wire)
    if coord is None:
        # Validated anyway (as cheap as model_construct for two ints): msgspec checked
        # the same things.
        coord = Coord(q=wire.q, r=wire.r)
        if len(_coords) >= _CellInterner.LIMIT:
            _coords.clear()
        _coords[wire] = coord
    return coord


#: The fields of MoveRequestPacket set by a request without a limit or clocks.
_GIVEN_WITHOUT_BOARD = frozenset({"type", "side", "previous"})
_GIVEN_WITH_BOARD = _GIVEN_WITHOUT_BOARD | {"board"}


def _move_request(envelope: _MoveRequestEnvelope) -> MoveRequestPacket | dict[str, Any]:
    """The packet of a typed ``move_request`` envelope, its moves and board built; or
    its fields, for pydantic to check the time limit and clocks it has."""
    previous = [
        trusted(Move, {"side": move.side, "pieces": [_coord(piece) for piece in move.pieces]})
        for move in envelope.previous
    ]
    board = envelope.board
    read = None if board is None or board is msgspec.UNSET else _cell_interner.board(board)
    if (
        envelope.move_time_limit is msgspec.UNSET
        and envelope.clock_x_ms is msgspec.UNSET
        and envelope.clock_o_ms is msgspec.UNSET
    ):
        # Every value checked: the packet as pydantic would make it, in half the time.
        values = {
            "type": "move_request",
            "side": envelope.side,
            "previous": previous,
            "board": read,
            "move_time_limit": None,
            "clock_x_ms": None,
            "clock_o_ms": None,
        }
        given = _GIVEN_WITHOUT_BOARD if board is msgspec.UNSET else _GIVEN_WITH_BOARD
        return trusted(MoveRequestPacket, values, set(given))
    fields: dict[str, Any] = {"type": "move_request", "side": envelope.side, "previous": previous}
    if board is not msgspec.UNSET:
        fields["board"] = read
    # Rare (bots that declare move_time_limit; clocked games): checked by pydantic.
    if envelope.move_time_limit is not msgspec.UNSET:
        fields["move_time_limit"] = envelope.move_time_limit
    if envelope.clock_x_ms is not msgspec.UNSET:
        fields["clock_x_ms"] = envelope.clock_x_ms
    if envelope.clock_o_ms is not msgspec.UNSET:
        fields["clock_o_ms"] = envelope.clock_o_ms
    return fields


def _envelopes() -> dict[type[msgspec.Struct], str]:
    """One msgspec struct per packet type, told apart by ``type`` like the pydantic union.

    ``config`` has none: it keeps unknown keys, which an envelope would drop.
    """
    fields_by_tag: dict[str, dict[str, Any]] = {}
    for packets in (PACKETS, HUMAN_CLIENT_PACKETS):
        for tag, model in packets.models.items():
            if model.model_config.get("extra") == "allow":
                continue
            fields = fields_by_tag.setdefault(tag, {})
            for name, field in model.model_fields.items():
                if name != "type":
                    fields[field.alias or name] = _WireBoard if name == "board" else Any
    envelopes: dict[type[msgspec.Struct], str] = {
        msgspec.defstruct(
            f"_{tag}_envelope",
            [(name, kind, msgspec.UNSET) for name, kind in fields.items()],
            tag_field="type",
            tag=tag,
            gc=False,
        ): tag
        for tag, fields in fields_by_tag.items()
        if tag != "move_request"
    }
    # Every field of MoveRequestPacket is read (typed, or kept for pydantic): a field
    # added to the model must be added to the envelope too.
    assert set(fields_by_tag["move_request"]) == set(_MoveRequestEnvelope.__struct_fields__)
    envelopes[_MoveRequestEnvelope] = "move_request"
    return envelopes


_ENVELOPE_TAGS = _envelopes()
_decode_envelope = msgspec.json.Decoder(Union[tuple(_ENVELOPE_TAGS)]).decode  # noqa: UP007
_decode_members = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_decode_board = msgspec.json.Decoder(_WireBoard).decode
_decode_any = msgspec.json.Decoder().decode
_BOARD_CARRIERS = frozenset(
    tag for tag, model in PACKETS.models.items() if "board" in model.model_fields
)


def _fast_fields(
    data: JsonInput, allowed: PacketSet[Any]
) -> dict[str, Any] | MoveRequestPacket | None:
    """The packet's fields through the envelope (or the packet itself, when every value
    is checked already), or None to take the careful path."""
    try:
        envelope = _decode_envelope(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    tag = _ENVELOPE_TAGS[type(envelope)]
    if tag not in allowed.tags:
        return None
    if type(envelope) is _MoveRequestEnvelope:
        if allowed.models[tag] is not MoveRequestPacket:
            return None  # another model under this name: pydantic reads it from JSON
        return _move_request(envelope)
    fields: dict[str, Any] = {"type": tag}
    for name in envelope.__struct_fields__:
        value = getattr(envelope, name)
        if value is msgspec.UNSET:
            continue
        fields[name] = _cell_interner.board(value) if isinstance(value, _WireBoard) else value
    return fields


def _careful_fields(data: JsonInput, allowed: PacketSet[Any]) -> dict[str, Any]:
    """The packet's fields as plain JSON values (a board that reads cleanly aside), or
    ``ProtocolError`` when the frame is not an object with an accepted ``type``."""
    members = _json_members(data)
    tag = _packet_tag(members, allowed)
    return {
        name: _board_field(raw) if name == "board" and tag in _BOARD_CARRIERS else _value(name, raw)
        for name, raw in members.items()
    }


def _board_field(raw: msgspec.Raw) -> Any:
    """A ``Board`` through the intern table, or plain JSON values for pydantic to judge."""
    try:
        return _cell_interner.board(_decode_board(raw))
    except msgspec.ValidationError:
        return _value("board", raw)


def _value(name: str, raw: msgspec.Raw) -> Any:
    """A member's JSON value, or ``ProtocolError`` naming the member when it holds a
    number no float can hold (``1e400``: valid JSON, which msgspec refuses with a
    ``ValidationError`` rather than reading it as infinity)."""
    try:
        return _decode_any(raw)
    except msgspec.ValidationError as exc:
        raise ProtocolError(f"{name}: {_unreadable_number(exc)}") from None
    except msgspec.DecodeError as exc:  # msgspec >= 0.23 checks UTF-8 inside a Raw here
        raise ProtocolError(_not_json(exc, raw)) from None


def _unreadable_number(exc: msgspec.ValidationError) -> str:
    """msgspec's 'Number out of range - at `$[...]`' in words; its path hides the keys."""
    what = str(exc).split(" - at ", 1)[0]
    if what == "Number out of range":
        return "a number out of range (beyond what a 64-bit float holds)"
    return f"unreadable: {what}"


def _json_members(data: JsonInput) -> dict[str, msgspec.Raw]:
    try:
        return _decode_members(data)
    except msgspec.ValidationError:
        pass  # not an object; below, tell whether it is JSON at all
    except msgspec.DecodeError as exc:
        raise ProtocolError(_not_json(exc, data)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    try:
        kind = _describe(_decode_any(data))
    except msgspec.DecodeError as exc:
        raise ProtocolError(_not_json(exc, data)) from None
    except RecursionError:
        kind = "a list"
    raise ProtocolError(f"expected a JSON object with a 'type' field, got {kind}")


def _packet_tag(members: Mapping[str, msgspec.Raw], allowed: PacketSet[Any]) -> str:
    if "type" not in members:
        raise ProtocolError(f"type: missing; expected one of: {allowed.expected()}")
    tag = _value("type", members["type"])
    if not isinstance(tag, str):
        raise ProtocolError(
            f"type: expected a string, got {_describe(tag)}; expected one of: {allowed.expected()}"
        )
    if tag not in allowed.tags:
        known = tag in PACKETS.tags or tag in HUMAN_CLIENT_PACKETS.tags
        what = f"{tag!r} packets are not accepted here" if known else f"unknown type {tag!r}"
        raise ProtocolError(f"type: {what}; expected one of: {allowed.expected()}")
    return tag


@overload
def parse_packet(data: JsonInput) -> Packet: ...


@overload
def parse_packet(data: JsonInput, *, allowed: PacketSet[P]) -> P: ...


def parse_packet(data: JsonInput, *, allowed: PacketSet[Any] | None = None) -> Any:
    """Read one packet from a WebSocket frame (text or bytes).

    ``allowed`` restricts the packet types the caller accepts and types the result:
    ``SERVER_PACKETS`` for a bot reading the server, ``CLIENT_PACKETS`` for the server
    reading a bot, ``HUMAN_CLIENT_PACKETS`` for a human seat (1-stone moves allowed),
    ``SPECTATOR_PACKETS`` for a spectator. Unknown fields are ignored, except in
    ``config`` and evaluations, which keep them.

    Raises ``ProtocolError`` naming the field and what was expected.

    >>> from models import CLIENT_PACKETS
    >>> parse_packet('{"type": "heartbeat", "waiting": true}')
    HeartbeatPacket(type='heartbeat', waiting=True)
    >>> parse_packet('{"type":"move_response","move":{"pieces":[{"q":"0","r":1},{"q":1,"r":1}]}}')
    Traceback (most recent call last):
    ...
    models.ProtocolError: move_response.move.pieces[0].q: expected an integer, got '0'
    >>> parse_packet('{"type": "setup"}', allowed=CLIENT_PACKETS)
    Traceback (most recent call last):
    ...
    models.ProtocolError: type: 'setup' packets are not accepted here; expected one of: \
move_response, eval_response
    """
    accepted = PACKETS if allowed is None else allowed
    fields: Any = None
    try:
        fields = _fast_fields(data, accepted) or _careful_fields(data, accepted)
        if type(fields) is MoveRequestPacket:
            return fields
        return accepted._adapter.validate_python(fields)
    except ValidationError as exc:
        # The error path only: a packet read cleanly pays nothing for this.
        if type(fields) is dict and _integral_floats_as_ints(fields, exc, skip=1):
            return _packet_from_fields(fields, accepted)
        raise ProtocolError(*_problems(exc)) from None
    except msgspec.ValidationError as exc:  # one the paths above did not name
        raise ProtocolError(_unreadable_number(exc)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ProtocolError(_not_utf8(exc)) from None


def _packet_from_fields(fields: dict[str, Any], accepted: PacketSet[Any]) -> Any:
    """A packet from its fields as plain JSON values (``parse_packet``'s second try)."""
    try:
        return accepted._adapter.validate_python(fields)
    except ValidationError as exc:
        raise ProtocolError(*_problems(exc)) from None


def _integral_floats_as_ints(value: Any, exc: ValidationError, *, skip: int = 0) -> bool:
    """Replace in ``value`` (plain JSON values, changed in place) each number written
    with a fraction of zero, ``1.0``, that ``exc`` refused where an integer belongs;
    whether there was any. JSON Schema (2020-12, which the spec's OpenAPI 3.1 uses)
    counts ``1.0`` an integer, and a bot written in a language whose numbers are
    floats may send it. ``skip``: the leading parts of an error's path that are not
    keys of ``value`` (a tagged union's tag).

    >>> from pydantic import TypeAdapter
    >>> value = {"pieces": [{"q": 1.0}]}
    >>> try:
    ...     TypeAdapter(dict[str, list[dict[str, int]]]).validate_python(value, strict=True)
    ... except ValidationError as exc:
    ...     _integral_floats_as_ints(value, exc), value
    (True, {'pieces': [{'q': 1}]})
    """
    replaced = False
    for error in exc.errors():
        found = error["input"]
        if error["type"] != "int_type" or type(found) is not float or not found.is_integer():
            continue
        *path, last = error["loc"][skip:]
        try:
            container = value
            for key in path:
                container = container[key]
            if container[last] is found:
                container[last] = int(found)
                replaced = True
        except (KeyError, IndexError, TypeError):
            continue  # a path through a union's member names: leave the error as it is
    return replaced


def _not_utf8(exc: UnicodeDecodeError) -> str:
    """msgspec (before 0.23) checks UTF-8 inside strings with Python's error, whose
    position is within the string: only the byte is worth naming."""
    byte = exc.object[exc.start : exc.start + 1].hex()
    return f"not valid JSON: a string holds invalid UTF-8 (byte 0x{byte}); JSON text is UTF-8"


def _not_json(exc: msgspec.DecodeError, data: JsonInput | msgspec.Raw) -> str:
    """msgspec's ``DecodeError`` in words. From 0.23 msgspec checks UTF-8 inside
    strings itself and says only 'Invalid UTF-8 encoded string'; the byte is found
    here, so the message is the same whichever msgspec is installed.

    >>> _not_json(msgspec.DecodeError("Invalid UTF-8 encoded string"), b'"caf\\xc3"')
    'not valid JSON: a string holds invalid UTF-8 (byte 0xc3); JSON text is UTF-8'
    >>> _not_json(msgspec.DecodeError("Input data was truncated"), b'{"a": ')
    'not valid JSON: Input data was truncated'
    """
    if "UTF-8" in str(exc) and not isinstance(data, str):
        try:
            bytes(data).decode()
        except UnicodeDecodeError as not_utf8:
            return _not_utf8(not_utf8)
    return f"not valid JSON: {exc}"


def parse_body(model: type[M], data: JsonInput) -> M:
    """Read an HTTP body (stateless request or response, capabilities, REST request).

    Raises ``ProtocolError`` like ``parse_packet``; paths start at the body's fields.

    >>> from models import NewGameRequest
    >>> parse_body(NewGameRequest, '{"player_x": {"type": "human"}, '
    ...            '"player_o": {"type": "human"}, "match_config": {"heartbeat": 99}}')
    Traceback (most recent call last):
    ...
    models.ProtocolError: match_config.heartbeat: expected at least 100, got 99
    """
    try:
        value = _decode_any(data)
    except msgspec.ValidationError as exc:
        raise ProtocolError(_unreadable_number(exc)) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(_not_json(exc, data)) from None
    except UnicodeDecodeError as exc:
        raise ProtocolError(_not_utf8(exc)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object, got {_describe(value)}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        if not _integral_floats_as_ints(value, exc):
            raise ProtocolError(*_problems(exc)) from None
    except RecursionError:
        raise ProtocolError("JSON nested too deeply") from None
    try:  # once more with 1.0 read as 1 (see _integral_floats_as_ints)
        return model.model_validate(value)
    except ValidationError as exc:
        raise ProtocolError(*_problems(exc)) from None
