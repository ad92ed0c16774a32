"""HTTTX notation: the specs' examples, round trips, malformed text and illegal games."""

from __future__ import annotations

import doctest
import re
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st

import game.notation
import game.notation_writer
from game.notation import Info, NotatedTurn, Notation, NotationError, Visual, dumps, loads, parse
from game.rules import InvalidSetupError, Position, Termination
from models import (
    NOTATION_FIELD_TAGS,
    Cell,
    Coord,
    EndCause,
    GameRecord,
    GameResult,
    Match,
    MoveOption,
    Player,
    PlayerType,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
)

Hex = tuple[int, int]
README = Path(__file__).resolve().parent.parent / "README.md"

# The causes of the forfeits the server hands out (a seat's failure, or a resignation).
FORFEIT_CAUSES = [
    EndCause.TIMEOUT,
    EndCause.RESIGN,
    EndCause.ILLEGAL_MOVE,
    EndCause.PROTOCOL_ERROR,
    EndCause.DISCONNECT,
    EndCause.NO_SHOW,
    EndCause.STALL,
]

# ------------------------------------------------------------------ helpers


def played(record: GameRecord) -> list[tuple[str, list[Hex]]]:
    """The moves of a record as (side, stones), for compact assertions."""
    return [(move.side.value, [(p.q, p.r) for p in move.pieces]) for move in record.moves]


def clocks(record: GameRecord) -> list[int | None]:
    return [move.clock_ms for move in record.moves]


def move(side: Player, *stones: Hex, **fields: object) -> RecordedMove:
    return RecordedMove(
        side=side,
        pieces=[Coord(q=q, r=r) for q, r in stones],
        **fields,
    )


def tag_pairs(text: str) -> set[tuple[str, str]]:
    return {(tag.key, tag.value) for tag in parse(text).tags}


def effective_info(turn: NotatedTurn) -> tuple[int | None, tuple[str, int] | None]:
    """A turn's clock and evaluation as the record keeps them: the last stone's wins."""
    clock: int | None = None
    evaluation: tuple[str, int] | None = None
    for notated in turn.moves:
        info = notated.info
        if info is None:
            continue
        if info.clock_ms is not None:
            clock = info.clock_ms
        if info.open_evaluation is not None:
            evaluation = ("%", info.open_evaluation)
        elif info.closed_evaluation is not None:
            evaluation = ("#", info.closed_evaluation)
    return clock, evaluation


def main_line(notation: Notation) -> list[tuple[int, list[Hex | None], object]]:
    return [
        (turn.number, [m.stone for m in turn.moves], effective_info(turn))
        for turn in notation.main_line
    ]


# The main line shared by most of the v2 README's examples: X gets 6 in a row on r = 0.
WON_BY_X = [
    ("o", [(-1, 0), (0, -1)]),
    ("x", [(1, 0), (2, 0)]),
    ("o", [(1, -2), (2, -3)]),
    ("x", [(3, 0), (4, 0)]),
    ("o", [(1, -1), (2, -2)]),
    ("x", [(5, 0)]),
]
X_WINS = GameResult(winner=Player.X, reason=ResultReason.WIN)


# ------------------------------------------------ our summary (../shared/notation.md)

SHARED_EXAMPLE = """\
    version[2] name[Final] playercross[alpha] playercircle[beta] timecontrol[60+5]
    endreason[win] winner[cross] utcdatetime[2026-11-22 12:00:00];
    1. [-1,0] [0,-1] {@4500:%-1};
    2. [1,0] [2,0];
    3. [1,-2] [2,-3];
    4. [3,0] [4,0];
    5. [1,-1] [2,-2];
    6. [5,0] [/];
"""


def test_shared_example_reads_every_tag_into_its_field() -> None:
    record = loads(SHARED_EXAMPLE)
    assert record.name == "Final"
    assert record.player_x.name == "alpha"
    assert record.player_o.name == "beta"
    assert record.match == Match(clock_type="incremental", clock=60, increment=5)
    assert record.started_at == datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
    assert record.tags == {}


def test_shared_example_reads_moves_clock_evaluation_and_result() -> None:
    record = loads(SHARED_EXAMPLE)
    assert played(record) == WON_BY_X
    assert clocks(record) == [4500, None, None, None, None, None]
    assert record.moves[0].evaluation == PositionEvaluation(heuristic=-0.01)
    assert record.result == X_WINS


def test_shared_example_is_written_back_with_the_same_tags_and_main_line() -> None:
    written = dumps(loads(SHARED_EXAMPLE))
    assert tag_pairs(written) == tag_pairs(SHARED_EXAMPLE)
    assert main_line(parse(written)) == main_line(parse(SHARED_EXAMPLE))


def test_shared_example_standard_setup_spelled_out_changes_nothing() -> None:
    spelled_out = "version[2];\no : x [0,0] ;\n1. [1,0][0,1];"
    assert loads(spelled_out) == loads("version[2];\n1. [1,0][0,1];")


# --------------------------------------------------- the v2 README's "Examples"

README_RESIGNED = """\
version[2]
name[GameName 0]
platform[WebsiteXY 0]
playercross[BlueWhale 0]
playercircle[GreenSnake 0]
timecontrol[Fischer 60+5]
endreason[resign]
winner[cross]
datetime[2026-10-06 12:00:00];
1. [1,-1] [/];
"""

README_O_WINS = """\
version[2];
1. [-1,0] [0,-1] ;
2. [1,0]  [2,0]  ;
3. [1,-2] [2,-3] ;
4. [3,0]  [4,0]  ;
5. [3,-4] [-2,1] ;
"""

README_WON = """\
version[2];
1. [-1,0] [0,-1] ;
2. [1,0]  [2,0]  ;
3. [1,-2] [2,-3] ;
4. [3,0]  [4,0]  ;
5. [1,-1] [2,-2] ;
6. [5,0]  [/]    ;
"""

README_CLOCKS = """\
version[2];
1. [-1,0] [0,-1] {@4500} ;
2. [1,0]  [2,0]  {@4050} ;
3. [1,-2] [2,-3] {@4200} ;
4. [3,0]  [4,0]  {@3550} ;
5. [1,-1] [2,-2] {@3100} ;
6. [5,0]  [/]    {@1050} ;
"""

README_HIGHLIGHTS = """\
version[2];
1. [-1,0] [0,-1] ;
2. [1,0]  [2,0]  ;
3. [1,-2] [2,-3] ;
4. [3,0]  [4,0]  <3,-4> <-2,1> ;
5. [1,-1] [2,-2] <5,0:#X>      ;
6. [5,0]  [/]    ;
"""

README_EVALUATIONS = """\
version[2];
1. [-1,0] {@4505} [0,-1] { @4500 : %-1 } ;
2. [1,0]  {@4055} [2,0]  { @4050 : %2  } ;
3. [1,-2] {@4205} [2,-3] { @4200 : %-5 } ;
4. [3,0]  {@3555} [4,0]  { @3550 : #-1 } ;
5. [1,-1] {@3105} [2,-2] { @3100 : #1  } ;
6. [5,0]  {@1050} [/] ;
"""

README_LABELS = """\
version[2];
1. [-1,0] {@4505} [0,-1] { @4500 : %-1 } ;
2. [1,0]  {@4055} [2,0]  { @4050 : %2  } ;
3. [1,-2] {@4205} [2,-3] { @4200 : %-5 } ;
4. [3,0]  {@3555} [4,0]  { @3550 : #-1 } ;
5. [1,-1] {@3105} [2,-2] { @3100 : #1  } ;
6. [5,0]  {@1050}
     <-1,0:$1 > <0,-1:$1> <1,0:$1> <2,0:$1>
     <1,-2:$2 > <2,-3:$2> <3,0:$2> <4,0:$2>
     <1,-1:$3 > <2,-2:$3> <5,0:$3>
   [/];
"""

README_VARIATIONS = """\
version[2];
1. [-1,0] [0,-1]              ;
2. [1,0]  [2,0]
  ( 2. [1,-2]  [2,-2]     ;
    3. [-1,-1] [-1,-2]    ;
    4. [-1,1]  [1,-1]
      ( 4. [-1,-3] [/]; ) ; )

  ( 2. [-2,1]  [2,-3]     ;
    3. [-1,-1] [/]        ; ) ;

3. [1,-2] [2,-3]              ;
4. [3,0]  [4,0]               ;
5. [1,-1] [2,-2]              ;
6. [5,0]  [/]                 ;
"""

README_COMPACT = """\
version[2];
1. [-1,0][0,-1]; 2. [1,0][2,0] (2. [1,-2][2,-2]; 3. [-1,-1][-1,-2];
4. [-1,1][1,-1] (4. [-1,-3][1,-1];);) (2. [-2,1][2,-3]; 3. [-1,-1][1,-1];);
3. [1,-2][2,-3]; 4. [3,0][4,0]<1,-1><5,0>; 5. [1,-1][2,-2]<1,-1:$1>;
6. [5,0][/]<0,0:#X:$1> ;
"""

README_EXAMPLES = [
    README_RESIGNED,
    README_O_WINS,
    README_WON,
    README_CLOCKS,
    README_HIGHLIGHTS,
    README_EVALUATIONS,
    README_LABELS,
    README_VARIATIONS,
    README_COMPACT,
]


def test_readme_resigned_game_is_a_forfeit_by_resignation_after_one_stone() -> None:
    record = loads(README_RESIGNED)
    assert played(record) == [("o", [(1, -1)])]
    assert record.result == GameResult(
        winner=Player.X, reason=ResultReason.FORFEIT, cause=EndCause.RESIGN
    )
    assert (record.name, record.player_x.name, record.player_o.name) == (
        "GameName 0",
        "BlueWhale 0",
        "GreenSnake 0",
    )


def test_readme_named_time_control_sets_the_clock_and_is_kept_verbatim() -> None:
    record = loads(README_RESIGNED)
    assert record.match == Match(clock_type="incremental", clock=60, increment=5)
    assert record.tags == {
        "platform": "WebsiteXY 0",
        "timecontrol": "Fischer 60+5",
        "datetime": "2026-10-06 12:00:00",  # not the standard key: kept, not read
    }
    assert record.started_at is None


def test_readme_second_example_is_won_by_o_on_the_diagonal() -> None:
    # No result tags, but O's last stones complete [-2,1] .. [3,-4] along (1,-1).
    record = loads(README_O_WINS)
    assert played(record) == [
        ("o", [(-1, 0), (0, -1)]),
        ("x", [(1, 0), (2, 0)]),
        ("o", [(1, -2), (2, -3)]),
        ("x", [(3, 0), (4, 0)]),
        ("o", [(3, -4), (-2, 1)]),
    ]
    assert record.result == GameResult(winner=Player.O, reason=ResultReason.WIN)


def test_readme_won_game_infers_the_win_from_the_board() -> None:
    record = loads(README_WON)
    assert played(record) == WON_BY_X
    assert record.result == X_WINS


def test_readme_clocks_go_to_each_move_and_the_terminator_clock_to_the_winning_move() -> None:
    record = loads(README_CLOCKS)
    assert played(record) == WON_BY_X
    assert clocks(record) == [4500, 4050, 4200, 3550, 3100, 1050]
    assert all(m.evaluation is None for m in record.moves)


def test_readme_highlights_are_parsed_onto_their_stones() -> None:
    notation = parse(README_HIGHLIGHTS)
    assert notation.main_line[3].moves[1].visuals == (
        Visual(3, -4, "N", None),
        Visual(-2, 1, "N", None),
    )
    assert notation.main_line[4].moves[1].visuals == (Visual(5, 0, "X", None),)
    assert played(loads(README_HIGHLIGHTS)) == WON_BY_X


def test_readme_info_on_both_stones_keeps_the_second_stones_clock_and_evaluation() -> None:
    record = loads(README_EVALUATIONS)
    assert played(record) == WON_BY_X
    assert clocks(record) == [4500, 4050, 4200, 3550, 3100, 1050]
    assert [m.evaluation for m in record.moves] == [
        PositionEvaluation(heuristic=-0.01),
        PositionEvaluation(heuristic=0.02),
        PositionEvaluation(heuristic=-0.05),
        PositionEvaluation(win_in=-1),
        PositionEvaluation(win_in=1),
        None,
    ]
    assert record.result == X_WINS


def test_readme_labels_with_inner_spaces_are_parsed() -> None:
    visuals = parse(README_LABELS).main_line[5].moves[0].visuals
    assert [(v.q, v.r, v.label) for v in visuals] == [
        (-1, 0, "1"),
        (0, -1, "1"),
        (1, 0, "1"),
        (2, 0, "1"),
        (1, -2, "2"),
        (2, -3, "2"),
        (3, 0, "2"),
        (4, 0, "2"),
        (1, -1, "3"),
        (2, -2, "3"),
        (5, 0, "3"),
    ]
    assert all(v.highlight is None for v in visuals)  # a label alone is not highlighted
    assert loads(README_LABELS) == loads(README_EVALUATIONS)


def test_readme_variations_leave_the_main_line_outside_parentheses() -> None:
    assert played(loads(README_VARIATIONS)) == WON_BY_X
    assert loads(README_VARIATIONS).result == X_WINS


def test_readme_variations_nest_and_start_with_the_turn_they_replace() -> None:
    turn_2 = parse(README_VARIATIONS).main_line[1]
    first, second = turn_2.variations
    assert [(t.number, [m.stone for m in t.moves]) for t in first] == [
        (2, [(1, -2), (2, -2)]),
        (3, [(-1, -1), (-1, -2)]),
        (4, [(-1, 1), (1, -1)]),
    ]
    nested = first[2].variations[0]
    assert [(t.number, [m.stone for m in t.moves]) for t in nested] == [(4, [(-1, -3), None])]
    assert [(t.number, [m.stone for m in t.moves]) for t in second] == [
        (2, [(-2, 1), (2, -3)]),
        (3, [(-1, -1), None]),
    ]


def test_readme_compact_example_reads_like_the_spaced_one() -> None:
    notation = parse(README_COMPACT)
    assert played(loads(README_COMPACT)) == WON_BY_X
    assert len(notation.main_line[1].variations) == 2
    assert notation.main_line[3].moves[1].visuals == (
        Visual(1, -1, "N", None),
        Visual(5, 0, "N", None),
    )
    assert notation.main_line[4].moves[1].visuals == (Visual(1, -1, None, "1"),)
    assert notation.main_line[5].moves[1].visuals == (Visual(0, 0, "X", "1"),)


@pytest.mark.parametrize("example", README_EXAMPLES)
def test_readme_examples_are_written_back_with_the_same_main_line_and_tags(example: str) -> None:
    written = dumps(loads(example))
    assert main_line(parse(written)) == main_line(parse(example))
    # Our writer may add the result it inferred from the board, nothing else.
    added = tag_pairs(written) - tag_pairs(example)
    assert tag_pairs(example) <= tag_pairs(written)
    assert {key for key, _ in added} <= {"endreason", "winner"}


# ---------------------------------------------- the v2 README's fragments in its text


def test_readme_turn_fragment_without_header_reads_as_version_1() -> None:
    assert played(loads("1. [1,0] [0,1];")) == [("o", [(1, 0), (0, 1)])]
    assert parse("1. [1,0] [0,1];").version == 1


def test_readme_variation_fragment_parses_inside_a_game_that_reaches_turn_3() -> None:
    # The README shows "3. [1,0][0,1] (3. [1,1][0,-1];) ;" alone; a game must start at 1.
    text = "version[2];\n1. [2,2][3,3];\n2. [-2,-2][-3,-3];\n3. [1,0][0,1] (3. [1,1][0,-1];) ;"
    turn_3 = parse(text).main_line[2]
    assert [m.stone for m in turn_3.variations[0][0].moves] == [(1, 1), (0, -1)]
    assert played(loads(text))[2] == ("o", [(1, 0), (0, 1)])


def test_readme_variation_fragment_alone_is_rejected_for_starting_at_turn_3() -> None:
    with pytest.raises(NotationError, match="expected turn 1, found 3"):
        loads("version[2];\n3. [1,0][0,1] (3. [1,1][0,-1];) ;")


def test_readme_variations_section_example_has_a_four_turn_main_line() -> None:
    text = """version[2];
1. [-1,0] [0,-1]                 ;
2. [1,0]  [2,0]
  ( 2. [1,-2]  [2,-2]        ;
    3. [-1,-1] [-1,-2]       ;
    4. [-1,1]  [1,-1]
      ( 4. [-1,-3] [1,-1]; ) ; )

  ( 2. [-2,1]  [2,-3]        ;
    3. [-1,-1] [1,-1]        ; ) ;

3. [1,-2] [2,-3]                 ;
4. [3,0]  [4,0]                  ;
"""
    assert played(loads(text)) == WON_BY_X[:4]
    assert loads(text).result is None


def test_readme_terminator_info_and_visuals_before_or_after_it_mean_the_same() -> None:
    after = loads("version[2];\n1. [1,1] [/] { @1000 } <1,1> <1,0> ;")
    before = loads("version[2];\n1. [1,1] { @1000 } <1,1> <1,0> [/] ;")
    assert after == before
    assert played(after) == [("o", [(1, 1)])]
    assert clocks(after) == [1000]


def test_readme_setup_with_x_first_sets_stones_and_side_to_move() -> None:
    record = loads("version[2];\nx [1,0] [0,1] : o [0,0] ;")
    assert record.setup == [
        Cell(q=1, r=0, p=Player.X),
        Cell(q=0, r=1, p=Player.X),
        Cell(q=0, r=0, p=Player.O),
    ]
    assert record.first_to_move is Player.X
    assert record.moves == []


def test_setup_side_written_first_makes_odd_turns() -> None:
    record = loads("version[2];\nx [1,0] [0,1] : o [0,0] ;\n1. [2,0] [3,0];\n2. [-1,0] [-2,0];")
    assert played(record) == [("x", [(2, 0), (3, 0)]), ("o", [(-1, 0), (-2, 0)])]


def test_setup_visuals_are_kept_on_the_setup() -> None:
    setup = parse("version[2];\no : x [0,0] <1,0:#O> ;").setup
    assert setup is not None
    assert setup.visuals == (Visual(1, 0, "O", None),)


# ------------------------------------------------------------------ version 1

V1_EXAMPLE = """\
name[GameName 0]platform[WebsiteXY 0]playercross[BlueWhale 0]playercircle[GreenSnake 0]\
timecontrol[Fischer 60+5]endreason[win]winner[cross]datetime[2026-03-18 23:20:14];
1. [-1,0][0,1];
2. [-1,1][-2,2];
3. [1,-1][-5,5];
4. [-1,2][1,0];
5. [5,0][-3,2];
"""


def test_v1_example_without_version_tag_reads_as_version_1() -> None:
    assert parse(V1_EXAMPLE).version == 1
    record = loads(V1_EXAMPLE)
    assert played(record) == [
        ("o", [(-1, 0), (0, 1)]),
        ("x", [(-1, 1), (-2, 2)]),
        ("o", [(1, -1), (-5, 5)]),
        ("x", [(-1, 2), (1, 0)]),
        ("o", [(5, 0), (-3, 2)]),
    ]
    assert record.player_x.name == "BlueWhale 0"
    assert record.match == Match(clock_type="incremental", clock=60, increment=5)


def test_v1_example_win_is_believed_although_the_board_shows_no_line() -> None:
    # The example's board has no 6 in a row: version 1 writers could not write a
    # one-stone winning turn, so a claimed win without its stone is taken at its word.
    assert loads(V1_EXAMPLE).result == X_WINS


def test_v1_version_header_and_threat_marks() -> None:
    text = "version[1] name[t];\n1. [1,0][2,0];\n2. [0,1][0,2] !!;\n3. [3,0][-1,0]!;"
    notation = parse(text)
    assert notation.version == 1
    assert [turn.threats for turn in notation.main_line] == [0, 2, 1]
    assert played(loads(text))[1] == ("x", [(0, 1), (0, 2)])


def test_v1_one_stone_final_turn_is_read_leniently() -> None:
    text = "version[1];\n1. [-1,0][0,-1];\n2. [1,0][2,0];\n3. [1,-2][2,-3];\n4. [3,0][4,0];\n"
    text += "5. [1,-1][2,-2];\n6. [5,0];"
    record = loads(text)
    assert played(record) == WON_BY_X
    assert record.result == X_WINS


def test_v1_one_stone_turn_must_be_the_last() -> None:
    with pytest.raises(NotationError, match="turn 2 follows turn 1, which ended after one stone"):
        loads("version[1];\n1. [1,0];\n2. [2,0][3,0];")


def test_v1_integers_may_have_leading_zeros_as_its_grammar_allows() -> None:
    assert played(loads("version[1];\n1. [01,-0][0,02];")) == [("o", [(1, 0), (0, 2)])]


def test_v1_rejects_version_2_constructs_with_a_hint() -> None:
    with pytest.raises(NotationError, match=r"need version\[2\]"):
        loads("version[1];\n1. [1,0][0,1] {@5};")
    with pytest.raises(NotationError, match=r"'\[/\]' needs version\[2\]"):
        loads("version[1];\n1. [1,0][/];")


# ------------------------------------------------------------- reading details


def test_whitespace_between_any_tokens_is_ignored() -> None:
    spaced = "version [2]\n;\n 1 .\t[ -1 , 0 ]\n[0,-1] { @ 4500 : % -1 } ;"
    assert loads(spaced) == loads("version[2];1.[-1,0][0,-1]{@4500:%-1};")


def test_leading_byte_order_mark_is_skipped() -> None:
    assert loads("\ufeffversion[2] name[x];").name == "x"


def test_whitespace_inside_tag_values_is_kept() -> None:
    assert loads("version[2] name[  Final  round ];").name == "  Final  round "


def test_doubled_info_takes_each_field_from_the_last_stone_that_has_it() -> None:
    record = loads("version[2];\n1. [1,0] {@4505:%30} [2,0] {@4500};")
    assert record.moves[0].clock_ms == 4500
    assert record.moves[0].evaluation == PositionEvaluation(heuristic=0.3)


def test_doubled_info_on_first_stone_and_terminator_the_terminator_wins() -> None:
    record = loads("version[2];\n1. [1,0] {@900:#2} [/] {@800:%-40};")
    assert record.moves[0].clock_ms == 800
    assert record.moves[0].evaluation == PositionEvaluation(heuristic=-0.4)


def test_info_forms_are_all_read() -> None:
    notation = parse("version[2];\n1. [1,0] {@5} [2,0] {%-7};\n2. [3,0] {#3} [4,0] {@0:#-2};")
    infos = [m.info for turn in notation.main_line for m in turn.moves]
    assert infos == [Info(5), Info(None, -7), Info(None, None, 3), Info(0, None, -2)]


def test_open_evaluation_out_of_the_recommended_range_is_read_as_is() -> None:
    assert loads("version[2];\n1. [1,0] [2,0] {%250};").moves[0].evaluation == (
        PositionEvaluation(heuristic=2.5)
    )


def test_visual_forms_neutral_highlight_and_label() -> None:
    visuals = parse("version[2];\n1. [1,0] [2,0] <1,0> <2,0:#> <3,0:#N> <4,0:$A1> <5,0:#O:$7>;")
    assert visuals.main_line[0].moves[1].visuals == (
        Visual(1, 0, "N", None),
        Visual(2, 0, "N", None),
        Visual(3, 0, "N", None),
        Visual(4, 0, None, "A1"),
        Visual(5, 0, "O", "7"),
    )


def test_visual_with_an_unknown_section_is_ignored() -> None:
    notation = parse("version[2];\n1. [1,0] [2,0] <1,0:&arrow 2,0> <2,0:#XY> <3,0:#X>;")
    assert notation.main_line[0].moves[1].visuals == (Visual(3, 0, "X", None),)


def test_tags_without_a_field_are_kept_in_order() -> None:
    record = loads("version[2] event[Cup] platform[arena] round[3];")
    assert list(record.tags.items()) == [("event", "Cup"), ("platform", "arena"), ("round", "3")]


def test_version_tag_may_come_after_other_tags() -> None:
    assert parse("name[x] version[2]; 1. [1,0] [/];").version == 2


def test_utcdatetime_in_another_iso_form_sets_started_at_and_is_kept_verbatim() -> None:
    record = loads("version[2] utcdatetime[2026-03-18T23:20:14Z];")
    assert record.started_at == datetime(2026, 3, 18, 23, 20, 14, tzinfo=UTC)
    assert record.tags == {"utcdatetime": "2026-03-18T23:20:14Z"}
    assert "utcdatetime[2026-03-18T23:20:14Z]" in dumps(record)


def test_unreadable_time_control_is_kept_and_leaves_the_game_untimed() -> None:
    record = loads("version[2] timecontrol[1 hour];")
    assert record.match.clock_type == "none"
    assert record.tags == {"timecontrol": "1 hour"}


@pytest.mark.parametrize("value", ["99999999999", "99999999999+5", "60+99999999999", "0+5"])
def test_time_control_beyond_our_limits_is_kept_verbatim_and_leaves_the_game_untimed(
    value: str,
) -> None:
    record = loads(f"version[2] timecontrol[{value}];\n1. [1,0] [2,0];")
    assert record.match.clock_type == "none"
    assert record.tags == {"timecontrol": value}
    assert ("timecontrol", value) in tag_pairs(dumps(record))


@pytest.mark.parametrize("value", ["0001-01-01 00:00:00+01:00", "9999-12-31 23:59:59-01:00"])
def test_utcdatetime_whose_utc_time_is_out_of_range_is_kept_verbatim(value: str) -> None:
    record = loads(f"version[2] utcdatetime[{value}];\n1. [1,0] [2,0];")
    assert record.started_at is None
    assert record.tags == {"utcdatetime": value}
    assert ("utcdatetime", value) in tag_pairs(dumps(record))


any_tag_values = st.one_of(
    st.text(st.characters(blacklist_characters="]\n")),
    st.from_regex(r"[0-9]{1,14}(\.[0-9]{1,4})?(\+[0-9]{1,14}(\.[0-9]{1,4})?)?", fullmatch=True),
    st.builds(
        lambda moment, hours: f"{moment:%Y-%m-%d %H:%M:%S}{hours:+03d}:00",
        st.datetimes(),
        st.integers(-23, 23),
    ),
    st.sampled_from(["win", "draw", "time", "resign", "cross", "circle", "aborted", "no_show"]),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(NOTATION_FIELD_TAGS), any_tag_values, max_size=6))
@example({"turnclock": "99999999999"})
@example({"timecontrol": "99999999999+5"})
@example({"timecontrol": "60+99999999999"})
@example({"utcdatetime": "0001-01-01 00:00:00+01:00"})
@example({"turnlimit": "1" * 5000})
@example({"name": "a\rb"})
def test_any_tag_values_are_read_and_written_back_or_refused_with_a_notation_error(
    tags: dict[str, str],
) -> None:
    text = "version[2] " + " ".join(f"{key}[{value}]" for key, value in tags.items())
    try:
        record = loads(text + ";\n1. [1,0] [2,0];")
    except NotationError as error:
        assert error.line >= 1 and error.column >= 1
    else:
        assert loads(dumps(record)) == record


def test_empty_game_with_only_tags_has_no_moves() -> None:
    record = loads("version[2] name[empty];")
    assert record.moves == [] and record.result is None


def test_reading_a_long_game_is_fast() -> None:
    # A guard against accidental quadratic work, not a benchmark: 1000 moves, one second.
    record = long_game(1000)
    text = dumps(record)
    start = time.perf_counter()
    assert loads(text) == record
    assert time.perf_counter() - start < 1.0


def long_game(moves: int) -> GameRecord:
    """A legal game of ``moves`` moves marching right; win distance 20, so no line."""
    recorded = []
    for number in range(1, moves + 1):
        side = Player.O if number % 2 else Player.X
        row = 1 if side is Player.O else 2
        recorded.append(
            move(
                side,
                (number, row),
                (number, -row),
                clock_ms=number,
                evaluation=PositionEvaluation(heuristic=(number % 201 - 100) / 100),
            )
        )
    return GameRecord(match=Match(win_distance=20), moves=recorded)


# ------------------------------------------------------------------- the result


def test_result_contradicting_a_line_on_the_board_is_rejected_at_the_tag() -> None:
    text = "version[2] endreason[resign] winner[circle];" + README_WON.removeprefix("version[2];")
    with pytest.raises(NotationError, match="contradict the board: X has 6 in a row") as caught:
        loads(text)
    assert (caught.value.line, caught.value.column) == (1, 12)


def test_endreason_win_without_winner_takes_the_winner_from_the_board() -> None:
    text = "version[2] endreason[win];" + README_WON.removeprefix("version[2];")
    record = loads(text)
    assert record.result == X_WINS
    assert record.tags == {}


def test_winner_tag_alone_contradicting_the_line_is_rejected() -> None:
    text = "version[2] winner[circle];" + README_WON.removeprefix("version[2];")
    with pytest.raises(NotationError, match="contradict the board: X has 6 in a row"):
        loads(text)


def test_result_contradicting_a_turn_limit_draw_is_rejected() -> None:
    text = "version[2] turnlimit[1] endreason[resign] winner[cross];\n1. [1,0] [2,0];"
    with pytest.raises(NotationError, match="the turn limit ended it in a draw"):
        loads(text)


def test_draw_with_a_winner_is_rejected() -> None:
    with pytest.raises(NotationError, match="a draw has no winner"):
        loads("version[2] endreason[draw] winner[cross];")


@pytest.mark.parametrize(
    ("tags", "result"),
    [
        (
            "endreason[time] winner[circle]",
            GameResult(winner=Player.O, reason="forfeit", cause="timeout"),
        ),
        (
            "endreason[resign] winner[cross]",
            GameResult(winner=Player.X, reason="forfeit", cause="resign"),
        ),
        (
            "endreason[resign] winner[circle] cause[illegal_move]",
            GameResult(winner=Player.O, reason="forfeit", cause="illegal_move"),
        ),
        ("endreason[draw]", GameResult(winner=None, reason="draw")),
        (
            "endreason[draw] cause[turn_limit]",
            GameResult(winner=None, reason="draw", cause="turn_limit"),
        ),
    ],
)
def test_result_tags_give_the_result(tags: str, result: GameResult) -> None:
    record = loads(f"version[2] {tags};\n1. [1,0] [2,0];")
    assert record.result == result
    assert record.tags == {}


@pytest.mark.parametrize(
    ("tags", "column"),
    [
        ("endreason[win] winner[cross] cause[timeout]", 41),
        ("endreason[win] winner[cross] cause[aborted]", 41),  # void, yet won
        ("endreason[time] winner[cross] cause[resign]", 42),
        ("endreason[resign] winner[circle] cause[timeout]", 45),
        ("endreason[resign] winner[circle] cause[adjudication]", 45),
        ("endreason[draw] cause[stall]", 28),
    ],
)
def test_a_cause_that_does_not_go_with_the_end_reason_is_rejected_at_the_cause(
    tags: str, column: int
) -> None:
    cause = tags.split()[-1]
    with pytest.raises(NotationError, match=rf"{re.escape(cause)} does not go with") as caught:
        loads(f"version[2] {tags};\n1. [1,0] [2,0];")
    assert (caught.value.line, caught.value.column) == (1, column)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("version[2] cause[timeout];" + README_WON.removeprefix("version[2];"), "X has 6 in a row"),
        ("version[2] turnlimit[1] cause[adjudication];\n1. [1,0] [2,0];", "the turn limit"),
    ],
)
def test_a_cause_that_contradicts_the_board_is_rejected(text: str, found: str) -> None:
    with pytest.raises(NotationError, match=rf"contradicts the board: {found}"):
        loads(text)


def test_turn_limit_draw_is_inferred_from_the_board() -> None:
    record = loads("version[2] turnlimit[2];\n1. [1,0] [2,0];\n2. [0,1] [0,2];")
    assert record.match.turn_limit == 2
    assert record.result == GameResult(winner=None, reason="draw", cause="turn_limit")


@pytest.mark.parametrize("version", ["1", "2"])
@pytest.mark.parametrize("endreason", ["abandoned", "forfeit"])
def test_end_reason_we_cannot_give_a_cause_gives_no_result_and_stays_a_tag(
    version: str, endreason: str
) -> None:
    # Version 1 lists "forfeit" but names no cause, and a forfeit of ours needs one.
    record = loads(f"version[{version}] endreason[{endreason}] winner[cross];\n1. [1,0] [2,0];")
    assert record.result is None
    assert record.tags == {"endreason": endreason, "winner": "cross"}
    assert tag_pairs(dumps(record)) == {("endreason", endreason), ("winner", "cross")} | {
        ("version", "2")
    }


# ------------------------------------------------------------------- writing


def test_dumps_writes_the_documented_layout() -> None:
    record = GameRecord(
        name="Final",
        player_x=RecordPlayer(name="alpha"),
        player_o=RecordPlayer(name="beta"),
        match=Match(clock_type="incremental", clock=60, increment=5),
        started_at=datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC),
        moves=[
            move(Player.O, (-1, 0), (0, -1), clock_ms=4500, evaluation={"heuristic": -0.01}),
            move(Player.X, (1, 0), (2, 0), evaluation={"win_in": 3}),
            move(Player.O, (1, -2), (2, -3)),
            move(Player.X, (3, 0), (4, 0)),
            move(Player.O, (1, -1), (2, -2)),
            move(Player.X, (5, 0), clock_ms=0),
        ],
        result=X_WINS,
        tags={"event": "Cup", "platform": "htttx-arena"},
    )
    assert dumps(record) == (
        "version[2]\n"
        "name[Final]\n"
        "platform[htttx-arena]\n"
        "utcdatetime[2026-11-22 12:00:00]\n"
        "playercross[alpha]\n"
        "playercircle[beta]\n"
        "timecontrol[60+5]\n"
        "endreason[win]\n"
        "winner[cross]\n"
        "event[Cup];\n"
        "1. [-1,0] [0,-1] {@4500:%-1};\n"
        "2. [1,0] [2,0] {#3};\n"
        "3. [1,-2] [2,-3];\n"
        "4. [3,0] [4,0];\n"
        "5. [1,-1] [2,-2];\n"
        "6. [5,0] [/] {@0};\n"
    )
    assert loads(dumps(record)) == record


@pytest.mark.parametrize(
    ("heuristic", "written"),
    [
        (0.42, "%42"),
        (1.0, "%100"),
        (-1.0, "%-100"),
        (3.5, "%100"),  # clamped to [-1, 1] first
        (-7.0, "%-100"),
        (float("inf"), "%100"),
        (0.005, "%1"),  # half away from zero
        (-0.005, "%-1"),
        (0.0049, "%0"),
        (-0.0049, "%0"),  # never "-0"
        (0.0, "%0"),
        (0.29, "%29"),  # 100 * 0.29 is 28.999999999999996 in floating point
    ],
)
def test_heuristic_is_clamped_and_rounded_half_away_from_zero(
    heuristic: float, written: str
) -> None:
    record = GameRecord(moves=[move(Player.O, (1, 0), (2, 0), evaluation={"heuristic": heuristic})])
    assert dumps(record).splitlines()[-1] == f"1. [1,0] [2,0] {{{written}}};"


def test_nan_heuristic_is_not_written() -> None:
    record = GameRecord(
        moves=[move(Player.O, (1, 0), (2, 0), evaluation={"heuristic": float("nan")})]
    )
    assert dumps(record).splitlines()[-1] == "1. [1,0] [2,0];"


def test_both_evaluations_set_writes_the_closed_one() -> None:
    record = GameRecord(
        moves=[move(Player.O, (1, 0), (2, 0), evaluation={"heuristic": 0.5, "win_in": -4})]
    )
    assert dumps(record).splitlines()[-1] == "1. [1,0] [2,0] {#-4};"
    assert loads(dumps(record)).moves[0].evaluation == PositionEvaluation(win_in=-4)


def test_setup_is_written_only_when_not_standard() -> None:
    standard = GameRecord(moves=[move(Player.O, (1, 0), (2, 0))])
    assert dumps(standard) == "version[2];\n1. [1,0] [2,0];\n"
    custom = GameRecord(
        setup=[Cell(q=1, r=0, p=Player.X), Cell(q=0, r=1, p=Player.X), Cell(q=0, r=0, p=Player.O)],
        first_to_move=Player.X,
    )
    assert dumps(custom) == "version[2];\nx [1,0] [0,1] : o [0,0];\n"
    assert loads(dumps(custom)) == custom


def test_game_without_moves_spells_out_the_standard_setup_as_the_grammar_wants() -> None:
    assert dumps(GameRecord()) == "version[2];\no : x [0,0];\n"
    assert loads(dumps(GameRecord())) == GameRecord()


@pytest.mark.parametrize(
    ("match", "tags"),
    [
        (Match(view_distance=10), {"viewdistance[10]"}),
        (Match(win_distance=5, turn_limit=200), {"windistance[5]", "turnlimit[200]"}),
        (Match(clock_type="turn", clock=30), {"turnclock[30]"}),
        (Match(clock_type="match", clock=300), {"timecontrol[300]"}),
        (Match(clock_type="incremental", clock=2.5, increment=0.1), {"timecontrol[2.5+0.1]"}),
        (Match(clock_type="match", clock=1e-05), {"timecontrol[0.00001]"}),
    ],
)
def test_match_settings_are_written_as_tags(match: Match, tags: set[str]) -> None:
    record = GameRecord(match=match)
    text = dumps(record)
    assert tags <= {f"{tag.key}[{tag.value}]" for tag in parse(text).tags}
    assert loads(text) == record


@pytest.mark.parametrize(
    "cause", [c for c in FORFEIT_CAUSES if c not in (EndCause.TIMEOUT, EndCause.RESIGN)]
)
def test_forfeit_causes_are_written_as_resign_plus_a_cause_tag(cause: EndCause) -> None:
    record = GameRecord(
        moves=[move(Player.O, (1, 0), (2, 0))],
        result=GameResult(winner=Player.X, reason=ResultReason.FORFEIT, cause=cause),
    )
    text = dumps(record)
    assert {("endreason", "resign"), ("winner", "cross"), ("cause", cause.value)} <= tag_pairs(text)
    assert loads(text) == record


def test_time_forfeit_is_written_as_endreason_time_without_a_cause() -> None:
    record = GameRecord(
        moves=[move(Player.O, (1, 0), (2, 0))],
        result=GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.TIMEOUT),
    )
    assert tag_pairs(dumps(record)) == {
        ("version", "2"),
        ("endreason", "time"),
        ("winner", "circle"),
    }


def test_turn_limit_draw_is_written_as_draw_plus_cause() -> None:
    record = GameRecord(result=GameResult(winner=None, reason="draw", cause="turn_limit"))
    assert {("endreason", "draw"), ("cause", "turn_limit")} <= tag_pairs(dumps(record))
    assert "winner" not in {key for key, _ in tag_pairs(dumps(record))}


@pytest.mark.parametrize("cause", [EndCause.ABORTED, EndCause.NO_SHOW])
def test_void_game_is_written_without_endreason_or_winner_so_others_do_not_count_a_draw(
    cause: EndCause,
) -> None:
    record = GameRecord(
        moves=[move(Player.O, (1, 0), (2, 0))],
        result=GameResult(winner=None, reason=ResultReason.DRAW, cause=cause),
    )
    assert record.result is not None and record.result.void
    text = dumps(record)
    assert tag_pairs(text) == {("version", "2"), ("cause", cause.value)}
    read = loads(text)
    assert read == record
    assert read.tags == {}


def test_no_show_with_a_winner_is_not_void_and_keeps_its_standard_result() -> None:
    record = GameRecord(
        result=GameResult(winner=Player.O, reason=ResultReason.FORFEIT, cause=EndCause.NO_SHOW)
    )
    assert tag_pairs(dumps(record)) == {
        ("version", "2"),
        ("endreason", "resign"),
        ("winner", "circle"),
        ("cause", "no_show"),
    }
    assert loads(dumps(record)) == record


def test_aborted_game_written_as_a_draw_earlier_reads_the_same_and_keeps_its_tag() -> None:
    record = loads("version[2] endreason[draw] cause[aborted];\n1. [1,0] [2,0];")
    assert record.result == GameResult(winner=None, reason="draw", cause="aborted")
    assert record.tags == {"endreason": "draw"}
    assert ("endreason", "draw") in tag_pairs(dumps(record))


def test_a_cause_alone_that_is_not_void_gives_no_result_and_stays_a_tag() -> None:
    record = loads("version[2] cause[stall];\n1. [1,0] [2,0];")
    assert record.result is None
    assert record.tags == {"cause": "stall"}


def test_started_at_is_written_in_utc_and_naive_times_are_taken_as_utc() -> None:
    paris = timezone(timedelta(hours=2))
    aware = GameRecord(started_at=datetime(2026, 6, 1, 14, 30, 5, 999, tzinfo=paris))
    naive = GameRecord(started_at=datetime(2026, 6, 1, 12, 30, 5))
    assert "utcdatetime[2026-06-01 12:30:05]" in dumps(aware)
    assert "utcdatetime[2026-06-01 12:30:05]" in dumps(naive)


def test_fields_the_notation_does_not_carry_are_dropped() -> None:
    record = GameRecord(
        game_id="g-1",
        player_x=RecordPlayer(name="bot", type=PlayerType.BOT, bot_url="http://localhost:8002"),
        match=Match(heartbeat=1000),
        moves=[
            move(
                Player.O,
                (1, 0),
                (2, 0),
                thinking_ms=120,
                considerations=[MoveOption(pieces=[Coord(q=1, r=0), Coord(q=2, r=0)])],
            )
        ],
    )
    assert dumps(record) == "version[2]\nplayercross[bot];\n1. [1,0] [2,0];\n"
    assert loads(dumps(record)) == GameRecord(
        player_x=RecordPlayer(name="bot"), moves=[move(Player.O, (1, 0), (2, 0))]
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (GameRecord(name="a]b"), "cannot hold"),
        (GameRecord(player_o=RecordPlayer(name="two\nlines")), "cannot hold"),
        (GameRecord(tags={"version": "3"}), "cannot be written as a tag key"),
        (GameRecord(tags={"1st": "x"}), "cannot be written as a tag key"),
        (GameRecord(moves=[move(Player.X, (1, 0), (2, 0))]), "sides alternate"),
        (
            GameRecord(moves=[move(Player.O, (1, 0)), move(Player.X, (2, 0), (3, 0))]),
            "only the last move may",
        ),
    ],
)
def test_dumps_rejects_what_the_notation_cannot_hold(record: GameRecord, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dumps(record)


# ------------------------------------------------------------------ malformed


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        (
            "version[2];\n1. [1,0] [0,1]\n2. [2,0] [3,0];",
            3,
            1,
            "expected ';' to end turn 1, found '2'",
        ),
        (
            "version[2] name[x]\n1. [1,0] [0,1];",
            2,
            1,
            "expected a tag 'key[value]' or the ';' that ends the tags, found '1'",
        ),
        ("version[2];\n1. [1] [0,1];", 2, 6, "expected ',' between coordinates, found ']'"),
        ("version[2];\n1. [1 0] [0,1];", 2, 7, "expected ',' between coordinates, found '0'"),
        ("version[2];\n1. [1,x] [0,1];", 2, 7, "expected the r coordinate (an integer), found 'x'"),
        ("version[2];\n1. [1,0 [0,1];", 2, 9, "expected ']' after the coordinates, found '['"),
        ("version[2];\n1. [-0,1] [0,1];", 2, 5, "'-0' is not allowed in version 2: write 0"),
        ("version[2];\n1. [1,0] [0,07];", 2, 13, "'07' has a leading zero"),
        ("version[2];\n01. [1,0] [0,1];", 2, 1, "'01' has a leading zero"),
        ("version[2];\n1. [1,0] [0,1] {@050};", 2, 18, "'050' has a leading zero"),
        ("version[2] name[Final\n;", 1, 16, "tag 'name' is not closed: expected ']'"),
        ("version[2] name[a\rb];\n1. [1,0] [2,0];", 1, 16, "tag 'name' is not closed"),
        ("version[2] name;", 1, 16, "expected '[' after the tag key 'name', found ';'"),
        ("version[2] name[a] name[b];", 1, 20, "tag 'name' appears twice"),
        (
            "version[2];\n1. [1,0] [0,1]\n  (1. [2,0] [3,0];\n",
            3,
            3,
            "this variation is not closed: expected ')'",
        ),
        ("version[2];\n1. [1,0] [0,1] {@100", 2, 16, "this info block is not closed"),
        ("version[2];\n1. [1,0] [0,1] <2,0:#X", 2, 16, "this visual is not closed"),
        ("version[3];\n1. [1,0] [0,1];", 1, 1, "unknown notation version '3'"),
        ("version[two];", 1, 1, "unknown notation version 'two'"),
        ("@@@", 1, 1, "expected a tag such as 'version[2]' or a first turn"),
        ("", 1, 1, "found end of text"),
        ("version[2];\n1. [1,0] [0,1];\nhello", 3, 1, "expected turn 2 ('2.'), found 'h'"),
        (
            "version[2];\n1. [1,0] [0,1];\n3. [2,0] [3,0];",
            3,
            1,
            "turn numbers must be consecutive: expected turn 2, found 3",
        ),
        (
            "version[2];\n2. [1,0] [0,1];",
            2,
            1,
            "turns are numbered from 1: expected turn 1, found 2",
        ),
        ("version[2];\n1. [1,0] [0,1]; )", 2, 17, "found ')' (no variation is open)"),
        (
            "version[2];\n1. [1,0] [0,1] (2. [2,0] [3,0];);",
            2,
            17,
            "a variation starts with the number of the turn it replaces: expected turn 1, found 2",
        ),
        ("version[2];\n1. [1,0] [0,1] ();", 2, 17, "a variation holds at least one"),
        (
            "version[2];\n1. [1,0] [/];\n2. [2,0] [3,0];",
            3,
            1,
            "turn 2 follows turn 1, which ended after one stone",
        ),
        ("version[2];\n1. [/] [1,0];", 2, 4, "'[/]' can only take the place of a turn's second"),
        ("version[2];\n1. [1,0] [0,1] !;", 2, 16, "('!' threat marks are version 1 only)"),
        ("version[2];\n1. [1,0] [0,1] [2,0];", 2, 16, "expected ';' to end turn 1, found '['"),
        ("version[2];\n1. [1,0];", 2, 9, "expected the second stone of turn 1 ('[q,r]' or '[/]')"),
        ("version[2];\n1. [1,0] <1,0> {@5} [0,1];", 2, 16, "an info block goes right after its"),
        ("version[2];\n1. [1,0] {@5} {@4} [0,1];", 2, 15, "a stone has one info block at most"),
        ("version[2];\n1. [1,0] {} [0,1];", 2, 11, "expected '@' (clock), '%' or '#'"),
        ("version[2];\n1. [1,0] {@-5} [0,1];", 2, 12, "expected the clock in milliseconds"),
        ("version[2];\n1. [1,0] {@5 %3} [0,1];", 2, 14, "expected ':' and an evaluation"),
        ("version[2];\nx [1,0] ;", 2, 9, "the ':' that ends the x list, found ';'"),
        ("version[2];\nx [1,0] : x;", 2, 11, "expected 'o' after ':' in the setup"),
        ("version[1];\nx [1,0] : o [0,0];", 2, 1, "a setup section needs version[2]"),
        ("version[1];\n1. [1,0] [0,1] {@5};", 2, 16, "(info blocks, visuals and variations"),
        ("version[2];\n1. [1,0] [0,1] <1:0>;", 2, 18, "expected ',' between coordinates"),
        ("version[2] viewdistance[0];", 1, 12, "viewdistance needs a positive integer"),
        ("version[2] viewdistance[99];", 1, 12, "viewdistance[99]: expected at most 50, got 99"),
        ("version[2] turnclock[soon];", 1, 12, "turnclock needs a number of seconds"),
        (
            "version[2] turnclock[99999999999];",
            1,
            12,
            "turnclock[99999999999]: expected at most 2147483.647",
        ),
        ("version[2] turnlimit[" + "1" * 5000 + "];", 1, 12, "turnlimit has too many digits"),
    ],
)
def test_malformed_text_is_reported_where_it_goes_wrong(
    text: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(NotationError) as caught:
        loads(text)
    error = caught.value
    assert message in error.reason
    assert (error.line, error.column) == (line, column)
    assert str(error).startswith(f"line {line}, column {column}: ")


def test_notation_error_is_a_value_error() -> None:
    assert issubclass(NotationError, ValueError)


def test_variations_nested_too_deep_are_rejected() -> None:
    text = "version[2];\n1. [1,0] [0,1]" + " (1. [1,0] [0,1]" * 101 + " ;)" * 101 + ";"
    with pytest.raises(NotationError, match="variations nest deeper than 100 levels"):
        parse(text)


def test_variations_nested_within_the_limit_are_read() -> None:
    text = "version[2];\n1. [1,0] [0,1]" + " (1. [1,0] [0,1]" * 100 + " ;)" * 100 + ";"
    assert played(loads(text)) == [("o", [(1, 0), (0, 1)])]


# -------------------------------------------------------------- illegal games


def test_stone_on_an_occupied_cell_is_rejected_with_its_turn() -> None:
    with pytest.raises(NotationError) as caught:
        loads("version[2];\n1. [1,0] [0,1];\n2. [2,0] [1,0];")
    assert caught.value.reason.startswith("turn 2: X cannot play [1,0]: ")
    assert "already taken" in caught.value.reason
    assert (caught.value.line, caught.value.column) == (3, 10)


def test_stone_out_of_view_is_rejected_with_its_turn() -> None:
    with pytest.raises(NotationError, match=r"turn 1: O cannot play \[9,0\]: .*view_distance 8"):
        loads("version[2];\n1. [9,0] [0,1];")


def test_view_distance_tag_applies_to_the_replay() -> None:
    record = loads("version[2] viewdistance[10];\n1. [9,0] [0,1];")
    assert record.match.view_distance == 10
    assert played(record) == [("o", [(9, 0), (0, 1)])]


def test_win_distance_tag_applies_to_the_replay() -> None:
    record = loads("version[2] windistance[3];\n1. [5,0] [5,1];\n2. [1,0] [2,0];")
    assert record.result == X_WINS


def test_second_stone_after_a_winning_first_stone_is_rejected() -> None:
    text = README_WON.replace("[5,0]  [/]", "[5,0] [6,0]")
    with pytest.raises(NotationError, match=r"turn 6: X cannot play \[6,0\]: the game is over"):
        loads(text)


def test_turn_after_a_win_is_rejected() -> None:
    text = README_WON.replace("6. [5,0]  [/]    ;", "6. [-3,3] [5,0];\n7. [1,1] [2,2];")
    with pytest.raises(NotationError, match=r"turn 7: O cannot play \[1,1\]: the game is over"):
        loads(text)


def test_turn_after_the_turn_limit_is_rejected() -> None:
    with pytest.raises(NotationError, match="turn 2: X cannot play"):
        loads("version[2] turnlimit[1];\n1. [1,0] [0,1];\n2. [2,0] [3,0];")


def test_setup_with_a_repeated_cell_is_rejected_at_the_setup() -> None:
    with pytest.raises(NotationError, match="the setup cannot be played") as caught:
        loads("version[2];\nx [1,0] [1,0] : o;")
    assert (caught.value.line, caught.value.column) == (2, 1)


def test_setup_that_already_holds_a_line_is_rejected() -> None:
    with pytest.raises(NotationError, match="the setup cannot be played"):
        loads("version[2] windistance[3];\nx [0,0] [1,0] [2,0] : o;")


# ---------------------------------------------------------------- round trips

# Keys the writer derives from record fields: random extra tags must not use them.
reserved_keys = {"version", *game.notation_writer._TAG_ORDER}
tag_values = st.text(st.characters(exclude_characters="]\n\r"), max_size=12)
tag_keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda key: key not in reserved_keys
)
seconds = st.integers(1, 100_000).map(float) | st.floats(
    min_value=0.001, max_value=1e5, allow_nan=False, allow_infinity=False
)
matches = st.one_of(
    st.builds(Match),
    st.builds(lambda clock: Match(clock_type="match", clock=clock), seconds),
    st.builds(lambda clock: Match(clock_type="turn", clock=clock), seconds),
    st.builds(
        lambda clock, increment: Match(clock_type="incremental", clock=clock, increment=increment),
        seconds,
        st.just(0.0) | seconds,
    ),
)
evaluations = st.one_of(
    st.none(),
    st.integers(-100, 100).map(lambda n: PositionEvaluation(heuristic=n / 100)),
    st.integers(-50, 50).map(lambda n: PositionEvaluation(win_in=n)),
)
start_times = st.none() | st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda moment: moment.replace(microsecond=0))


@st.composite
def legal_games(draw: st.DrawFn) -> GameRecord:
    """A random legal game played with the rules engine, with everything the notation
    carries filled in at random: names, tags, start time, clocks, evaluations, and a
    result of a kind the server gives (a cause that goes with its reason)."""
    view_distance = draw(st.sampled_from([1, 2, 3, 8]))
    win_distance = draw(st.integers(3, 6))
    turn_limit = draw(st.none() | st.integers(1, 20))
    match = draw(matches).model_copy(
        update={
            "view_distance": view_distance,
            "win_distance": win_distance,
            "turn_limit": turn_limit,
        }
    )
    setup = [Cell(q=0, r=0, p=Player.X)]
    first_to_move = Player.O
    if draw(st.booleans()):
        first_to_move = draw(st.sampled_from(Player))
        cells = draw(
            st.lists(
                st.tuples(st.integers(-2, 2), st.integers(-2, 2)),
                min_size=1,
                max_size=5,
                unique=True,
            )
        )
        sides = [draw(st.sampled_from(Player)) for _ in cells]
        # Written (and read back) with the side to move's stones first.
        setup = [Cell(q=q, r=r, p=side) for (q, r), side in zip(cells, sides, strict=True)]
        setup.sort(key=lambda cell: cell.p is not first_to_move)
    try:
        position = Position(
            view_distance,
            win_distance,
            setup=[(cell.q, cell.r, cell.p.value) for cell in setup],
            to_move=first_to_move.value,
            turn_limit=turn_limit,
        )
    except InvalidSetupError:  # the random setup already holds a line
        reject()
    moves: list[RecordedMove] = []
    planned = draw(st.integers(0, 16))
    cut_short = draw(st.booleans())  # the last move may stop after one stone (a forfeit)
    for number in range(1, planned + 1):
        if position.outcome is not None:
            break
        side = Player(position.to_move)
        stones: list[Hex] = []
        for _ in range(2):
            cell = draw(st.sampled_from(sorted(position.legal_cells())))
            position.place(*cell)
            stones.append(cell)
            if position.outcome is not None and position.outcome.termination is Termination.LINE:
                break
            if number == planned and cut_short:
                break
        moves.append(
            move(
                side,
                *stones,
                clock_ms=draw(st.none() | st.integers(0, 10**8)),
                evaluation=draw(evaluations),
            )
        )
    outcome = position.outcome
    if outcome is not None and outcome.termination is Termination.LINE:
        result: GameResult | None = GameResult(winner=Player(outcome.winner), reason="win")
    elif outcome is not None:
        result = GameResult(winner=None, reason="draw", cause="turn_limit")
    else:
        result = draw(
            st.none()
            | st.builds(
                GameResult,
                winner=st.sampled_from(Player),
                reason=st.just(ResultReason.FORFEIT),
                cause=st.sampled_from(FORFEIT_CAUSES),
            )
            | st.builds(
                GameResult,
                winner=st.sampled_from(Player),
                reason=st.just(ResultReason.WIN),
                cause=st.just(EndCause.ADJUDICATION),
            )
            | st.builds(
                GameResult,
                winner=st.none(),
                reason=st.just(ResultReason.DRAW),
                cause=st.sampled_from([None, EndCause.ABORTED, EndCause.NO_SHOW]),
            )
        )
    names = st.none() | tag_values
    tags = draw(st.dictionaries(tag_keys | st.just("platform"), tag_values, max_size=3))
    return GameRecord(
        name=draw(names),
        player_x=RecordPlayer(name=draw(names)),
        player_o=RecordPlayer(name=draw(names)),
        match=match,
        started_at=draw(start_times),
        setup=setup,
        first_to_move=first_to_move,
        moves=moves,
        result=result,
        tags=tags,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_games())
def test_reading_what_we_wrote_gives_back_the_record(record: GameRecord) -> None:
    assert loads(dumps(record)) == record


odd_foreign_tags = st.sampled_from(
    [
        ("timecontrol", "Fischer 60+5"),
        ("timecontrol", "untimed"),
        ("utcdatetime", "2026-03-18T23:20:14Z"),
        ("datetime", "2026-03-18 23:20:14"),
        ("event", "Hex Open"),
        ("site", " somewhere, with spaces "),
    ]
)
spaces = st.sampled_from(["", " ", "  ", "\n", "\t", " \n   "])
visual_texts = st.sampled_from(
    ["<1,0>", "<0,-2:#X>", "<3,-1:$A1>", "< -2 , 1 : # O : $ 7 >", "<1,1:&new>"]
)


@st.composite
def foreign_texts(draw: st.DrawFn) -> str:
    """A game as another tool might write it: tags in any order, odd but valid tag values,
    maybe no result tags, free whitespace, info split over both stones or put before
    '[/]', visuals, variations.
    """
    notation = parse(dumps(draw(legal_games())))
    tags = [(tag.key, tag.value) for tag in notation.tags if tag.key != "version"]
    if draw(st.booleans()):  # leave the result to be inferred from the board, if it can
        tags = [(key, value) for key, value in tags if key not in {"endreason", "winner", "cause"}]
    for key, value in draw(st.lists(odd_foreign_tags, max_size=3)):
        if key not in {k for k, _ in tags}:
            tags.append((key, value))
    tags = draw(st.permutations(tags))
    out = ["version[2]"]
    out += [draw(spaces) + f"{key}[{value}]" for key, value in tags]
    out.append(draw(spaces) + ";" + draw(spaces))
    if notation.setup is not None:
        setup = notation.setup
        first = setup.first_to_move
        for side in (first, first.other):
            out.append(side.value + draw(spaces))
            out += [f"[{q},{r}]" + draw(spaces) for q, r, p in setup.stones if p is side]
            out.append(":" if side is first else "")
        out.append(";\n")

    def info_text(info: Info) -> str:
        parts = []
        if info.clock_ms is not None:
            parts.append(f"@{draw(spaces)}{info.clock_ms}")
        if info.open_evaluation is not None:
            parts.append(f"%{info.open_evaluation}")
        if info.closed_evaluation is not None:
            parts.append(f"#{info.closed_evaluation}")
        return "{" + draw(spaces) + f"{draw(spaces)}:{draw(spaces)}".join(parts) + "}"

    for turn in notation.main_line:
        first_move, second_move = turn.moves
        assert first_move.stone is not None
        info = second_move.info
        first_stone = f"[{first_move.stone[0]}{draw(spaces)},{first_move.stone[1]}]"
        second = "[/]" if second_move.stone is None else "[{},{}]".format(*second_move.stone)
        first_extra = ""
        second_extra = ""
        if info is not None and second_move.stone is None and draw(st.booleans()):
            first_extra = info_text(info)  # before '[/]': the same position
        elif info is not None:
            second_extra = info_text(info)
            if draw(st.booleans()):  # a decoy on the first stone, overridden field by field
                first_extra = info_text(
                    Info(
                        None if info.clock_ms is None else info.clock_ms + 7,
                        None if info.open_evaluation is None else -info.open_evaluation // 2,
                        None if info.closed_evaluation is None else info.closed_evaluation + 1,
                    )
                )
        visuals = " ".join(draw(st.lists(visual_texts, max_size=2)))
        variation = ""
        if draw(st.booleans()):
            variation = f"({turn.number}. [{turn.number + 40},0] [/];)"
        out.append(
            f"{turn.number}.{draw(spaces)}{first_stone}{draw(spaces)}{first_extra}{draw(spaces)}"
            f"{second}{draw(spaces)}{second_extra}{draw(spaces)}{visuals}{draw(spaces)}"
            f"{variation}{draw(spaces)};{draw(spaces)}"
        )
    return "".join(out)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(foreign_texts())
def test_writing_what_we_read_from_another_tool_keeps_main_line_and_tags(text: str) -> None:
    record = loads(text)
    written = dumps(record)
    assert main_line(parse(written)) == main_line(parse(text))
    assert tag_pairs(text) <= tag_pairs(written)
    assert {key for key, _ in tag_pairs(written) - tag_pairs(text)} <= {
        "endreason",
        "winner",
        "cause",
    }
    assert loads(written) == record


# ------------------------------------------------------------------ the docs


def test_module_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(game.notation)
    assert tried > 0
    assert failures == 0


def readme_notation_example() -> str:
    """The Python block of the README's "Game records" section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Game records: `game.notation`") :]
    block = section[section.index("```python\n") + len("```python\n") :]
    return block[: block.index("```")]


def test_readme_example_prints_what_its_comment_shows(capsys: pytest.CaptureFixture[str]) -> None:
    block = readme_notation_example()
    exec(block, {})  # the README's own example, run as written
    shown = block[block.index("print(") :].splitlines()[1:]
    assert shown and all(line.startswith("# ") for line in shown)
    assert capsys.readouterr().out == "".join(line[2:] + "\n" for line in shown)


def test_clean_tags_makes_any_record_writable() -> None:
    record = GameRecord(
        name="final]\nround",
        player_o=RecordPlayer(name="a]b"),
        tags={"bad key": "x", "site": "ok]"},
    )
    with pytest.raises(ValueError, match="cannot hold"):
        dumps(record)
    text = dumps(record, clean_tags=True)
    read = loads(text)
    assert read.name == "final) round"
    assert read.player_o.name == "a)b"
    assert read.tags == {"site": "ok)"}  # the unwritable key is left out
