"""The arena's players: registered bots (``BotRegistry``) and people's names.

One namespace of names (``store.arena``), compared case-insensitively
(``game.store.schema.player_key``): a registered bot and a person never share a name.

* A bot is registered with a name and a URL (``register``): its capabilities are
  fetched and checked as for a game (``game.discovery``, under the server's address
  policy), so a bad URL, a forbidden address or an unreachable bot is refused
  (``DiscoveryError``) and a taken name too (``NameTaken``). The owner gets a secret
  token, once; only its sha256 is stored. With it the owner changes the bot
  (``update``: url, ladder, description) or retires it (``retire``: kept in the
  history and the leaderboard as ``retired``, never scheduled again, its name kept).
  Bots the server registers itself (``register_server_bot``, the ladder's
  ``--ladder-hosted-bots``) have no token: nobody changes them through the API.
* ``recheck_all`` (every ``--bot-recheck`` seconds, ``start_rechecks``) fetches each
  bot's capabilities again: a failing bot becomes ``unreachable``, with the reason in
  ``check_error``, and is not scheduled until a check succeeds.
* The ladder (``game.ladder``) reads ``ladder_entrants`` and reports each game with
  ``record_ladder_result``: a failure (the bot's fault: no show, timeout, ...) backs
  the bot off, 30 s doubling with each failure in a row up to an hour; a success ends
  the backoff.
* People: ``claim_person`` gives a new name a person token (the queue's
  ``player_token``) and checks it for a known one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import aiohttp
from pydantic import TypeAdapter, ValidationError

from game.arena_errors import (
    BotRetired,
    InvalidPlayerName,
    NameTaken,
    ServerOwnedBot,
    UnknownBot,
    WrongToken,
)
from game.discovery import DEFAULT_POLICY, AddressPolicy, BotEndpoint, DiscoveryError, discover
from game.ratings import Rating, is_provisional
from game.secret_tokens import hash_token, new_token, token_matches
from game.store import GameStore
from game.store.arena import StoredBot
from game.store.ratings import RatingRow
from game.store.schema import player_key
from models import (
    MAX_RESULT_DETAIL_CHARS,
    BotRegistered,
    BotRegistration,
    BotUpdate,
    Meta,
    PlayerName,
    RegisteredBot,
)
from wire.errors import _problems

__all__ = [
    "BACKOFF_FIRST_S",
    "BACKOFF_MAX_S",
    "DEFAULT_RECHECK_S",
    "BotRegistry",
    "LadderEntrant",
    "backoff_seconds",
    "hash_token",
    "new_token",
]

log = logging.getLogger("game.registry")

#: Seconds between two checks of every registered bot (``--bot-recheck``).
DEFAULT_RECHECK_S: Final = 600.0
#: The ladder's backoff after one failed game; it doubles with each failure in a row...
BACKOFF_FIRST_S: Final = 30.0
#: ...up to this.
BACKOFF_MAX_S: Final = 3600.0

_NAME: Final = TypeAdapter(PlayerName)


def backoff_seconds(failures_in_row: int) -> float:
    """How long the ladder leaves a bot alone after ``failures_in_row`` failed games.

    >>> [backoff_seconds(n) for n in (0, 1, 2, 3)], backoff_seconds(20)
    ([0.0, 30.0, 60.0, 120.0], 3600.0)
    """
    if failures_in_row <= 0:
        return 0.0
    doubled: float = BACKOFF_FIRST_S * 2.0 ** min(failures_in_row - 1, 32)
    return min(doubled, BACKOFF_MAX_S)


def _checked_name(name: str) -> str:
    try:
        checked: str = _NAME.validate_python(name)
    except ValidationError as exc:
        reason = "; ".join(_problems(exc))
        raise InvalidPlayerName(f"invalid player name {name!r}: {reason}") from None
    if player_key(checked) is None:
        raise InvalidPlayerName(f"invalid player name {name!r}: it cannot be stored")
    return checked


def _key(name: str) -> str:
    key = player_key(name)
    if key is None:
        raise UnknownBot(f"no bot is registered as {name!r}")
    return key


def _clip(text: str) -> str:
    if len(text) <= MAX_RESULT_DETAIL_CHARS:
        return text
    return text[: MAX_RESULT_DETAIL_CHARS - 3] + "..."


def _meta_json(endpoint: BotEndpoint) -> dict[str, Any] | None:
    meta = endpoint.capabilities.meta
    return None if meta is None else meta.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True)
class LadderEntrant:
    """A bot the ladder may schedule: active, opted in. ``backoff_until`` (with its
    reason) is when it may play again after failures; None: any time."""

    name: str
    url: str
    rating: Rating
    games: int
    last_game_at: datetime | None
    backoff_until: datetime | None
    backoff_reason: str | None
    failures_in_row: int = 0


def _now() -> datetime:
    return datetime.now(UTC)


class BotRegistry:
    """The registered bots and people's names of one server, kept in ``store``.

    ``http`` and ``policy`` fetch capabilities as ``GameManager`` does for games.
    """

    def __init__(
        self,
        store: GameStore,
        http: aiohttp.ClientSession,
        *,
        policy: AddressPolicy = DEFAULT_POLICY,
        discovery_timeout: float = 5.0,
    ) -> None:
        self.store = store
        self.http = http
        self.policy = policy
        self.discovery_timeout = discovery_timeout
        self._rechecks: asyncio.Task[None] | None = None

    # ------------------------------------------------------------- registering

    async def _discover(self, url: str) -> BotEndpoint:
        return await discover(url, self.http, policy=self.policy, timeout=self.discovery_timeout)

    async def register(self, registration: BotRegistration) -> BotRegistered:
        """Register a bot; its owner token is in the answer (and nowhere else).

        Raises NameTaken, or a DiscoveryError for a URL that cannot be played."""
        name = _checked_name(registration.name)
        key = _key(name)
        if await self.store.arena.player(key) is not None:
            raise NameTaken(f"the name {name!r} is taken")
        endpoint = await self._discover(registration.url)
        token = new_token()
        now = _now()
        bot = {
            "url": registration.url,
            "ladder": registration.ladder,
            "description": registration.description,
            "status": "active",
            "checked_at": now,
            "meta": _meta_json(endpoint),
            "registered_at": now,
            "failures_in_row": 0,
        }
        if not await self.store.arena.claim(key, name, "bot", hash_token(token), now, bot=bot):
            raise NameTaken(f"the name {name!r} is taken")
        view = await self._view(key)
        return BotRegistered(**view.model_dump(), owner_token=token)

    async def register_server_bot(
        self, name: str, url: str, *, ladder: bool = True, description: str | None = None
    ) -> RegisteredBot:
        """Register a bot of the server's own (no owner token), or bring it up to date
        if it is registered so already (url, ladder, description; a retired one comes
        back). Its capabilities are checked as for ``register``, but a bot that cannot be
        reached now is registered ``unreachable`` rather than refused (the server may be
        starting its own bots: hosted bots answer only once the server listens, so call
        ``check(name)`` then, or wait for the next re-check). Raises NameTaken if the
        name is someone else's."""
        name = _checked_name(name)
        key = _key(name)
        try:
            endpoint: BotEndpoint | None = await self._discover(url)
            error = None
        except DiscoveryError as exc:
            endpoint, error = None, str(exc)
        now = _now()
        columns: dict[str, Any] = {
            "url": url,
            "ladder": ladder,
            "description": description,
            "status": "active" if error is None else "unreachable",
            "check_error": error,
            "checked_at": now,
            "meta": None if endpoint is None else _meta_json(endpoint),
        }
        existing = await self.store.arena.player(key)
        if existing is None:
            bot = {**columns, "registered_at": now, "failures_in_row": 0}
            if await self.store.arena.claim(key, name, "bot", None, now, bot=bot):
                return await self._view(key)
            existing = await self.store.arena.player(key)
        stored = await self.store.arena.bot(key)
        if existing is None or stored is None or existing.token_hash is not None:
            raise NameTaken(f"the name {name!r} is taken by another player")
        await self.store.arena.update_bot(key, retired_at=None, **columns)
        return await self._view(key)

    async def _owned(self, name: str, token: str | None) -> StoredBot:
        """The bot ``name`` if ``token`` is its owner's; raises otherwise."""
        stored = await self.store.arena.bot(_key(name))
        if stored is None:
            raise UnknownBot(f"no bot is registered as {name!r}")
        if stored.token_hash is None:
            raise ServerOwnedBot(f"{stored.name!r} is the server's own bot: it has no owner token")
        if not token_matches(token, stored.token_hash):
            raise WrongToken(f"that is not the owner token of {stored.name!r}")
        return stored

    async def update(self, name: str, token: str | None, change: BotUpdate) -> RegisteredBot:
        """Change a bot with its owner token. A new URL is checked like a registration's
        (and makes the bot ``active`` again). Raises UnknownBot, ServerOwnedBot,
        WrongToken, BotRetired or a DiscoveryError."""
        stored = await self._owned(name, token)
        if stored.status == "retired":
            raise BotRetired(f"{stored.name!r} is retired")
        values: dict[str, Any] = {}
        if change.url is not None:
            endpoint = await self._discover(change.url)
            values.update(
                url=change.url,
                status="active",
                check_error=None,
                checked_at=_now(),
                meta=_meta_json(endpoint),
            )
        if change.ladder is not None:
            values["ladder"] = change.ladder
        if "description" in change.model_fields_set:
            values["description"] = change.description
        if values:
            await self.store.arena.update_bot(stored.key, **values)
        return await self._view(stored.key)

    async def retire(self, name: str, token: str | None) -> RegisteredBot:
        """Retire a bot with its owner token: never scheduled again, its name and
        history kept. Retiring it again changes nothing. Raises UnknownBot,
        ServerOwnedBot or WrongToken."""
        stored = await self._owned(name, token)
        if stored.status != "retired":
            await self.store.arena.update_bot(stored.key, status="retired", retired_at=_now())
        return await self._view(stored.key)

    # ------------------------------------------------------------------ reading

    async def get(self, name: str) -> RegisteredBot | None:
        """One registered bot with its rating and record; None if there is none."""
        key = player_key(name)
        if key is None or await self.store.arena.bot(key) is None:
            return None
        return await self._view(key)

    async def registered(self) -> list[RegisteredBot]:
        """Every registered bot (retired ones too), by name, with ratings and records."""
        bots = await self.store.arena.bots()
        rows = {row.key: row for row in await self.store.ratings.all()}
        views = [_bot_view(bot, rows.get(bot.key)) for bot in bots]
        return sorted(views, key=lambda view: view.name.casefold())

    async def _view(self, key: str) -> RegisteredBot:
        stored = await self.store.arena.bot(key)
        if stored is None:
            raise UnknownBot(f"no bot is registered as {key!r}")
        return _bot_view(stored, await self.store.ratings.get(key))

    async def kind_of(self, name: str) -> str | None:
        """``bot`` or ``human`` for a claimed name, None for a free one."""
        key = player_key(name)
        player = None if key is None else await self.store.arena.player(key)
        return None if player is None else player.kind

    # --------------------------------------------------------------- checking

    async def check(self, name: str) -> RegisteredBot:
        """Fetch a bot's capabilities again: ``active`` if they are fine, else
        ``unreachable`` with the reason in ``check_error``. A retired bot is left as it
        is. Raises UnknownBot."""
        stored = await self.store.arena.bot(_key(name))
        if stored is None:
            raise UnknownBot(f"no bot is registered as {name!r}")
        await self._check(stored)
        return await self._view(stored.key)

    async def _check(self, stored: StoredBot) -> bool:
        if stored.status == "retired":
            return False
        try:
            endpoint = await self._discover(stored.url)
        except DiscoveryError as exc:
            await self.store.arena.update_bot(
                stored.key, status="unreachable", check_error=_clip(str(exc)), checked_at=_now()
            )
            return False
        await self.store.arena.update_bot(
            stored.key,
            status="active",
            check_error=None,
            checked_at=_now(),
            meta=_meta_json(endpoint),
        )
        return True

    async def recheck_all(self) -> int:
        """Check every bot that is not retired, a few at a time; how many are fine."""
        bots = [bot for bot in await self.store.arena.bots() if bot.status != "retired"]
        limit = asyncio.Semaphore(8)

        async def one(bot: StoredBot) -> bool:
            async with limit:
                return await self._check(bot)

        results = await asyncio.gather(*(one(bot) for bot in bots))
        return sum(results)

    def start_rechecks(self, interval: float = DEFAULT_RECHECK_S) -> None:
        """Check every bot every ``interval`` seconds from now on (first after one
        interval: registrations were just checked), until ``close``."""
        if not interval > 0:
            raise ValueError(f"the re-check interval must be more than 0 s, got {interval}")
        if self._rechecks is None:
            self._rechecks = asyncio.create_task(
                self._recheck_loop(interval), name="htttx: rechecks"
            )

    async def _recheck_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.recheck_all()
            except Exception:  # a store that fails now may work next time
                log.exception("re-checking the registered bots failed")

    async def close(self) -> None:
        """Stop the periodic re-checks."""
        task, self._rechecks = self._rechecks, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ----------------------------------------------------------------- ladder

    async def ladder_entrants(self) -> list[LadderEntrant]:
        """The bots the ladder may schedule: active (not retired, not unreachable) and
        opted in, by name; with ratings and backoffs (the ladder skips a bot whose
        ``backoff_until`` is still ahead)."""
        bots = await self.store.arena.bots()
        rows = {row.key: row for row in await self.store.ratings.all()}
        entrants = []
        for bot in bots:
            if bot.status != "active" or not bot.ladder:
                continue
            row = rows.get(bot.key)
            entrants.append(
                LadderEntrant(
                    name=bot.name,
                    url=bot.url,
                    rating=Rating() if row is None else row.rating,
                    games=0 if row is None else row.games,
                    last_game_at=bot.last_game_at,
                    backoff_until=bot.backoff_until,
                    backoff_reason=bot.backoff_reason,
                    failures_in_row=bot.failures_in_row,
                )
            )
        return sorted(entrants, key=lambda entrant: entrant.name.casefold())

    async def record_ladder_result(
        self, name: str, failure: str | None, detail: str | None, now: datetime
    ) -> None:
        """A ladder game of ``name`` ended at ``now``: ``failure`` None if it played
        properly (any backoff ends), else what went wrong (an EndCause value, say) and
        ``detail``: one more failure in a row, backed off ``backoff_seconds`` of them.
        Raises UnknownBot."""
        key = _key(name)
        if failure is None:
            # The usual case, once a game: one write, no read.
            if not await self.store.arena.played_properly([key], now):
                raise UnknownBot(f"no bot is registered as {name!r}")
            return
        stored = await self.store.arena.bot(key)
        if stored is None:
            raise UnknownBot(f"no bot is registered as {name!r}")
        failures = stored.failures_in_row + 1
        reason = failure if not detail else f"{failure}: {detail}"
        await self.store.arena.update_bot(
            stored.key,
            last_game_at=now,
            failures_in_row=failures,
            backoff_until=now + timedelta(seconds=backoff_seconds(failures)),
            backoff_reason=_clip(reason),
        )

    async def record_ladder_results(
        self, results: Mapping[str, tuple[str, str | None] | None], now: datetime
    ) -> None:
        """``record_ladder_result`` for each bot of one game (name: None, or its failure
        and detail); the bots that played properly in one write. Raises UnknownBot
        (after recording the others)."""
        proper = [name for name, failure in results.items() if failure is None]
        missing = None
        if proper and await self.store.arena.played_properly(
            [_key(name) for name in proper], now
        ) < len(proper):
            missing = ", ".join(repr(name) for name in proper)
        for name, failure in results.items():
            if failure is not None:
                await self.record_ladder_result(name, failure[0], failure[1], now)
        if missing is not None:
            raise UnknownBot(f"not every one of {missing} is a registered bot")

    # ----------------------------------------------------------------- people

    async def claim_person(self, name: str, token: str | None) -> str | None:
        """A person plays as ``name``: a new name is theirs from now on, and the answer
        is its new token (shown once: the queue sends it as ``player_token``); a known
        person's name needs its token (the answer is then None). Raises
        InvalidPlayerName, NameTaken (a bot's name, or a person's without a token) or
        WrongToken."""
        name = _checked_name(name)
        key = _key(name)
        for _attempt in range(2):
            player = await self.store.arena.player(key)
            if player is None:
                fresh = new_token()
                if await self.store.arena.claim(key, name, "human", hash_token(fresh), _now()):
                    return fresh
                continue  # claimed at the same moment: check it as a known name
            if player.kind != "human" or player.token_hash is None:
                raise NameTaken(f"{player.name!r} is a bot's name")
            if token is None:
                raise NameTaken(f"the name {player.name!r} is taken; give its player token")
            if not token_matches(token, player.token_hash):
                raise WrongToken(f"that is not the player token of {player.name!r}")
            return None
        raise NameTaken(f"the name {name!r} is taken")


def _bot_view(bot: StoredBot, row: RatingRow | None) -> RegisteredBot:
    rating = Rating() if row is None else row.rating
    games = 0 if row is None else row.games
    return RegisteredBot(
        name=bot.name,
        url=bot.url,
        description=bot.description,
        ladder=bot.ladder,
        status=bot.status,
        owner="server" if bot.token_hash is None else "token",
        check_error=bot.check_error,
        checked_at=bot.checked_at,
        meta=None if bot.meta is None else Meta.model_validate(bot.meta),
        registered_at=bot.registered_at,
        retired_at=bot.retired_at,
        rating=round(rating.mu),
        uncertainty=round(2 * rating.sigma),
        provisional=is_provisional(rating, games),
        games=games,
        wins=0 if row is None else row.wins,
        losses=0 if row is None else row.losses,
        draws=0 if row is None else row.draws,
        failures={} if row is None else row.failures,
        avg_think_ms=None if row is None else row.avg_think_ms,
        last_game_at=bot.last_game_at,
        failures_in_row=bot.failures_in_row,
        backoff_until=bot.backoff_until,
        backoff_reason=bot.backoff_reason,
    )
