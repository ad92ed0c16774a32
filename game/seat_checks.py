"""Whether each seat of a new game can be told what the game needs it to know
(``check_seats``, called by ``GameManager`` before anything is written or dialled).

A seat that cannot be told its game's start or its rules would play a different game
from the one it is judged by: it is refused at ``POST /game/new`` with the reason (a
422, like any bot that cannot be seated), as cutechess refuses a variant an engine does
not declare, rather than losing its games by forfeit.

* An opening (``NewGameRequest.opening``): a websocket bot learns its stones from
  ``setup`` (``free_setup``) or its first ``previous`` (``move_skips``); a stateless bot
  from each request's board; a human from ``setup``.
* Rules that are not the standard ones (``Match.rules_not_standard``: the view or win
  distance): only from our ``x-match`` config key (``SeatInfo.learns_rules``).
"""

from __future__ import annotations

from collections.abc import Sequence

from game.discovery import BotEndpoint
from game.discovery_errors import CannotLearnRules, CannotStartFromOpening
from game.running_events import Slot
from game.session_config import SeatInfo
from models import NewGameRequest, Player

__all__ = ["check_bot", "check_seat", "check_seats"]

_SEAT_NAMES = {Player.X: "player_x", Player.O: "player_o"}


def check_seats(request: NewGameRequest, slots: dict[Player, Slot]) -> None:
    """Raise ``CannotStartFromOpening`` or ``CannotLearnRules``, naming the first seat
    (X before O) that cannot be told the game's opening or rules."""
    changed = request.match_config.rules_not_standard()
    for side, seat in _SEAT_NAMES.items():
        check_seat(seat, slots[side].info, opening=bool(request.opening), rules_changed=changed)


def check_seat(seat: str, info: SeatInfo, *, opening: bool, rules_changed: Sequence[str]) -> None:
    """Raise ``CannotStartFromOpening`` (``opening``: the game starts from one) or
    ``CannotLearnRules`` (``rules_changed``: ``Match.rules_not_standard``) when the seat
    ``info`` cannot be told them; ``seat`` names it in the message."""
    if opening and info.learns_opening_by is None:
        raise CannotStartFromOpening(
            f"{seat}: the bot declares neither free_setup nor move_skips, so it "
            "cannot start from an opening"
        )
    if rules_changed and not info.learns_rules:
        how = (
            "a stateless request carries no rules"
            if info.kind == "bot_stateless"
            else "it declares no config that accepts x-match, the only way to tell it"
        )
        raise CannotLearnRules(
            f"{seat}: this game's rules are not the standard ones "
            f"({', '.join(rules_changed)}), and the bot cannot be told them: {how}"
        )


def check_bot(
    seat: str, endpoint: BotEndpoint, *, opening: bool, rules_changed: Sequence[str]
) -> None:
    """``check_seat`` for a bot just discovered, before any game of it exists: what it
    can be told depends only on how it is played and what it declares (a tournament
    refuses such a bot up front, not after its games fail)."""
    if endpoint.transport == "websocket":
        info = SeatInfo("bot_ws", declares=endpoint.capabilities.bws_v1_alpha)
    else:
        info = SeatInfo("bot_stateless", declares=endpoint.capabilities.stateless_v1_alpha)
    check_seat(seat, info, opening=opening, rules_changed=rules_changed)
