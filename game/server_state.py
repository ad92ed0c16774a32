"""What the game server's app holds: its settings (``_Settings``), the example bots it
hosts (``HOSTED_BOTS``), and the runtime its lifespan opens and closes (``_Runtime``)."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import aiohttp
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket

from bot.bot import BaseBot
from bot.bots import CenterBot, RandomBot, ThreatBot
from bot.bots.search_bot import SearchBot
from bot.serve import BotPool
from game.analysis import DEFAULT_ANALYSIS_TIME
from game.challenges import Challenges
from game.discovery import AddressPolicy
from game.ladder import Ladder, LadderSettings
from game.local_bot_spec import BotLimits
from game.manager import GameManager
from game.queue_hub import QueueHub
from game.rating_book import RatingBook
from game.registry import DEFAULT_RECHECK_S, BotRegistry
from game.session import SendBoardPolicy, SessionLimits
from game.store import GameStore
from game.tournament_director import TournamentDirector

if TYPE_CHECKING:
    from game.cluster_queue import ClusterChallenges, QueueLeadership
    from game.cluster_work import WorkPlayer  # only with --redis

__all__ = ["HOSTED_BOTS", "bearer_token", "client_address", "has_api_token", "hosted_bot_named"]

#: The example bots hosted on the server's own port, by path.
HOSTED_BOTS: Final[dict[str, type[BaseBot]]] = {
    "/bots/random": RandomBot,
    "/bots/center": CenterBot,
    "/bots/threat": ThreatBot,
    "/bots/search": SearchBot,
}


def hosted_bot_named(name: str) -> type[BaseBot] | None:
    """The hosted example bot called ``name`` (the last part of its path: ``threat``),
    or None when ``name`` is not one (a URL, say).

    >>> hosted_bot_named("threat").__name__, hosted_bot_named("http://host/bot")
    ('ThreatBot', None)
    """
    return {path.rsplit("/", 1)[-1]: bot for path, bot in HOSTED_BOTS.items()}.get(name)


@dataclass
class _Settings:
    db_url: str
    policy: AddressPolicy
    api_token: str | None
    host_example_bots: bool
    max_games: int
    max_games_per_client: int
    max_spectators: int
    spectator_flush: float
    max_body_bytes: int
    limits: SessionLimits | None
    discovery_timeout: float
    commit_interval: float
    bot_log_dir: str = "data/bot-logs"
    bot_limits: BotLimits | None = None
    send_board: SendBoardPolicy = "auto"
    analysis_bot: str | None = None
    analysis_time: float = DEFAULT_ANALYSIS_TIME
    #: Seconds between two checks of every registered bot (``BotRegistry``); 0: never.
    bot_recheck: float = DEFAULT_RECHECK_S
    ladder: LadderSettings | None = None
    ladder_hosted_bots: bool = False


@dataclass
class _Runtime:
    """What the lifespan opens and closes, in ``app.state.arena``."""

    store: GameStore
    http: aiohttp.ClientSession
    pool: BotPool
    manager: GameManager
    tournaments: TournamentDirector
    #: The arena's ratings (``game.rating_book``) and registered bots and names
    #: (``game.registry``).
    ratings: RatingBook
    registry: BotRegistry
    # The /queue and open challenges (game.queue_hub, game.challenges).
    queue: QueueHub | None = None
    challenges: Challenges | None = None
    # A cluster's worker (--redis): who leads the /queue, and challenges taken on other
    # workers (game.cluster_queue).
    queue_leadership: QueueLeadership | None = None
    cluster_challenges: ClusterChallenges | None = None
    ladder: Ladder | None = None
    #: A cluster's worker: the tournament games it plays from the queue.
    work: WorkPlayer | None = None
    closing: bool = False
    #: Set with ``closing``: what a request waiting for something (``GET
    #: /games/<id>?wait=``, ``game.game_wait``) waits on too, so that it answers at once
    #: and never holds up the stop.
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    drained: bool = False
    # Live games created per client address, and creations under way (discovery takes
    # a while, and concurrent requests must not all slip under the cap), for the
    # per-client cap.
    by_client: dict[str, set[str]] = field(default_factory=dict)
    creating: Counter[str] = field(default_factory=Counter)
    #: Tournaments and series started (created or resumed) per client address: while
    #: one runs, its ``concurrency`` counts among its client's live games, or one
    #: client could run any number of games through tournaments.
    tournaments_by_client: dict[str, set[str]] = field(default_factory=dict)

    async def drain(self) -> None:
        """Stop taking games and abort the running ones (each gets an ``end``).

        Idempotent: ``GameServer.shutdown`` calls it before uvicorn closes connections,
        the lifespan again in case the app runs under a plain uvicorn."""
        self.closing = True
        self.stopping.set()
        if self.drained:
            return
        self.drained = True
        # The ladder, tournaments and the queue first: they would start new games as the
        # old ones are aborted.
        if self.ladder is not None:
            await self.ladder.shutdown()
        await self.tournaments.shutdown()
        if self.work is not None:
            await self.work.close()
        if self.queue_leadership is not None:  # before its people are closed
            await self.queue_leadership.close()
        if self.cluster_challenges is not None:
            await self.cluster_challenges.close()
        if self.queue is not None:
            await self.queue.close()
        if self.challenges is not None:
            await self.challenges.close()
        await self.manager.shutdown()
        if self.work is not None:  # its aborted games handed back for other workers
            await self.work.drain()
        await self.pool.close_sessions(1001, "the game server is shutting down")

    def games_of(self, client: str) -> int:
        """Live games of ``client``, counting those being created and, for each of its
        tournaments and series that runs, its ``concurrency``."""
        # Forget every ended game, not only this client's: clients that never come
        # back must not leave entries behind. One pass over at most max_games ids.
        live = set(self.manager.live_game_ids())
        for key in list(self.by_client):
            self.by_client[key] &= live
            if not self.by_client[key]:
                del self.by_client[key]
        held = 0
        for key in list(self.tournaments_by_client):
            slots = {tid: self.tournaments.slots(tid) for tid in self.tournaments_by_client[key]}
            if key == client:
                held = sum(slots.values())
            self.tournaments_by_client[key] = {tid for tid, games in slots.items() if games}
            if not self.tournaments_by_client[key]:
                del self.tournaments_by_client[key]
        return len(self.by_client.get(client, ())) + self.creating[client] + held

    def refuse_games(self, client: str, games: int, most: int) -> str | None:
        """Why ``client`` may not start a tournament or series that plays ``games`` at
        once (its ``concurrency``) when it may have ``most`` live games, or None."""
        held = self.games_of(client)
        if held + games <= most:
            return None
        return (
            f"this client's live games, tournaments and series (each counted by its "
            f"concurrency) already hold {held} of the {most} games it may have at once; "
            f"concurrency {games} does not fit: wait for one to end, or lower concurrency"
        )

    @contextlib.contextmanager
    def holding(self, client: str, games: int) -> Iterator[None]:
        """Count ``games`` more among ``client``'s live games while the block runs: a
        tournament or series of that concurrency being checked and started (concurrent
        requests must not all slip under the cap)."""
        self.creating[client] += games
        try:
            yield
        finally:
            self.creating[client] -= games
            if not self.creating[client]:
                del self.creating[client]

    def started_tournament(self, client: str, tournament_id: str) -> None:
        """``client`` started (created or resumed) ``tournament_id``: its concurrency
        counts among the client's live games while it runs."""
        self.tournaments_by_client.setdefault(client, set()).add(tournament_id)


def client_address(request: Request) -> str:
    """Whom the per-client caps count a request against: its peer's address."""
    return request.client.host if request.client is not None else "unknown"


def bearer_token(request: Request) -> str | None:
    """The token of the request's ``Authorization: Bearer <token>``; None for none."""
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return given.strip() or None if scheme.lower() == "bearer" else None


def _authorized(request: Request, api_token: str) -> bool:
    given = bearer_token(request)
    # compare_digest: the time taken must not tell how much of a guess was right.
    return given is not None and hmac.compare_digest(given.encode(), api_token.encode())


def has_api_token(request: Request) -> bool:
    """Whether the request carries the server's API token (False when it has none)."""
    token = _settings(request).api_token
    return token is not None and _authorized(request, token)


def _without_token(request: Request) -> Response | None:
    """The 401 for a request that changes something without the server's API token
    (``POST /game/new``, the tournament routes), or None when it may go on."""
    token = _settings(request).api_token
    if token is None or _authorized(request, token):
        return None
    return JSONResponse(
        {"detail": "an API token is required: send 'Authorization: Bearer <HTTTX_API_TOKEN>'"},
        status_code=401,
        headers={"WWW-Authenticate": "Bearer"},
    )


def _runtime(request: Request | WebSocket) -> _Runtime:
    runtime: _Runtime = request.app.state.arena
    return runtime


def _settings(request: Request) -> _Settings:
    settings: _Settings = request.app.state.settings
    return settings
