"""What ``htttx-server --demo`` (``make run``) prints of its demo game: the summary line
says how the game ended in words a newcomer reads at once."""

from __future__ import annotations

from game import notation
from game.serve_intro import describe

#: X makes six in a row on r = 0 with the first stone of its sixth move.
WON_BY_A_LINE = """version[2] playercross[ThreatBot] playercircle[RandomBot]
endreason[win] winner[cross];
1. [0,5] [0,7];
2. [1,0] [2,0];
3. [2,5] [4,5];
4. [3,0] [4,0];
5. [-3,6] [-5,7];
6. [5,0] [/];"""

#: O runs out of time after X's first move (a forfeit, with its cause).
LOST_ON_TIME = """version[2] playercross[ThreatBot] playercircle[RandomBot]
endreason[time] winner[cross];
1. [0,5] [0,7];
2. [1,0] [2,0];"""


def summary_line(text: str) -> str:
    """The line of ``describe`` between the board and the notation."""
    described = describe(notation.loads(text))
    return described.split("\n\n")[2]


def test_a_game_won_by_a_line_is_said_so() -> None:
    assert summary_line(WON_BY_A_LINE) == "x wins with a line after 6 moves"


def test_a_forfeit_names_its_cause() -> None:
    assert summary_line(LOST_ON_TIME) == "x wins by forfeit (timeout) after 2 moves"
