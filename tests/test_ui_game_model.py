"""``ui.game_model.GameModel``: a game fed by spectator packets or a record (no Qt,
no sockets; time is passed in)."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from game import notation
from game.hexgrid import Hex
from game.rules import Position
from models import (
    Board,
    BoardUpdatePacket,
    Cell,
    Coord,
    EndCause,
    EndPacket,
    GameRecord,
    GameResult,
    GameStatus,
    Match,
    Move,
    Player,
    PlayerType,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
    SetupPacket,
)
from ui.game_model import CHECKPOINT_EVERY, GameModel, InconsistentGameError

# ------------------------------------------------------------------- helpers

# O wins with (1,0)..(6,0); X plays up the r axis.
WINNING_GAME: list[tuple[str, list[Hex]]] = [
    ("o", [(1, 0), (2, 0)]),
    ("x", [(0, 1), (0, 2)]),
    ("o", [(3, 0), (4, 0)]),
    ("x", [(-1, 1), (-1, 2)]),
    ("o", [(5, 0), (6, 0)]),
]


def cells(stones: Iterable[tuple[int, int, str]]) -> Board:
    return Board(cells=[Cell(q=q, r=r, p=Player(side)) for q, r, side in stones])


def coords(hexes: Iterable[Hex]) -> list[Coord]:
    return [Coord(q=q, r=r) for q, r in hexes]


def recorded(side: str, hexes: list[Hex], **extra: object) -> RecordedMove:
    return RecordedMove.model_validate({"side": side, "pieces": coords(hexes), **extra})


def spectator_setup(
    referee: Position,
    moves: list[RecordedMove],
    *,
    match: Match | None = None,
    clocks: tuple[int | None, int | None] = (None, None),
) -> SetupPacket:
    return SetupPacket(
        board=cells(referee.stones),
        game_id="g1",
        moves=moves,
        player_x=RecordPlayer(name="threat", type=PlayerType.BOT),
        player_o=RecordPlayer(name="Ada", type=PlayerType.HUMAN),
        match=match or Match(),
        to_move=Player(referee.to_move),
        status=GameStatus.IN_PROGRESS if moves else GameStatus.WAITING,
        clock_x_ms=clocks[0],
        clock_o_ms=clocks[1],
    )


def update(
    referee: Position,
    side: str,
    hexes: list[Hex],
    *,
    clocks: tuple[int | None, int | None] = (None, None),
    evaluation: PositionEvaluation | None = None,
) -> BoardUpdatePacket:
    """Play ``hexes`` on ``referee`` and the ``board_update`` a spectator gets for it."""
    for hex_ in hexes:
        referee.place(*hex_)
    over = referee.outcome is not None
    status = GameStatus.IN_PROGRESS
    if over:
        status = (
            GameStatus.O_WINS
            if referee.outcome and referee.outcome.winner == "o"
            else (GameStatus.X_WINS)
        )
    return BoardUpdatePacket(
        board=cells(referee.stones),
        move=Move(side=Player(side), pieces=coords(hexes)),
        to_move=None if over else Player(referee.to_move),
        status=status,
        clock_x_ms=clocks[0],
        clock_o_ms=clocks[1],
        evaluation=evaluation,
    )


def winning_record() -> GameRecord:
    return GameRecord(
        game_id="g9",
        player_x=RecordPlayer(name="center", type=PlayerType.BOT),
        player_o=RecordPlayer(name="Ada", type=PlayerType.HUMAN),
        moves=[recorded(side, hexes) for side, hexes in WINNING_GAME],
        result=GameResult(winner=Player.O, reason=ResultReason.WIN),
    )


# --------------------------------------------------------------- spectating


def test_spectating_a_whole_game_from_its_start() -> None:
    referee = Position()
    model = GameModel()
    model.apply(spectator_setup(referee, []), now=0.0)
    assert model.game_id == "g1" and model.live
    assert model.player_o.name == "Ada" and model.player_x.type is PlayerType.BOT
    assert (model.status, model.to_move) == (GameStatus.WAITING, "o")
    assert model.stones_at(0) == {(0, 0): "x"} and model.last_move_at(0) == ()
    for number, (side, hexes) in enumerate(WINNING_GAME, start=1):
        model.apply(update(referee, side, hexes), now=float(number))
        assert len(model.moves) == number
        assert model.stones_at(number) == {(q, r): s for q, r, s in referee.stones}
        assert model.last_move_at(number) == tuple(hexes)
    assert model.status is GameStatus.O_WINS and model.to_move is None
    assert model.winning_line() == ()  # not before the end says how the game ended
    end = EndPacket(winner=Player.O, reason=ResultReason.WIN, board=cells(referee.stones))
    model.apply(end, now=10.0)
    assert model.result == GameResult(winner=Player.O, reason=ResultReason.WIN)
    assert not model.live and model.over
    assert model.winning_line() == tuple((q, 0) for q in range(1, 7))
    assert model.legal_at(len(model.moves)) == frozenset()
    assert model.stones_at(1) == {(0, 0): "x", (1, 0): "o", (2, 0): "o"}


def test_a_late_spectator_gets_the_history_and_follows_on() -> None:
    referee = Position()
    history = []
    for side, hexes in WINNING_GAME[:3]:
        referee.place_move(*hexes)
        history.append(recorded(side, hexes, clock_ms=1000))
    model = GameModel()
    model.apply(spectator_setup(referee, history), now=0.0)
    assert len(model.moves) == 3 and model.to_move == "x"
    assert model.status is GameStatus.IN_PROGRESS
    assert model.setup == [Cell(q=0, r=0, p=Player.X)]
    assert model.stones_at(3) == {(q, r): s for q, r, s in referee.stones}
    model.apply(update(referee, *WINNING_GAME[3]), now=1.0)
    assert model.move_label(4) == "4. X [-1,1] [-1,2]"
    assert model.to_move == "o"


def test_a_split_move_shows_its_first_stone_then_becomes_one_move() -> None:
    referee = Position()
    model = GameModel()
    model.apply(spectator_setup(referee, []), now=0.0)
    model.apply(update(referee, "o", [(1, 0)]), now=1.0)
    assert (model.moves, model.pending_stones) == ([], ((1, 0),))
    assert model.stones_at(0) == {(0, 0): "x", (1, 0): "o"}
    assert model.last_move_at(0) == ((1, 0),)
    assert (1, 0) not in model.legal_at(0) and model.to_move == "o"
    model.apply(update(referee, "o", [(2, 0)]), now=2.0)
    assert model.pending_stones == ()
    assert model.moves[0].pieces == coords([(1, 0), (2, 0)])
    assert model.last_move_at(1) == ((1, 0), (2, 0))
    assert model.to_move == "x"


def test_a_late_spectator_sees_the_first_stone_of_a_split_move() -> None:
    referee = Position()
    referee.place_move((1, 0), (2, 0))
    history = [recorded("o", [(1, 0), (2, 0)])]
    referee.place(0, 1)  # X's first stone, the second not sent yet
    model = GameModel()
    model.apply(spectator_setup(referee, history), now=0.0)
    assert model.setup == [Cell(q=0, r=0, p=Player.X)]
    assert len(model.moves) == 1 and model.pending_stones == ((0, 1),)
    model.apply(update(referee, "x", [(0, 2)]), now=1.0)
    assert model.moves[1].pieces == coords([(0, 1), (0, 2)])


def test_a_stream_that_contradicts_itself_is_refused() -> None:
    referee = Position()
    model = GameModel()
    model.apply(spectator_setup(referee, []), now=0.0)
    bad = BoardUpdatePacket(
        board=cells(referee.stones),
        move=Move(side=Player.O, pieces=coords([(0, 0), (1, 0)])),
        to_move=Player.X,
        status=GameStatus.IN_PROGRESS,
    )
    with pytest.raises(InconsistentGameError, match="move 1 cannot be played"):
        model.apply(bad, now=1.0)
    assert model.moves == [] and model.stones_at(0) == {(0, 0): "x"}
    out_of_turn = bad.model_copy(update={"move": Move(side=Player.X, pieces=coords([(1, 0)]))})
    with pytest.raises(InconsistentGameError, match="o moves"):
        model.apply(out_of_turn, now=1.0)


def test_a_forfeit_has_no_winning_line_and_keeps_its_cause() -> None:
    referee = Position()
    model = GameModel()
    model.apply(spectator_setup(referee, []), now=0.0)
    model.apply(update(referee, "o", [(1, 0), (2, 0)]), now=1.0)
    end = EndPacket(winner=Player.O, reason=ResultReason.FORFEIT, detail="timeout")
    model.apply(end, now=2.0)
    assert model.result == GameResult(
        winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT
    )
    assert model.end_detail == "timeout" and model.winning_line() == ()
    assert model.status is GameStatus.O_WINS and model.to_move is None


def test_an_unknown_forfeit_cause_is_kept_as_text() -> None:
    model = GameModel()
    model.apply(spectator_setup(Position(), []), now=0.0)
    model.apply(EndPacket(winner=Player.X, reason=ResultReason.FORFEIT, detail="meteor"), now=1.0)
    assert model.end_detail == "meteor"
    assert model.result is not None and model.result.winner is Player.X


# -------------------------------------------------------------------- clocks


def test_the_clock_of_the_side_to_move_counts_down_while_live() -> None:
    match = Match(clock_type="match", clock=60)
    referee = Position()
    model = GameModel()
    model.apply(spectator_setup(referee, [], match=match, clocks=(60000, 60000)), now=100.0)
    # Waiting for the seats: nothing runs yet.
    assert model.clock_remaining_ms("o", now=105.0) == 60000
    model.apply(update(referee, "o", [(1, 0), (2, 0)], clocks=(60000, 57500)), now=110.0)
    assert model.moves[0].clock_ms == 57500
    assert model.clock_remaining_ms("x", now=110.0) == 60000
    assert model.clock_remaining_ms("x", now=112.25) == 57750
    assert model.clock_remaining_ms("o", now=112.25) == 57500  # not its turn
    assert model.clock_remaining_ms("x", now=200.0) == 0  # never below zero
    assert model.clock_remaining_ms("x", now=109.0) == 60000  # a now before the report
    model.apply(EndPacket(winner=Player.O, reason=ResultReason.FORFEIT, detail="resign"), 115.0)
    assert model.clock_remaining_ms("x", now=115.0) == 55000
    assert model.clock_remaining_ms("x", now=300.0) == 55000  # frozen at the end


def test_a_game_without_clock_has_no_remaining_time() -> None:
    model = GameModel()
    model.apply(spectator_setup(Position(), []), now=0.0)
    assert model.clock_remaining_ms("o", now=5.0) is None
    assert model.clock_remaining_ms("x", now=5.0) is None


def test_a_record_shows_the_last_clock_of_each_side_without_counting() -> None:
    record = GameRecord(
        match=Match(clock_type="match", clock=60),
        moves=[
            recorded("o", [(1, 0), (2, 0)], clock_ms=58000),
            recorded("x", [(0, 1), (0, 2)], clock_ms=59000),
            recorded("o", [(3, 0), (4, 0)], clock_ms=50000),
        ],
    )
    model = GameModel.from_record(record)
    assert not model.live and model.status is GameStatus.IN_PROGRESS
    assert model.clock_remaining_ms("o", now=0.0) == 50000
    assert model.clock_remaining_ms("x", now=1e6) == 59000


# ------------------------------------------------------------------- replay


def test_a_replay_from_a_record() -> None:
    record = winning_record()
    model = GameModel.from_record(record)
    assert model.game_id == "g9" and model.player_x.name == "center"
    assert model.status is GameStatus.O_WINS and not model.live and model.to_move is None
    assert model.winning_line() == tuple((q, 0) for q in range(1, 7))
    assert [model.move_label(i) for i in range(3)] == [
        "Start",
        "1. O [1,0] [2,0]",
        "2. X [0,1] [0,2]",
    ]
    assert model.to_record() == record
    with pytest.raises(IndexError):
        model.stones_at(6)
    with pytest.raises(IndexError):
        model.move_label(-1)


def test_a_replay_from_notation_text() -> None:
    text = notation.dumps(winning_record())
    model = GameModel.from_record(notation.loads(text))
    assert model.result is not None and model.result.winner is Player.O
    assert model.winning_line() == tuple((q, 0) for q in range(1, 7))
    assert model.stones_at(2) == {(0, 0): "x", (1, 0): "o", (2, 0): "o", (0, 1): "x", (0, 2): "x"}
    assert notation.dumps(model.to_record()) == text


def test_a_game_that_ends_on_a_winning_first_stone() -> None:
    moves = [*WINNING_GAME[:4], ("o", [(5, 0)]), ("x", [(-2, 1), (-2, 2)])]
    stones = [recorded(side, hexes) for side, hexes in moves[:4]]
    stones += [recorded("o", [(5, 0), (0, -1)])]  # no line yet: 5 in a row
    record = GameRecord(moves=[*stones, recorded("x", [(-2, 1), (-2, 2)]), recorded("o", [(6, 0)])])
    model = GameModel.from_record(record.model_copy(update={"result": None}))
    assert model.winning_line() == ()  # no result, no line shown
    final = GameModel.from_record(
        record.model_copy(update={"result": GameResult(winner=Player.O, reason=ResultReason.WIN)})
    )
    assert final.winning_line() == tuple((q, 0) for q in range(1, 7))
    assert final.move_label(7) == "7. O [6,0]" and final.last_move_at(7) == ((6, 0),)


def test_evaluations_are_the_latest_given_up_to_a_move() -> None:
    record = GameRecord(
        moves=[
            recorded("o", [(1, 0), (2, 0)], evaluation={"heuristic": -0.25}),
            recorded("x", [(0, 1), (0, 2)]),
        ]
    )
    model = GameModel.from_record(record)
    assert model.evaluation_at(0) is None
    assert model.latest_evaluation() == PositionEvaluation(heuristic=-0.25)
    referee = Position()
    referee.place_move((1, 0), (2, 0))
    referee.place_move((0, 1), (0, 2))
    model2 = GameModel()
    model2.apply(spectator_setup(referee, list(record.moves)), now=0.0)
    model2.apply(
        update(referee, "o", [(3, 0), (4, 0)], evaluation=PositionEvaluation(win_in=-3)), 1.0
    )
    assert model2.latest_evaluation() == PositionEvaluation(win_in=-3)


# ------------------------------------------------------------------ long games


def long_record(moves: int, seed: int = 7) -> GameRecord:
    """A legal game of ``moves`` random moves with no line (win distance 20)."""
    rng = random.Random(seed)
    match = Match(win_distance=20, view_distance=3)
    position = Position(match.view_distance, match.win_distance)
    played = []
    for _ in range(moves):
        side = position.to_move
        hexes = []
        for _ in range(2):
            cell = rng.choice(sorted(position.legal_cells()))
            position.place(*cell)
            hexes.append(cell)
        played.append(recorded(side, hexes))
    assert position.outcome is None
    return GameRecord(match=match, moves=played)


def test_a_thousand_stone_game_scrubs_to_every_position() -> None:
    record = long_record(500)
    model = GameModel.from_record(record)
    expected = {(0, 0): "x"}
    for index in range(len(record.moves) + 1):
        assert model.stones_at(index) == expected
        if index < len(record.moves):
            move = record.moves[index]
            for piece in move.pieces:
                expected[piece.as_tuple()] = move.side.value
    # Legal cells around the checkpoints, against positions built from scratch.
    for index in (0, 1, CHECKPOINT_EVERY - 1, CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1, 333, 500):
        stones = model.stones_at(index)
        fresh = Position(
            3,
            20,
            setup=[(q, r, side) for (q, r), side in stones.items()],
            to_move="o" if index % 2 == 0 else "x",
        )
        assert model.legal_at(index) == frozenset(fresh.legal_cells())
    # Scrubbing backwards reuses what was built.
    assert model.legal_at(333) == model.legal_at(333)
    assert len(model.legal_at(499)) > len(model.legal_at(1))
