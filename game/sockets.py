"""The game server's WebSocket handlers: ``human_socket`` (a human seat, ``/ws?token=``;
in a cluster, a seat of a game another worker runs is relayed to it,
``game.cluster_relay``) and ``spectator_socket`` (``/spectate/{game_id}``), over the
``_Inbound`` adapter that makes a Starlette WebSocket the manager's
``InboundConnection``."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from game.manager import TooManySpectators, UnknownGame, UnknownToken
from game.seats import ConnectionClosed
from game.server_state import _runtime
from models import (
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    CLOSE_TRY_AGAIN_LATER,
    CLOSE_UNSUPPORTED_DATA,
    clip_close_reason,
)
from wire.frames import BINARY_FRAME_REFUSED, FrameWriter, RefusedFrame
from wire.inbound_ws import frame_writer, refusal

__all__ = ["COMPACT_BOARD_VALUES", "human_socket", "spectator_socket"]

#: ``/spectate/<id>?board=...`` values asking for the compact stream (no ``board`` in
#: ``board_update``); without ``board`` the stream is protocol.md's; anything else is
#: refused (1008 with the reason).
COMPACT_BOARD_VALUES = ("0", "false")


class _Inbound:
    """A Starlette WebSocket as the manager's ``InboundConnection``.

    What the protocol forbids never reaches the session as data: a binary frame (the
    protocol is text JSON) or a close by ``GuardedWebSocketProtocol`` (a flood of
    control frames, text that is not UTF-8) is handed to a seat's session as a
    ``RefusedFrame`` with the reason, which forfeits the seat for ``protocol_error``;
    a spectator, who has nothing to say, is closed with 1003 for a binary frame.
    Closing a socket that is already closed does nothing."""

    def __init__(self, websocket: WebSocket, *, spectator: bool = False) -> None:
        self.websocket = websocket
        self.spectator = spectator
        self._refused = False

    async def send_text(self, data: str) -> None:
        await self.websocket.send_text(data)

    def frame_writer(self) -> FrameWriter | None:
        """``FramedConnection``: write a prebuilt frame at once (``wire.inbound_ws``)."""
        return frame_writer(self.websocket.scope)

    async def receive_text(self) -> str | bytes:
        try:
            message = await self.websocket.receive()
        except (RuntimeError, OSError) as error:  # read again after the disconnect
            raise ConnectionClosed(str(error)) from None
        if message["type"] == "websocket.disconnect":
            reason = refusal(self.websocket.scope)
            if reason is not None and not self._refused and not self.spectator:
                self._refused = True  # once: the next read sees the disconnect
                return RefusedFrame(reason)
            raise ConnectionClosed(f"closed with {message.get('code', 1000)}")
        text = message.get("text")
        if text is not None:
            return str(text)
        if self.spectator:
            await self.close(
                CLOSE_UNSUPPORTED_DATA, f"{BINARY_FRAME_REFUSED}; spectators send none"
            )
            raise ConnectionClosed("the spectator sent a binary frame")
        return RefusedFrame(BINARY_FRAME_REFUSED)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await _close(self.websocket, code, reason)


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    if websocket.application_state == WebSocketState.DISCONNECTED:
        return
    if websocket.client_state == WebSocketState.DISCONNECTED:
        return
    with contextlib.suppress(RuntimeError, OSError, WebSocketDisconnect):
        await websocket.close(code, clip_close_reason(reason))


async def _serve_socket(
    websocket: WebSocket,
    run: Callable[[_Inbound], Awaitable[None]],
    refused: Mapping[type[Exception], int],
    *,
    spectator: bool = False,
) -> None:
    """Accept, run, close normally; an exception of a ``refused`` type closes with its
    close code and the exception's text as the reason."""
    # Accept first: a close before the handshake is a bare HTTP 403 without a reason.
    await websocket.accept()
    connection = _Inbound(websocket, spectator=spectator)
    try:
        await run(connection)
    except tuple(refused) as error:
        await _close(websocket, refused[type(error)], str(error) or type(error).__name__)
        return
    await _close(websocket, CLOSE_NORMAL, "")


async def human_socket(websocket: WebSocket) -> None:
    """A human seat: the bot protocol, inbound, for whoever holds the seat's token."""
    token = websocket.query_params.get("token")
    if _runtime(websocket).closing:
        await websocket.accept()
        await _close(websocket, 1001, "the game server is shutting down")
        return
    if not token:
        await websocket.accept()
        await _close(websocket, 1008, "missing token: connect to /ws?token=<token_x or token_o>")
        return
    manager = _runtime(websocket).manager
    node = manager.cluster
    if node is not None and not manager.seats_token(token):
        # A game another worker runs: relay the socket to it (``game.relay``).
        owner = None
        with contextlib.suppress(Exception):  # Redis unreachable: refused below
            owner = await node.seat_route(token)
        if owner is not None:
            from game.cluster_relay import relay_seat  # only with --redis

            await relay_seat(node, websocket, token, *owner)
            return
    await _serve_socket(
        websocket,
        lambda c: manager.play_human(token, c),
        {UnknownToken: CLOSE_POLICY_VIOLATION},
    )


async def spectator_socket(websocket: WebSocket) -> None:
    """A spectator: the game so far, then every move, then the end; ``?board=0`` (or
    ``false``): the compact stream, whose ``board_update`` packets have no ``board``."""
    game_id = websocket.path_params["game_id"]
    if _runtime(websocket).closing:
        await websocket.accept()
        await _close(websocket, 1001, "the game server is shutting down")
        return
    board = websocket.query_params.get("board")
    if board is not None and board not in COMPACT_BOARD_VALUES:
        await websocket.accept()
        why = f"board={board!r}: use board=0 (or false) for the compact stream, or leave it out"
        await _close(websocket, CLOSE_POLICY_VIOLATION, why)
        return
    compact = board is not None
    manager = _runtime(websocket).manager
    await _serve_socket(
        websocket,
        lambda c: manager.spectate(game_id, c, compact=compact),
        {UnknownGame: CLOSE_POLICY_VIOLATION, TooManySpectators: CLOSE_TRY_AGAIN_LATER},
        spectator=True,
    )
