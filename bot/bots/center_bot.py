"""``CenterBot``: the prototype's bot, the two legal cells nearest the origin."""

from __future__ import annotations

from bot.bot import BaseBot
from bot.bots._features import position_bot_capabilities
from bot.capabilities import Capabilities, Meta
from game.game import place_piece, valid_placement_cells
from models import Cell, Coord, Match, Player


class CenterBot(BaseBot):
    """Plays the legal cell nearest the origin, then the nearest one left.

    "Nearest" is hex distance, ties broken by ``(q, r)``: the order of the prototype's
    ``valid_placement_cells``, so the bot is deterministic. It is written against the
    prototype's API (``choose_move`` on a ``list[Cell]``), as an example of it; it never
    blocks, but its stones pile up around the origin and do form lines.

    >>> bot = CenterBot()
    >>> bot.choose_move([Cell(q=0, r=0, p=Player.X)], Player.O, Match())
    (Coord(q=-1, r=0), Coord(q=-1, r=1))
    """

    #: It keeps no position after answering: the server may lend it the same one again.
    keeps_positions = False

    name = "CenterBot"

    @classmethod
    def capabilities(cls) -> Capabilities:
        return position_bot_capabilities(
            Meta(
                name="CenterBot",
                description="The prototype's bot: the two legal cells nearest the origin.",
                tags=["baseline", "deterministic"],
            )
        )

    def choose_move(self, cells: list[Cell], player: Player, match: Match) -> tuple[Coord, Coord]:
        first = valid_placement_cells(cells, match.view_distance)[0]
        # Chosen once the first is on the board, so an empty board (a free setup) works
        # too. With a stone on the origin this is the prototype's candidates[1]: the cells
        # the first stone brings into view lie beyond view_distance of the origin.
        after_first = place_piece(cells, first, player)
        second = valid_placement_cells(after_first, match.view_distance)[0]
        return first, second
