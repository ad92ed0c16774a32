"""The public bot API: BaseBot, MoveDecision, Deadline, capabilities builders."""

from __future__ import annotations

import pytest

from bot.bot import BaseBot, Deadline, MoveDecision, PositionEvaluation, cells_of
from bot.capabilities import (
    BwsV1AlphaCapability,
    Capabilities,
    Meta,
    default_capabilities,
)
from game.game import valid_placement_cells
from game.rules import Position
from models import Cell, Coord, Match, Player, dump_packet, parse_body


class PrototypeBot(BaseBot):
    """The example of the issue, as a prototype bot author wrote it."""

    @classmethod
    def capabilities(cls) -> Capabilities:
        caps = default_capabilities(BwsV1AlphaCapability(move_time_limit=True, evaluation=True))
        caps.meta = Meta(name="MyBot", tags=["minimax"])
        return caps

    def choose_move(self, cells: list[Cell], player: Player, match: Match) -> tuple[Coord, Coord]:
        candidates = valid_placement_cells(cells, match.view_distance)
        return candidates[0], candidates[1]

    def evaluate(self, cells: list[Cell], player: Player, match: Match) -> PositionEvaluation:
        return PositionEvaluation(heuristic=0.0)

    def on_config(self, depth: int | None, extras: dict[str, object]) -> None:
        self.depth = depth


def test_a_prototype_bot_plays_through_the_engine_api() -> None:
    bot = PrototypeBot()
    position = Position()
    deadline = Deadline(1.0)
    decision = MoveDecision.of(bot.play(position.copy(), Player.O, Match(), deadline))
    assert bot.deadline is deadline  # choose_move can poll it
    for stone in decision.pieces:
        position.place(stone.q, stone.r)
    assert len(position) == 3


def test_a_prototype_bot_declares_what_it_said() -> None:
    caps = PrototypeBot.capabilities()
    document = parse_body(Capabilities, dump_packet(caps))
    assert document.bws_v1_alpha is not None and document.bws_v1_alpha.evaluation
    assert document.meta is not None and document.meta.name == "MyBot"
    assert b'"v1-alpha"' in dump_packet(caps)


def test_a_prototype_bot_evaluates_and_takes_config() -> None:
    bot = PrototypeBot()
    evaluation = bot.evaluate_position(Position(), Player.O, Match(), Deadline(None))
    assert evaluation.heuristic == 0.0
    bot.on_config(4, {"x-style": "sharp"})
    assert bot.depth == 4


def test_a_bot_without_choose_move_says_what_to_override() -> None:
    with pytest.raises(NotImplementedError, match="must override choose_move or play"):
        BaseBot().play(Position(), Player.O, Match(), Deadline(None))


def test_cells_of_lists_every_stone_as_a_cell() -> None:
    position = Position()
    position.place(1, 0)
    assert cells_of(position) == [Cell(q=0, r=0, p=Player.X), Cell(q=1, r=0, p=Player.O)]


# ------------------------------------------------------------------ MoveDecision


@pytest.mark.parametrize(
    "answer",
    [
        (Coord(q=1, r=0), Coord(q=2, r=0)),
        [(1, 0), (2, 0)],
        ({"q": 1, "r": 0}, {"q": 2, "r": 0}),
        MoveDecision(pieces=(Coord(q=1, r=0), Coord(q=2, r=0))),
    ],
)
def test_every_answer_shape_becomes_the_same_decision(answer: object) -> None:
    decision = MoveDecision.of(answer)  # type: ignore[arg-type]
    assert decision.pieces == (Coord(q=1, r=0), Coord(q=2, r=0))


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([(1, 0)], "a move is 2 stones, the bot returned 1"),
        ([(1, 0), (2, 0), (3, 0)], "a move is 2 stones, the bot returned 3"),
        ([(1, 0), "2,0"], "a stone is a Coord"),
        ([(1, 0), (2.5, 0)], "valid integer"),
    ],
)
def test_a_malformed_answer_is_a_clear_error(answer: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MoveDecision.of(answer)  # type: ignore[arg-type]


@pytest.mark.parametrize("stone", [(True, 0), (1.0, 0), (1, False)])
def test_a_stone_equal_to_a_known_one_but_not_int_is_still_refused(stone: object) -> None:
    MoveDecision.of(((1, 0), (2, 0)))  # (1, 0) is now known: its Coord is shared
    with pytest.raises(ValueError, match="valid integer"):
        MoveDecision.of((stone, (2, 0)))


def test_tuple_answers_give_equal_coords_on_every_call() -> None:
    first = MoveDecision.of(((1, 0), (2, 0)))
    again = MoveDecision.of(((1, 0), (2, 0)))
    assert first.pieces == again.pieces == (Coord(q=1, r=0), Coord(q=2, r=0))


def test_a_decision_becomes_a_wire_move_option() -> None:
    decision = MoveDecision(
        pieces=(Coord(q=1, r=0), Coord(q=2, r=0)), evaluation=PositionEvaluation(win_in=-3)
    )
    option = decision.to_option()
    assert option.pieces == [Coord(q=1, r=0), Coord(q=2, r=0)]
    assert option.evaluation == PositionEvaluation(win_in=-3)


# ----------------------------------------------------------------------- Deadline


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_deadline_counts_down_and_expires() -> None:
    clock = FakeClock()
    deadline = Deadline(2.0, clock=clock)
    assert deadline.remaining() == 2.0 and not deadline.expired
    clock.now += 1.5
    assert deadline.remaining() == pytest.approx(0.5)
    clock.now += 0.5
    assert deadline.expired and deadline.remaining() == 0.0
    assert deadline.ends_at == 102.0


def test_a_cancelled_deadline_is_expired_at_once() -> None:
    deadline = Deadline(None)
    assert not deadline.expired
    deadline.cancel()
    assert deadline.expired and deadline.cancelled and deadline.remaining() == 0.0


def test_a_deadline_keeps_the_best_move_reported() -> None:
    deadline = Deadline(None)
    assert deadline.best is None
    deadline.report([(1, 0), (2, 0)])
    deadline.report([(3, 0), (4, 0)])
    assert deadline.best is not None
    assert deadline.best.pieces == (Coord(q=3, r=0), Coord(q=4, r=0))


# ------------------------------------------------------------------- capabilities


def test_default_capabilities_offer_both_apis_with_base_features() -> None:
    caps = default_capabilities()
    assert caps.bws_v1_alpha is not None and not caps.bws_v1_alpha.move_time_limit
    assert caps.stateless_v1_alpha is not None
    assert caps.bws_v1_alpha.api_root == "bws/v1-alpha"
    assert caps.stateless_v1_alpha.api_root == "stateless/v1-alpha"


def test_the_stateless_api_honours_time_limits_when_the_socket_does() -> None:
    caps = default_capabilities(BwsV1AlphaCapability(move_time_limit=True))
    assert caps.stateless_v1_alpha is not None and caps.stateless_v1_alpha.move_time_limit


def test_the_stateless_api_can_be_left_out() -> None:
    caps = default_capabilities(stateless=False)
    assert caps.stateless is None
    assert b"stateless" not in dump_packet(caps)
