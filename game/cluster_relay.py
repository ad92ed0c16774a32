"""A person's socket relayed to another worker: the pumping. ``relay_seat``: a human
seat's socket on a worker that does not run its game, to the one that does;
``relay_socket`` (the same pump, any socket): a ``/queue`` socket to the queue's leader
(``game.cluster_queue``). The decisions (whether to relay, the closes) are
``game.relay``'s; the owner's URL comes from its worker key (``game.cluster_redis``).

The relay opens an ordinary WebSocket client (aiohttp's) to the owner's
``/ws?token=...``: a cluster's peers are trusted hosts, loopback and private addresses
included, so the bot address policy does not apply. Three tasks race: person to owner,
owner to person, and a watch that ends the relay when the owner's lease is gone or this
worker is closing. The first to end decides the closes (``person_close``,
``owner_close``). Frames are carried as they come, text or binary (the owner judges
them as it would on its own socket), each at most ``ClusterNode.relay_frame_cap``, the
hard cap of the workers' own sockets (uvicorn's ``ws_max_size``): the person's larger
frames are cut by this worker's socket as the owner's would cut them (a drop); a larger
one from the owner, or one that got through, closes both sides with 1009.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple

import aiohttp
from redis.exceptions import RedisError
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from game.access_log import redact_tokens
from game.cluster_redis import raise_if_cancelled
from game.relay import (
    CONNECT_TIMEOUT,
    GAME,
    Ending,
    Peer,
    owner_close,
    owner_ws_url,
    person_close,
)

if TYPE_CHECKING:
    from game.cluster_redis import ClusterNode

__all__ = ["relay_seat", "relay_socket"]

log = logging.getLogger("game.cluster")

#: How long closing the owner's side may take.
CLOSE_TIMEOUT = 5.0


class _End(NamedTuple):
    ending: Ending
    code: int | None = None
    reason: str = ""


#: Whether the owner still holds what the socket was relayed to it for (its lease, or
#: the queue's lead); a Redis error raised here counts as yes.
StillThere = Callable[[], Awaitable[bool]]


async def relay_seat(
    node: ClusterNode, websocket: WebSocket, token: str, owner_id: str, owner_url: str
) -> None:
    """Accept ``websocket`` and relay it to ``owner_url``'s ``/ws?token=`` until either
    side closes, or the owner's lease is gone; then close the other with what
    ``game.relay`` says."""

    async def leased() -> bool:
        return await node.worker(owner_id) is not None

    await relay_socket(node, websocket, owner_ws_url(owner_url, token), leased, GAME)


async def relay_socket(
    node: ClusterNode,
    websocket: WebSocket,
    url: str,
    still_there: StillThere,
    peer: Peer,
    *,
    same_host: bool = False,
) -> None:
    """Accept ``websocket`` and relay it to the WebSocket ``url`` (another worker's)
    until either side closes or ``still_there`` (asked every heartbeat) says no; then
    close the other side with what ``game.relay`` says, naming ``peer``. ``same_host``:
    the other worker is told the person's ``Host`` (the links it makes, a challenge's
    page, then name the host the person uses, not the worker's own URL)."""
    await websocket.accept()
    cap = node.relay_frame_cap
    host = websocket.headers.get("host") if same_host else None
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            owner = await node.relay_http().ws_connect(
                url,
                headers={"Host": host} if host else None,
                max_msg_size=cap,
                timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=CLOSE_TIMEOUT),
            )
    except (aiohttp.ClientError, TimeoutError, OSError) as error:
        why = redact_tokens(str(error)) or type(error).__name__  # a URL may hold it
        closing = person_close(Ending.CONNECT_FAILED, reason=why, peer=peer)
        await _close_person(websocket, *closing)
        return
    tasks = [
        asyncio.create_task(_to_owner(websocket, owner, cap), name="htttx: relay to owner"),
        asyncio.create_task(_to_person(websocket, owner), name="htttx: relay to person"),
        asyncio.create_task(_watch(node, still_there), name="htttx: relay watch"),
    ]
    end = _End(Ending.SHUTDOWN)  # if this handler is cancelled
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        end = _first(done)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(aiohttp.ClientError, TimeoutError, OSError):
            if end.ending is not Ending.OWNER_CLOSED:
                code, reason = owner_close(end.ending, end.code, end.reason)
                await owner.close(code=code, message=reason.encode())
            await owner.close()
        if end.ending is not Ending.PERSON_CLOSED:
            closing = person_close(end.ending, end.code, end.reason, peer)
            await _close_person(websocket, *closing)


def _first(done: set[asyncio.Task[_End]]) -> _End:
    for task in done:
        if not task.cancelled() and task.exception() is None:
            return task.result()
    error = next(iter(done)).exception()
    return _End(Ending.OWNER_CLOSED, None, repr(error))  # a broken link: 1011


async def _to_owner(websocket: WebSocket, owner: aiohttp.ClientWebSocketResponse, cap: int) -> _End:
    while True:
        try:
            message = await websocket.receive()
        except (RuntimeError, OSError):
            return _End(Ending.PERSON_CLOSED)
        if message["type"] == "websocket.disconnect":
            return _End(Ending.PERSON_CLOSED, message.get("code"), message.get("reason") or "")
        text, data = message.get("text"), message.get("bytes")
        size = len(text.encode()) if text is not None else len(data or b"")
        if size > cap:
            return _End(Ending.TOO_BIG, reason=f"a frame of {size} bytes; at most {cap}")
        try:
            if text is not None:
                await owner.send_str(text)
            elif data is not None:
                await owner.send_bytes(data)
        except (aiohttp.ClientError, OSError) as error:
            return _End(Ending.OWNER_CLOSED, owner.close_code, str(error))


async def _to_person(websocket: WebSocket, owner: aiohttp.ClientWebSocketResponse) -> _End:
    while True:
        message = await owner.receive()
        kind = message.type
        if kind is aiohttp.WSMsgType.TEXT:
            sent = websocket.send_text(message.data)
        elif kind is aiohttp.WSMsgType.BINARY:
            sent = websocket.send_bytes(message.data)
        elif kind is aiohttp.WSMsgType.CLOSE:
            return _End(Ending.OWNER_CLOSED, message.data, message.extra or "")
        elif kind is aiohttp.WSMsgType.ERROR:
            return _End(Ending.OWNER_CLOSED, owner.close_code, str(message.data))
        else:  # CLOSING, CLOSED
            return _End(Ending.OWNER_CLOSED, owner.close_code, "")
        try:
            await sent
        except (RuntimeError, OSError, WebSocketDisconnect):
            return _End(Ending.PERSON_CLOSED)


async def _watch(node: ClusterNode, still_there: StillThere) -> _End:
    """Ends when the owner no longer holds what the socket was relayed for (its lease,
    checked every heartbeat) or this worker is closing; a Redis error counts as neither."""
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(node.stopping.wait(), node.leases.heartbeat)
        if node.stopping.is_set():
            return _End(Ending.SHUTDOWN)
        raise_if_cancelled()
        try:
            if not await still_there():
                return _End(Ending.OWNER_GONE)
        except (RedisError, OSError) as error:
            raise_if_cancelled(error)
            log.warning("relay: checking its worker failed: %s", error)


async def _close_person(websocket: WebSocket, code: int, reason: str) -> None:
    if WebSocketState.DISCONNECTED in (websocket.application_state, websocket.client_state):
        return
    with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
        await websocket.close(code, reason)
