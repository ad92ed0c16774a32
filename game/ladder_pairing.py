"""Who the ladder pairs next. Pure: no I/O, no clock, randomness only from the
``random.Random`` given.

``choose_pairs`` picks up to ``slots`` games from the ladder's entrants:

* **Eligible**: not busy (in a game now) and not backed off (``backoff_until`` in the
  future: a bot that keeps failing waits, see ``game.registry``).
* **Longest-waiting first**: entrants are taken in the order of their last ladder game
  (never played: first; ties by name). Each pair's first bot is the one that has waited
  longest of those left, so every eligible bot is at the head of the line after at most
  as many games as there are bots ahead of it, and then gets one (as soon as a bot
  other than its last opponent is free): **no bot starves**, whatever the ratings say.
* **Near in rating, with exploration**: its opponent is the one nearest in rating
  (``mu``) among those left, except the one it played last (no back-to-back
  rematches: when that is the only one free, the bot waits for the others while any
  are playing, so two quick finishers do not lock into playing each other over and
  over; with only those two active, they play); with probability ``explore`` it is
  any of them, uniformly, so ratings far apart still meet now and then and a misjudged
  bot is found.
* **Sides balanced**: of the two, the bot that has had X more often (``sides``: X games
  minus O games) plays O; when equal, a coin toss.

``pick_bot_near`` is what the people's queue asks for: the eligible bot nearest a
person's rating (ties: the longest waiting).

>>> from dataclasses import dataclass
>>> @dataclass
... class R:
...     mu: float
>>> @dataclass
... class E:
...     name: str
...     rating: R
...     last_game_at: datetime | None = None
...     backoff_until: datetime | None = None
>>> now = datetime(2026, 11, 24, tzinfo=UTC)
>>> bots = [E("a", R(1500)), E("b", R(2000)), E("c", R(1520)), E("d", R(1990))]
>>> [(p.x, p.o) for p in choose_pairs(bots, now=now, slots=2, rng=random.Random(1),
...                                    explore=0.0)]
[('c', 'a'), ('b', 'd')]
>>> pick_bot_near(bots, 1980, busy={"b"}, now=now).name
'd'
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Protocol, TypeVar

__all__ = [
    "DEFAULT_EXPLORE",
    "Entrant",
    "Pairing",
    "Rated",
    "choose_pairs",
    "eligible",
    "pick_bot_near",
]

#: The chance that a pair's opponent is drawn at random rather than nearest in rating.
DEFAULT_EXPLORE: Final = 0.15

_NEVER: Final = datetime.min.replace(tzinfo=UTC)


class Rated(Protocol):
    """A rating as pairing reads it: its ``mu`` (``game.ratings.Rating`` is one)."""

    @property
    def mu(self) -> float: ...


class Entrant(Protocol):
    """What pairing reads of a ladder entrant (``game.registry.LadderEntrant`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def rating(self) -> Rated: ...
    @property
    def last_game_at(self) -> datetime | None: ...
    @property
    def backoff_until(self) -> datetime | None: ...


E = TypeVar("E", bound=Entrant)


@dataclass(frozen=True)
class Pairing:
    """One game to play: ``x`` moves first."""

    x: str
    o: str


def _aware(moment: datetime) -> datetime:
    """Naive datetimes (SQLite gives them back so) are UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _waited_since(entrant: Entrant) -> datetime:
    return _NEVER if entrant.last_game_at is None else _aware(entrant.last_game_at)


def _active(entrants: Sequence[E], now: datetime) -> list[E]:
    """The entrants not backed off at ``now``."""
    now = _aware(now)
    return [e for e in entrants if e.backoff_until is None or _aware(e.backoff_until) <= now]


def eligible(entrants: Sequence[E], *, busy: Collection[str], now: datetime) -> list[E]:
    """The entrants that may play now (not busy, not backed off), longest-waiting first.

    Names are compared case-insensitively, as everywhere (``game.store.schema.player_key``).
    """
    return _free(_active(entrants, now), busy)


def _free(active: list[E], busy: Collection[str]) -> list[E]:
    busy_keys = {name.casefold() for name in busy}
    free = [entrant for entrant in active if entrant.name.casefold() not in busy_keys]
    free.sort(key=lambda entrant: (_waited_since(entrant), entrant.name.casefold()))
    return free


def _opponent(
    first: E,
    others: list[E],
    *,
    rng: random.Random,
    explore: float,
    last_opponent: Mapping[str, str],
    rematch_ok: bool,
) -> E | None:
    if rng.random() < explore:
        return others[rng.randrange(len(others))]
    avoid = last_opponent.get(first.name.casefold())
    choices = [e for e in others if e.name.casefold() != avoid]
    if not choices:
        if not rematch_ok:
            return None
        choices = others
    mu = first.rating.mu
    # min() keeps the first of equals: among equally near, the longest waiting.
    return min(choices, key=lambda entrant: abs(entrant.rating.mu - mu))


def choose_pairs(
    entrants: Sequence[E],
    *,
    now: datetime,
    slots: int,
    rng: random.Random,
    busy: Collection[str] = (),
    explore: float = DEFAULT_EXPLORE,
    sides: Mapping[str, int] | None = None,
    last_opponent: Mapping[str, str] | None = None,
) -> list[Pairing]:
    """Up to ``slots`` games from ``entrants``, as the module docstring says.

    ``sides``: each bot's X games minus O games (by casefolded name; missing: 0);
    ``last_opponent``: each bot's last opponent (casefolded names both). The result is
    the same for the same arguments and the same ``rng`` state.
    """
    if not 0.0 <= explore <= 1.0:
        raise ValueError(f"explore must be from 0 to 1, got {explore}")
    sides = sides or {}
    last_opponent = last_opponent or {}
    active = _active(entrants, now)
    line = _free(active, busy)
    # A bot whose only free opponent is the one it just played waits while others
    # play (they will be free soon), unless those two are all there is.
    playing = len(active) > len(line)
    pairs: list[Pairing] = []
    while len(pairs) < slots and len(line) >= 2:
        first, others = line[0], line[1:]
        second = _opponent(
            first,
            others,
            rng=rng,
            explore=explore,
            last_opponent=last_opponent,
            rematch_ok=not playing,
        )
        if second is None:
            line = others
            continue
        line = [entrant for entrant in others if entrant is not second]
        lean_first = sides.get(first.name.casefold(), 0)
        lean_second = sides.get(second.name.casefold(), 0)
        # Who has had X more plays O; when equal, a coin toss.
        tossed = lean_first == lean_second
        first_is_x = rng.random() < 0.5 if tossed else lean_first < lean_second
        x, o = (first, second) if first_is_x else (second, first)
        pairs.append(Pairing(x.name, o.name))
    return pairs


def pick_bot_near(
    entrants: Sequence[E],
    rating: float | Rated,
    busy: Collection[str] = (),
    *,
    now: datetime | None = None,
) -> E | None:
    """The eligible entrant (not busy, not backed off at ``now``; default: the present)
    nearest ``rating`` (a ``mu``, or anything with one); among equally near, the one
    that has waited longest. None when no entrant is free."""
    mu = rating if isinstance(rating, (int, float)) else rating.mu
    free = eligible(entrants, busy=busy, now=now if now is not None else datetime.now(UTC))
    if not free:
        return None
    return min(free, key=lambda entrant: abs(entrant.rating.mu - mu))
