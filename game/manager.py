"""Run games: the asyncio around the pure ``GameSession``, one task per game.

``GameManager`` is what the server (``game.server``) calls: ``create_game`` for
``POST /game/new``, ``play_human`` for ``/ws?token=``, ``spectate`` for
``/spectate/<game_id>``, ``records`` for the read routes, ``shutdown`` when it stops.
Everything a game decides is decided by its ``GameSession``; the manager and the
modules it runs games with only deliver inputs and carry out the actions, with a
deadline on every wait and a bound on every queue:

* ``game.running``: one game, one task (``RunningGame``), which alone touches the
  session.
* ``game.outboxes``: what a game sends never waits on a peer.
* ``game.recorder``: the record, written in order, with group commit.
* ``game.reads``: what readers get, live games from memory.
* ``game.spectating``: writing one spectator's packets (here and for a cluster's relays).
* ``game.analyst``: with an analysis bot (``analyst``), a watched game hands it each new
  position (``RunningGame._feed_analysis``, after every input) and its answers go to
  that game's spectators only (``RunningGame._publish_analysis``, one encode each); a
  late spectator gets them right after its ``setup`` (``game.fanout.Spectator.backlog``).

Decisions:

* Human tokens (``secrets.token_urlsafe(32)``) are valid while the game runs. A second
  connection with a live seat's token takes the seat over (the old one is closed with
  1008); to the session this is a drop and a reconnect, so it gets ``setup`` and the
  pending request. The takeover serves a client whose old connection died without
  the server noticing yet.
* ``latency_ms`` of a recorded move is the mover's last measured round trip (ping for a
  bot's socket); ``None`` for stateless bots and humans (nothing is measured for them).
* A seat's ``move_request`` carries ``board`` (the full board, our extension) when its
  ``PlayerConfig.send_board`` says so; when it does not say, the manager's
  ``send_board`` decides: ``"auto"`` gives it to humans and not to websocket bots
  (the spec's ``previous`` only, O(new stones) per move), ``"always"`` to every seat
  (for a server that seats the prototype's bots, which read ``board``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

import aiohttp

from game.analyst import Analyst
from game.discovery import (
    DEFAULT_POLICY,
    AddressPolicy,
    BotEndpoint,
    CapabilitiesCache,
    DiscoveryError,
    discover,
)
from game.end_hooks import END_HOOK_WAIT, EndHook, EndHooks
from game.fanout import MAX_SPECTATOR_FLUSH_S, SPECTATOR_FLUSH_S, Spectator
from game.outboxes import CLOSE_WAIT, FramedConnection, Outbox
from game.reads import DEFAULT_CACHE_BYTES, RecordReader
from game.recorder import DEFAULT_COMMIT_INTERVAL, check_commit_interval
from game.running import RunningGame
from game.running_events import Attach, Detach, Frame, Slot
from game.seat_checks import check_seats
from game.seats import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_PING_INTERVAL,
    DEFAULT_PONG_TIMEOUT,
    InboundConnection,
)
from game.session import (
    SEND_BOARD_POLICIES,
    GameSession,
    SendBoardPolicy,
    SessionLimits,
)
from game.spectating import UnknownGame, send_finished, serve_spectator
from game.store import ABORTED_RESULT, GameStore
from models import (
    CLOSE_NORMAL,
    CLOSE_POLICY_VIOLATION,
    GameRecord,
    GameResult,
    NewGameRequest,
    NewGameResponse,
    Player,
    PlayerConfig,
    PlayerType,
)

__all__ = [
    "DEFAULT_COMMIT_INTERVAL",
    "DEFAULT_MAX_SPECTATORS",
    "END_HOOK_WAIT",
    "EndHook",
    "GameManager",
    "LiveProgress",
    "ManagerClosed",
    "TooManyGames",
    "TooManySpectators",
    "UnknownGame",
    "UnknownToken",
    "check_commit_interval",
]

if TYPE_CHECKING:
    from game.cluster_redis import ClusterNode

log = logging.getLogger("game.manager")

#: How long ``shutdown`` gives the games to end properly before cancelling them.
SHUTDOWN_WAIT = 10.0
#: Spectators of one game at most. Each costs a socket write per flush interval (the
#: frames are encoded once for all and written joined, ``game.fanout``), so this bounds
#: what one popular game can take from the others.
DEFAULT_MAX_SPECTATORS = 2000

# ------------------------------------------------------------------------- errors


class TooManyGames(Exception):
    """``create_game`` while ``max_games`` games are running (the server answers 503)."""


class ManagerClosed(Exception):
    """``create_game`` after ``shutdown`` began."""


class UnknownToken(LookupError):
    """``play_human`` with a token no running game gave out (or whose game is over)."""


class LiveProgress(NamedTuple):
    """Where a running game stands (``GameManager.live_progress``)."""

    moves: int
    result: GameResult | None
    to_move: Player | None
    clock_x_ms: int | None
    clock_o_ms: int | None


class TooManySpectators(Exception):
    """``spectate`` a running game that already has ``max_spectators`` spectators."""


# ------------------------------------------------------------------------ manager


class GameManager:
    """Every running game of one server. See the module docstring."""

    def __init__(
        self,
        store: GameStore,
        http: aiohttp.ClientSession,
        *,
        policy: AddressPolicy = DEFAULT_POLICY,
        limits: SessionLimits | None = None,
        discovery_timeout: float = 5.0,
        max_games: int = 1000,
        max_spectators: int = DEFAULT_MAX_SPECTATORS,
        spectator_queue: int = 256,
        spectator_flush: float = SPECTATOR_FLUSH_S,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        pong_timeout: float = DEFAULT_PONG_TIMEOUT,
        commit_interval: float = DEFAULT_COMMIT_INTERVAL,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        send_board: SendBoardPolicy = "auto",
        analyst: Analyst | None = None,
    ) -> None:
        check_commit_interval(commit_interval)
        if send_board not in SEND_BOARD_POLICIES:
            raise ValueError(f"send_board must be one of {SEND_BOARD_POLICIES}, got {send_board!r}")
        if not 0 < pong_timeout < math.inf:
            raise ValueError(f"pong_timeout must be more than 0 seconds, got {pong_timeout}")
        self.store = store
        self.http = http
        self.policy = policy
        self.limits = limits if limits is not None else SessionLimits()
        self.discovery_timeout = discovery_timeout
        #: Bots' endpoints kept while their capabilities are fresh (the bot's
        #: ``Cache-Control``; ``game.capabilities_cache``): one fetch serves the games
        #: made meanwhile. A seat that cannot be dialled drops its bot from it.
        self.capabilities: CapabilitiesCache[BotEndpoint] = CapabilitiesCache()
        self.max_games = max_games
        self.max_spectators = max_spectators
        self.spectator_queue = spectator_queue
        if not 0 <= spectator_flush <= MAX_SPECTATOR_FLUSH_S:
            raise ValueError(
                f"spectator_flush must be from 0 to {MAX_SPECTATOR_FLUSH_S} s, "
                f"got {spectator_flush}"
            )
        #: Seconds between two writes to one spectator (``game.fanout``).
        self.spectator_flush = spectator_flush
        self.connect_timeout = connect_timeout
        self.ping_interval = ping_interval
        self.pong_timeout = pong_timeout
        self.commit_interval = commit_interval
        #: Who gets ``board`` in ``move_request`` when the seat does not say
        #: (``game.session_config.resolve_send_board``).
        self.send_board: SendBoardPolicy = send_board
        #: The analysis bot that evaluates the positions of watched games, if any
        #: (``game.analyst``; the composition root owns and closes it).
        self.analyst = analyst
        #: What the read routes serve: live games from memory, others from the store.
        self.records = RecordReader(store, self, cache_bytes=cache_bytes)
        self._games: dict[str, RunningGame] = {}
        self._tokens: dict[str, tuple[RunningGame, Player]] = {}
        self._starting = 0  # games being created: they count against max_games
        self._closing = False
        #: Run by each game once its record is committed, before its ``end``.
        self.end_hooks = EndHooks()
        #: This worker's part in a cluster (``--redis``, ``game.cluster_redis``): its
        #: games' owner keys, their spectators on other workers. None: a single process.
        self.cluster: ClusterNode | None = None

    def add_end_hook(self, hook: EndHook, *, wants: Callable[[str], bool] | None = None) -> None:
        """Call ``hook`` with the final record of every game that ends (or of those whose
        id ``wants``), once the record is committed and before its ``end`` packet goes
        to anyone (a bounded wait, ``END_HOOK_WAIT``; a hook that fails is logged). See
        ``game.end_hooks``."""
        self.end_hooks.add(hook, wants=wants)

    def seats_token(self, token: str) -> bool:
        """Whether ``token`` is a seat of a game this manager runs (over or not)."""
        return token in self._tokens

    def awaits_end_hooks(self, game_id: str) -> bool:
        """Whether ``game_id`` runs here and its end hooks are yet to run: a hook that
        wants it (the ratings' ``tracks``) will still be asked. Once they ran (its end is
        committed, going out), it may run a moment longer, but a game declared rated
        now is not its hooks' to settle: ``RatingBook.track`` reads the store."""
        game = self._games.get(game_id)
        return game is not None and not game.hooks_started

    def runs(self, game_id: str) -> bool:
        """Whether ``game_id`` is running in this process now (O(1))."""
        return game_id in self._games

    def live_game_ids(self) -> list[str]:
        """The ids of the games running now, oldest first."""
        return list(self._games)

    def live_progress(self, game_id: str) -> LiveProgress | None:
        """How far a game this manager runs has got: moves played, the result once
        decided, who is to move and both clocks now (cheaper than ``live_record``); None
        if it does not run it."""
        game = self._games.get(game_id)
        if game is None:
            return None
        session = game.session
        to_move, clock_x_ms, clock_o_ms = session.standing(asyncio.get_running_loop().time())
        return LiveProgress(len(session.moves), session.result, to_move, clock_x_ms, clock_o_ms)

    def decided_results(self) -> dict[str, GameResult]:
        """The games this manager runs whose result is decided, with it: their end is
        known in memory (``live_record`` shows it) before the store has committed it."""
        decided = {}
        for game_id, game in self._games.items():
            if (result := game.session.result) is not None:
                decided[game_id] = result
        return decided

    def live_record(self, game_id: str) -> GameRecord | None:
        """The record of a game this manager runs, from memory: every move broadcast so
        far and the result once decided, even before the store has them. None once the
        game is over and its record committed (then the store has it all)."""
        game = self._games.get(game_id)
        return None if game is None else game.record()

    def recorded_end_of(self, game_id: str) -> Awaitable[None]:
        """Wait for a game this manager runs to be over and its final record committed
        (at once if it does not run it): the moment its `end` goes out, before its
        connections are closed, sooner than ``end_of``. Looked up when called, as
        ``end_of``. ``GET /games/<id>?wait=`` waits on it."""
        game = self._games.get(game_id)

        async def wait() -> None:
            if game is not None:
                await game.recorded.wait()

        return wait()

    def end_of(self, game_id: str) -> Awaitable[GameResult | None]:
        """Wait for a game this manager runs to end and its record to be committed; its
        result (None if it does not run it): the recorded one, if the store had the game
        over already (``game.running``: another worker recorded it aborted). The game is
        looked up when this is called, not when it is awaited, so a game that ends in
        between is not missed.

        ``game.tournament_runner`` and ``game.cluster_work`` wait on their games with it.
        A task, not a coroutine: a caller whose next step fails before it awaits this
        leaves nothing never awaited behind (it ends with the game)."""
        game = self._games.get(game_id)

        async def wait() -> GameResult | None:
            if game is None:
                return None
            await game.finished.wait()
            return game.session.result

        return asyncio.ensure_future(wait())

    def abort_game(self, game_id: str, reason: str) -> bool:
        """End a running game as aborted (``end`` to everyone, recorded so) with
        ``reason``; False if it does not run here."""
        game = self._games.get(game_id)
        if game is None:
            return False
        game.request_abort(reason)
        return True

    # ------------------------------------------------------------- creating

    async def create_game(self, request: NewGameRequest) -> NewGameResponse:
        """Discover the bots, write the record, start the game.

        Raises ``DiscoveryError`` (a bot that cannot be seated; the message names the
        seat and says why: ``CannotStartFromOpening`` for a websocket bot that cannot be
        told the request's opening, ``CannotLearnRules`` for a bot that cannot be told
        its rules), ``TooManyGames`` or ``ManagerClosed``.
        """
        if self._closing:
            raise ManagerClosed("the server is shutting down and takes no new games")
        if len(self._games) + self._starting >= self.max_games:
            raise TooManyGames(
                f"{self.max_games} games are running, the most this server runs at once; "
                "try again later"
            )
        self._starting += 1
        try:
            return await self._start(request, await self._endpoints(request))
        finally:
            self._starting -= 1

    async def _endpoints(self, request: NewGameRequest) -> dict[Player, BotEndpoint | None]:
        """How to play each seat's bot (None for a human's seat)."""
        x, o = request.player_x, request.player_o
        if x.type is PlayerType.BOT and o.type is PlayerType.BOT and x.bot_url == o.bot_url:
            # One bot in both seats (a self-play game): one look at its capabilities
            # serves both, as they are read at the same moment anyway.
            endpoint = await self._discover("player_x and player_o", x)
            return {Player.X: endpoint, Player.O: endpoint}
        # Both at once; every task is awaited, and X's failure is reported first.
        found = await asyncio.gather(
            self._discover("player_x", x), self._discover("player_o", o), return_exceptions=True
        )
        endpoints: dict[Player, BotEndpoint | None] = {}
        for side, outcome in zip((Player.X, Player.O), found, strict=True):
            if isinstance(outcome, BaseException):
                raise outcome
            endpoints[side] = outcome
        return endpoints

    async def _discover(self, seat: str, player: PlayerConfig) -> BotEndpoint | None:
        if player.type is not PlayerType.BOT:
            return None
        assert player.bot_url is not None  # PlayerConfig checks it
        try:
            return await discover(
                player.bot_url,
                self.http,
                policy=self.policy,
                timeout=self.discovery_timeout,
                cache=self.capabilities,
            )
        except DiscoveryError as exc:
            raise type(exc)(f"{seat}: {exc}") from None

    async def _start(
        self, request: NewGameRequest, endpoints: dict[Player, BotEndpoint | None]
    ) -> NewGameResponse:
        configs = {Player.X: request.player_x, Player.O: request.player_o}
        slots = {
            side: Slot.for_player(configs[side], endpoints[side], self.send_board)
            for side in Player
        }
        check_seats(request, slots)
        for slot in slots.values():
            if slot.info.kind == "human":
                slot.token = secrets.token_urlsafe(32)
        game_id = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        session = GameSession(
            game_id,
            request.match_config,
            {side: slot.info for side, slot in slots.items()},
            limits=self.limits,
            started_at=loop.time(),
            started_wall=datetime.now(UTC),
            name=request.name,
            adjudication=request.adjudication,
            opening=request.opening or (),
            tags=request.tags,
        )
        if self._closing:
            raise ManagerClosed("the server is shutting down and takes no new games")
        game = RunningGame(self, session, slots)
        # The bots are dialled while the record is written: the game starts that much
        # sooner (a commit is about a millisecond), and one that cannot start hangs up.
        game.dial()
        try:
            if self.cluster is not None:
                await self._own_in_cluster(game_id, slots)
            await self.store.create_game(game.record())
            if self._closing:  # shut down while the record was written: end it at once
                with contextlib.suppress(Exception):
                    await self.store.finish_game(
                        game_id, ABORTED_RESULT, ended_at=datetime.now(UTC)
                    )
                raise ManagerClosed("the server is shutting down and takes no new games")
        except BaseException:
            await game.abandon()
            if self.cluster is not None:
                self.cluster.game_ended(game_id)
            raise
        self._games[game_id] = game
        for side, slot in slots.items():
            if slot.token is not None:
                self._tokens[slot.token] = (game, side)
        game.task = loop.create_task(game.run(), name=f"htttx: game {game_id}")
        log.info("game %s created", game_id)
        return NewGameResponse(
            game_id=game_id, token_x=slots[Player.X].token, token_o=slots[Player.O].token
        )

    async def _own_in_cluster(self, game_id: str, slots: dict[Player, Slot]) -> None:
        """``game_id`` is this worker's in the cluster before anyone is told of it and
        before its record exists: killed right after the commit, the worker still leaves
        it to the sweeper (``game.cluster_sweep``), never running for ever."""
        assert self.cluster is not None
        tokens = [slot.token for slot in slots.values() if slot.token is not None]
        try:
            await self.cluster.game_started(game_id, tokens)
        except Exception:  # the game plays all the same, seen from this worker only
            log.exception("game %s: registering it in the cluster failed", game_id)

    def forget(self, game: RunningGame) -> None:
        """``game`` is over and its record written (or given up on): reads of it go to
        the store from now on, and its tokens are used up."""
        self._games.pop(game.game_id, None)
        for slot in game.slots.values():
            if slot.token is not None:
                self._tokens.pop(slot.token, None)
        if self.cluster is not None:
            self.cluster.game_ended(game.game_id)

    # --------------------------------------------------------------- humans

    async def play_human(self, token: str, connection: InboundConnection) -> None:
        """Seat the human holding ``token`` on ``connection`` (accepted by the server)
        until the connection or the game ends. An unknown or used-up token closes the
        connection with 1008 and raises ``UnknownToken``."""
        entry = self._tokens.get(token)
        if entry is None or entry[0].finished.is_set() or self._closing:
            why = "unknown token, or its game is over"
            with contextlib.suppress(Exception):
                await connection.close(CLOSE_POLICY_VIOLATION, why)
            raise UnknownToken(why)
        game, side = entry
        conn = object()
        loop = asyncio.get_running_loop()

        async def failed(why: str) -> None:
            await game.post(Detach(side, conn, why, loop.time()))

        outbox = Outbox(connection, f"human {side.value} {game.game_id}", on_failed=failed)
        await game.post(Attach(side, conn, outbox))

        async def read() -> None:
            why = "the connection closed"
            try:
                while True:
                    data = await connection.receive_text()
                    await game.post(Frame(side, conn, data, loop.time()))
            except Exception as exc:
                why = f"the connection ended: {exc!r}" if str(exc) else why
            await game.post(Detach(side, conn, why, loop.time()))

        reader = loop.create_task(read(), name=f"htttx: read human {side.value} {game.game_id}")
        finished = loop.create_task(game.finished.wait(), name="htttx: game end")
        try:
            await asyncio.wait({reader, finished}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, finished):
                task.cancel()
            await asyncio.gather(reader, finished, return_exceptions=True)
            # The game closes the seat's outbox; make sure, and wait for it.
            outbox.close(CLOSE_NORMAL, "the connection ended")
            await outbox.wait_closed(CLOSE_WAIT)

    # ----------------------------------------------------------- spectators

    async def spectate(
        self, game_id: str, connection: InboundConnection, *, compact: bool = False
    ) -> None:
        """Show a game on ``connection``: ``setup`` with everything so far, a
        ``board_update`` per move, ``end``, close. With an analysis bot, the ``analysis``
        packets so far follow the setup, and one more comes per position evaluated. A
        finished game: its snapshot, then ``end``. Raises ``UnknownGame`` if there is no
        such game and ``TooManySpectators`` if a running game already has
        ``max_spectators``. ``compact``: the ``board_update`` packets leave out ``board``
        (``?board=0``). Each write carries every packet since the last one
        (``game.fanout``).
        """
        game = self._games.get(game_id)
        if game is None:
            # Run by another worker of the cluster: relayed; else over (or unknown).
            cluster = self.cluster
            if cluster is not None and await cluster.spectate(game_id, connection, compact=compact):
                return
            await send_finished(self.records, game_id, connection)
            return
        if len(game.spectators) >= self.max_spectators:
            raise TooManySpectators(
                f"game {game_id} already has {len(game.spectators)} spectators, the most "
                f"this server allows; try again later"
            )
        writer = connection.frame_writer() if isinstance(connection, FramedConnection) else None
        spectator = Spectator(self.spectator_queue, writer, compact=compact)
        setup = game.spectator_setup()
        # Right after the setup, the analysis of the positions so far (game.analysis).
        analysis = game.analysis_backlog()
        if isinstance(setup, str):
            spectator.backlog = [setup, *analysis]
        else:  # being encoded off the loop: the updates queue behind it
            spectator.setup = setup
            spectator.backlog = analysis
        if game.end_text is not None:  # the end went out already: a latecomer gets it too
            spectator.backlog = [*spectator.backlog, game.end_text]  # shared: not appended
            spectator.close()
        elif not game.add_spectator(spectator):  # ending without an `end` for spectators
            spectator.close()

        await serve_spectator(game_id, spectator, connection, game.drop)

    async def cluster_setup(self, game_id: str) -> tuple[int, list[str], bool] | None:
        """For a spectator on another worker of the cluster: how many updates the setup
        shows, the setup, the analysis so far and the end if it went out (and whether
        it did); None if the game does not run here."""
        game = self._games.get(game_id)
        if game is None:
            return None
        seen = game.updates_shown  # taken with the setup: no await in between
        setup = game.spectator_setup()
        game.watch_remote()  # analysed for them too, until their relays end
        if self.cluster is not None:
            self.cluster.watched_remotely(game_id)
        packets = [*game.analysis_backlog()]
        end = game.end_text
        text = setup if isinstance(setup, str) else (await setup).decode()
        return seen, [text, *packets, *([end] if end is not None else [])], end is not None

    def unwatched_remotely(self, game_id: str) -> None:
        """No other worker of the cluster relays ``game_id`` to spectators any more."""
        game = self._games.get(game_id)
        if game is not None:
            game.unwatch_remote()

    # ------------------------------------------------------------- shutdown

    async def shutdown(self) -> None:
        """Take no more games; abort every running game (``end`` to everyone, recorded
        as aborted), close its sockets and wait for its tasks. Games that do not end
        within ``SHUTDOWN_WAIT`` are cancelled (their record is still closed)."""
        self._closing = True
        games = list(self._games.values())
        for game in games:
            game.request_abort("the server is shutting down")
        tasks = [game.task for game in games if game.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_WAIT)
            for task in pending:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
