"""What the benchmark scripts share to play games through a game server: a game of one
bot against itself, created with ``POST /game/new`` (``new_bot_game``).

The scripts import this by bare name, as they import ``processes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

__all__ = ["new_bot_game"]


async def new_bot_game(
    http: aiohttp.ClientSession, server: str, bot: str, moves: int, heartbeat_ms: int = 5000
) -> str:
    """Create a game on ``server`` (its base URL) between two seats of ``bot`` (its URL),
    ``moves`` moves at most (the turn limit: an instant bot that never makes a line,
    ``LatticeBot``, plays exactly that many); its id. ``RuntimeError`` with the server's
    answer if it refuses."""
    seat = {"type": "bot", "bot_url": bot}
    body = {
        "player_x": seat,
        "player_o": seat,
        "match_config": {"turn_limit": moves, "heartbeat": heartbeat_ms},
    }
    async with http.post(f"{server}/game/new", json=body) as response:
        if response.status != 200:
            raise RuntimeError(f"POST /game/new: {response.status} {await response.text()}")
        return str((await response.json())["game_id"])
