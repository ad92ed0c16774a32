"""Games of people who found an opponent (the ``/queue`` or an open challenge): the
``NewGameRequest`` that seats them, the game started through ``GameManager``, declared
rated, and the ``matched`` packet each person gets.

Both the queue's hub (``game.queue_hub``) and open challenges (``game.challenges``)
start their games here, so a queue game and a challenge game are the same kind of game:
people seated by token (``PlayerConfig(type=human, name=...)``), a ladder bot by its
registered URL and name, the game's clock from the time control, tags ``Event`` and
(for a challenge) ``Challenge``. Every such game is rated (``QueueArena.track``).

>>> request = game_request(
...     Contender("ann", "human", 1500.0), Contender("bo", "human", 1520.0), "300+5", {}
... )
>>> request.player_x.name, request.match_config.clock_type, request.match_config.clock
('ann', 'incremental', 300.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from game.manager import GameManager
from game.registry import LadderEntrant
from models import (
    Match,
    MatchedOpponent,
    MatchedPacket,
    NewGameRequest,
    Player,
    PlayerConfig,
    PlayerKind,
    PlayerType,
    TimeControl,
    TimeControlError,
)

__all__ = [
    "QUEUE_EVENT",
    "Claim",
    "Contender",
    "QueueArena",
    "QueueRefusal",
    "StartedGame",
    "check_time_control",
    "game_request",
    "start_game",
]

#: The ``Event`` tag of a game the queue or a challenge made.
QUEUE_EVENT: Final = "htttx-arena queue"


class QueueRefusal(Exception):
    """The arena refused a person: a name taken by a bot, a known person's name without
    its token, a wrong token, a name that cannot be a player's; or a time control the
    server does not host. The message says which, fit to show the client; ``status`` is
    the HTTP answer (422 a bad name or setting, 409 a name taken, 403 a wrong token)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Claim:
    """A person's name, as claimed: ``name`` as kept, ``new_token`` the person token
    made just now for a new name (shown once), else None."""

    name: str
    new_token: str | None


class QueueArena(Protocol):
    """What the queue needs from the arena (``game.queue_arena`` adapts the arena's
    ``BotRegistry`` and ``RatingBook``)."""

    async def claim(self, name: str, token: str | None) -> Claim:
        """Claim ``name`` for a person (see ``Claim``); ``QueueRefusal`` if refused."""
        ...

    async def rating(self, name: str) -> float:
        """The player's rating (mu on the displayed scale; a new name's default)."""
        ...

    async def bots(self) -> list[LadderEntrant]:
        """The ladder's entrants (``BotRegistry.ladder_entrants``); the hub skips those
        backed off or busy (``game.ladder_pairing.pick_bot_near``)."""
        ...

    async def track(self, game_id: str, x: str, o: str) -> None:
        """Declare a game rated (applied once when it ends)."""
        ...


@dataclass(frozen=True)
class Contender:
    """One side of a queue game: a person, or a ladder bot with its ``bot_url``."""

    name: str
    kind: PlayerKind
    rating: float
    bot_url: str | None = None

    @classmethod
    def of_bot(cls, bot: LadderEntrant) -> Contender:
        return cls(bot.name, "bot", float(bot.rating.mu), bot.url)

    def seat(self, time_control: TimeControl) -> PlayerConfig:
        # A stall limit has no Match field: it goes with each seat.
        seat_clock = time_control if time_control.stall_limit is not None else None
        if self.kind == "bot":
            return PlayerConfig(
                type=PlayerType.BOT, bot_url=self.bot_url, name=self.name, time_control=seat_clock
            )
        return PlayerConfig(type=PlayerType.HUMAN, name=self.name, time_control=seat_clock)

    def as_opponent(self) -> MatchedOpponent:
        return MatchedOpponent(name=self.name, kind=self.kind, rating=round(self.rating))


@dataclass(frozen=True)
class StartedGame:
    """A game started for people: its id and each person's ``matched`` packet."""

    game_id: str
    matched: Mapping[Player, MatchedPacket]


def game_request(
    x: Contender, o: Contender, time_control: str, tags: Mapping[str, str]
) -> NewGameRequest:
    """The request that seats ``x`` and ``o`` with ``time_control`` (tournament syntax);
    raises ``TimeControlError`` or pydantic's ``ValidationError`` for settings the
    server does not host."""
    clock = TimeControl.parse(time_control)
    return NewGameRequest(
        player_x=x.seat(clock),
        player_o=o.seat(clock),
        match_config=Match(**clock.match_settings()),
        name=f"{x.name} vs {o.name}",
        tags={"Event": QUEUE_EVENT, **tags},
    )


def check_time_control(time_control: str) -> None:
    """``QueueRefusal`` for a time control this server does not host: its reason, as a
    body's field is named (``time_control: clock: ...``), said once although the game
    would give the clock to both seats (and to its ``match_config``)."""
    try:
        clock = TimeControl.parse(time_control)
    except TimeControlError as error:
        raise QueueRefusal(f"time_control: {error.reason}") from None
    if problems := clock.hosting_problems():
        raise QueueRefusal(f"time_control: {'; '.join(problems)}")


async def start_game(
    manager: GameManager,
    arena: QueueArena,
    x: Contender,
    o: Contender,
    time_control: str,
    *,
    challenge_id: str | None = None,
) -> StartedGame:
    """Create the game, declare it rated, and build each person's ``matched``.

    Raises what ``GameManager.create_game`` raises (``DiscoveryError`` for a bot that
    cannot be seated, ``TooManyGames``, ``ManagerClosed``)."""
    tags = {} if challenge_id is None else {"Challenge": challenge_id}
    created = await manager.create_game(game_request(x, o, time_control, tags))
    try:
        await arena.track(created.game_id, x.name, o.name)
    except BaseException:
        # A queue game is rated or not played: one that cannot be declared is ended.
        manager.abort_game(created.game_id, "the game could not be declared rated")
        raise
    tokens = {Player.X: created.token_x, Player.O: created.token_o}
    sides = {Player.X: (x, o), Player.O: (o, x)}
    matched: dict[Player, MatchedPacket] = {}
    for side, token in tokens.items():
        if token is None:
            continue  # a bot's seat
        _me, opponent = sides[side]
        matched[side] = MatchedPacket(
            game_id=created.game_id,
            side=side,
            token=token,
            ws_url=f"/ws?token={token}",
            opponent=opponent.as_opponent(),
            time_control=time_control,
            rated=True,
            challenge_id=challenge_id,
            connect_within_s=manager.limits.no_show_s,
        )
    return StartedGame(created.game_id, matched)
