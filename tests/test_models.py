"""Wire types and codec of ``models``: every packet, the errors, the encoding rules."""

from __future__ import annotations

import contextlib
import doctest
import importlib
import json
import pkgutil
from typing import Any, get_args

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import models
import wire
from models import (
    CLIENT_PACKETS,
    HUMAN_CLIENT_PACKETS,
    MAX_RESULT_DETAIL_CHARS,
    PACKETS,
    SERVER_PACKETS,
    SPECTATOR_PACKETS,
    AnalysisPacket,
    Board,
    BoardUpdatePacket,
    BwsV1Alpha,
    Capabilities,
    Cell,
    ConfigPacket,
    Coord,
    EndCause,
    EndPacket,
    EvalRequestPacket,
    EvalResponsePacket,
    GameResult,
    GameStatus,
    GrowingBoard,
    HeartbeatPacket,
    HumanMoveResponsePacket,
    InterruptPacket,
    Match,
    Move,
    MoveOption,
    MoveRequestPacket,
    MoveResponsePacket,
    NewGameRequest,
    NewGameResponse,
    NopePacket,
    OpponentStatusPacket,
    Player,
    PlayerConfig,
    PositionEvaluation,
    ProtocolError,
    RecordPlayer,
    ResignPacket,
    ResultReason,
    SetupPacket,
    StatelessBoard,
    StatelessMoveRequest,
    StatelessMoveResponse,
    dump_packet,
    parse_body,
    parse_packet,
)
from wire import board as wire_board
from wire import codec, dumping
from wire.errors import _problems
from wire.trusted import trusted

# ------------------------------------------------------------------------ samples

CELLS = '[{"q":0,"r":0,"p":"x"},{"q":1,"r":0,"p":"o"},{"q":0,"r":1,"p":"o"}]'
SAMPLES: dict[str, tuple[str, type[Any]]] = {
    "config": ('{"type":"config","depth":4,"x-seed":7}', ConfigPacket),
    "setup for a seat": (f'{{"type":"setup","board":{{"cells":{CELLS}}}}}', SetupPacket),
    "setup for a spectator": (
        '{"type":"setup","board":{"cells":' + CELLS + '},"game_id":"g1",'
        '"moves":[{"side":"o","pieces":[{"q":1,"r":0},{"q":0,"r":1}],"considerations":[],'
        '"clock_ms":59000}],'
        '"player_x":{"name":"center","type":"bot","bot_url":"http://localhost:8002"},'
        '"player_o":{"name":"ann","type":"human"},'
        '"match":{"heartbeat":5000,"view_distance":8,"win_distance":6,"clock_type":"match",'
        '"clock":60,"increment":0},"to_move":"x","status":"in_progress",'
        '"clock_x_ms":60000,"clock_o_ms":59000}',
        SetupPacket,
    ),
    "move_request": (
        '{"type":"move_request","side":"x","previous":['
        '{"side":"x","pieces":[{"q":0,"r":2},{"q":0,"r":3}]},'
        '{"side":"o","pieces":[{"q":2,"r":0},{"q":3,"r":0}]}],'
        '"board":{"cells":' + CELLS + '},"move_time_limit":2.5}',
        MoveRequestPacket,
    ),
    "heartbeat": ('{"type":"heartbeat","waiting":false}', HeartbeatPacket),
    "eval_request": (
        '{"type":"eval_request","side":"o","evaluation_time_limit":1}',
        EvalRequestPacket,
    ),
    "interrupt": ('{"type":"interrupt"}', InterruptPacket),
    "end by forfeit": (
        '{"type":"end","winner":"x","reason":"forfeit","detail":"timeout",'
        '"board":{"cells":' + CELLS + "}}",
        EndPacket,
    ),
    "end in a draw": ('{"type":"end","winner":null,"reason":"draw"}', EndPacket),
    "nope": ('{"type":"nope","reason":"move_response without a move_request"}', NopePacket),
    "opponent_status": (
        '{"type":"opponent_status","side":"o","connected":false,"reconnect_by_ms":60000}',
        OpponentStatusPacket,
    ),
    "resign": ('{"type":"resign"}', ResignPacket),
    "move_response": (
        '{"type":"move_response","move":{"pieces":[{"q":1,"r":1},{"q":2,"r":1}],'
        '"evaluation":{"heuristic":0.25,"win_in":3}},'
        '"considerations":[{"pieces":[{"q":-1,"r":1},{"q":-2,"r":1}]}]}',
        MoveResponsePacket,
    ),
    "eval_response": (
        '{"type":"eval_response","evaluation":{"heuristic":-0.5,"nodes":1200}}',
        EvalResponsePacket,
    ),
    "board_update": (
        '{"type":"board_update","board":{"cells":' + CELLS + "},"
        '"move":{"side":"o","pieces":[{"q":1,"r":0},{"q":0,"r":1}]},'
        '"to_move":"x","status":"in_progress","clock_x_ms":60000,"clock_o_ms":58500,'
        '"evaluation":{"heuristic":0.1}}',
        BoardUpdatePacket,
    ),
    "analysis": (
        '{"type":"analysis","ply":4,"evaluation":{"heuristic":-0.3},"bot":"ThreatBot"}',
        AnalysisPacket,
    ),
}


def problem_of(data: str | bytes, **kwargs: Any) -> str:
    """The message of the ProtocolError that parsing ``data`` raises."""
    with pytest.raises(ProtocolError) as caught:
        parse_packet(data, **kwargs)
    return str(caught.value)


def body_problem_of(model: type[Any], data: str) -> str:
    with pytest.raises(ProtocolError) as caught:
        parse_body(model, data)
    return str(caught.value)


def new_game(**match_config: Any) -> str:
    return json.dumps(
        {
            "player_x": {"type": "human"},
            "player_o": {"type": "bot", "bot_url": "http://localhost:8002"},
            "match_config": match_config,
        }
    )


# ------------------------------------------------------------------ every packet


def test_samples_cover_every_packet_type() -> None:
    assert {json.loads(data)["type"] for data, _ in SAMPLES.values()} == PACKETS.tags


@pytest.mark.parametrize("name", SAMPLES)
def test_packet_parses_from_realistic_json(name: str) -> None:
    data, model = SAMPLES[name]
    packet = parse_packet(data)
    assert type(packet) is model
    assert packet.type == json.loads(data)["type"]


@pytest.mark.parametrize("name", SAMPLES)
def test_packet_round_trips_through_dump_and_parse(name: str) -> None:
    packet = parse_packet(SAMPLES[name][0])
    assert parse_packet(dump_packet(packet)) == packet


@pytest.mark.parametrize("name", SAMPLES)
def test_encoded_packet_equals_the_json_it_was_read_from(name: str) -> None:
    data = SAMPLES[name][0]
    assert orjson.loads(dump_packet(parse_packet(data))) == orjson.loads(data)


def test_prototype_move_request_with_board_parses() -> None:
    data = (
        '{"type":"move_request","side":"o","previous":[],"board":{"cells":[{"q":0,"r":0,"p":"x"}]}}'
    )
    packet = parse_packet(data)
    assert packet == MoveRequestPacket(
        side=Player.O, previous=[], board=Board(cells=[Cell(q=0, r=0, p=Player.X)])
    )


def test_packet_parses_from_bytes_as_from_text() -> None:
    data = SAMPLES["move_request"][0]
    assert parse_packet(data.encode()) == parse_packet(data)


def test_packets_can_be_built_without_naming_their_type() -> None:
    assert dump_packet(InterruptPacket()) == b'{"type":"interrupt"}'


def test_setup_without_board_means_the_standard_start() -> None:
    assert parse_packet('{"type":"setup"}') == SetupPacket(board=Board.standard())


def test_spectator_setup_carries_history_players_match_and_clocks() -> None:
    packet = parse_packet(SAMPLES["setup for a spectator"][0])
    assert isinstance(packet, SetupPacket)
    assert packet.moves is not None and packet.moves[0].clock_ms == 59000
    assert packet.player_o is not None and packet.player_o.name == "ann"
    assert packet.match == Match(clock_type="match", clock=60)
    assert (packet.to_move, packet.status) == (Player.X, GameStatus.IN_PROGRESS)
    assert (packet.clock_x_ms, packet.clock_o_ms) == (60000, 59000)


def test_setup_for_a_seat_carries_no_spectator_fields() -> None:
    assert orjson.loads(dump_packet(SetupPacket(board=Board.standard()))) == {
        "type": "setup",
        "board": {"cells": [{"q": 0, "r": 0, "p": "x"}]},
    }


# ------------------------------------------------------------------- moves, humans


def test_previous_may_hold_a_one_stone_move() -> None:
    data = '{"type":"move_request","side":"o","previous":[{"side":"o","pieces":[{"q":1,"r":0}]}]}'
    packet = parse_packet(data)
    assert isinstance(packet, MoveRequestPacket)
    assert packet.previous == [Move(side=Player.O, pieces=[Coord(q=1, r=0)])]


def test_previous_move_of_three_stones_is_refused() -> None:
    stones = ",".join(f'{{"q":{q},"r":0}}' for q in range(1, 4))
    message = problem_of(
        f'{{"type":"move_request","side":"o","previous":[{{"side":"o","pieces":[{stones}]}}]}}'
    )
    assert "move_request.previous[0].pieces: expected at most 2 items, got 3" in message


def test_bot_move_response_may_have_one_piece_for_the_referee_to_judge() -> None:
    # A lone stone is a move only when it wins: game.session decides, not the parser.
    packet = parse_packet(
        '{"type":"move_response","move":{"pieces":[{"q":1,"r":0}]}}', allowed=CLIENT_PACKETS
    )
    assert isinstance(packet, MoveResponsePacket)
    assert packet.move.pieces == [Coord(q=1, r=0)]


def test_bot_move_response_with_no_piece_or_three_is_refused() -> None:
    stones = ",".join(f'{{"q":{q},"r":0}}' for q in range(1, 4))
    none = problem_of('{"type":"move_response","move":{"pieces":[]}}')
    three = problem_of(f'{{"type":"move_response","move":{{"pieces":[{stones}]}}}}')
    assert none == "move_response.move.pieces: expected at least 1 item, got 0"
    assert three == "move_response.move.pieces: expected at most 2 items, got 3"


def test_human_move_response_may_have_one_piece() -> None:
    packet = parse_packet(
        '{"type":"move_response","move":{"pieces":[{"q":1,"r":0}]}}',
        allowed=HUMAN_CLIENT_PACKETS,
    )
    assert isinstance(packet, HumanMoveResponsePacket)
    assert packet.move.pieces == [Coord(q=1, r=0)]


def test_human_move_response_with_three_pieces_is_refused() -> None:
    stones = ",".join(f'{{"q":{q},"r":0}}' for q in range(1, 4))
    message = problem_of(
        f'{{"type":"move_response","move":{{"pieces":[{stones}]}}}}',
        allowed=HUMAN_CLIENT_PACKETS,
    )
    assert "move_response.move.pieces: expected at most 2 items, got 3" in message


def test_human_move_response_with_two_pieces_reads_like_a_bots() -> None:
    data = SAMPLES["move_response"][0]
    human = parse_packet(data, allowed=HUMAN_CLIENT_PACKETS)
    assert human.model_dump() == parse_packet(data).model_dump()


# ------------------------------------------------------------------- bad input


def test_text_that_is_not_json_is_refused() -> None:
    assert problem_of('{"type": "heartbeat", ').startswith("not valid JSON: ")


def test_json_that_is_not_an_object_is_refused() -> None:
    assert problem_of("[1, 2]") == "expected a JSON object with a 'type' field, got a list"


def test_packet_without_type_is_refused_naming_the_types() -> None:
    message = problem_of('{"waiting": true}')
    assert message.startswith("type: missing; expected one of: config, setup, move_request")


def test_packet_of_unknown_type_is_refused() -> None:
    message = problem_of('{"type": "move_reqest", "side": "x", "previous": []}')
    assert message.startswith("type: unknown type 'move_reqest'; expected one of: ")


def test_packet_type_that_is_not_a_string_is_refused() -> None:
    assert problem_of('{"type": 3}').startswith("type: expected a string, got 3;")


def test_packet_not_accepted_by_the_receiver_is_refused() -> None:
    message = problem_of('{"type": "setup"}', allowed=CLIENT_PACKETS)
    assert message == (
        "type: 'setup' packets are not accepted here; expected one of: move_response, eval_response"
    )


def test_bot_refuses_packets_only_a_server_receives() -> None:
    message = problem_of(SAMPLES["move_response"][0], allowed=SERVER_PACKETS)
    assert "'move_response' packets are not accepted here" in message


def test_spectator_accepts_setup_board_update_analysis_end_and_nope() -> None:
    assert SPECTATOR_PACKETS.tags == {"setup", "board_update", "analysis", "end", "nope"}
    packet = parse_packet(SAMPLES["board_update"][0], allowed=SPECTATOR_PACKETS)
    assert isinstance(packet, BoardUpdatePacket)


def test_analysis_packet_refuses_a_negative_ply() -> None:
    message = problem_of(
        '{"type":"analysis","ply":-1,"evaluation":{},"bot":"b"}', allowed=SPECTATOR_PACKETS
    )
    assert message.startswith("analysis.ply:")


def test_analysis_packet_encodes_in_the_shape_spectators_read() -> None:
    packet = AnalysisPacket(ply=2, evaluation=PositionEvaluation(win_in=-3), bot="http://b")
    assert json.loads(dump_packet(packet)) == {
        "type": "analysis",
        "ply": 2,
        "evaluation": {"win_in": -3},
        "bot": "http://b",
    }


def test_missing_field_is_named() -> None:
    assert problem_of('{"type": "heartbeat"}') == "heartbeat.waiting: missing required field"


def test_wrong_type_names_the_path_and_the_value() -> None:
    data = '{"type":"move_response","move":{"pieces":[{"q":"0","r":1},{"q":1,"r":1}]}}'
    assert problem_of(data) == "move_response.move.pieces[0].q: expected an integer, got '0'"


@pytest.mark.parametrize(("value", "shown"), [('"0"', "'0'"), ("0.5", "0.5"), ("true", "true")])
def test_coordinate_that_is_not_an_integer_is_refused(value: str, shown: str) -> None:
    data = f'{{"type":"move_response","move":{{"pieces":[{{"q":{value},"r":1}},{{"q":1,"r":1}}]}}}}'
    assert problem_of(data) == f"move_response.move.pieces[0].q: expected an integer, got {shown}"


@pytest.mark.parametrize(("value", "shown"), [('"1"', "'1'"), ("1.5", "1.5"), ("false", "false")])
def test_board_coordinate_that_is_not_an_integer_is_refused(value: str, shown: str) -> None:
    data = (
        '{"type":"move_request","side":"x","previous":[],"board":{"cells":'
        f'[{{"q":0,"r":0,"p":"x"}},{{"q":{value},"r":0,"p":"o"}}]}}}}'
    )
    assert problem_of(data) == f"move_request.board.cells[1].q: expected an integer, got {shown}"


def test_board_cell_of_unknown_side_is_refused() -> None:
    data = '{"type":"setup","board":{"cells":[{"q":0,"r":0,"p":"X"}]}}'
    assert problem_of(data) == "setup.board.cells[0].p: expected 'x' or 'o', got 'X'"


def test_board_without_cells_is_refused() -> None:
    assert problem_of('{"type":"setup","board":{}}') == "setup.board.cells: missing required field"


def test_board_that_is_not_an_object_is_refused() -> None:
    message = problem_of('{"type":"end","winner":"x","reason":"win","board":[]}')
    assert message == "end.board: expected an object, got a list"


def test_null_board_reads_as_no_board() -> None:
    packet = parse_packet('{"type":"move_request","side":"x","previous":[],"board":null}')
    assert isinstance(packet, MoveRequestPacket) and packet.board is None


def test_heartbeat_waiting_must_be_a_boolean() -> None:
    message = problem_of('{"type":"heartbeat","waiting":"yes"}')
    assert message == "heartbeat.waiting: expected true or false, got 'yes'"


def test_time_limit_must_be_positive() -> None:
    message = problem_of('{"type":"move_request","side":"x","previous":[],"move_time_limit":0}')
    assert message == "move_request.move_time_limit: expected more than 0, got 0"


@pytest.mark.parametrize("one", ["1.0", "1.00", "1e0", "10e-1"])
def test_an_integer_written_with_a_zero_fraction_is_an_integer(one: str) -> None:
    # JSON Schema 2020-12 (the spec's OpenAPI 3.1) counts 1.0 an integer; a bot whose
    # numbers are floats writes it so.
    answer = (
        f'{{"type":"move_response","move":{{"pieces":[{{"q":{one},"r":-0.0}},{{"q":2,"r":0}}]}}}}'
    )
    packet = parse_packet(answer, allowed=CLIENT_PACKETS)
    assert isinstance(packet, MoveResponsePacket)
    [first, _] = packet.move.pieces
    assert (first.q, first.r) == (1, 0) and type(first.q) is int and type(first.r) is int
    previous = [{"side": "x", "pieces": [{"q": "ONE", "r": 0}]}]
    board = {"cells": [{"q": 0, "r": 0, "p": "x"}, {"q": "ONE", "r": 0, "p": "x"}]}
    fields = {"type": "move_request", "side": "o", "previous": previous, "board": board}
    request = json.dumps({**fields, "clock_x_ms": "ONE"}).replace('"ONE"', one)
    read = parse_packet(request, allowed=SERVER_PACKETS)
    assert isinstance(read, MoveRequestPacket) and read.board is not None
    assert read.previous[0].pieces[0] == Coord(q=1, r=0) and read.clock_x_ms == 1
    assert [c.q for c in read.board.cells] == [0, 1]
    body = f'{{"move":{{"pieces":[{{"q":{one},"r":0}},{{"q":2.0,"r":0}}]}}}}'
    stateless = parse_body(StatelessMoveResponse, body)
    assert [(c.q, c.r) for c in stateless.move.pieces] == [(1, 0), (2, 0)]


def test_time_limit_given_as_text_is_refused() -> None:
    message = problem_of('{"type":"eval_request","side":"x","evaluation_time_limit":"2"}')
    assert message == "eval_request.evaluation_time_limit: expected a number, got '2'"


def test_heuristic_must_be_a_number_not_a_boolean() -> None:
    message = problem_of('{"type":"eval_response","evaluation":{"heuristic":true}}')
    assert message == "eval_response.evaluation.heuristic: expected a number, got true"


def test_every_problem_of_a_packet_is_reported() -> None:
    data = '{"type":"move_response","move":{"pieces":[{"q":"0","r":1},{"q":1}]}}'
    with pytest.raises(ProtocolError) as caught:
        parse_packet(data)
    assert caught.value.problems == (
        "move_response.move.pieces[0].q: expected an integer, got '0'",
        "move_response.move.pieces[1].r: missing required field",
    )


def test_message_shows_the_first_five_problems_and_counts_the_rest() -> None:
    cells = ",".join('{"q":"a","r":0,"p":"x"}' for _ in range(8))
    message = problem_of(f'{{"type":"setup","board":{{"cells":[{cells}]}}}}')
    assert message.count("expected an integer") == 5
    assert message.endswith("(and 3 more)")


def test_deeply_nested_json_is_refused_without_crashing() -> None:
    nested = "[" * 100_000 + "]" * 100_000
    message = problem_of(f'{{"type":"config","x-deep":{nested}}}')
    assert "nested too deeply" in message


def test_protocol_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_packet(b"\xff")


# --------------------------------------------------------- unknown and extra fields


def test_unknown_fields_are_ignored() -> None:
    data = (
        '{"type":"move_request","side":"x","previous":[],"x-trace":"abc",'
        '"board":{"cells":[{"q":0,"r":0,"p":"x","colour":"red"}],"size":1}}'
    )
    packet = parse_packet(data)
    assert packet == MoveRequestPacket(
        side=Player.X, previous=[], board=Board(cells=[Cell(q=0, r=0, p=Player.X)])
    )


def test_config_keeps_x_keys() -> None:
    packet = parse_packet('{"type":"config","depth":4,"x-seed":7,"x-book":{"moves":[1,2]}}')
    assert isinstance(packet, ConfigPacket)
    assert packet.depth == 4
    assert packet.extensions() == {"x-seed": 7, "x-book": {"moves": [1, 2]}}


def test_config_extensions_leave_out_unknown_standard_keys() -> None:
    packet = parse_packet('{"type":"config","width":3,"x-seed":7}')
    assert isinstance(packet, ConfigPacket)
    assert packet.extensions() == {"x-seed": 7}


def test_config_x_keys_are_written_back_even_when_null() -> None:
    packet = parse_packet('{"type":"config","x-seed":7,"x-book":null}')
    assert orjson.loads(dump_packet(packet)) == {"type": "config", "x-seed": 7, "x-book": None}


def test_config_depth_must_be_an_integer() -> None:
    assert problem_of('{"type":"config","depth":"4"}') == (
        "config.depth: expected an integer, got '4'"
    )


def test_evaluation_keeps_extra_fields() -> None:
    packet = parse_packet(SAMPLES["eval_response"][0])
    assert isinstance(packet, EvalResponsePacket)
    assert packet.evaluation.model_extra == {"nodes": 1200}
    assert b'"nodes":1200' in dump_packet(packet)


# ------------------------------------------------------------------------- end


def test_end_detail_naming_a_known_cause_is_an_end_cause() -> None:
    packet = parse_packet(SAMPLES["end by forfeit"][0])
    assert isinstance(packet, EndPacket)
    assert packet.detail is EndCause.TIMEOUT
    assert packet.cause is EndCause.TIMEOUT


def test_end_detail_of_unknown_cause_is_kept_as_text() -> None:
    packet = parse_packet('{"type":"end","winner":"o","reason":"forfeit","detail":"meteor"}')
    assert isinstance(packet, EndPacket)
    assert packet.detail == "meteor" and not isinstance(packet.detail, EndCause)
    assert packet.cause is None
    assert b'"detail":"meteor"' in dump_packet(packet)


def test_end_detail_naming_a_cause_then_the_reason_gives_both() -> None:
    packet = parse_packet(
        '{"type":"end","winner":"x","reason":"forfeit","detail":"stall: o forfeits: no answer"}'
    )
    assert isinstance(packet, EndPacket)
    assert (packet.cause, packet.cause_detail) == (EndCause.STALL, "o forfeits: no answer")


def test_result_detail_is_clipped_and_written_after_the_cause_in_end_detail() -> None:
    result = GameResult(
        winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.ILLEGAL_MOVE, detail="é" * 1000
    )
    assert result.detail is not None and len(result.detail) == MAX_RESULT_DETAIL_CHARS
    assert result.detail.endswith("...")
    assert result.end_detail == f"illegal_move: {result.detail}"
    bare = GameResult(winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT)
    assert bare.end_detail == "timeout"


def test_end_detail_that_is_not_text_is_refused() -> None:
    message = problem_of('{"type":"end","winner":"o","reason":"forfeit","detail":5}')
    assert message == "end.detail: expected a string naming the cause, got 5"


def test_end_draw_with_a_winner_is_refused() -> None:
    message = problem_of('{"type":"end","winner":"x","reason":"draw"}')
    assert message == "end: a draw has no winner, and every other result has one"


def test_end_without_winner_field_is_refused() -> None:
    assert problem_of('{"type":"end","reason":"draw"}') == "end.winner: missing required field"


# -------------------------------------------------------------- None and null


def test_optional_fields_left_unset_are_absent_not_null() -> None:
    encoded = dump_packet(MoveRequestPacket(side=Player.O, previous=[]))
    assert encoded == b'{"type":"move_request","side":"o","previous":[]}'


def test_nested_optional_fields_left_unset_are_absent() -> None:
    packet = MoveResponsePacket(
        move=MoveOption(pieces=[Coord(q=1, r=0), Coord(q=0, r=1)], evaluation=PositionEvaluation())
    )
    assert orjson.loads(dump_packet(packet)) == {
        "type": "move_response",
        "move": {"pieces": [{"q": 1, "r": 0}, {"q": 0, "r": 1}], "evaluation": {}},
    }


def test_end_winner_null_is_written() -> None:
    encoded = dump_packet(EndPacket(winner=None, reason=ResultReason.DRAW))
    assert encoded == b'{"type":"end","winner":null,"reason":"draw"}'


def test_board_update_to_move_null_is_written_and_absent_clocks_are_not() -> None:
    packet = BoardUpdatePacket(
        board=Board.standard(),
        move=Move(side=Player.O, pieces=[Coord(q=1, r=0)]),
        to_move=None,
        status=GameStatus.O_WINS,
    )
    encoded = orjson.loads(dump_packet(packet))
    assert encoded["to_move"] is None
    assert "clock_x_ms" not in encoded and "evaluation" not in encoded


def nested_models(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    """Every model reachable through the fields of ``model``, itself excluded."""
    found: set[type[BaseModel]] = set()
    for field in model.model_fields.values():
        pending: list[object] = [field.annotation]
        while pending:
            annotation = pending.pop()
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                if annotation not in seen:
                    seen.add(annotation)
                    found |= {annotation} | nested_models(annotation, seen)
            else:
                pending.extend(get_args(annotation))
    return found


def test_no_nested_wire_model_has_a_required_field_that_may_be_null() -> None:
    # dump_packet puts back meaningful nulls at the top level only; this keeps that true.
    roots = [*PACKETS.models.values(), *HUMAN_CLIENT_PACKETS.models.values()]
    roots += [StatelessMoveRequest, StatelessMoveResponse, Capabilities, NewGameRequest]
    nested = set().union(*(nested_models(root, set()) for root in roots))
    assert Cell in nested and Match in nested  # the walk does reach nested models
    offenders = {
        f"{model.__name__}.{name}"
        for model in nested
        for name, field in model.model_fields.items()
        if field.is_required() and dumping._allows_none(field.annotation)
    }
    assert offenders == set()


def test_encoding_is_compact_json_bytes_with_type_first() -> None:
    encoded = dump_packet(HeartbeatPacket(waiting=True))
    assert encoded == b'{"type":"heartbeat","waiting":true}'


def test_huge_coordinates_round_trip() -> None:
    far = 2**70
    packet = MoveRequestPacket(
        side=Player.X, previous=[], board=Board(cells=[Cell(q=far, r=-far, p=Player.O)])
    )
    assert parse_packet(dump_packet(packet)) == packet


# -------------------------------------------------------------- fast path


def test_boards_share_interned_cells() -> None:
    data = SAMPLES["move_request"][0]
    first, second = parse_packet(data), parse_packet(data)
    assert isinstance(first, MoveRequestPacket) and isinstance(second, MoveRequestPacket)
    assert first.board is not None and second.board is not None
    assert all(a is b for a, b in zip(first.board.cells, second.board.cells, strict=True))


def test_board_with_a_repeated_stone_keeps_both_entries() -> None:
    packet = parse_packet(
        '{"type":"setup","board":{"cells":[{"q":5,"r":5,"p":"o"},{"q":5,"r":5,"p":"o"}]}}'
    )
    assert isinstance(packet, SetupPacket)
    assert packet.board.cells == [Cell(q=5, r=5, p=Player.O)] * 2


def test_cell_intern_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec._CellInterner, "LIMIT", 10)
    for q in range(30):
        parse_packet(f'{{"type":"setup","board":{{"cells":[{{"q":{q},"r":99,"p":"x"}}]}}}}')
        assert len(codec._cell_interner) <= 10


def test_cell_dict_holds_exactly_the_wire_fields() -> None:
    # dump_packet hands Cell.__dict__ to orjson: a new attribute there would be sent.
    cell = Cell(q=1, r=2, p=Player.O)
    for name in dir(Cell):
        if not name.startswith(("_", "model_")):
            getattr(cell, name)
    assert cell.__dict__ == {"q": 1, "r": 2, "p": Player.O}


# ---------------------------------------------------------------- match settings


def test_match_defaults_are_the_prototypes_with_the_default_turn_limit() -> None:
    match = parse_body(NewGameRequest, new_game()).match_config
    assert match == Match(
        heartbeat=5000,
        view_distance=8,
        win_distance=6,
        clock_type="none",
        turn_limit=models.DEFAULT_TURN_LIMIT,
    )


@pytest.mark.parametrize("settings", [{}, {"turn_limit": None}])
def test_a_new_game_without_a_turn_limit_gets_the_default_one(settings: dict[str, Any]) -> None:
    match = parse_body(NewGameRequest, new_game(**settings)).match_config
    assert match.turn_limit == models.DEFAULT_TURN_LIMIT


def test_a_new_game_keeps_its_own_turn_limit() -> None:
    assert parse_body(NewGameRequest, new_game(turn_limit=7)).match_config.turn_limit == 7


def test_a_match_without_a_turn_limit_stays_one() -> None:
    # Records and notation of other tools may have no turn limit: only hosting sets it.
    assert Match().turn_limit is None


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"view_distance": 13},
            "match_config.view_distance: expected at most 12 on this server, got 13",
        ),
        (
            {"turn_limit": 1001},
            "match_config.turn_limit: expected at most 1000 on this server, got 1001",
        ),
        (
            {"heartbeat": 60_001},
            "match_config.heartbeat: expected at most 60000 on this server, got 60001",
        ),
        (
            {"clock_type": "match", "clock": 86_401},
            "match_config.clock: expected at most 86400 on this server, got 86401.0",
        ),
        (
            {"clock_type": "incremental", "clock": 60, "increment": 3601},
            "match_config.increment: expected at most 3600 on this server, got 3601.0",
        ),
    ],
)
def test_settings_beyond_what_the_server_hosts_are_refused(
    settings: dict[str, Any], expected: str
) -> None:
    assert body_problem_of(NewGameRequest, new_game(**settings)) == expected


def test_a_match_may_hold_settings_beyond_what_the_server_hosts() -> None:
    # A record of a game played elsewhere, or stored before these bounds, still reads.
    match = Match(view_distance=50, heartbeat=600_000, clock_type="match", clock=1e6)
    assert (match.view_distance, match.heartbeat, match.clock) == (50, 600_000, 1e6)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"turn_limit": 10**400},
            "match_config.turn_limit: expected at most 2147483647, got an integer of about "
            "401 digits",
        ),
        (
            {"heartbeat": 2**64},
            "match_config.heartbeat: expected at most 2147483647, got 18446744073709551616",
        ),
        (
            {"clock_type": "turn", "clock": 1e308},
            "match_config.clock: expected at most 2147483.647, got 1e+308",
        ),
        (
            {"clock_type": "incremental", "clock": 60, "increment": 1e308},
            "match_config.increment: expected at most 2147483.647, got 1e+308",
        ),
    ],
)
def test_match_numbers_are_bounded(settings: dict[str, Any], expected: str) -> None:
    assert body_problem_of(NewGameRequest, new_game(**settings)) == expected


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"view_distance": 0}, "match_config.view_distance: expected at least 1, got 0"),
        ({"view_distance": -3}, "match_config.view_distance: expected at least 1, got -3"),
        ({"view_distance": 51}, "match_config.view_distance: expected at most 50, got 51"),
        ({"win_distance": 1}, "match_config.win_distance: expected at least 2, got 1"),
        ({"win_distance": -6}, "match_config.win_distance: expected at least 2, got -6"),
        ({"heartbeat": 99}, "match_config.heartbeat: expected at least 100, got 99"),
        ({"turn_limit": 0}, "match_config.turn_limit: expected at least 1, got 0"),
        (
            {"clock_type": "turn", "clock": 0},
            "match_config.clock: expected more than 0, got 0",
        ),
        (
            {"clock_type": "match"},
            "match_config: clock_type 'match' needs 'clock' (seconds, greater than 0)",
        ),
        (
            {"clock_type": "match", "clock": 60, "increment": 2},
            "match_config: 'increment' only applies to clock_type 'incremental'",
        ),
        (
            {"clock_type": "hourglass"},
            "match_config.clock_type: expected 'none', 'turn', 'match' or 'incremental', "
            "got 'hourglass'",
        ),
        ({"clock_type": "turn", "clock": "60"}, "match_config.clock: expected a number, got '60'"),
    ],
)
def test_match_settings_out_of_range_are_refused(settings: dict[str, Any], expected: str) -> None:
    assert body_problem_of(NewGameRequest, new_game(**settings)) == expected


def test_match_clock_may_be_given_in_whole_seconds() -> None:
    match = parse_body(NewGameRequest, new_game(clock_type="turn", clock=10)).match_config
    assert match.clock == 10.0


# ------------------------------------------------------------------- REST bodies


def test_bot_seat_without_url_is_refused() -> None:
    data = '{"player_x": {"type": "bot"}, "player_o": {"type": "human"}}'
    assert body_problem_of(NewGameRequest, data) == (
        "player_x: a bot seat needs 'bot_url', the address of the bot"
    )


def test_bot_seat_config_with_wrong_depth_is_refused() -> None:
    data = json.dumps(
        {
            "player_x": {"type": "human"},
            "player_o": {"type": "bot", "bot_url": "http://b", "config": {"depth": "3"}},
        }
    )
    assert body_problem_of(NewGameRequest, data) == (
        "player_o.config: depth: expected an integer, got '3'"
    )


def test_bot_seat_config_becomes_its_config_packet() -> None:
    seat = PlayerConfig.model_validate(
        {"type": "bot", "bot_url": "http://b", "config": {"depth": 3, "x-style": "sharp"}}
    )
    packet = seat.config_packet()
    assert packet is not None
    assert (packet.depth, packet.extensions()) == (3, {"x-style": "sharp"})


def new_game_named(name: str | None = None, seat_name: str | None = None, **seat: Any) -> str:
    return json.dumps(
        {
            "name": name,
            "player_x": {"type": "human", "name": seat_name},
            "player_o": {"type": "bot", "bot_url": "http://b", **seat},
        }
    )


@pytest.mark.parametrize(
    "name", ["Ann", "Zoë & Ñandú", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "x" * 64]
)
def test_names_may_be_any_printable_text_up_to_64_characters(name: str) -> None:
    request = parse_body(NewGameRequest, new_game_named(name, name))
    assert (request.name, request.player_x.name) == (name, name)


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("nul\x00", "U+0000 at position 3"),
        ("a\u202ereversed", "U+202E at position 1"),
        ("two\nlines", "U+000A at position 3"),
        ("\x1b[31mred", "U+001B at position 0"),
        ("\u2066isolate", "U+2066 at position 0"),
        ("sep\u2028", "U+2028 at position 3"),
    ],
)
def test_names_with_control_characters_are_refused(name: str, where: str) -> None:
    expected = f"expected a name without control characters, got {where}"
    assert body_problem_of(NewGameRequest, new_game_named(name=name)) == f"name: {expected}"
    assert body_problem_of(NewGameRequest, new_game_named(seat_name=name)) == (
        f"player_x.name: {expected}"
    )


def test_names_over_64_characters_are_refused() -> None:
    assert body_problem_of(NewGameRequest, new_game_named(seat_name="x" * 65)) == (
        "player_x.name: expected at most 64 characters, got 65"
    )


def test_a_huge_bot_url_is_refused_without_being_echoed() -> None:
    problem = body_problem_of(NewGameRequest, new_game_named(bot_url="http://b/" + "a" * 60_000))
    assert problem == "player_o.bot_url: expected at most 2048 characters, got 60009"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"depth": 2**80}, "depth: expected an integer within 64 bits (-2^63 to 2^63-1)"),
        (
            {"x-seed": int("9" * 2000)},
            "x-seed: expected an integer within 64 bits (-2^63 to 2^63-1)",
        ),
        (
            {"x-weights": [1, {"deep": -(2**63) - 1}]},
            "x-weights[1].deep: expected an integer within 64 bits (-2^63 to 2^63-1)",
        ),
        ({"x-book": "e" * 5000}, "expected at most 4096 bytes of JSON, got 5013"),
        (
            {"x-" + "k" * 5000: 2**64},
            "x-kkkkkkkkkkkkkkkkk...kkkkkkkkkkkkkkkkkk: expected an integer within 64 bits "
            "(-2^63 to 2^63-1)",
        ),
        (
            {"x-nest": json.loads("[" * 300 + "]" * 300)},
            "expected at most 4096 bytes of JSON, got over 255 levels of nesting",
        ),
    ],
)
def test_bot_seat_config_values_are_bounded(config: dict[str, Any], expected: str) -> None:
    problem = body_problem_of(NewGameRequest, new_game_named(config=config))
    assert problem == f"player_o.config: {expected}"


def test_bot_seat_config_within_bounds_is_kept() -> None:
    config = {"depth": 2**63 - 1, "x-seed": -(2**63), "x-book": "e" * 1000}
    assert parse_body(NewGameRequest, new_game_named(config=config)).player_o.config == config


@pytest.mark.parametrize("value", ["s" * 100_000, 10**4000, 1.5e300, [1] * 10_000])
def test_a_refused_value_is_described_in_a_few_words(value: Any) -> None:
    problem = body_problem_of(NewGameRequest, json.dumps({"player_x": value, "player_o": value}))
    assert all(len(part) < 120 for part in problem.split("; ")), problem


@pytest.mark.parametrize("data", [b'{"player_x": "\xff"}', b"\xfe\xff{}", b'{"name": "caf\xc3"}'])
def test_a_body_that_is_not_utf8_is_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_body(NewGameRequest, data)
    assert str(caught.value).startswith("not valid JSON: ")


def test_a_frame_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_packet(b'{"type":"move_response","move":{"pieces":[],"x":"\xff"}}')
    assert str(caught.value) == (
        "not valid JSON: a string holds invalid UTF-8 (byte 0xff); JSON text is UTF-8"
    )


_FAR = "1e400"  # valid JSON; more than a 64-bit float holds
_OUT_OF_RANGE = "a number out of range (beyond what a 64-bit float holds)"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            '{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}],'
            f'"evaluation":{{"heuristic":{_FAR}}}}}}}',
            f"move: {_OUT_OF_RANGE}",
        ),
        (
            '{"type":"move_response","move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}]},'
            f'"considerations":[{{"pieces":[{{"q":1,"r":0}}],"evaluation":{{"x-n":-{_FAR}}}}}]}}',
            f"considerations: {_OUT_OF_RANGE}",
        ),
        (f'{{"type":{_FAR}}}', f"type: {_OUT_OF_RANGE}"),
        (
            f'{{"type":"setup","board":{{"cells":[{{"q":{_FAR},"r":0,"p":"x"}}]}}}}',
            f"board: {_OUT_OF_RANGE}",
        ),
    ],
    ids=["evaluation", "considerations", "type", "board"],
)
def test_a_number_no_float_holds_is_a_protocol_error_naming_its_field(
    data: str, problem: str
) -> None:
    # msgspec refuses 1e400 with a ValidationError of its own: it once escaped
    # parse_packet, and a seat's packet with one aborted its game instead of
    # forfeiting the seat.
    assert problem_of(data) == problem


def test_a_body_with_a_number_no_float_holds_is_refused() -> None:
    assert body_problem_of(NewGameRequest, f'{{"player_x": {_FAR}}}') == _OUT_OF_RANGE


def test_new_game_response_leaves_out_tokens_of_bot_seats() -> None:
    encoded = dump_packet(NewGameResponse(game_id="g1", token_o="t-o"))
    assert encoded == b'{"game_id":"g1","token_o":"t-o"}'


def test_body_that_is_not_an_object_is_refused() -> None:
    assert body_problem_of(NewGameRequest, "42") == "expected a JSON object, got 42"


def test_body_that_is_not_json_is_refused() -> None:
    assert body_problem_of(NewGameRequest, "{").startswith("not valid JSON: ")


# --------------------------------------------------------------- stateless API


def test_stateless_move_request_round_trips() -> None:
    data = f'{{"board":{{"to_move":"o","cells":{CELLS}}},"time_limit":0}}'
    request = parse_body(StatelessMoveRequest, data)
    assert request.board.to_move is Player.O and request.time_limit == 0
    assert orjson.loads(dump_packet(request)) == orjson.loads(data)


def test_stateless_board_needs_the_side_to_move() -> None:
    message = body_problem_of(StatelessMoveRequest, f'{{"board":{{"cells":{CELLS}}}}}')
    assert message == "board.to_move: missing required field"


def test_stateless_negative_time_limit_is_refused() -> None:
    data = '{"board":{"to_move":"x","cells":[]},"time_limit":-1}'
    assert body_problem_of(StatelessMoveRequest, data) == (
        "time_limit: expected at least 0, got -1"
    )


def test_stateless_move_response_round_trips() -> None:
    data = (
        '{"move":{"pieces":[{"q":1,"r":0},{"q":2,"r":0}],"evaluation":{"win_in":-2}},'
        '"considerations":[{"pieces":[{"q":0,"r":1},{"q":0,"r":2}]}]}'
    )
    response = parse_body(StatelessMoveResponse, data)
    assert orjson.loads(dump_packet(response)) == orjson.loads(data)


def test_stateless_response_may_have_one_piece_but_its_considerations_two() -> None:
    answer = parse_body(StatelessMoveResponse, '{"move":{"pieces":[{"q":1,"r":0}]}}')
    assert answer.move.pieces == [Coord(q=1, r=0)]
    message = body_problem_of(
        StatelessMoveResponse,
        '{"move":{"pieces":[{"q":1,"r":0}]},"considerations":[{"pieces":[{"q":1,"r":0}]}]}',
    )
    assert message == "considerations[0].pieces: expected at least 2 items, got 1"


# ---------------------------------------------------------------- capabilities

CAPABILITIES = """{
  "meta": {"name": "Center", "authors": ["ann"], "tags": ["minimax", "ab-pruning"],
           "homepage": "https://example.com"},
  "stateless": {"versions": {"v1-alpha": {"move_time_limit": true}}},
  "basic_websocket": {"versions": {
      "v1-alpha": {"api_root": "ws/game", "config": {"dynamic": true}, "evaluation": true,
                   "interruptible": true, "x-ponder": true},
      "v2": {"api_root": "ws2"}}},
  "telepathy": {"versions": {}}
}"""


def test_capabilities_with_v1_alpha_keys_parse() -> None:
    caps = parse_body(Capabilities, CAPABILITIES)
    bws = caps.bws_v1_alpha
    assert bws is not None
    assert bws.api_root == "ws/game"
    assert bws.config is not None and bws.config.dynamic
    assert (bws.evaluation, bws.interruptible, bws.free_setup) == (True, True, False)
    assert caps.stateless_v1_alpha is not None and caps.stateless_v1_alpha.move_time_limit


def test_capabilities_serialise_back_with_the_v1_alpha_key() -> None:
    encoded = orjson.loads(dump_packet(parse_body(Capabilities, CAPABILITIES)))
    versions = encoded["basic_websocket"]["versions"]
    assert "v1-alpha" in versions and "v1_alpha" not in versions
    assert encoded["stateless"]["versions"]["v1-alpha"]["move_time_limit"] is True


def test_capabilities_keep_unknown_versions_fields_and_capabilities() -> None:
    encoded = orjson.loads(dump_packet(parse_body(Capabilities, CAPABILITIES)))
    assert encoded["basic_websocket"]["versions"]["v2"] == {"api_root": "ws2"}
    assert encoded["basic_websocket"]["versions"]["v1-alpha"]["x-ponder"] is True
    assert encoded["meta"]["homepage"] == "https://example.com"
    assert encoded["telepathy"] == {"versions": {}}


def test_capabilities_built_in_python_use_the_json_key_everywhere() -> None:
    caps = Capabilities.model_validate(
        {"basic_websocket": {"versions": {"v1_alpha": BwsV1Alpha(evaluation=True)}}}
    )
    assert '"v1-alpha"' in caps.model_dump_json()
    assert b'"v1-alpha"' in dump_packet(caps)


def test_capabilities_default_api_roots_are_the_specs() -> None:
    caps = parse_body(
        Capabilities,
        '{"stateless":{"versions":{"v1-alpha":{}}},"basic_websocket":{"versions":{"v1-alpha":{}}}}',
    )
    assert caps.stateless_v1_alpha is not None and caps.bws_v1_alpha is not None
    assert caps.stateless_v1_alpha.api_root == "stateless/v1-alpha"
    assert caps.bws_v1_alpha.api_root == "bws/v1-alpha"


def test_capability_without_versions_declares_no_version() -> None:
    caps = parse_body(Capabilities, '{"basic_websocket": {}}')
    assert caps.bws_v1_alpha is None


def test_capabilities_with_upper_case_tag_are_refused() -> None:
    message = body_problem_of(Capabilities, '{"meta": {"tags": ["AB-pruning"]}}')
    assert message == "meta.tags[0]: expected text matching '^[a-z0-9-]+$', got 'AB-pruning'"


def test_capability_flag_must_be_a_boolean() -> None:
    data = '{"basic_websocket": {"versions": {"v1-alpha": {"evaluation": "yes"}}}}'
    assert body_problem_of(Capabilities, data) == (
        "basic_websocket.versions.v1-alpha.evaluation: expected true or false, got 'yes'"
    )


# ------------------------------------------------------------------ properties

coordinates = st.builds(Coord, q=st.integers(), r=st.integers())
moves = st.builds(
    Move, side=st.sampled_from(Player), pieces=st.lists(coordinates, min_size=1, max_size=2)
)
boards = st.builds(
    Board,
    cells=st.lists(
        st.builds(Cell, q=st.integers(-60, 60), r=st.integers(-60, 60), p=st.sampled_from(Player)),
        max_size=60,
    ),
)
move_requests = st.builds(
    MoveRequestPacket,
    side=st.sampled_from(Player),
    previous=st.lists(moves, max_size=4),
    board=st.none() | boards,
    move_time_limit=st.none()
    | st.floats(min_value=0, exclude_min=True, allow_nan=False, allow_infinity=False),
)


@given(move_requests)
def test_random_move_requests_round_trip_unchanged(packet: MoveRequestPacket) -> None:
    assert parse_packet(dump_packet(packet)) == packet


@given(move_requests)
def test_fast_path_reads_what_plain_pydantic_reads(packet: MoveRequestPacket) -> None:
    data = dump_packet(packet)
    assert parse_packet(data) == MoveRequestPacket.model_validate(json.loads(data))


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)


@given(q=json_scalars, p=st.sampled_from(["x", "o", "X", "", "xo"]))
def test_fast_path_refuses_what_plain_pydantic_refuses(q: object, p: str) -> None:
    data = json.dumps(
        {
            "type": "setup",
            "board": {"cells": [{"q": 0, "r": 0, "p": "x"}, {"q": q, "r": 1, "p": p}]},
        }
    )
    # An integer, or one written with a zero fraction (JSON Schema's integer).
    integer = type(q) is int or (type(q) is float and q.is_integer())
    valid = integer and p in ("x", "o")
    if valid:
        assert isinstance(parse_packet(data), SetupPacket)
    else:
        with pytest.raises(ProtocolError, match=r"setup\.board\.cells\[1\]\.[qp]: expected"):
            parse_packet(data)


def _json_number(text: str) -> int | float:
    number = float(text)
    return int(number) if number.is_integer() else number


def _plain_pydantic_reading(data: str) -> MoveRequestPacket | str:
    """What pydantic alone makes of ``data``: the packet, or its problem as
    ``parse_packet`` words it (a number with a zero fraction read as JSON Schema's
    integer)."""
    try:
        return MoveRequestPacket.model_validate(json.loads(data, parse_float=_json_number))
    except ValidationError as exc:
        return "; ".join(_problems(exc))


@given(
    side=st.sampled_from(["x", "o", "X", "", 1]),
    previous=st.lists(
        st.fixed_dictionaries(
            {
                "side": st.sampled_from(["x", "o", "z", None]),
                "pieces": st.lists(
                    st.fixed_dictionaries({"q": json_scalars, "r": st.integers(-3, 3)}),
                    max_size=3,
                ),
            }
        ),
        max_size=3,
    )
    | json_scalars,
    board=st.sampled_from(
        [{}, {"board": None}, {"board": {"cells": [{"q": 0, "r": 0, "p": "x"}]}}]
    ),
)
def test_move_request_fast_path_agrees_with_plain_pydantic(
    side: object, previous: object, board: dict[str, Any]
) -> None:
    # The typed move_request envelope accepts exactly what pydantic accepts (the same
    # packet, the same fields set), and leaves refusals to the careful path, which
    # words them.
    data = json.dumps({"type": "move_request", "side": side, "previous": previous, **board})
    expected = _plain_pydantic_reading(data)
    if isinstance(expected, str):
        assert problem_of(data).startswith("move_request.")
    else:
        packet = parse_packet(data)
        assert packet == expected
        assert packet.model_fields_set == expected.model_fields_set
        assert dump_packet(packet) == dump_packet(expected)


def test_move_request_with_limit_and_clocks_reads_as_pydantic_reads() -> None:
    data = json.dumps(
        {
            "type": "move_request",
            "side": "o",
            "previous": [{"side": "x", "pieces": [{"q": 1, "r": 0}, {"q": 2, "r": 0}]}],
            "board": None,
            "move_time_limit": 2,
            "clock_x_ms": 100,
            "clock_o_ms": 0,
        }
    )
    packet, plain = parse_packet(data), MoveRequestPacket.model_validate(json.loads(data))
    assert packet == plain and packet.model_fields_set == plain.model_fields_set
    for field, value in (("move_time_limit", 0), ("clock_x_ms", -1), ("clock_o_ms", 1.5)):
        bad = json.dumps({**json.loads(data), field: value})
        assert problem_of(bad).startswith(f"move_request.{field}: expected")


def test_trusted_models_are_what_model_construct_makes() -> None:
    cells = [Cell(q=0, r=0, p=Player.X), Cell(q=1, r=0, p=Player.O)]
    pieces = [Coord(q=1, r=0), Coord(q=2, r=0)]
    move = Move(side=Player.O, pieces=pieces)
    request = dict.fromkeys(MoveRequestPacket.model_fields)
    request.update(type="move_request", side=Player.X, previous=[move], board=Board(cells=cells))
    for model, values in (
        (Board, {"cells": cells}),
        (Cell, {"q": -3, "r": 2, "p": Player.O}),
        (Move, {"side": Player.O, "pieces": pieces}),
        (MoveRequestPacket, request),
    ):
        # trusted skips validation: nothing may hang on it.
        decorators = model.__pydantic_decorators__
        assert not (decorators.validators or decorators.field_validators)
        assert not (decorators.root_validators or decorators.model_validators)
        made: BaseModel = trusted(model, dict(values))
        for other in (model.model_construct(**values), model.model_validate(values)):
            assert made == other
            if model is Cell:  # a dict key and a set member (the intern table, boards)
                assert hash(made) == hash(other)
            assert made.model_fields_set == other.model_fields_set
            assert made.model_extra == other.model_extra
            assert made.__pydantic_private__ == other.__pydantic_private__
            assert made.model_dump() == other.model_dump()
        with pytest.raises(ValidationError):  # frozen, as the real thing
            setattr(made, next(iter(values)), None)


def test_coord_intern_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec._CellInterner, "LIMIT", 10)
    for q in range(30):
        move = {"side": "x", "pieces": [{"q": q, "r": 99}]}
        packet = parse_packet(json.dumps({"type": "move_request", "side": "o", "previous": [move]}))
        assert isinstance(packet, MoveRequestPacket)
        assert packet.previous[0].pieces == [Coord(q=q, r=99)]
        assert len(codec._coords) <= 10


# ---------------------------------------------------------------------- docs


def test_examples_in_docstrings_hold() -> None:
    # models.py re-exports; the examples live with the definitions, in the wire package.
    names = [info.name for info in pkgutil.iter_modules(wire.__path__)]
    modules = [importlib.import_module(f"wire.{name}") for name in names]
    results = [doctest.testmod(module, optionflags=doctest.ELLIPSIS) for module in modules]
    assert sum(result.attempted for result in results) > 0
    assert [result.failed for result in results] == [0] * len(modules)


# ------------------------------------------------------------------ robustness

json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
field_names = st.sampled_from(
    [
        "side",
        "previous",
        "board",
        "cells",
        "move",
        "pieces",
        "winner",
        "reason",
        "detail",
        "waiting",
        "evaluation",
        "depth",
        "to_move",
        "status",
        "moves",
        "match",
        "q",
        "r",
        "p",
    ]
)


@given(st.text() | st.binary())
def test_any_frame_parses_or_raises_protocol_error(data: str | bytes) -> None:
    with contextlib.suppress(ProtocolError):
        parse_packet(data)


@given(
    tag=st.sampled_from(sorted(PACKETS.tags)),
    fields=st.dictionaries(field_names, json_values, max_size=5),
)
def test_any_object_with_a_known_type_parses_or_raises_protocol_error(
    tag: str, fields: dict[str, Any]
) -> None:
    with contextlib.suppress(ProtocolError):
        parse_packet(json.dumps({**fields, "type": tag}))


# ------------------------------------------------------------------ GrowingBoard


def _grown(stones: int) -> GrowingBoard:
    board = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    for index in range(1, stones):
        board.extend([Cell(q=index, r=-index // 2, p=Player.O if index % 2 else Player.X)])
    return board


def test_a_grown_board_encodes_exactly_like_a_plain_one() -> None:
    grown = _grown(40)
    plain = Board(cells=grown.cells)
    request = MoveRequestPacket(side=Player.O, previous=[], board=grown.board(), clock_x_ms=5)
    same = MoveRequestPacket(side=Player.O, previous=[], board=plain, clock_x_ms=5)
    assert request == same
    assert dump_packet(request) == dump_packet(same)
    assert dump_packet(grown.board()) == dump_packet(plain)
    stateless = StatelessMoveRequest(board=grown.board_as(StatelessBoard, to_move=Player.X))
    expected = StatelessMoveRequest(board=StatelessBoard(cells=grown.cells, to_move=Player.X))
    assert dump_packet(stateless) == dump_packet(expected)


def test_a_grown_board_keeps_up_with_stones_added_after_it_was_taken() -> None:
    grown = _grown(3)
    before = grown.board()
    grown.extend([Cell(q=-5, r=5, p=Player.O)])
    assert len(before.cells) == 3 and len(grown.board().cells) == 4
    assert orjson.loads(dump_packet(before))["cells"] == [
        c.model_dump(mode="json") for c in before.cells
    ]
    assert orjson.loads(dump_packet(grown.board()))["cells"][-1] == {"q": -5, "r": 5, "p": "o"}


def test_stones_added_raw_are_the_cells_and_bytes_pydantic_and_orjson_make() -> None:
    # ``add``'s stones get their Cell from a shared table and their JSON from a
    # format string: both must be what validating the Cell and encoding it give, for
    # any coordinates (negative, large, several digits) and either side.
    stones = [(-1234567, 89, Player.X), (0, -1, Player.O), (10**12, -(10**12), Player.O)]
    grown = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    for q, r, p in stones:
        grown.add(q, r, p)
    plain = Board(cells=[Cell(q=0, r=0, p=Player.X)] + [Cell(q=q, r=r, p=p) for q, r, p in stones])
    board = grown.board()
    assert board == plain
    assert all(type(cell) is Cell for cell in board.cells)
    assert [c.model_fields_set for c in board.cells] == [c.model_fields_set for c in plain.cells]
    assert dump_packet(board) == orjson.dumps(plain.model_dump(mode="json"))


def test_the_table_of_added_stones_cells_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_board, "_CELLS", {})
    monkeypatch.setattr(wire_board, "_CELLS_LIMIT", 10)
    grown = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    for q in range(30):
        grown.add(q, 99, Player.O)
        grown.board()  # the stone's Cell is made (and kept) when a board is asked for
        assert len(wire_board._CELLS) <= 10
    assert grown.board() == Board(
        cells=[Cell(q=0, r=0, p=Player.X)] + [Cell(q=q, r=99, p=Player.O) for q in range(30)]
    )


def test_stones_added_raw_are_encoded_when_a_board_is_asked_for_at_any_earlier_mark() -> None:
    # ``add`` only notes the stone: its Cell and JSON are made on demand, so a mark
    # taken between two adds must still give that board, once later stones exist.
    grown = GrowingBoard([Cell(q=0, r=0, p=Player.X)])
    marks = []
    for index in range(1, 9):
        grown.add(index, -index, Player.O if index % 2 else Player.X)
        marks.append(grown.mark())
        if index == 4:
            grown.board()  # encoded up to here; the rest stays raw until asked
    assert len(grown) == 9
    for mark in marks:
        then = grown.board_at(mark)
        plain = Board(cells=grown.cells[:mark])
        assert then == plain
        assert dump_packet(then) == dump_packet(plain)


def test_a_changed_copy_of_a_grown_board_is_encoded_from_its_own_cells() -> None:
    board = _grown(5).board()
    changed = board.model_copy(update={"cells": board.cells[:2]})
    assert orjson.loads(dump_packet(changed)) == {
        "cells": [c.model_dump(mode="json") for c in board.cells[:2]]
    }


def test_text_in_a_packet_never_stands_for_the_cells_of_a_grown_board() -> None:
    # Whatever a peer writes (here every control character and the word the
    # placeholder uses) is encoded as itself, and the board as its stones.
    tricky = "".join(chr(c) for c in range(32)) + "cells-"
    packet = SetupPacket(
        board=_grown(4).board(), game_id=tricky, player_x=RecordPlayer(name=tricky)
    )
    decoded = orjson.loads(dump_packet(packet))
    assert decoded["game_id"] == tricky and decoded["player_x"]["name"] == tricky
    assert len(decoded["board"]["cells"]) == 4


_coords = st.builds(Coord, q=st.integers(-(2**70), 2**70), r=st.integers(-50, 50))
_moves = st.builds(
    Move, side=st.sampled_from(Player), pieces=st.lists(_coords, min_size=1, max_size=2)
)
_seconds = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
_ms = st.none() | st.integers(0, 2**40)


_evaluations = st.none() | st.builds(
    PositionEvaluation,
    heuristic=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    win_in=st.none() | st.integers(-(2**40), 2**40),
)


@given(
    move=_moves,
    to_move=st.none() | st.sampled_from(Player),
    status=st.sampled_from(GameStatus),
    clock_x=_ms,
    clock_o=_ms,
    evaluation=_evaluations,
    extra=st.booleans(),
    considered=st.booleans(),
)
def test_a_compact_board_update_is_written_as_pydantic_would_write_it(
    move: Move,
    to_move: Player | None,
    status: GameStatus,
    clock_x: int | None,
    clock_o: int | None,
    evaluation: PositionEvaluation | None,
    extra: bool,
    considered: bool,
) -> None:
    # The compact stream's update has a path of its own (one per move of a watched
    # game); what it does not take (extra evaluation fields, considerations) goes the
    # general way. Either way, the same bytes.
    if extra and evaluation is not None:
        evaluation = PositionEvaluation.model_validate({**evaluation.model_dump(), "depth": 7})
    considerations = [MoveOption(pieces=[move.pieces[0], move.pieces[-1]])] if considered else None
    packet = BoardUpdatePacket(
        move=move,
        to_move=to_move,
        status=status,
        clock_x_ms=clock_x,
        clock_o_ms=clock_o,
        evaluation=evaluation,
        considerations=considerations,
    )
    assert dump_packet(packet) == dumping._dump_model(packet)


@given(
    side=st.sampled_from(Player),
    previous=st.lists(_moves, max_size=3),
    time_limit=st.none() | _seconds,
    clock_x=_ms,
    clock_o=_ms,
)
def test_a_move_request_is_written_as_pydantic_would_write_it(
    side: Player,
    previous: list[Move],
    time_limit: float | None,
    clock_x: int | None,
    clock_o: int | None,
) -> None:
    packet = MoveRequestPacket(
        side=side,
        previous=previous,
        move_time_limit=time_limit,
        clock_x_ms=clock_x,
        clock_o_ms=clock_o,
    )
    assert dump_packet(packet) == dumping._dump_model(packet)
