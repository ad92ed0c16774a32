"""Serving one spectator's connection, for the games of this worker and those relayed from
another worker of a cluster (``game.cluster_redis``): the packets a game's fanout
(``game.fanout``) holds for it are written under a send watchdog until the game ends, the
spectator leaves or is too slow; a finished game is sent from its record.

``GameManager.spectate`` decides what a spectator gets; this module only writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from game.fanout import Spectator
from game.outboxes import CLOSE_WAIT
from game.reads import RecordReader
from game.seats import DEFAULT_SEND_TIMEOUT, InboundConnection
from game.watchdog import SendWatchdog
from models import CLOSE_NORMAL, CLOSE_POLICY_VIOLATION

__all__ = ["UnknownGame", "send_finished", "serve_spectator"]

log = logging.getLogger("game.manager")


class UnknownGame(LookupError):
    """``spectate`` a game that is neither running nor stored."""


async def serve_spectator(
    game_id: str,
    spectator: Spectator,
    connection: InboundConnection,
    drop: Callable[[Spectator], None],
) -> None:
    """Write ``spectator``'s packets to ``connection`` until it closes, leaves or is
    too slow; ``drop`` takes it out of its fanout. Then close the connection."""
    loop = asyncio.get_running_loop()

    async def pump() -> None:
        watchdog = SendWatchdog(DEFAULT_SEND_TIMEOUT)
        try:
            if spectator.setup is not None:
                await watchdog.send(connection.send_text((await spectator.setup).decode()))
            backlog, spectator.backlog = spectator.backlog, []
            for packet in backlog:
                await watchdog.send(connection.send_text(packet))
            del backlog  # up to thousands of packets: not held for the whole game
            # From here on the game writes to the socket itself while this task is
            # idle; it is woken for what cannot be written so (game.fanout).
            while (texts := spectator.take()) is not None:
                if not texts:
                    await spectator.idle()
                for text in texts:
                    await watchdog.send(connection.send_text(text))
        finally:
            watchdog.close()

    async def read() -> None:
        # Spectators have nothing to say; reading notices when one leaves.
        with contextlib.suppress(Exception):
            while True:
                await connection.receive_text()

    name = f"spectator {game_id}"
    tasks = {
        loop.create_task(pump(), name=f"htttx: write {name}"),
        loop.create_task(read(), name=f"htttx: read {name}"),
        loop.create_task(spectator.dropped.wait(), name=f"htttx: drop {name}"),
    }
    code, reason = CLOSE_NORMAL, "the game is over"
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        wrote = [t for t in done if t.get_name().startswith("htttx: write")]
        if spectator.dropped.is_set():
            code, reason = CLOSE_POLICY_VIOLATION, "too slow: the spectator could not keep up"
        elif not wrote:
            code, reason = CLOSE_NORMAL, "the spectator left"
        elif not wrote[0].cancelled() and isinstance(wrote[0].exception(), TimeoutError):
            code = CLOSE_POLICY_VIOLATION
            reason = f"too slow: an update took {DEFAULT_SEND_TIMEOUT:g} s or more to send"
    finally:
        drop(spectator)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_WAIT):
                await connection.close(code, reason)


async def send_finished(records: RecordReader, game_id: str, connection: InboundConnection) -> None:
    """Show a game that does not run here: its snapshot, then ``end`` if it is over,
    then close. Raises ``UnknownGame`` (after closing with 1008) if there is no such game."""
    snapshot = await records.snapshot(game_id)
    if snapshot is None:
        with contextlib.suppress(Exception):
            await connection.close(CLOSE_POLICY_VIOLATION, "no such game")
        raise UnknownGame(f"no game {game_id!r}")
    setup, end = snapshot
    try:
        async with asyncio.timeout(2 * DEFAULT_SEND_TIMEOUT):
            await connection.send_text(setup.decode())
            if end is not None:
                await connection.send_text(end.decode())
    except Exception as exc:
        log.debug("spectator of finished game %s: %r", game_id, exc)
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CLOSE_WAIT):
            await connection.close(CLOSE_NORMAL, "the game is over")
