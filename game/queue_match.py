"""The matchmaker of the ``/queue``, as a pure state machine (no I/O, no clock of its own).

People wait with a rating and a time control; ``poll(now)`` pairs them and says who has
waited long enough for a bot. The socket adapter (``game.queue_socket``) feeds it joins
and leaves, calls ``poll`` when ``next_deadline`` comes (or something changed), and
carries out what it returns: it creates the games.

How it decides:

* Only people with the same time control (its canonical text) are paired.
* *Rating window.* A person accepts an opponent within ``window.width(waited)`` rating
  points: ``base`` at first, widening by ``per_s`` every second of waiting, up to
  ``widest`` (then anyone). Two people are paired when the one who has waited longer
  accepts the other: a newcomer with a narrow window never keeps someone who has waited
  long from a game.
* *Order.* The person who has waited longest is served first, with the acceptable
  opponent nearest in rating (ties: the longer waiting); then the next, and so on. So
  nobody is starved: everyone's window reaches everybody.
* *Sides.* Chosen at random (``rng``), so neither the older nor the newer waiter always
  opens.
* *A bot.* A person with ``bot_at`` (the time they chose to wait, ``bot_after_s``, after
  joining) who is still unpaired then leaves the queue in a ``BotDue``: the adapter
  finds a ladder bot near their rating, or ``rejoin``s them with a later ``bot_at``
  when none is free. People are paired before anyone is handed to a bot.

>>> import random
>>> maker = Matchmaker(rng=random.Random(1))
>>> maker.join(Waiting("ann", "ann", 1500.0, "300+5", joined_at=0.0, bot_at=30.0))
>>> maker.join(Waiting("bo", "bo", 2100.0, "300+5", joined_at=1.0))
>>> maker.poll(now=2.0)  # 600 points apart: too far for now
[]
>>> round(maker.next_deadline(now=2.0), 3)  # when ann's window reaches bo (or her bot is due)
15.0
>>> [sorted((p.x.name, p.o.name)) for p in maker.poll(now=15.0)]
[['ann', 'bo']]
>>> maker.waiting_count("300+5")
0
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

__all__ = [
    "AlreadyWaiting",
    "BotDue",
    "Matchmaker",
    "Paired",
    "QueueEvent",
    "RatingWindow",
    "Waiting",
]

_EPSILON_S: Final = 1e-6

#: How long a person handed to a bot waits again when no bot is free (seconds).
BOT_RETRY_S: Final = 10.0


class AlreadyWaiting(ValueError):
    """``join`` for a name that is already in the queue."""


@dataclass(frozen=True)
class RatingWindow:
    """How far in rating a waiting person accepts an opponent: ``base`` points at first,
    ``per_s`` more each second waited, at most ``widest`` (``inf``: in the end anyone).

    >>> window = RatingWindow(base=100, per_s=10, widest=300)
    >>> window.width(0), window.width(5), window.width(60)
    (100.0, 150.0, 300.0)
    >>> window.seconds_to_reach(250)
    15.0
    >>> window.seconds_to_reach(301) is None
    True
    """

    base: float = 150.0
    per_s: float = 30.0
    widest: float = math.inf

    def __post_init__(self) -> None:
        if not (self.base >= 0 and self.per_s >= 0 and self.widest >= self.base):
            raise ValueError("a rating window needs base >= 0, per_s >= 0 and widest >= base")

    def width(self, waited_s: float) -> float:
        """The points accepted after ``waited_s`` seconds of waiting."""
        return float(min(self.base + self.per_s * max(waited_s, 0.0), self.widest))

    def seconds_to_reach(self, gap: float) -> float | None:
        """How long one waits before accepting a ``gap`` of rating (0 if at once; None
        if never)."""
        if gap <= self.base:
            return 0.0
        if gap > self.widest or self.per_s == 0:
            return None
        return (gap - self.base) / self.per_s


@dataclass(frozen=True)
class Waiting:
    """A person in the queue. ``key`` is the name compared (case-insensitively:
    ``game.store.schema.player_key``), ``name`` as shown; ``joined_at`` and ``bot_at``
    are monotonic seconds (``bot_at`` None: people only)."""

    key: str
    name: str
    rating: float
    time_control: str
    joined_at: float
    bot_at: float | None = None

    def waited(self, now: float) -> float:
        return max(now - self.joined_at, 0.0)


@dataclass(frozen=True)
class Paired:
    """Two people to seat: ``x`` opens."""

    x: Waiting
    o: Waiting


@dataclass(frozen=True)
class BotDue:
    """``person`` waited their chosen time: find them a bot (they have left the queue)."""

    person: Waiting


QueueEvent: TypeAlias = Paired | BotDue


@dataclass
class Matchmaker:
    """The people waiting and the pairing rules (see the module docstring)."""

    window: RatingWindow = field(default_factory=RatingWindow)
    rng: random.Random = field(default_factory=random.Random)
    _waiting: dict[str, Waiting] = field(default_factory=dict)

    # ----------------------------------------------------------------- inputs

    def join(self, person: Waiting) -> None:
        """``person`` starts waiting; ``AlreadyWaiting`` if their name already is."""
        if person.key in self._waiting:
            raise AlreadyWaiting(f"{person.name!r} is already waiting in the queue")
        self._waiting[person.key] = person

    def rejoin(self, person: Waiting, now: float) -> None:
        """A person handed to a bot for whom no bot was free waits again (their time
        in the queue kept), with another try for a bot ``BOT_RETRY_S`` from ``now``."""
        self._waiting[person.key] = replace(person, bot_at=now + BOT_RETRY_S)

    def leave(self, key: str) -> Waiting | None:
        """The person of ``key`` stops waiting; who it was, or None if not waiting."""
        return self._waiting.pop(key, None)

    def poll(self, now: float) -> list[QueueEvent]:
        """Pair whoever can be paired at ``now``, then hand to a bot whoever waited
        their time; everyone in the result has left the queue."""
        events: list[QueueEvent] = []
        for person in sorted(self._waiting.values(), key=_by_wait):
            if person.key not in self._waiting:
                continue  # taken as someone's opponent already
            opponent = self._opponent_for(person, now)
            if opponent is None:
                continue
            del self._waiting[person.key], self._waiting[opponent.key]
            x, o = (person, opponent) if self.rng.random() < 0.5 else (opponent, person)
            events.append(Paired(x, o))
        for person in sorted(self._waiting.values(), key=_by_wait):
            if person.bot_at is not None and now >= person.bot_at:
                del self._waiting[person.key]
                events.append(BotDue(person))
        return events

    # ------------------------------------------------------------------ reads

    def is_waiting(self, key: str) -> bool:
        return key in self._waiting

    def waiting_count(self, time_control: str | None = None) -> int:
        """How many people wait (for ``time_control``, or at all)."""
        if time_control is None:
            return len(self._waiting)
        return sum(1 for p in self._waiting.values() if p.time_control == time_control)

    def waiting(self) -> list[Waiting]:
        """Everyone waiting, longest first."""
        return sorted(self._waiting.values(), key=_by_wait)

    def next_deadline(self, now: float) -> float | None:
        """When ``poll`` may next find something to do with nobody joining or leaving:
        a window that reaches someone, or a bot due. None if never."""
        times: list[float] = []
        people = list(self._waiting.values())
        for index, a in enumerate(people):
            if a.bot_at is not None:
                times.append(a.bot_at)
            for b in people[index + 1 :]:
                if a.time_control != b.time_control:
                    continue
                older = min(a, b, key=_by_wait)
                after = self.window.seconds_to_reach(abs(a.rating - b.rating))
                if after is not None:
                    # A hair later: the window is computed, and must cover the gap then.
                    times.append(older.joined_at + after + _EPSILON_S)
        return max(min(times), now) if times else None

    # ---------------------------------------------------------------- helpers

    def _opponent_for(self, person: Waiting, now: float) -> Waiting | None:
        """The best opponent for ``person``, the longest waiting still unpaired."""
        reach = self.window.width(person.waited(now))
        best: Waiting | None = None
        for other in self._waiting.values():
            if other.key == person.key or other.time_control != person.time_control:
                continue
            if abs(other.rating - person.rating) > reach:
                continue
            if best is None or _nearer(other, best, person.rating):
                best = other
        return best


def _by_wait(person: Waiting) -> tuple[float, str]:
    return (person.joined_at, person.key)


def _nearer(a: Waiting, b: Waiting, rating: float) -> bool:
    """Whether ``a`` is a better opponent than ``b`` for ``rating``: nearer, then the
    longer waiting."""
    return (abs(a.rating - rating), _by_wait(a)) < (abs(b.rating - rating), _by_wait(b))
