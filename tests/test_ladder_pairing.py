"""The ladder's pairing (game.ladder_pairing): pure, so played out here over many
simulated rounds."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from game.ladder_pairing import Pairing, choose_pairs, eligible, pick_bot_near

NOW = datetime(2026, 11, 24, 20, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Rating:
    mu: float = 1500.0


@dataclass(frozen=True)
class Bot:
    name: str
    rating: Rating = Rating()
    last_game_at: datetime | None = None
    backoff_until: datetime | None = None


def field(n: int, spread: float = 50.0) -> list[Bot]:
    return [Bot(f"bot{i:03d}", Rating(1000 + spread * i)) for i in range(n)]


def test_longest_waiting_comes_first_and_never_played_before_all() -> None:
    bots = [
        Bot("old", last_game_at=NOW - timedelta(hours=1)),
        Bot("recent", last_game_at=NOW - timedelta(seconds=1)),
        Bot("new"),
        Bot("naive", last_game_at=(NOW - timedelta(minutes=5)).replace(tzinfo=None)),
    ]
    assert [b.name for b in eligible(bots, busy=(), now=NOW)] == ["new", "old", "naive", "recent"]
    pairs = choose_pairs(bots, now=NOW, slots=1, rng=random.Random(0), explore=0.0)
    assert "new" in (pairs[0].x, pairs[0].o)


def test_busy_and_backed_off_bots_are_skipped_until_the_backoff_ends() -> None:
    bots = [
        Bot("a"),
        Bot("B"),
        Bot("c", backoff_until=NOW + timedelta(seconds=30)),
        Bot("d", backoff_until=NOW - timedelta(seconds=1)),
        Bot("e"),
    ]
    for seed in range(50):
        pairs = choose_pairs(bots, now=NOW, slots=5, rng=random.Random(seed), busy={"b"})
        names = {n for p in pairs for n in (p.x, p.o)}
        assert names == {"a", "d"} or names == {"a", "e"} or names == {"d", "e"}
        assert "c" not in names and "B" not in names
    later = NOW + timedelta(seconds=31)
    assert "c" in {b.name for b in eligible(bots, busy=(), now=later)}
    assert pick_bot_near(bots, Rating(1500), busy={"a", "b", "d", "e"}, now=NOW) is None
    assert pick_bot_near(bots, 1500, busy={"a", "b", "d", "e"}, now=later) == bots[2]


def test_pairs_never_repeat_a_bot_and_respect_the_slots() -> None:
    bots = field(21)
    for seed in range(20):
        pairs = choose_pairs(bots, now=NOW, slots=7, rng=random.Random(seed))
        names = [n for p in pairs for n in (p.x, p.o)]
        assert len(pairs) == 7 and len(names) == len(set(names))
    assert len(choose_pairs(bots, now=NOW, slots=100, rng=random.Random(0))) == 10
    assert choose_pairs(bots[:1], now=NOW, slots=3, rng=random.Random(0)) == []
    assert choose_pairs(bots, now=NOW, slots=0, rng=random.Random(0)) == []


def test_without_exploration_the_opponent_is_the_nearest_in_rating() -> None:
    bots = [Bot("low", Rating(1000)), Bot("mid", Rating(1600)), Bot("high", Rating(1650))]
    bots[0] = replace(bots[0], last_game_at=NOW)  # low has just played: mid comes first
    pairs = choose_pairs(bots, now=NOW, slots=1, rng=random.Random(3), explore=0.0)
    assert {pairs[0].x, pairs[0].o} == {"mid", "high"}


def test_no_back_to_back_rematch_when_there_is_another_choice() -> None:
    bots = [Bot("a", Rating(1500)), Bot("b", Rating(1501)), Bot("c", Rating(1900))]
    last = {"a": "b", "b": "a"}
    pairs = choose_pairs(
        bots, now=NOW, slots=1, rng=random.Random(0), explore=0.0, last_opponent=last
    )
    assert {pairs[0].x, pairs[0].o} == {"a", "c"}
    alone = choose_pairs(
        bots[:2], now=NOW, slots=1, rng=random.Random(0), explore=0.0, last_opponent=last
    )
    assert {alone[0].x, alone[0].o} == {"a", "b"}  # the only game there is
    # While c plays, a and b wait for it rather than play each other again...
    waiting = choose_pairs(
        bots, now=NOW, slots=1, rng=random.Random(0), explore=0.0, last_opponent=last, busy={"c"}
    )
    assert waiting == []
    # ...but a bot whose last opponent is busy is paired as usual.
    d = Bot("d", Rating(1400))
    pairs = choose_pairs(
        [*bots, d],
        now=NOW,
        slots=1,
        rng=random.Random(0),
        explore=0.0,
        last_opponent=last,
        busy={"b"},
    )
    assert {pairs[0].x, pairs[0].o} == {"a", "d"}


def simulate(
    bots: list[Bot], rounds: int, slots: int, seed: int, explore: float
) -> tuple[Counter[str], Counter[frozenset[str]], dict[str, int]]:
    """Play ``rounds`` rounds: each round's pairs all finish before the next (their
    bots' last game is then), so every round sees the whole field free."""
    rng = random.Random(seed)
    games: Counter[str] = Counter()
    meetings: Counter[frozenset[str]] = Counter()
    sides: dict[str, int] = {}
    last: dict[str, str] = {}
    clock = NOW
    for _ in range(rounds):
        clock += timedelta(seconds=1)
        pairs = choose_pairs(
            bots, now=clock, slots=slots, rng=rng, explore=explore, sides=sides, last_opponent=last
        )
        played = {}
        for pair in pairs:
            games.update((pair.x, pair.o))
            meetings[frozenset((pair.x, pair.o))] += 1
            sides[pair.x] = sides.get(pair.x, 0) + 1
            sides[pair.o] = sides.get(pair.o, 0) - 1
            last[pair.x], last[pair.o] = pair.o, pair.x
            played[pair.x] = played[pair.o] = clock
        bots = [replace(b, last_game_at=played.get(b.name, b.last_game_at)) for b in bots]
    return games, meetings, sides


def test_no_bot_starves_even_at_the_far_end_of_the_ratings() -> None:
    # 30 bots, 2 games a round: a bot waits at most 15 rounds for its next game.
    bots = field(30, spread=200.0)
    games, _, _ = simulate(bots, rounds=300, slots=2, seed=7, explore=0.0)
    assert set(games) == {b.name for b in bots}
    # Every bot is first in line once every 15 rounds: at least 300 / 15 = 20 games.
    assert min(games.values()) >= 20


def test_exploration_makes_far_apart_bots_meet() -> None:
    bots = field(20, spread=100.0)
    _, near_only, _ = simulate(bots, rounds=400, slots=5, seed=1, explore=0.0)
    _, explored, _ = simulate(bots, rounds=400, slots=5, seed=1, explore=0.3)

    def far(meetings: Counter[frozenset[str]]) -> int:
        ratings = {b.name: b.rating.mu for b in bots}
        return sum(
            n for pair, n in meetings.items() if abs(ratings[min(pair)] - ratings[max(pair)]) > 500
        )

    assert far(near_only) == 0
    assert far(explored) > 0
    # Still mostly near: the greater part of the games are between neighbours.
    assert far(explored) < sum(explored.values()) / 2


def test_sides_stay_balanced() -> None:
    _, _, sides = simulate(field(12), rounds=500, slots=6, seed=5, explore=0.15)
    assert max(abs(lean) for lean in sides.values()) <= 2


def test_same_seed_same_pairs() -> None:
    bots = field(40)
    runs = [simulate(bots, rounds=50, slots=10, seed=11, explore=0.2) for _ in range(2)]
    assert runs[0] == runs[1]
    other = simulate(bots, rounds=50, slots=10, seed=12, explore=0.2)
    assert other[1] != runs[0][1]


def test_names_compare_case_insensitively() -> None:
    bots = [Bot("Alpha"), Bot("beta"), Bot("Gamma")]
    pairs = choose_pairs(bots, now=NOW, slots=1, rng=random.Random(0), busy={"ALPHA", "GAMMA"})
    assert pairs == []
    pairs = choose_pairs(
        bots, now=NOW, slots=1, rng=random.Random(0), busy={"gamma"}, sides={"alpha": 3}
    )
    assert pairs == [Pairing(x="beta", o="Alpha")]


def test_pick_bot_near_prefers_nearest_then_longest_waiting() -> None:
    bots = [
        Bot("x", Rating(1400), last_game_at=NOW),
        Bot("y", Rating(1600), last_game_at=NOW - timedelta(minutes=1)),
        Bot("z", Rating(2000)),
    ]
    picked = pick_bot_near(bots, 1500, now=NOW)
    assert picked is not None and picked.name == "y"  # as near as x, waited longer
    picked = pick_bot_near(bots, 1900, busy=("z",), now=NOW)
    assert picked is not None and picked.name == "y"
    assert pick_bot_near([], 1500) is None


def test_bad_exploration_is_refused() -> None:
    with pytest.raises(ValueError, match="explore must be from 0 to 1"):
        choose_pairs(field(4), now=NOW, slots=1, rng=random.Random(0), explore=1.5)
