"""Open challenges: a person opens a game with a seat for whoever follows its link.

``Challenges`` is the service behind ``POST /challenges``, ``GET /challenges/{id}``,
``POST /challenges/{id}/accept`` (``game.queue_routes``) and the queue socket's
``challenge_create`` (``game.queue_socket``). The challenges are rows of the store
(``game.store.challenges``): an open challenge survives a restart of the server.

* *Create.* The creator's name is claimed like the queue's (a new name gets a person
  token, returned once); at most ``MAX_OPEN_CHALLENGES`` open at once per person. The
  challenge stays open for ``CHALLENGE_TTL``, then expires.
* *Accept.* Someone else (not the creator's name) accepts by name (and token, for a
  known person). The row is taken in one conditional update, so a challenge makes one
  game however many accept at once; the others get ``ChallengeClosed``. The game is
  rated and started like a queue game (``game.queue_games``): tag ``Challenge`` = the id.
  Sides: the creator's choice (``random``: a coin). The accepter gets its seat in the
  answer; the creator gets ``matched`` on the queue socket that created it, if still
  open, and from ``GET /challenges/{id}?token=<creator's person token>`` while the game
  runs (the seat token is kept in memory only: after a restart the game is over anyway).
* *Cancel.* The creator withdraws an open challenge (``DELETE /challenges/{id}`` with
  their person token; ``queue_leave`` on the queue socket that created it). A challenge
  created on a queue socket is also withdrawn when that socket closes (the creator left:
  nobody would take the seat, and they would lose the game by no-show), except while
  the server shuts down (an open challenge outlives a restart). Like ``take``, the
  store's update is conditional: of a cancel and an accept at once, one wins.
* *In a cluster* (``peers``, ``game.cluster_queue.ClusterChallenges``): the worker that
  takes a challenge runs its game and keeps the creator's seat; it announces the
  acceptance to the other workers, and the one whose queue socket waits on it asks the
  game's worker for the creator's seat (``GET /challenges/{id}?token=``, with the
  creator's person token) and sends it ``matched``. ``GET /challenges/{id}?token=`` on
  any worker answers the seat the same way.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final, Protocol

from game.manager import GameManager
from game.queue_games import Contender, QueueArena, check_time_control, start_game
from game.queue_hub import QueueClient
from game.store import GameStore
from game.store.challenges import StoredChallenge
from game.store.schema import player_key
from models import (
    CLOSE_NORMAL,
    MAX_ECHO_CHARS,
    ChallengeAccept,
    ChallengeAccepted,
    ChallengeRequest,
    ChallengeView,
    MatchedPacket,
    Player,
    clip_text,
)

__all__ = [
    "CHALLENGE_TTL",
    "MAX_OPEN_CHALLENGES",
    "ChallengeClosed",
    "ChallengeError",
    "ChallengePeers",
    "Challenges",
    "NoSuchChallenge",
    "NotTheCreator",
    "OwnChallenge",
    "TooManyChallenges",
    "challenge_url",
]

#: How long a challenge stays open.
CHALLENGE_TTL: Final = timedelta(hours=1)
#: Open challenges one person may have at once.
MAX_OPEN_CHALLENGES: Final = 5


class ChallengeError(Exception):
    """A challenge request that cannot be done; ``status`` is the HTTP answer."""

    status = 409


class NoSuchChallenge(ChallengeError, LookupError):
    status = 404


class ChallengeClosed(ChallengeError):
    """Accepted already, or expired."""

    status = 409


class OwnChallenge(ChallengeError):
    """The creator tried to accept their own challenge."""

    status = 409


class TooManyChallenges(ChallengeError):
    status = 429


class NotTheCreator(ChallengeError):
    """A cancel without the creator's person token."""

    status = 403


def challenge_url(base_url: str, challenge_id: str) -> str:
    """The page of a challenge: ``<server>/c/<id>`` (a ``ws://`` base reads as ``http://``).

    >>> challenge_url("ws://127.0.0.1:8001/", "ab12")
    'http://127.0.0.1:8001/c/ab12'
    """
    base = base_url.rstrip("/")
    if base.startswith("ws"):
        base = "http" + base[2:]
    return f"{base}/c/{challenge_id}"


class ChallengePeers(Protocol):
    """The other workers of a cluster, as challenges need them."""

    async def announce(self, challenge_id: str) -> None:
        """Tell the other workers that ``challenge_id`` was taken here (never raises)."""
        ...

    async def seat(self, challenge_id: str, game_id: str, token: str) -> MatchedPacket | None:
        """The creator's seat, from the worker that runs ``game_id`` when another does
        (``token``: the creator's person token); None if none does or it has none."""
        ...


@dataclass
class _Seat:
    creator_key: str
    matched: MatchedPacket


class Challenges:
    """The open challenges of one server (see the module docstring)."""

    def __init__(
        self,
        store: GameStore,
        manager: GameManager,
        arena: QueueArena,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.store = store
        self.manager = manager
        self.arena = arena
        self._rng = rng or random.Random()
        self._watchers: dict[str, QueueClient] = {}
        self._watch_tokens: dict[str, str] = {}  # the watching creators' person tokens
        #: The other workers of a cluster (``--redis``), if any.
        self.peers: ChallengePeers | None = None
        self._seats: dict[str, _Seat] = {}  # the creators' seats while their games run
        self._tasks: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def create(self, request: ChallengeRequest, base_url: str) -> ChallengeView:
        """Open a challenge; its view (``player_token`` when the name is new)."""
        check_time_control(request.time_control)
        claim = await self.arena.claim(request.name, request.player_token)
        key = player_key(claim.name) or claim.name
        now = datetime.now(UTC)
        if await self.store.challenges.open_count(key, now) >= MAX_OPEN_CHALLENGES:
            raise TooManyChallenges(
                f"{claim.name!r} has {MAX_OPEN_CHALLENGES} open challenges, the most allowed"
            )
        stored = StoredChallenge(
            challenge_id=secrets.token_hex(8),
            creator=claim.name,
            creator_key=key,
            time_control=request.time_control,
            side=request.side,
            status="open",
            created_at=now,
            expires_at=now + CHALLENGE_TTL,
            accepted_by=None,
            game_id=None,
        )
        await self.store.challenges.create(stored)
        view = await self._view(stored, base_url)
        return view.model_copy(update={"player_token": claim.new_token})

    async def view(
        self, challenge_id: str, base_url: str, token: str | None = None
    ) -> ChallengeView:
        """A challenge as it stands; with the creator's person ``token``, their seat
        (``matched``) once accepted and while the game runs."""
        stored = await self._get(challenge_id)
        view = await self._view(stored, base_url)
        if token is None:
            return view
        await self.arena.claim(stored.creator, token)  # QueueRefusal: not the creator's
        seat = self._seats.get(challenge_id)
        matched = None if seat is None else seat.matched
        if matched is None and stored.game_id is not None and self.peers is not None:
            matched = await self.peers.seat(challenge_id, stored.game_id, token)
        return view if matched is None else view.model_copy(update={"matched": matched})

    def watch(self, challenge_id: str, client: QueueClient, token: str | None = None) -> None:
        """``client`` (the creator's queue socket) gets ``matched`` on acceptance;
        ``token``, the creator's person token, fetches the seat from the worker that
        took it, in a cluster."""
        client.challenge_id = challenge_id
        self._watchers[challenge_id] = client
        if token is not None:
            self._watch_tokens[challenge_id] = token

    def unwatch(self, client: QueueClient) -> None:
        if client.challenge_id is not None:
            if self._watchers.get(client.challenge_id) is client:
                del self._watchers[client.challenge_id]
                self._watch_tokens.pop(client.challenge_id, None)
            client.challenge_id = None

    async def cancel(self, challenge_id: str, token: str | None, base_url: str) -> ChallengeView:
        """Withdraw an open challenge; ``token`` is its creator's person token. Its view,
        now ``cancelled``. Raises NoSuchChallenge, NotTheCreator, QueueRefusal (a wrong
        token) or ChallengeClosed (accepted, expired or cancelled already)."""
        stored = await self._get(challenge_id)
        if token is None:
            raise NotTheCreator(
                "only the challenge's creator can cancel it: give their player token (?token=)"
            )
        await self.arena.claim(stored.creator, token)  # QueueRefusal: not the creator's
        if not await self.store.challenges.cancel(challenge_id):
            raise ChallengeClosed(f"challenge {challenge_id} is {await self._status(challenge_id)}")
        watcher = self._watchers.get(challenge_id)
        if watcher is not None:  # the creator's queue socket: nothing to wait for now
            self.unwatch(watcher)
            watcher.finish(CLOSE_NORMAL, "the challenge was cancelled")
        return await self._view(await self._get(challenge_id), base_url)

    async def withdraw(self, client: QueueClient) -> None:
        """The creator's queue socket stops waiting on its challenge (``queue_leave``,
        or the socket closed): the challenge, still open, is cancelled."""
        challenge_id = client.challenge_id
        if challenge_id is None or self._watchers.get(challenge_id) is not client:
            self.unwatch(client)
            return
        self.unwatch(client)
        await self.store.challenges.cancel(challenge_id)  # False: accepted meanwhile

    async def accepted_elsewhere(self, challenge_id: str) -> None:
        """Another worker took ``challenge_id``: its creator's socket here, if any, gets
        ``matched`` with the seat that worker keeps (``peers.seat``)."""
        watcher = self._watchers.get(challenge_id)
        token = self._watch_tokens.get(challenge_id)
        if watcher is None or token is None or self.peers is None:
            return
        stored = await self.store.challenges.get(challenge_id)
        if stored is None or stored.game_id is None:
            return
        matched = await self.peers.seat(challenge_id, stored.game_id, token)
        if matched is None or self._watchers.get(challenge_id) is not watcher:
            return
        self.unwatch(watcher)
        watcher.finish(CLOSE_NORMAL, "matched", matched)

    async def accept(self, challenge_id: str, request: ChallengeAccept) -> ChallengeAccepted:
        """Take the challenge and start its game: the accepter's seat."""
        stored = await self._get(challenge_id)
        # Refused before the name is claimed, so a new name's token is not lost (two
        # accepting at once: the loser's new name is claimed, its token not returned).
        if (status := _status_now(stored)) != "open":
            raise ChallengeClosed(f"challenge {challenge_id} is {status}")
        claim = await self.arena.claim(request.name, request.player_token)
        if (player_key(claim.name) or claim.name) == stored.creator_key:
            raise OwnChallenge("that is your own challenge: share its link with someone else")
        now = datetime.now(UTC)
        if not await self.store.challenges.take(challenge_id, claim.name, now):
            raise ChallengeClosed(f"challenge {challenge_id} is {await self._status(challenge_id)}")
        try:
            creator_rating = await self.arena.rating(stored.creator)
            creator = Contender(stored.creator, "human", creator_rating)
            accepter = Contender(claim.name, "human", await self.arena.rating(claim.name))
            creator_side = self._creator_side(stored.side)
            x, o = (creator, accepter) if creator_side is Player.X else (accepter, creator)
            started = await start_game(
                self.manager, self.arena, x, o, stored.time_control, challenge_id=challenge_id
            )
        except BaseException:
            await self.store.challenges.reopen(challenge_id)
            raise
        await self.store.challenges.set_game(challenge_id, started.game_id)
        mine = started.matched[creator_side]
        self._seats[challenge_id] = _Seat(stored.creator_key, mine)
        self._forget_seat_after(challenge_id, started.game_id)
        watcher = self._watchers.get(challenge_id)
        if watcher is not None:
            self.unwatch(watcher)
            watcher.finish(CLOSE_NORMAL, "matched", mine)
        elif self.peers is not None:  # the creator may wait on another worker
            await self.peers.announce(challenge_id)
        theirs = started.matched[creator_side.other]
        return ChallengeAccepted(
            game_id=started.game_id,
            side=theirs.side,
            token=theirs.token,
            ws_url=theirs.ws_url,
            opponent=theirs.opponent,
            time_control=theirs.time_control,
            rated=theirs.rated,
            player_token=claim.new_token,
            connect_within_s=theirs.connect_within_s,
        )

    # ---------------------------------------------------------------- helpers

    async def _get(self, challenge_id: str) -> StoredChallenge:
        stored = await self.store.challenges.get(challenge_id)
        if stored is None:
            raise NoSuchChallenge(f"no challenge {clip_text(repr(challenge_id), MAX_ECHO_CHARS)}")
        return stored

    async def _status(self, challenge_id: str) -> str:
        stored = await self._get(challenge_id)
        return _status_now(stored)

    async def _view(self, stored: StoredChallenge, base_url: str) -> ChallengeView:
        rating = await self.arena.rating(stored.creator)
        return ChallengeView(
            challenge_id=stored.challenge_id,
            url=challenge_url(base_url, stored.challenge_id),
            creator=stored.creator,
            creator_rating=round(rating),
            time_control=stored.time_control,
            side=stored.side,
            status=_status_now(stored),
            created_at=stored.created_at.isoformat(),
            expires_at=stored.expires_at.isoformat(),
            accepted_by=stored.accepted_by,
            game_id=stored.game_id,
        )

    def _creator_side(self, side: str) -> Player:
        if side in ("x", "o"):
            return Player(side)
        return Player.X if self._rng.random() < 0.5 else Player.O

    def _forget_seat_after(self, challenge_id: str, game_id: str) -> None:
        async def forget() -> None:
            try:
                await self.manager.end_of(game_id)
            finally:
                self._seats.pop(challenge_id, None)

        task = asyncio.get_running_loop().create_task(forget(), name="htttx: challenge seat")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _status_now(stored: StoredChallenge) -> str:
    if stored.status == "open" and stored.expires_at <= datetime.now(UTC):
        return "expired"
    return stored.status
