"""``htttx-server``'s cluster options: ``--redis URL`` makes the server one worker of a
cluster (``game.cluster``), with ``--public-url``, ``--worker-id``, ``--lease`` and
``--work-slots``.

Checked before the server listens, each failure one line (``ClusterUsageError``): a
cluster shares its database, so ``--redis`` needs ``--db postgresql+asyncpg://...`` (a
SQLite file cannot be shared between hosts, and a second process writing it would
only queue behind the first's lock); Redis must answer a PING; ``--worker-id`` must not
be a live worker's (two processes of one id would take each other for dead, and the
cluster would record the other's games aborted). A worker of that id whose heartbeats
have stopped (killed, and restarted at once) is waited for: its lease ends soon.
"""

from __future__ import annotations

import argparse
import asyncio
import math
from typing import TYPE_CHECKING

from game.cluster import (
    DEFAULT_LEASE_S,
    DEFAULT_WORK_SLOTS,
    ClusterSettings,
    Leases,
    new_worker_id,
    worker_key,
)
from game.connect_errors import safe_url
from wire.listening import reachable_url

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = ["ClusterUsageError", "add_cluster_arguments", "cluster_settings"]


class ClusterUsageError(Exception):
    """A bad cluster option, or Redis out of reach; the message is the one line printed."""


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cluster (several workers sharing PostgreSQL and Redis)")
    group.add_argument(
        "--redis",
        metavar="URL",
        help="run as one worker of a cluster, e.g. redis://127.0.0.1:6379/0 (needs a "
        "PostgreSQL --db shared by every worker)",
    )
    group.add_argument(
        "--public-url",
        metavar="URL",
        help="where the other workers reach this one (default http://HOST:PORT, "
        "127.0.0.1 for 0.0.0.0)",
    )
    group.add_argument(
        "--worker-id", metavar="ID", help="this worker's id (default the host name and a suffix)"
    )
    group.add_argument(
        "--lease",
        type=float,
        metavar="S",
        help="a worker (and its games) drop out this long after its last heartbeat; "
        f"heartbeats come three times per lease (default {DEFAULT_LEASE_S:g})",
    )
    group.add_argument(
        "--work-slots",
        type=int,
        metavar="N",
        help="tournament games this worker plays at once from the cluster's queue "
        f"(default {DEFAULT_WORK_SLOTS}; 0: it plays none, it only serves and coordinates)",
    )


def cluster_settings(args: argparse.Namespace, db_url: str) -> ClusterSettings | None:
    """The worker's settings from the arguments (None without ``--redis``), Redis
    reached once; ``ClusterUsageError`` with the reason otherwise."""
    if args.redis is None:
        # Each refused rather than ignored: a --lease without --redis is a worker
        # someone meant to start.
        for option, value in (
            ("--public-url", args.public_url),
            ("--worker-id", args.worker_id),
            ("--lease", args.lease),
            ("--work-slots", args.work_slots),
        ):
            if value is not None:
                raise ClusterUsageError(f"{option} is for a cluster's worker: add --redis URL")
        return None
    lease = DEFAULT_LEASE_S if args.lease is None else args.lease
    work_slots = DEFAULT_WORK_SLOTS if args.work_slots is None else args.work_slots
    # postgres:// and postgresql:// with or without a driver: what the store takes.
    if db_url.split(":", 1)[0].split("+", 1)[0] not in ("postgresql", "postgres"):
        raise ClusterUsageError(
            "--redis: a cluster's workers share one database; give --db "
            "postgresql+asyncpg://... (a SQLite file cannot be shared between hosts)"
        )
    if not (math.isfinite(lease) and 0.3 <= lease <= 3600):
        raise ClusterUsageError(f"--lease must be from 0.3 to 3600 seconds, got {lease:g}")
    if not 0 <= work_slots <= 100_000:
        raise ClusterUsageError(f"--work-slots must be from 0 to 100000, got {work_slots}")
    url = args.public_url or reachable_url(args.host, args.port)
    if not url.startswith(("http://", "https://")):
        raise ClusterUsageError(f"--public-url must be an http:// or https:// URL, got {url!r}")
    settings = ClusterSettings(
        redis_url=args.redis,
        url=url,
        worker_id=args.worker_id or new_worker_id(),
        leases=Leases(lease),
        work_slots=work_slots,
    )
    asyncio.run(_check_redis(settings))
    return settings


async def _check_redis(settings: ClusterSettings) -> None:
    from game.cluster_redis import ClusterNode, ClusterUnavailable  # only with --redis

    try:
        node = await ClusterNode.open(
            settings.redis_url,
            worker_id=settings.worker_id,
            url=settings.url,
            leases=settings.leases,
            max_games=1,
        )
    except ClusterUnavailable as error:
        raise ClusterUsageError(f"--redis {safe_url(settings.redis_url)}: {error}") from None
    try:
        await _wait_for_worker_id(node.redis, settings)
    finally:
        await node.redis.aclose()


async def _wait_for_worker_id(client: aioredis.Redis, settings: ClusterSettings) -> None:
    """Return once no worker holds ``settings.worker_id``: a dead one's key expires with
    its lease; a live one's changes at its next heartbeat (then the id is refused)."""
    key = worker_key(settings.worker_id)
    first = await client.get(key)
    while first is not None:
        await asyncio.sleep(min(0.5, settings.leases.heartbeat / 2))
        value = await client.get(key)
        if value is None:
            return
        if value != first:
            raise ClusterUsageError(
                f"--worker-id {settings.worker_id}: a live worker of the cluster has this "
                "id (its heartbeats go on); give another, or none for a random one"
            )
