"""What a running game's spectators see: the base of ``game.running.RunningGame``.

``WatchedGame`` holds a game's spectators (``game.fanout``: one log of updates, each
encoded at most once, written in coalesced writes), the setup a spectator joining now
gets, the `end` kept for latecomers, the spectators on other workers of a cluster
(``watch_remote``) and, with an analysis bot, the analysis of a watched game
(``game.analyst``: each new position handed to it, its evaluations published to the
spectators only). ``RunningGame`` adds the game's task, its seats and its record; its
task is what calls ``_broadcast`` and ``_feed_analysis``, as it carries out a session's
actions.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from game.analyst import GameAnalysis
from game.cluster import Message
from game.fanout import Fanout, Spectator, Update
from game.reads import INLINE_ENCODE_MOVES, encode_setup
from game.session import Broadcast, GameSession
from models import Board, GameStatus, dump_packet

if TYPE_CHECKING:
    from game.manager import GameManager

__all__ = ["SETUP_REUSE_S", "WatchedGame"]

#: Spectators joining at the same position within this many seconds share one setup.
SETUP_REUSE_S = 1.0


class WatchedGame:
    """A game's spectators, local and on other workers, and its analysis."""

    def __init__(self, manager: GameManager, session: GameSession) -> None:
        self.manager = manager
        self.session = session
        self.game_id = session.game_id
        self._loop = asyncio.get_running_loop()
        self.fanout = Fanout(self.drop, flush_s=manager.spectator_flush)
        self.spectators = self.fanout.spectators  # the same set, closed with it
        #: The analysis bot's view of this game, made when it is first watched.
        self.analysis: GameAnalysis | None = None
        #: Spectators on other workers of the cluster follow it (``watch_remote``).
        self.watched_remotely = False
        self._analysed_ply = -1  # the last position handed to it
        #: The spectators' `end`, once it went out (kept for latecomers).
        self.end_text: str | None = None
        #: Set as the game begins to close: nothing more is broadcast.
        self._ending = False
        # Updates of the actions being carried out that have not gone out yet.
        self._unsent_updates = 0
        #: Updates (moves' ``board_update``) carried out so far, watched or not.
        self.updates = 0
        # The last setup encoded off the loop: its board and status, when, the encoding.
        self._setup: tuple[Board, GameStatus, float, asyncio.Future[bytes]] | None = None

    def spectator_setup(self) -> str | asyncio.Future[bytes]:
        """The ``setup`` for a spectator joining now: its text, or for a long game (a
        megabyte or more) the future of its encoding on a worker thread. Spectators who
        join at the same position within ``SETUP_REUSE_S`` share one encoding (their
        clocks may be that much behind, until the next update)."""
        now = self._loop.time()
        board, status = self.session.board, self.session.status
        if self._setup is not None:
            (shared_board, shared_status, encoded_at, encoding) = self._setup
            fresh = now - encoded_at < SETUP_REUSE_S
            if shared_board is board and shared_status is status and fresh:
                return encoding
        setup = self.session.spectator_setup(now)
        if len(setup.moves or ()) <= INLINE_ENCODE_MOVES:
            return dump_packet(setup).decode()
        encoding = asyncio.ensure_future(asyncio.to_thread(encode_setup, setup))
        self._setup = (board, status, now, encoding)
        return encoding

    @property
    def updates_shown(self) -> int:
        """The updates a setup made now shows: those gone out and those on their way
        (their moves are in the session already)."""
        return self.updates + self._unsent_updates

    def _feed_analysis(self) -> None:
        """A watched game's new position to its analysis (O(1) if none: runs per input)."""
        analysis, session = self.analysis, self.session
        if analysis is None or session.over or not (self.spectators or self.watched_remotely):
            return
        ply, side = session.ply, session.to_move
        if ply == self._analysed_ply or side is None:
            return
        self._analysed_ply = ply
        analysis.position(ply, session.board, side)

    def analysis_backlog(self) -> list[str]:
        """The ``analysis`` packets of this game so far (none without an analysis bot)."""
        return [] if self.analysis is None else self.analysis.backlog()

    def _publish_analysis(self, text: str) -> None:
        """One evaluation to every spectator (not an update: no spectator skips it)."""
        if self.end_text is not None or self._ending:
            return  # nothing may follow a spectator's `end`
        self.fanout.publish(Update(text.encode()))
        if (cluster := self.manager.cluster) is not None and self.watched_remotely:
            cluster.publish(self.game_id, Message("a", self.updates, text))

    def _broadcast(self, action: Broadcast, is_end: bool) -> None:
        # Into the log once; each variant is encoded (and framed) on first use, so only
        # if some spectator wants it. The `end` goes out at once and is kept for
        # latecomers; a move's update is left out by those whose setup has the move.
        cluster = self.manager.cluster
        if is_end:
            update = Update(dump_packet(action.packet))
            self.end_text = update.text()
            self.fanout.publish(update, urgent=True)
            if cluster is not None and self.watched_remotely:
                cluster.publish(self.game_id, Message("e", self.updates, self.end_text))
            return
        compact = (lambda: dump_packet(action.compact_packet())) if action.has_compact else None
        update = Update(lambda: dump_packet(action.packet), compact)
        self.fanout.publish(update, skippable=True)
        if cluster is not None and self.watched_remotely:  # once, however many watch
            cluster.publish(self.game_id, Message("u", self.updates - 1, update.text()))

    def add_spectator(self, spectator: Spectator) -> bool:
        """Send ``spectator`` every update from now on and the `end`, right after a setup
        of the session as it is now (no await in between). False once the game is
        closing: then nothing more is broadcast.

        The session is a step ahead of the broadcasts while the game task carries out
        the actions of an input (it may yield to let a move request out first, waits
        for the record before `end`): the updates still to go out show moves that this
        setup already has, so the spectator skips them. The `end` is never skipped."""
        if self._ending:
            return False
        self.fanout.add(spectator, skip=self._unsent_updates)
        self._watch()
        return True

    def drop(self, spectator: Spectator) -> None:
        self.fanout.remove(spectator)
        spectator.dropped.set()
        self._unwatched()

    def _unwatched(self) -> None:
        if not self.spectators and not self.watched_remotely and self.analysis is not None:
            self.analysis.unwatch()  # only watched games are analysed

    def watch_remote(self) -> None:
        """Spectators on another worker of the cluster follow this game (one asked for
        its setup): analysed as if watched here, its analysis published to them, until
        ``unwatch_remote``."""
        self.watched_remotely = True
        self._watch()

    def unwatch_remote(self) -> None:
        """No worker relays this game to spectators any more."""
        self.watched_remotely = False
        self._unwatched()

    def _watch(self) -> None:
        """Watched: the analysis (with an analysis bot) starts at the position as it is."""
        analyst = self.manager.analyst
        if analyst is None or self.session.over:
            return
        if self.analysis is None:
            self.analysis = analyst.follow(self.game_id, self.session.match, self._publish_analysis)
        self.analysis.watch()
        self._analysed_ply = -1  # unwatched, it missed positions: hand it the newest
        self._feed_analysis()
