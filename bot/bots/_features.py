"""The capabilities the example bots share.

Every example bot is a pure function of the position it is handed (and, for
``RandomBot``, of its random generator): it keeps no picture of the game between
requests. The framework (``bot.session``) keeps the position and implements each protocol
feature, so such a bot genuinely supports a free setup, moves made on its behalf, both
sides, any move order, a reset and an interrupt. All three bots answer within
milliseconds (``ThreatBot`` also polls its ``Deadline``), so they honour time limits.
"""

from __future__ import annotations

from bot.capabilities import BwsV1Alpha, Capabilities, Meta, default_capabilities


def position_bot_capabilities(meta: Meta, **features: object) -> Capabilities:
    """Capabilities of a bot that answers from the position alone, plus ``features``
    (``BwsV1Alpha`` fields, e.g. ``config`` or ``evaluation``)."""
    websocket = BwsV1Alpha.model_validate(
        {
            "move_time_limit": True,
            "free_setup": True,
            "move_skips": True,
            "dual_sided": True,
            "free_move_order": True,
            "resettable_state": True,
            "interruptible": True,
            # Config lets a game server send the game's settings (x-match), which the
            # framework applies for the bot; a bot with its own settings adds to it.
            "config": {"dynamic": False},
            **features,
        }
    )
    return default_capabilities(websocket, meta=meta)
