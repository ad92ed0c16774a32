"""The asyncio edge of ``game.analysis``: the analysis bot's sockets and tasks.

``open_analyst`` finds and checks the bot (at startup: ``game.server``'s lifespan, and
``game.serve`` before it listens); the ``Analyst`` it returns is the server's one
analysis bot, and ``Analyst.follow`` gives a running game its ``GameAnalysis``: a worker
task that, while the game is watched, asks the bot about the position the game's
``AnalysisPlan`` picks, over a ``game.seats.BotSocketSeat`` (the seats' own client:
checked addresses, pings, a frame cap), and publishes each answer, encoded once. The
game owns its ``GameAnalysis`` and closes it when it ends; ``Analyst.close`` stops any
left at shutdown. Every failure ends the socket and is logged, rate-limited; nothing is
raised into the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import aiohttp

from game.analysis import (
    DEFAULT_ANALYSIS_TIME,
    DEFAULT_MAX_RESULTS,
    FIRST_RETRY,
    IDLE_HEARTBEAT,
    LOG_BURST,
    LOG_RATE,
    MAX_ANSWER_BYTES,
    AnalysisBadAnswer,
    AnalysisBotClosed,
    AnalysisConnectFailed,
    AnalysisFailed,
    AnalysisLog,
    AnalysisPlan,
    AnalysisTarget,
    AnalysisTimedOut,
    EvalConversation,
    check_analysis_bot,
    check_analysis_time,
)
from game.discovery import DEFAULT_POLICY, AddressPolicy, BotEndpoint, discover
from game.seats import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_PING_INTERVAL,
    DEFAULT_PONG_TIMEOUT,
    DEFAULT_SEND_TIMEOUT,
    BotSocketSeat,
    SeatConnectError,
)
from models import (
    CLOSE_NORMAL,
    AnalysisPacket,
    Board,
    ConfigPacket,
    EvalRequestPacket,
    HeartbeatPacket,
    Match,
    Player,
    PositionEvaluation,
    SetupPacket,
    dump_packet,
)
from wire.ratelimit import TokenBucket

__all__ = ["Analyst", "GameAnalysis", "open_analyst"]

log = logging.getLogger("game.analysis")

#: Seconds the closing handshake with the analysis bot may take.
CLOSE_WAIT = 1.0


async def open_analyst(
    bot_url: str,
    http: aiohttp.ClientSession,
    *,
    policy: AddressPolicy = DEFAULT_POLICY,
    discovery_timeout: float = 5.0,
    time_limit: float = DEFAULT_ANALYSIS_TIME,
    max_results: int = DEFAULT_MAX_RESULTS,
) -> Analyst:
    """Find the bot at ``bot_url`` as a game's bot is found (the same URL and address
    checks, ``game.discovery.discover``) and make sure it can analyse.

    Raises a ``DiscoveryError``: unreachable, a bad document, ``AnalysisBotUnfit``.
    """
    endpoint = await discover(bot_url, http, policy=policy, timeout=discovery_timeout)
    # Analyst checks the bot's capabilities (check_analysis_bot) as it is made.
    return Analyst(endpoint, http, time_limit=time_limit, max_results=max_results)


class Analyst:
    """The server's analysis bot. ``follow`` gives a running game its ``GameAnalysis``;
    ``close`` (at shutdown) stops those still open."""

    def __init__(
        self,
        endpoint: BotEndpoint,
        http: aiohttp.ClientSession,
        *,
        time_limit: float = DEFAULT_ANALYSIS_TIME,
        max_results: int = DEFAULT_MAX_RESULTS,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        pong_timeout: float = DEFAULT_PONG_TIMEOUT,
        first_retry: float = FIRST_RETRY,
    ) -> None:
        check_analysis_time(time_limit)
        self.declares = check_analysis_bot(endpoint)
        self.endpoint = endpoint
        #: How spectators see the bot named: its ``meta.name``, else its URL.
        self.name = endpoint.name or endpoint.url
        self.http = http
        self.time_limit = time_limit
        self.max_results = max_results
        self.connect_timeout = connect_timeout
        self.ping_interval = ping_interval
        self.pong_timeout = pong_timeout
        self.first_retry = first_retry
        #: ``eval_request`` packets sent, over all games (a count to monitor).
        self.requests = 0
        self._games: set[GameAnalysis] = set()
        self._log_budget: TokenBucket | None = None

    def follow(self, game_id: str, match: Match, publish: Callable[[str], None]) -> GameAnalysis:
        """The analysis of one game; ``publish`` gets each encoded ``analysis`` packet
        (it must not block). Idle until ``watch``; its owner must ``close`` it."""
        game = GameAnalysis(self, game_id, match, publish)
        self._games.add(game)
        return game

    def forget(self, game: GameAnalysis) -> None:
        self._games.discard(game)

    async def close(self) -> None:
        await asyncio.gather(*(game.close() for game in list(self._games)))

    def report(self, game_id: str, error: Exception) -> None:
        """Log a failure: a few as warnings, then at most one a minute (the rest at
        debug), so a broken analysis bot cannot flood the log."""
        now = asyncio.get_running_loop().time()
        if self._log_budget is None:
            self._log_budget = TokenBucket(rate=LOG_RATE, burst=LOG_BURST, now=now)
        level = logging.WARNING if self._log_budget.take(now) else logging.DEBUG
        log.log(level, "analysis of game %s by %s failed: %s", game_id, self.name, error)


class GameAnalysis:
    """One game's analysis: its plan, its answers and the worker task that asks the bot.

    The game calls ``watch`` when it has spectators, ``unwatch`` when it has none (the
    socket is closed; the answers stay), ``position`` at each new position and
    ``close`` when it ends. None of these waits on the bot or raises.
    """

    def __init__(
        self, analyst: Analyst, game_id: str, match: Match, publish: Callable[[str], None]
    ) -> None:
        self._analyst = analyst
        self.game_id = game_id
        self._match = match
        self._publish = publish
        self._plan = AnalysisPlan(first_retry=analyst.first_retry)
        self._log = AnalysisLog(analyst.max_results)
        self._watched = False
        self._wake = asyncio.Event()
        self._line: _Line | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def backlog(self) -> list[str]:
        """The ``analysis`` packets so far, in ply order (for a spectator joining)."""
        return self._log.texts()

    def watch(self) -> None:
        if self._closed:
            return
        self._watched = True
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"htttx: analysis {self.game_id}"
            )
        self._wake.set()

    def unwatch(self) -> None:
        self._watched = False
        self._wake.set()

    def position(self, ply: int, board: Board, side: Player) -> None:
        """The game's newest position: after ``ply`` moves, ``side`` to move."""
        self._plan.position(AnalysisTarget(ply, board, side))
        self._wake.set()

    async def close(self) -> None:
        """Stop for good: the worker is cancelled and the socket closed."""
        self._closed = True
        self._analyst.forget(self)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._hang_up()

    # ---------------------------------------------------------------- worker

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._closed:
            self._wake.clear()
            target = self._plan.next_target(loop.time()) if self._watched else None
            if target is None:
                if not self._watched:
                    await self._hang_up()
                await self._idle(loop)
                continue
            try:
                evaluation = await self._evaluate(target)
            except AnalysisFailed as exc:
                self._plan.failed(loop.time())
                self._analyst.report(self.game_id, exc)
                await self._hang_up()
                continue
            except Exception as exc:  # a bug here must cost the analysis, never the game
                log.exception("analysis of game %s: unexpected failure", self.game_id)
                self._plan.failed(loop.time())
                self._analyst.report(self.game_id, exc)
                await self._hang_up()
                continue
            self._plan.answered()
            self._share(target.ply, evaluation)

    def _share(self, ply: int, evaluation: PositionEvaluation) -> None:
        """Encode the answer once, keep it for late joiners and hand it to the game."""
        try:
            packet = AnalysisPacket(ply=ply, evaluation=evaluation, bot=self._analyst.name)
            text = dump_packet(packet).decode()
            self._log.add(ply, text)
            self._publish(text)
        except Exception:  # a bug here must cost this answer, never the worker
            log.exception("analysis of game %s: cannot share the answer", self.game_id)

    async def _idle(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wait for news (a position, watch, unwatch), a backoff's end or the next
        heartbeat, whichever comes first."""
        wait = IDLE_HEARTBEAT
        retry_at = self._plan.retry_at
        if retry_at is not None and self._watched:
            wait = min(wait, max(retry_at - loop.time(), 0.0))
        try:
            async with asyncio.timeout(wait):
                await self._wake.wait()
        except TimeoutError:
            line = self._line
            if line is not None and not line.dead and wait == IDLE_HEARTBEAT:
                with contextlib.suppress(AnalysisFailed):  # found at the next request
                    await line.send(HeartbeatPacket(waiting=False))

    async def _evaluate(self, target: AnalysisTarget) -> PositionEvaluation:
        line = self._line
        if line is None or line.dead or not line.talk.can_take(target.side):
            await self._hang_up()
            line = self._line = await self._dial()
        answer = line.expect()
        for packet in line.talk.ask(target):
            await line.send(packet)
            if isinstance(packet, EvalRequestPacket):
                self._analyst.requests += 1
        try:
            async with asyncio.timeout(line.talk.answer_wait):
                return await answer
        except TimeoutError:
            raise AnalysisTimedOut(
                f"no eval_response within {line.talk.answer_wait:g} s (ply {target.ply})"
            ) from None

    async def _dial(self) -> _Line:
        analyst = self._analyst
        assert analyst.endpoint.socket_url is not None  # check_analysis_bot
        line = _Line(EvalConversation(analyst.declares, self._match, analyst.time_limit))
        seat = BotSocketSeat(
            analyst.endpoint.socket_url,
            analyst.http,
            on_frame=line.on_frame,
            on_closed=line.on_closed,
            on_rtt=lambda _rtt: None,
            max_frame_bytes=MAX_ANSWER_BYTES,
            connect_timeout=analyst.connect_timeout,
            ping_interval=analyst.ping_interval,
            pong_timeout=analyst.pong_timeout,
            thinking=lambda: line.talk.awaiting,
            # Bounds the closing handshake: a game's end waits for it, and a bot that
            # does not answer its close must not hold the game's sockets open for long.
            send_timeout=CLOSE_WAIT,
            name=f"analysis {self.game_id}",
        )
        try:
            await seat.connect()
        except SeatConnectError as exc:
            raise AnalysisConnectFailed(str(exc)) from None
        line.seat = seat
        seat.start()
        return line

    async def _hang_up(self) -> None:
        line, self._line = self._line, None
        if line is not None:
            await line.close()


class _Line:
    """One open socket to the analysis bot: its conversation and the answer awaited."""

    def __init__(self, talk: EvalConversation) -> None:
        self.talk = talk
        self.seat: BotSocketSeat | None = None
        self.dead: str | None = None  # why the socket may not be used any more
        self._answer: asyncio.Future[PositionEvaluation] | None = None

    def expect(self) -> asyncio.Future[PositionEvaluation]:
        self._answer = asyncio.get_running_loop().create_future()
        return self._answer

    async def on_frame(self, data: str | bytes) -> None:
        answer = self._answer
        try:
            evaluation = self.talk.receive(data)
        except AnalysisBadAnswer as exc:
            self.dead = str(exc)
            if answer is not None and not answer.done():
                answer.set_exception(exc)
            return
        if answer is not None and not answer.done():
            answer.set_result(evaluation)

    async def on_closed(self, why: str) -> None:
        self.dead = why
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_exception(AnalysisBotClosed(why))

    async def send(
        self, packet: HeartbeatPacket | ConfigPacket | SetupPacket | EvalRequestPacket
    ) -> None:
        seat = self.seat
        if seat is None or self.dead is not None:
            raise AnalysisBotClosed(self.dead or "the socket is not open")
        try:
            async with asyncio.timeout(DEFAULT_SEND_TIMEOUT):
                await seat.send_text(dump_packet(packet).decode())
        except Exception as exc:
            self.dead = f"sending failed: {exc!r}"
            raise AnalysisBotClosed(self.dead) from None

    async def close(self) -> None:
        answer = self._answer
        if answer is not None:
            if not answer.done():
                answer.cancel()
            elif not answer.cancelled():
                answer.exception()  # retrieved: a failure nobody awaited is not an error
        if self.seat is not None:
            await self.seat.close(CLOSE_NORMAL, "analysis done")
