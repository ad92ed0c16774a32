"""What a worker of a cluster (``--redis``) sets up beside a single server's parts, for
``game.server``'s lifespan (the composition): its tournaments coordinated by one worker
and played by all, through the work queue (``game.cluster_work``), and the ladder's
pause, shared (``game.cluster_ladder``). Imported only with ``--redis``.
"""

from __future__ import annotations

import logging

from game.cluster import ClusterSettings
from game.cluster_ladder import ClusterLadderSwitch
from game.cluster_redis import ClusterNode
from game.cluster_work import Coordinators, WorkPlayer
from game.manager import GameManager
from game.rating_book import RatingBook
from game.store import GameStore
from game.tournament_director import TournamentDirector

__all__ = ["share_ladder_pause", "share_tournaments"]

log = logging.getLogger("game.server")


async def share_tournaments(
    node: ClusterNode,
    cluster: ClusterSettings,
    store: GameStore,
    manager: GameManager,
    tournaments: TournamentDirector,
    ratings: RatingBook,
    *,
    first: bool,
) -> WorkPlayer:
    """A cluster's worker: tournaments coordinated by one worker and played by all,
    through the work queue (``game.cluster_work``); the player, to start."""
    if first:  # a cold start: nobody holds what a previous run left in the queue
        cleared = await store.work.clear()
        if cleared:
            log.info("dropped %d queued game(s) a previous run left", cleared)
    # Leases are held by this process (its run), not its name: a worker restarted with
    # the same --worker-id after kill -9 holds none of its predecessor's.
    holder = f"{node.worker_id}/{node.run}"
    tournaments.remote = Coordinators(
        node.redis,
        store.work,
        worker_id=holder,
        leases=cluster.leases,
        running_ids=store.tournaments.running_ids,
        adopt=tournaments.adopt,
        lost=tournaments.hand_over,
        stopped=tournaments.stopped_elsewhere,
    )
    return WorkPlayer(
        manager,
        store.work,
        node.redis,
        worker_id=holder,
        leases=cluster.leases,
        slots=cluster.work_slots,
        ratings=ratings,
    )


async def share_ladder_pause(node: ClusterNode, *, first: bool) -> ClusterLadderSwitch:
    """The cluster's ladder pause, for this worker's ladder if it runs one. The first
    worker of a cluster started afresh (``first``) forgets a pause its previous run left,
    with or without ``--ladder``: a restarted cluster runs its ladder again, as a
    restarted server does."""
    switch = ClusterLadderSwitch(node.redis, node.worker_id)
    if first:
        await switch.reset()
    return switch
