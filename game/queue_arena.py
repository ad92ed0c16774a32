"""The arena as the queue sees it: ``ArenaForQueue`` adapts the arena's
``BotRegistry`` (names of people, the ladder's bots) and ``RatingBook`` (ratings, rated
games) to ``game.queue_games.QueueArena``, turning the arena's refusals into the
queue's ``QueueRefusal`` (with the arena's words)."""

from __future__ import annotations

from game.arena_errors import ArenaError, NameTaken, WrongToken
from game.queue_games import Claim, QueueRefusal
from game.rating_book import RatingBook
from game.registry import BotRegistry, LadderEntrant

__all__ = ["ArenaForQueue"]


class ArenaForQueue:
    """``QueueArena`` over the arena's registry and rating book."""

    def __init__(self, registry: BotRegistry, ratings: RatingBook) -> None:
        self.registry = registry
        self.ratings = ratings

    async def claim(self, name: str, token: str | None) -> Claim:
        try:
            new_token = await self.registry.claim_person(name, token)
        except WrongToken as error:
            raise QueueRefusal(str(error), 403) from None
        except NameTaken as error:
            raise QueueRefusal(str(error), 409) from None
        except ArenaError as error:
            raise QueueRefusal(str(error), 422) from None
        return Claim(name, new_token)

    async def rating(self, name: str) -> float:
        return float((await self.ratings.rating_of(name)).mu)

    async def bots(self) -> list[LadderEntrant]:
        return await self.registry.ladder_entrants()

    async def track(self, game_id: str, x: str, o: str) -> None:
        await self.ratings.track(game_id, x, o)
