"""The schedule of a tournament: pairs with colours swapped, openings, formats."""

from __future__ import annotations

from collections import Counter

import pytest

from game.tournament_schedule import Schedule, ScheduleError


def test_a_round_robin_meets_every_pair_of_bots_once_a_round() -> None:
    schedule = Schedule(["a", "b", "c", "d"], "round_robin", rounds=3, openings=10)
    assert len(schedule) == 3 * 6 * 2
    meetings = Counter(frozenset((g.x, g.o)) for g in map(schedule.game, range(len(schedule))))
    assert len(meetings) == 6 and set(meetings.values()) == {6}


def test_a_gauntlet_plays_the_first_bot_against_each_other() -> None:
    schedule = Schedule(["new", "a", "b"], "gauntlet", rounds=2, openings=0)
    games = [schedule.game(i) for i in range(len(schedule))]
    assert len(games) == 8
    assert all("new" in (g.x, g.o) for g in games)
    assert {g.x for g in games} | {g.o for g in games} == {"new", "a", "b"}


def test_each_pair_plays_one_opening_with_colours_swapped() -> None:
    schedule = Schedule(["a", "b", "c"], "round_robin", rounds=4, openings=5)
    for first in range(0, len(schedule), 2):
        one, two = schedule.game(first), schedule.game(first + 1)
        assert (one.x, one.o) == (two.o, two.x)
        assert one.opening == two.opening and one.pair == two.pair
        assert (one.leg, two.leg) == (0, 1)


def test_openings_go_round_the_book_in_order() -> None:
    schedule = Schedule(["a", "b"], "round_robin", rounds=7, openings=3)
    assert [schedule.game(2 * p).opening for p in range(7)] == [0, 1, 2, 0, 1, 2, 0]


def test_no_book_means_no_opening() -> None:
    assert Schedule(["a", "b"], "round_robin", rounds=1, openings=0).game(0).opening is None


def test_a_game_is_the_same_every_time_it_is_asked_for() -> None:
    one = Schedule(["a", "b", "c"], "round_robin", rounds=50, openings=7)
    two = Schedule(["a", "b", "c"], "round_robin", rounds=50, openings=7)
    assert [one.game(i) for i in range(0, 300, 7)] == [two.game(i) for i in range(0, 300, 7)]


@pytest.mark.parametrize(
    ("bots", "rounds", "message"),
    [(["a"], 1, "at least 2 bots"), (["a", "a"], 1, "unique"), (["a", "b"], 0, "rounds")],
)
def test_impossible_schedules_are_refused(bots: list[str], rounds: int, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        Schedule(bots, "round_robin", rounds=rounds, openings=1)


def test_a_game_outside_the_schedule_is_an_error() -> None:
    schedule = Schedule(["a", "b"], "round_robin", rounds=1, openings=1)
    with pytest.raises(ScheduleError, match="not in a schedule of 2 games"):
        schedule.game(2)
