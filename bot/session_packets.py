"""What the bot session reads out of a packet's content, beyond its type: the match
settings of a ``config`` packet's ``x-match`` key, and the words of an ``end`` packet
for the close reason. Pure functions.
"""

from __future__ import annotations

import json

from bot.session_errors import InvalidMatchError
from models import MATCH_CONFIG_KEY, EndCause, EndPacket, Match, ProtocolError, parse_body

__all__ = ["game_over", "read_match"]


def read_match(value: object) -> Match:
    """The ``x-match`` value of a config as ``Match``; ``InvalidMatchError`` if it is not
    valid match settings."""
    try:
        return parse_body(Match, json.dumps(value))
    except (ProtocolError, TypeError, ValueError) as exc:
        raise InvalidMatchError(
            f"config '{MATCH_CONFIG_KEY}' is not valid match settings: {exc}"
        ) from None


def game_over(packet: EndPacket) -> str:
    """The close reason for an ``end`` packet: ``game over: x won by ... (detail)``."""
    if packet.winner is None:
        result = "draw"
    else:
        result = f"{packet.winner.value} won by {packet.reason.value}"
    detail = packet.detail.value if isinstance(packet.detail, EndCause) else packet.detail
    return f"game over: {result}" + (f" ({detail})" if detail is not None else "")
