"""The arena's ratings at run time: which games count, and applying each result once.

``RatingBook`` keeps the ratings in the store (``store.ratings``, see
``game.store.ratings``). Only games declared with ``track`` are rated (the ladder's,
the queue's, a series created ``"rated": true``); a plain ``POST /game/new`` game is
not. What a finished game is worth is the pure ``outcome_of``:

* A win, a loss or a draw, from the record's ``GameResult``: X scores 1, 0.5 or 0.
* A forfeit is a loss for the side that failed, and counts in that player's
  ``failures`` by cause (``timeout``, ``no_show``, ``disconnect``, ``protocol_error``,
  ``illegal_move``, ``stall``, ...). A person's resignation is a plain loss.
* A void game is one nobody played (``GameResult.void``): aborted (the server stopped
  it, or a previous run left it running), or neither seat connected (a draw with cause
  ``no_show``). Nothing changes for anybody: a no-show of both is no draw.
* A game between two names of one player (case-insensitively) is refused by ``track``.

Exactly once: the store moves a tracked game from pending to rated in the same
transaction as both ratings (``RatingRecords.settle``), so whoever settles it second
changes nothing.

When: ``GameManager`` calls ``on_game_end`` (registered with ``add_end_hook``, wanting
only the games it ``tracks``) when a game's record is committed and before its ``end``
packet goes to anyone, so ``GET /leaderboard`` already says what a client was just
told. A game tracked after it ended (``track`` just after ``create_game``, a game that
ended at once) is settled by ``track`` itself from the stored record. At startup,
``settle_pending`` rates what a previous run finished but did not rate, and voids what
it left running.

Average thinking time: the ``thinking_ms`` of a player's moves in its rated games,
summed and counted (the moves of an opening, with none, are left out).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from game.ratings import Rating, is_provisional
from game.store import GameStore, RecordStatus
from game.store.ratings import RatingRow, SideOutcome
from game.store.schema import player_key
from models import EndCause, GameRecord, GameResult, Player, PlayerType, RatingPoint, ResultReason

__all__ = [
    "KNOWN_KINDS_MAX",
    "RATING_HISTORY_MAX",
    "GameOutcome",
    "PlayerStanding",
    "RatingBook",
    "UnratableGame",
    "outcome_of",
]

#: The most points ``history`` gives.
RATING_HISTORY_MAX: Final = 1000
#: Players whose kind a ``RatingBook`` remembers, at most: every person who ever played a
#: rated game would be too many for a server that runs for months. The oldest read is
#: dropped first, and read again when its player next plays.
KNOWN_KINDS_MAX: Final = 10_000


class UnratableGame(ValueError):
    """``track`` was given names that cannot be rated: one player on both sides, or a
    name without a key (too long, or holding NUL)."""


@dataclass(frozen=True)
class GameOutcome:
    """What a finished game is worth: X's score (1, 0.5, 0), the cause a side forfeited
    by (an ``EndCause`` value, for its ``failures``), each side's thinking time."""

    score_x: float
    failure: dict[Player, str] = field(default_factory=dict)
    think_ms: dict[Player, int] = field(default_factory=dict)
    think_moves: dict[Player, int] = field(default_factory=dict)


def outcome_of(record: GameRecord) -> GameOutcome | None:
    """What ``record`` is worth to the ratings; None for a void game (aborted, neither
    seat came, or no result yet).

    >>> from models import GameResult, RecordedMove, Coord
    >>> forfeit = GameResult(winner=Player.X, reason=ResultReason.FORFEIT,
    ...                      cause=EndCause.TIMEOUT)
    >>> move = RecordedMove(side=Player.O, pieces=[Coord(q=1, r=0), Coord(q=2, r=0)],
    ...                     thinking_ms=300)
    >>> outcome = outcome_of(GameRecord(result=forfeit, moves=[move]))
    >>> outcome.score_x, outcome.failure, outcome.think_ms[Player.O]
    (1.0, {<Player.O: 'o'>: 'timeout'}, 300)
    >>> outcome_of(GameRecord()) is None
    True
    >>> nobody = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
    >>> outcome_of(GameRecord(result=nobody)) is None
    True
    """
    result = record.result
    if result is None or result.void:
        return None
    think_ms = dict.fromkeys(Player, 0)
    think_moves = dict.fromkeys(Player, 0)
    for move in record.moves:
        if move.thinking_ms is not None:
            think_ms[move.side] += move.thinking_ms
            think_moves[move.side] += 1
    return GameOutcome(_score_x(result), _failure(result), think_ms, think_moves)


def _score_x(result: GameResult) -> float:
    if result.winner is None:
        return 0.5
    return 1.0 if result.winner is Player.X else 0.0


def _failure(result: GameResult) -> dict[Player, str]:
    if (
        result.reason is not ResultReason.FORFEIT
        or result.winner is None
        or result.cause is None
        or result.cause is EndCause.RESIGN
    ):
        return {}
    return {result.winner.other: result.cause.value}


@dataclass(frozen=True)
class PlayerStanding:
    """A rated player for the leaderboard: rating, record, and a registered bot's
    ``status`` (None otherwise)."""

    name: str
    kind: str
    rating: Rating
    games: int
    wins: int
    losses: int
    draws: int
    failures: dict[str, int]
    avg_think_ms: int | None
    last_seen: datetime | None
    status: str | None = None

    @property
    def provisional(self) -> bool:
        return is_provisional(self.rating, self.games)


def _now() -> datetime:
    return datetime.now(UTC)


class RatingBook:
    """The ratings of one server, kept in ``store``."""

    def __init__(
        self,
        store: GameStore,
        *,
        running: Callable[[str], bool] | None = None,
        known_kinds_max: int = KNOWN_KINDS_MAX,
    ) -> None:
        """``running(game_id)`` says whether a game runs in this process and its end
        hooks are yet to run (the server passes ``GameManager.awaits_end_hooks``):
        ``track`` then asks the store nothing more about it, as the end hook will rate
        it. Without it (or once the hooks ran: a game that ended while ``track`` wrote),
        ``track`` reads the game's status from the store."""
        self.store = store
        self._running = running
        # The games this run tracked and has not settled: (x name, o name). The end
        # hook looks here first, so an untracked game costs it nothing.
        self._tracked: dict[str, tuple[str, str]] = {}
        # Each player's kind (bot or human) as the arena has it: fixed once a name is
        # claimed, so read once per player, not once per game (the most recently read
        # ``known_kinds_max`` of them).
        self._kinds: dict[str, str] = {}
        self._known_kinds_max = known_kinds_max

    async def rating_of(self, name: str) -> Rating:
        """The player's rating; ``Rating()`` for a player never rated."""
        key = player_key(name)
        row = None if key is None else await self.store.ratings.get(key)
        return Rating() if row is None else row.rating

    async def row_of(self, name: str) -> RatingRow | None:
        """The player's rating and record; None if never rated."""
        key = player_key(name)
        return None if key is None else await self.store.ratings.get(key)

    async def track(self, game_id: str, x: str, o: str) -> None:
        """Declare ``game_id`` (played by ``x`` as X and ``o`` as O) rated. Its result is
        applied exactly once when it ends; an aborted game is void. Tracking a game
        again does nothing. Raises UnratableGame."""
        x_key, o_key = player_key(x), player_key(o)
        if x_key is None or o_key is None:
            raise UnratableGame(f"cannot rate a game between {x!r} and {o!r}: a name too long")
        if x_key == o_key:
            raise UnratableGame(f"cannot rate a game of {x!r} against {o!r}: one player")
        if not await self.store.ratings.track(game_id, (x_key, x), (o_key, o), _now()):
            return
        self._tracked[game_id] = (x, o)
        # The game may have ended before it was tracked (its end hook did not want it):
        # its record is committed before the hooks run, so the store has its result.
        # Its status alone is read first: the whole record only for a game that is over.
        if self._running is not None and self._running(game_id):
            return  # the end hook will find it in _tracked
        if await self.store.game_status(game_id) is RecordStatus.RUNNING:
            return
        record = await self.store.get_game(game_id)
        if record is not None and record.result is not None:
            await self._settle(game_id, x, o, record)

    def tracks(self, game_id: str) -> bool:
        """Whether ``game_id`` is tracked and not yet settled by this book: the end
        hook's ``wants`` (``GameManager.add_end_hook``), so other games cost nothing."""
        return game_id in self._tracked

    async def on_game_end(self, record: GameRecord) -> None:
        """The ``GameManager`` end hook: rate ``record`` if its game is tracked."""
        game_id = record.game_id
        names = None if game_id is None else self._tracked.get(game_id)
        if game_id is None or names is None:
            return
        await self._settle(game_id, names[0], names[1], record)

    async def settle_pending(self, game_ids: Collection[str] | None = None) -> int:
        """Settle the tracked games a previous run did not: rate the finished ones (in
        the order they ended, as the end hook would have), void the aborted ones (run it
        after ``GameStore.abort_running``). Games still running are left alone. Returns
        how many were rated or voided.

        ``game_ids``: only those games (a dead worker's, once ``GameStore.abort_games``
        recorded them: ``game.cluster_sweep``), not every pending one."""
        done = 0
        only = None if game_ids is None else set(game_ids)
        for pending in await self.store.ratings.pending():
            if pending.game_status == RecordStatus.RUNNING.value:
                continue
            if only is not None and pending.game_id not in only:
                continue
            if pending.game_status is None:
                done += await self.store.ratings.void(pending.game_id, _now())
                continue
            record = await self.store.get_game(pending.game_id)
            if record is not None and record.result is not None:
                done += await self._settle(pending.game_id, pending.x_name, pending.o_name, record)
        return done

    async def _settle(self, game_id: str, x: str, o: str, record: GameRecord) -> bool:
        self._tracked.pop(game_id, None)
        outcome = outcome_of(record)
        if outcome is None:
            return await self.store.ratings.void(game_id, _now())
        kinds = await self._kinds_of(record, x, o)
        sides = []
        for side, name in ((Player.X, x), (Player.O, o)):
            key = player_key(name)
            assert key is not None  # track checked it
            score = outcome.score_x if side is Player.X else 1.0 - outcome.score_x
            sides.append(
                SideOutcome(
                    key=key,
                    name=name,
                    kind=kinds[side],
                    score=score,
                    failure=outcome.failure.get(side),
                    think_ms=outcome.think_ms.get(side, 0),
                    think_moves=outcome.think_moves.get(side, 0),
                )
            )
        return await self.store.ratings.settle(game_id, sides[0], sides[1]) is not None

    async def _kinds_of(self, record: GameRecord, x: str, o: str) -> dict[Player, str]:
        """Each side's kind: the arena's (remembered once read), else the record's seat
        type, else bot."""
        keys = {side: player_key(name) or "" for side, name in ((Player.X, x), (Player.O, o))}
        found = {key: self._kinds[key] for key in keys.values() if key in self._kinds}
        unknown = [key for key in keys.values() if key not in found]
        if unknown:
            for key, player in (await self.store.arena.players(unknown)).items():
                found[key] = self._kinds[key] = player.kind
            while len(self._kinds) > self._known_kinds_max:
                del self._kinds[next(iter(self._kinds))]
        kinds: dict[Player, str] = {}
        for side, seat in ((Player.X, record.player_x), (Player.O, record.player_o)):
            known = found.get(keys[side])
            if known is not None:
                kinds[side] = known
            else:  # not in the arena (yet): the seat says
                kinds[side] = "human" if seat.type is PlayerType.HUMAN else "bot"
        return kinds

    async def standings(self, kind: str | None = None) -> list[PlayerStanding]:
        """Every rated player (of ``kind``, ``bot`` or ``human``, if given), best first:
        by ``Rating.conservative``, then by more games, then by name."""
        rows = await self.store.ratings.all()
        bots = {bot.key: bot.status for bot in await self.store.arena.bots()}
        standings = [
            PlayerStanding(
                name=row.name,
                kind=row.kind,
                rating=row.rating,
                games=row.games,
                wins=row.wins,
                losses=row.losses,
                draws=row.draws,
                failures=row.failures,
                avg_think_ms=row.avg_think_ms,
                last_seen=row.last_seen,
                status=bots.get(row.key),
            )
            for row in rows
            if kind is None or row.kind == kind
        ]
        standings.sort(key=lambda s: (-s.rating.conservative, -s.games, s.name.casefold()))
        return standings

    async def history(self, name: str, limit: int = 100) -> list[RatingPoint]:
        """The player's rating after each of its last ``limit`` rated games, newest first
        (at most ``RATING_HISTORY_MAX``)."""
        key = player_key(name)
        if key is None:
            return []
        rows = await self.store.ratings.history(key, max(1, min(limit, RATING_HISTORY_MAX)))
        return [
            RatingPoint(
                game_id=row.game_id,
                at=row.at,
                rating=round(row.rating.mu),
                uncertainty=round(2 * row.rating.sigma),
                opponent=row.opponent,
                score=row.score,
            )
            for row in rows
        ]
