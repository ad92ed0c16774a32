"""What runs when a game ends, before its ``end`` goes to anyone: ``EndHooks``.

``GameManager.add_end_hook`` registers a hook; the game's task (``game.running``) runs
them once the final record is committed, so a client told ``end`` finds what they did
(``game.rating_book`` rates tracked games here: the new ratings are there at once).

>>> import asyncio
>>> from models import GameRecord
>>> seen: list[str | None] = []
>>> async def note(record: GameRecord) -> None:
...     seen.append(record.game_id)
>>> hooks = EndHooks()
>>> hooks.add(note, wants=lambda game_id: game_id == "g1")
>>> asyncio.run(hooks.run("g2", lambda: GameRecord(game_id="g2")))
>>> asyncio.run(hooks.run("g1", lambda: GameRecord(game_id="g1")))
>>> seen
['g1']
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from models import GameRecord

__all__ = ["END_HOOK_WAIT", "EndHook", "EndHooks"]

log = logging.getLogger("game.manager")

#: How long one end hook may hold a game's ``end`` back.
END_HOOK_WAIT = 5.0

#: Called with a game's final record before its ``end`` goes out.
EndHook = Callable[[GameRecord], Awaitable[None]]


class EndHooks:
    """The end hooks of one server, in the order they were added."""

    def __init__(self) -> None:
        self._hooks: list[tuple[EndHook, Callable[[str], bool] | None]] = []

    def add(self, hook: EndHook, *, wants: Callable[[str], bool] | None = None) -> None:
        """Call ``hook`` with the final record of every game that ends, or of those
        whose id ``wants``."""
        self._hooks.append((hook, wants))

    def __bool__(self) -> bool:
        return bool(self._hooks)

    async def run(self, game_id: str, record: Callable[[], GameRecord]) -> None:
        """Every hook that wants ``game_id``, in order, with ``record()`` (built once,
        when first needed: a game no hook wants costs nothing), each for at most
        ``END_HOOK_WAIT``; a hook that fails or takes longer is logged, and the game
        ends all the same."""
        built: GameRecord | None = None
        for hook, wants in self._hooks:
            if wants is not None and not wants(game_id):
                continue
            if built is None:
                built = record()
            try:
                await asyncio.wait_for(hook(built), END_HOOK_WAIT)
            except Exception:
                log.exception("game %s: an end hook failed", game_id)
