"""The queue's matchmaker (``game.queue_match``): pure, fed joins, leaves and times."""

from __future__ import annotations

import random

import pytest

from game.queue_match import (
    BOT_RETRY_S,
    AlreadyWaiting,
    BotDue,
    Matchmaker,
    Paired,
    RatingWindow,
    Waiting,
)

TC = "300+5"


def person(
    name: str, rating: float = 1500.0, at: float = 0.0, tc: str = TC, bot_after: float | None = None
) -> Waiting:
    bot_at = None if bot_after is None else at + bot_after
    return Waiting(name.lower(), name, rating, tc, joined_at=at, bot_at=bot_at)


def maker(window: RatingWindow | None = None) -> Matchmaker:
    return Matchmaker(window=window or RatingWindow(), rng=random.Random(7))


def pairs(events: list[Paired | BotDue]) -> list[set[str]]:
    return [{e.x.name, e.o.name} for e in events if isinstance(e, Paired)]


def test_two_people_with_the_same_time_control_are_paired() -> None:
    m = maker()
    m.join(person("ann"))
    m.join(person("bo", at=1.0))
    assert pairs(m.poll(now=1.0)) == [{"ann", "bo"}]
    assert m.waiting_count() == 0


def test_different_time_controls_are_never_paired() -> None:
    m = maker()
    m.join(person("ann"))
    m.join(person("bo", tc="60"))
    assert m.poll(now=10_000.0) == []
    assert m.next_deadline(now=5.0) is None


def test_the_window_widens_with_waiting_until_the_gap_is_covered() -> None:
    m = maker(RatingWindow(base=100, per_s=10))
    m.join(person("ann", 1500.0))
    m.join(person("bo", 1800.0, at=5.0))
    assert m.poll(now=19.0) == []
    assert m.next_deadline(now=19.0) == pytest.approx(20.0)  # ann's window reaches 300 after 20 s
    assert pairs(m.poll(now=20.0)) == [{"ann", "bo"}]


def test_a_window_with_a_limit_never_reaches_beyond_it() -> None:
    m = maker(RatingWindow(base=100, per_s=10, widest=200))
    m.join(person("ann", 1500.0))
    m.join(person("bo", 1800.0))
    assert m.poll(now=1e6) == []
    assert m.next_deadline(now=0.0) is None


def test_the_longest_waiting_is_served_first_with_the_nearest_rating() -> None:
    m = maker(RatingWindow(base=500, per_s=0))
    m.join(person("old", 1500.0, at=0.0))
    m.join(person("far", 1900.0, at=1.0))
    m.join(person("near", 1550.0, at=2.0))
    m.join(person("late", 1880.0, at=3.0))
    assert pairs(m.poll(now=3.0)) == [{"old", "near"}, {"far", "late"}]


def test_the_older_waiters_window_decides_so_newcomers_cannot_starve_them() -> None:
    m = maker(RatingWindow(base=100, per_s=10))
    m.join(person("old", 1500.0, at=0.0))
    m.join(person("new", 1900.0, at=60.0))  # old's window is 700 wide by now
    assert pairs(m.poll(now=60.0)) == [{"old", "new"}]


def test_sides_are_not_always_given_to_the_same_waiter() -> None:
    openers = set()
    for seed in range(20):
        m = Matchmaker(rng=random.Random(seed))
        m.join(person("ann"))
        m.join(person("bo", at=1.0))
        [paired] = m.poll(now=1.0)
        assert isinstance(paired, Paired)
        openers.add(paired.x.name)
    assert openers == {"ann", "bo"}


def test_a_name_waits_once() -> None:
    m = maker()
    m.join(person("ann"))
    with pytest.raises(AlreadyWaiting, match="already waiting"):
        m.join(person("ANN"))


def test_who_leaves_is_not_paired() -> None:
    m = maker()
    m.join(person("ann"))
    assert m.leave("ann") is not None
    assert m.leave("ann") is None
    m.join(person("bo"))
    assert m.poll(now=100.0) == []


def test_a_person_who_chose_a_bot_is_handed_over_after_their_wait() -> None:
    m = maker()
    m.join(person("ann", bot_after=30.0))
    assert m.poll(now=29.9) == []
    assert m.next_deadline(now=29.9) == 30.0
    [due] = m.poll(now=30.0)
    assert isinstance(due, BotDue) and due.person.name == "ann"
    assert not m.is_waiting("ann")


def test_people_are_paired_before_anyone_gets_a_bot() -> None:
    m = maker()
    m.join(person("ann", bot_after=30.0))
    m.join(person("bo", at=40.0))
    assert pairs(m.poll(now=40.0)) == [{"ann", "bo"}]


def test_without_a_free_bot_the_person_waits_again_and_keeps_their_place() -> None:
    m = maker()
    m.join(person("ann", bot_after=30.0))
    [due] = m.poll(now=30.0)
    assert isinstance(due, BotDue)
    m.rejoin(due.person, now=30.0)
    assert m.waiting()[0].joined_at == 0.0
    assert m.next_deadline(now=30.0) == 30.0 + BOT_RETRY_S


def test_a_bad_window_is_refused() -> None:
    with pytest.raises(ValueError, match="rating window"):
        RatingWindow(base=-1)
