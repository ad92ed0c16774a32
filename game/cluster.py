"""A cluster of game servers sharing PostgreSQL and Redis: the pure part (no I/O).

What is in Redis (``game.cluster_redis`` reads and writes it), every key under
``PREFIX``:

* ``worker:<id>`` -> the worker's ``WorkerInfo`` as JSON, set with a lease (``PX``):
  renewed every ``Leases.heartbeat`` seconds, gone ``Leases.lease`` seconds after the
  worker's last renewal. A worker that stops (or dies) drops out of ``GET /cluster``
  when its lease expires.
* ``game:<id>`` -> the id of the worker that runs the live game, leased the same way
  and deleted when the game ends.
* ``token:<sha256 of the seat token>`` -> the worker that runs the seat's game (the
  token itself is never stored).
* channel ``spectate:<game id>``: the owner publishes each packet for the game's
  spectators once (``encode_message``); a worker with spectators of a game it does not
  run subscribes to it once, whatever the number of its spectators.
* ``runs`` -> a hash of every worker process ("run": a random id per process, in its
  ``WorkerInfo.run``) to its worker id, and ``games-of:<run>`` -> the set of the live
  games that run plays (no lease: they outlive a worker killed with ``kill -9``). A run
  whose worker key is gone, or names another run, is dead: one worker, holding the
  lock ``sweep:<run>``, records its games aborted (``game.cluster_sweep``).
* ``queue-leader`` -> the id of the worker whose ``/queue`` pairs people (the queue's
  *leader*, ``game.cluster_queue``), leased like a worker's key; the other workers relay
  their ``/queue`` sockets to it.
* channel ``challenge-accepted``: a challenge's id, published by the worker that took
  it, for the worker whose queue socket waits on it (``game.cluster_queue``).
* ``bots-in-play`` -> a sorted set of the holds on the bots in a game (the ladder's or
  the queue's, ``game.bots_in_play``), each member ``<hold id> <casefolded bot name>``,
  its score the moment it lapses (milliseconds, Redis's clock): renewed every heartbeat
  by the worker holding it, so a dead worker's holds lapse ``HOLD_LEASES`` leases after
  its last renewal (``game.cluster_bots_in_play``).
* ``ladder-paused`` -> there while the cluster's ladder is paused (``POST
  /ladder/pause`` through any worker), holding the id of the worker it was paused
  through; no lease: the worker that schedules reads it before it pairs bots
  (``game.cluster_ladder``), and the first worker of a cluster started afresh drops it.

>>> game_key("4f2a"), worker_key("w1"), spectate_channel("4f2a")
('htttx:game:4f2a', 'htttx:worker:w1', 'htttx:spectate:4f2a')
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import socket
from dataclasses import asdict, dataclass, field
from typing import Final, Literal

__all__ = [
    "DEFAULT_LEASE_S",
    "DEFAULT_WORK_SLOTS",
    "ENDED_HEADER",
    "HOLD_LEASES",
    "PREFIX",
    "SETUP_HEADER",
    "ClusterSettings",
    "Leases",
    "Message",
    "WorkerInfo",
    "bots_in_play_key",
    "challenge_channel",
    "compact_text",
    "dead_runs",
    "decode_message",
    "encode_message",
    "game_key",
    "games_of_key",
    "ladder_paused_key",
    "new_run_id",
    "new_worker_id",
    "queue_leader_key",
    "runs_key",
    "spectate_channel",
    "sweep_key",
    "token_key",
    "worker_key",
    "worker_status",
]

PREFIX: Final = "htttx:"
#: A worker's (and its games') lease: how long after its last heartbeat it still counts.
DEFAULT_LEASE_S: Final = 10.0
#: Tournament games a worker plays at once from the queue, unless told (``--work-slots``).
DEFAULT_WORK_SLOTS: Final = 64
#: Heartbeats per lease: a worker may miss two in a row and still hold its leases.
HEARTBEATS_PER_LEASE: Final = 3
#: How long a hold on a bot in a game outlives its holder's last renewal, in leases: a
#: ladder's scheduler that dies is replaced within about a lease (and the time to see
#: it), and the new one takes its games' holds over before they lapse.
HOLD_LEASES: Final = 3

#: The setup route's response headers (``GET /cluster/games/<id>/setup``): the updates
#: its setup already shows, and whether the game's `end` went out (then the last packet).
SETUP_HEADER: Final = "x-htttx-updates"
ENDED_HEADER: Final = "x-htttx-ended"

#: What a spectator message carries: a move's update (``u``, which a late joiner whose
#: setup already has the move leaves out), an analysis (``a``) or the ``end`` (``e``).
Kind = Literal["u", "a", "e"]


def worker_key(worker_id: str) -> str:
    return f"{PREFIX}worker:{worker_id}"


def game_key(game_id: str) -> str:
    return f"{PREFIX}game:{game_id}"


def token_key(token: str) -> str:
    """The key of a seat token's owner: a hash, so Redis never holds a usable token.

    >>> token_key("secret")[:20]
    'htttx:token:2bb80d53'
    """
    return f"{PREFIX}token:{hashlib.sha256(token.encode()).hexdigest()}"


def spectate_channel(game_id: str) -> str:
    return f"{PREFIX}spectate:{game_id}"


def runs_key() -> str:
    return f"{PREFIX}runs"


def games_of_key(run: str) -> str:
    """The set of the live games of one worker process (``WorkerInfo.run``).

    >>> games_of_key("9c1e")
    'htttx:games-of:9c1e'
    """
    return f"{PREFIX}games-of:{run}"


def sweep_key(run: str) -> str:
    """The lock of the worker sweeping a dead run's games (``SET NX PX``)."""
    return f"{PREFIX}sweep:{run}"


def queue_leader_key() -> str:
    """The key naming the queue's leader (its worker id).

    >>> queue_leader_key(), challenge_channel()
    ('htttx:queue-leader', 'htttx:challenge-accepted')
    """
    return f"{PREFIX}queue-leader"


def bots_in_play_key() -> str:
    """The sorted set of the holds on the bots in a game.

    >>> bots_in_play_key()
    'htttx:bots-in-play'
    """
    return f"{PREFIX}bots-in-play"


def ladder_paused_key() -> str:
    """The key that is there while the cluster's ladder is paused.

    >>> ladder_paused_key()
    'htttx:ladder-paused'
    """
    return f"{PREFIX}ladder-paused"


def challenge_channel() -> str:
    """The channel on which a taken challenge's id is announced to every worker."""
    return f"{PREFIX}challenge-accepted"


def worker_pattern() -> str:
    """The SCAN pattern matching every worker's key."""
    return f"{PREFIX}worker:*"


def new_worker_id() -> str:
    """A worker id: the host name and a random suffix (unique across restarts).

    >>> len(new_worker_id().rsplit("-", 1)[1])
    8
    """
    host = socket.gethostname().split(".")[0] or "worker"
    return f"{host}-{secrets.token_hex(4)}"


def new_run_id() -> str:
    """A worker process's run id: random, so a worker restarted with the same id is a
    new run and its previous run's games are swept all the same.

    >>> len(new_run_id())
    16
    """
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Leases:
    """How long a lease lasts and how often it is renewed.

    >>> Leases(9.0).heartbeat, Leases(9.0).lease_ms
    (3.0, 9000)
    >>> Leases(0.05)
    Traceback (most recent call last):
    ValueError: the lease must be from 0.3 to 3600 seconds, got 0.05
    """

    lease: float = DEFAULT_LEASE_S

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lease) and 0.3 <= self.lease <= 3600):
            raise ValueError(f"the lease must be from 0.3 to 3600 seconds, got {self.lease:g}")

    @property
    def heartbeat(self) -> float:
        """Seconds between two renewals."""
        return self.lease / HEARTBEATS_PER_LEASE

    @property
    def lease_ms(self) -> int:
        """The lease in milliseconds, for ``SET ... PX``."""
        return max(1, round(self.lease * 1000))


@dataclass(frozen=True)
class ClusterSettings:
    """What makes a server one worker of a cluster (``create_app(cluster=...)``)."""

    redis_url: str
    #: The base URL other workers reach this one at (its setup route).
    url: str
    worker_id: str = field(default_factory=lambda: new_worker_id())
    leases: Leases = field(default_factory=Leases)
    #: Tournament games it plays at once from the cluster's queue (``game.cluster_work``).
    work_slots: int = DEFAULT_WORK_SLOTS


@dataclass(frozen=True)
class WorkerInfo:
    """One worker as ``GET /cluster`` shows it (and as its Redis key holds it)."""

    id: str
    url: str
    started: str  # ISO 8601, UTC
    heartbeat: str  # ISO 8601, UTC: its last renewal
    live_games: int
    max_games: int
    run: str = ""  # this process's run id (``new_run_id``)

    @property
    def load(self) -> float:
        """The share of its game slots in use, 0 to 1.

        >>> WorkerInfo("w", "http://h", "t", "t", 25, 100).load
        0.25
        """
        return self.live_games / self.max_games if self.max_games else 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> WorkerInfo:
        data = json.loads(text)
        return cls(
            id=str(data["id"]),
            url=str(data["url"]),
            started=str(data["started"]),
            heartbeat=str(data["heartbeat"]),
            live_games=int(data["live_games"]),
            max_games=int(data["max_games"]),
            run=str(data.get("run", "")),
        )

    def public(self, now_heartbeat_age: float, leases: Leases) -> dict[str, object]:
        """What ``GET /cluster`` says of it, with its status."""
        return {
            **asdict(self),
            "load": round(self.load, 4),
            "status": worker_status(now_heartbeat_age, leases),
        }


def worker_status(heartbeat_age: float, leases: Leases) -> str:
    """``live`` while its heartbeats come on time, ``late`` once one is missed (its
    lease still holds: it may be busy or cut off). Past the lease its key is gone.

    >>> worker_status(1.0, Leases(9.0)), worker_status(7.0, Leases(9.0))
    ('live', 'late')
    """
    return "live" if heartbeat_age <= 2 * leases.heartbeat else "late"


def dead_runs(
    runs: dict[str, str], workers: dict[str, WorkerInfo | None], own_run: str
) -> list[tuple[str, str]]:
    """The ``(run, worker id)`` of the runs in ``runs`` (run -> worker id) that are
    over: their worker's lease is gone (``workers`` maps it to None) or holds for
    another run of that worker (restarted with the same id). This worker's own run
    never is.

    >>> info = WorkerInfo("w1", "http://h", "t", "t", 0, 1, run="new")
    >>> dead_runs({"old": "w1", "new": "w1", "r3": "w3", "me": "w2"},
    ...           {"w1": info, "w3": None, "w2": None}, own_run="me")
    [('old', 'w1'), ('r3', 'w3')]
    """
    dead = []
    for run, worker_id in sorted(runs.items()):
        if run == own_run:
            continue
        info = workers.get(worker_id)
        if info is None or info.run != run:
            dead.append((run, worker_id))
    return dead


@dataclass(frozen=True)
class Message:
    """One packet for a game's spectators, as published on its channel.

    ``seq``: for an update, its index among the game's updates (0 for the first move's);
    for an analysis or the end, the number of updates before it."""

    kind: Kind
    seq: int
    text: str


def encode_message(message: Message) -> bytes:
    """``<kind> <seq> <packet>``: the packet's JSON text is carried as it is.

    >>> encode_message(Message("u", 3, '{"type":"board_update"}'))
    b'u 3 {"type":"board_update"}'
    >>> decode_message(_)
    Message(kind='u', seq=3, text='{"type":"board_update"}')
    """
    return f"{message.kind} {message.seq} {message.text}".encode()


def decode_message(data: bytes | str) -> Message:
    text = data.decode() if isinstance(data, bytes) else data
    kind, seq, packet = text.split(" ", 2)
    if kind not in ("u", "a", "e"):
        raise ValueError(f"not a spectator message: kind {kind!r}")
    return Message(kind, int(seq), packet)  # type: ignore[arg-type]


def compact_text(text: str) -> str:
    """The compact stream's variant of a ``board_update`` (no ``board``); any other
    packet as it is. A worker relaying a game it does not run derives it so (the owner
    publishes the full packet only).

    >>> compact_text('{"type":"board_update","move":1,"board":[[0,0,"x"]]}')
    '{"type":"board_update","move":1}'
    >>> compact_text('{"type":"end"}')
    '{"type":"end"}'
    """
    if '"board"' not in text:
        return text
    packet = json.loads(text)
    if packet.get("type") != "board_update":
        return text
    packet.pop("board", None)
    return json.dumps(packet, separators=(",", ":"), ensure_ascii=False)
