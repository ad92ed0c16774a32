"""The ``/queue`` WebSocket: moves a client's packets to the ``QueueHub`` and the
``Challenges`` service, and the hub's packets back. No decisions here.

One socket, one purpose: a ``queue_join`` (wait for an opponent) or a
``challenge_create`` (wait for someone to accept); ``queue_leave`` stops waiting and the
socket may then be used again. In a cluster, the worker that leads the queue serves
every ``/queue`` socket; the others relay theirs to it (``game.cluster_queue``). A
client must send its first packet within ``FIRST_PACKET_S``. Anything malformed —
not JSON, an unknown ``type``, a binary frame, a frame over ``MAX_QUEUE_FRAME_BYTES``,
a refused name — gets ``nope`` with the reason and the socket is closed (1008).
``matched`` is the last packet: the socket is closed normally after it. A challenge
this socket created and still waits on is cancelled by ``queue_leave`` and when the
socket closes (unless the server is shutting down: open challenges outlive a restart).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from starlette.websockets import WebSocket

from game.challenges import ChallengeError, Challenges
from game.queue_games import QueueRefusal
from game.queue_hub import QueueClient, QueueClosing, QueueHub
from game.server_state import _runtime
from game.sockets import _close
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    QUEUE_CLIENT_PACKETS,
    ChallengeCreatedPacket,
    ChallengeCreatePacket,
    ChallengeRequest,
    PlayerTokenPacket,
    ProtocolError,
    QueueJoinPacket,
    QueueLeavePacket,
    dump_packet,
    parse_packet,
)

__all__ = ["FIRST_PACKET_S", "MAX_QUEUE_FRAME_BYTES", "queue_socket"]

log = logging.getLogger(__name__)

#: A queue packet is small; a bigger frame is refused.
MAX_QUEUE_FRAME_BYTES: Final = 4096
#: Seconds a new socket has to say what it wants.
FIRST_PACKET_S: Final = 60.0
#: Seconds one write to a queue socket may take.
SEND_TIMEOUT_S: Final = 10.0


async def queue_socket(websocket: WebSocket) -> None:
    """``/queue``: see the module docstring. On a cluster's worker that does not lead
    the queue, the socket is relayed to the one that does (``game.cluster_queue``)."""
    runtime = _runtime(websocket)
    leadership = runtime.queue_leadership
    if leadership is not None and not runtime.closing and await leadership.relay(websocket):
        return
    await websocket.accept()
    hub, challenges = runtime.queue, runtime.challenges
    if runtime.closing or hub is None or challenges is None:
        await _close(websocket, CLOSE_GOING_AWAY, "the game server is shutting down")
        return
    client = QueueClient()
    loop = asyncio.get_running_loop()
    writer = loop.create_task(_write(websocket, client), name="htttx: queue write")
    reader = loop.create_task(_read(websocket, client, hub, challenges), name="htttx: queue read")
    try:
        await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        hub.leave(client)
        if runtime.closing:  # the challenge stays open for the server after the restart
            challenges.unwatch(client)
        else:  # the creator left: nobody is there to play it
            await _withdraw(challenges, client)
        client.finish(CLOSE_NORMAL, "")
        try:
            await asyncio.wait_for(writer, SEND_TIMEOUT_S)
        except Exception:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
            await _close(websocket, CLOSE_GOING_AWAY, "")
        finally:
            client.gone.set()


async def _withdraw(challenges: Challenges, client: QueueClient) -> None:
    """Cancel the challenge ``client`` waits on; a store that fails leaves it open (to
    expire), never the socket's cleanup undone."""
    challenge_id = client.challenge_id
    try:
        await asyncio.shield(challenges.withdraw(client))
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("cannot cancel challenge %s", challenge_id)


async def _write(websocket: WebSocket, client: QueueClient) -> None:
    while True:
        item = await client.next()
        if isinstance(item, tuple):
            await _close(websocket, *item)
            return
        try:
            text = dump_packet(item).decode()
            await asyncio.wait_for(websocket.send_text(text), SEND_TIMEOUT_S)
        except Exception:
            await _close(websocket, CLOSE_GOING_AWAY, "the client does not read")
            return


async def _read(
    websocket: WebSocket, client: QueueClient, hub: QueueHub, challenges: Challenges
) -> None:
    while not client.done:
        idle = client.waiting_key is None and client.challenge_id is None
        try:
            message = await asyncio.wait_for(websocket.receive(), FIRST_PACKET_S if idle else None)
        except TimeoutError:
            client.refuse(
                f"nothing asked within {FIRST_PACKET_S:g} s: send queue_join or challenge_create",
                CLOSE_POLICY_VIOLATION,
            )
            return
        except (RuntimeError, OSError):
            return
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            client.refuse(
                "binary frame: the queue protocol sends each packet as JSON in a text frame",
                CLOSE_POLICY_VIOLATION,
            )
            return
        if len(text) > MAX_QUEUE_FRAME_BYTES:
            client.refuse(
                f"frame of {len(text)} characters; at most {MAX_QUEUE_FRAME_BYTES}",
                CLOSE_POLICY_VIOLATION,
            )
            return
        try:
            await _handle(websocket, client, hub, challenges, text)
        except ProtocolError as error:
            client.refuse(f"bad packet: {error}", CLOSE_POLICY_VIOLATION)
        except (QueueRefusal, ChallengeError) as error:
            client.refuse(str(error), CLOSE_POLICY_VIOLATION)
        except QueueClosing as error:
            client.refuse(str(error), CLOSE_GOING_AWAY)


async def _handle(
    websocket: WebSocket, client: QueueClient, hub: QueueHub, challenges: Challenges, text: str
) -> None:
    packet = parse_packet(text, allowed=QUEUE_CLIENT_PACKETS)
    match packet:
        case QueueJoinPacket():
            if client.challenge_id is not None:
                raise QueueRefusal("this socket waits on a challenge: send queue_leave first")
            await hub.join(client, packet)
        case QueueLeavePacket():
            hub.leave(client)
            await challenges.withdraw(client)
        case ChallengeCreatePacket():
            if client.waiting_key is not None or client.challenge_id is not None:
                raise QueueRefusal("this socket already waits: send queue_leave first")
            request = ChallengeRequest(
                name=packet.name,
                player_token=packet.player_token,
                time_control=packet.time_control,
                side=packet.side,
            )
            view = await challenges.create(request, str(websocket.base_url))
            if view.player_token is not None:
                client.send(PlayerTokenPacket(name=view.creator, token=view.player_token))
            client.send(ChallengeCreatedPacket(challenge_id=view.challenge_id, url=view.url))
            if not client.done:
                token = view.player_token or packet.player_token
                challenges.watch(view.challenge_id, client, token)
