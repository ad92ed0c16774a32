"""game.clock: the four clock kinds, fed explicit monotonic times (nothing sleeps)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.clock import (
    DEFAULT_STALL_LIMIT,
    ClockAlreadyRunning,
    ClockError,
    ClockNotRunning,
    ClockTimeError,
    GameClock,
)
from models import ClockType, EndCause, Match, Player

X, O = Player.X, Player.O  # noqa: E741 - the names of the sides


def clock(
    kind: ClockType = "none",
    seconds: float | None = None,
    increment: float = 0.0,
    *,
    stall_limit: float | None = DEFAULT_STALL_LIMIT,
) -> GameClock:
    match = Match(clock_type=kind, clock=seconds, increment=increment)
    return GameClock(match, stall_limit=stall_limit)


# -------------------------------------------------------------------- none


def test_none_shows_no_time() -> None:
    game = clock()
    game.start(O, now=1.0)
    assert game.kind == "none"
    assert game.snapshot(now=50.0) == {X: None, O: None}
    assert game.move_time_limit(O) is None


def test_none_turn_is_bounded_by_the_default_stall_limit() -> None:
    game = clock()
    game.start(O, now=10.0)
    assert game.deadline() == 10.0 + DEFAULT_STALL_LIMIT
    assert game.flag_cause is EndCause.STALL


def test_none_stall_limit_is_configurable_and_flags_at_the_deadline() -> None:
    game = clock(stall_limit=30.0)
    game.start(X, now=5.0)
    assert not game.flagged(now=34.999)
    assert game.flagged(now=35.0)


def test_none_without_stall_limit_never_flags() -> None:
    game = clock(stall_limit=None)
    game.start(X, now=0.0)
    assert game.deadline() is None
    assert not game.flagged(now=1e9)


def test_none_stop_still_reports_the_thinking_time() -> None:
    game = clock()
    game.start(O, now=2.0)
    assert game.stop(now=3.5, rtt=0.25) == 1250


def test_stall_limit_must_be_a_time() -> None:
    with pytest.raises(ClockTimeError, match="stall_limit"):
        clock(stall_limit=-1.0)


@pytest.mark.parametrize(
    "settings",
    [
        {"clock_type": "turn", "clock": 1e308},
        {"clock_type": "incremental", "clock": 60, "increment": 1e305},
    ],
)
def test_a_clock_beyond_the_bounds_of_a_match_is_refused(settings: dict[str, Any]) -> None:
    # Match refuses these; a Match built without validation meets the clock's own check
    # instead of an OverflowError.
    with pytest.raises(ClockTimeError, match=r"must be from 0 to 2147483\.647 seconds"):
        GameClock(Match.model_construct(**settings))


# -------------------------------------------------------------------- turn


def test_turn_charges_without_carrying_time_over() -> None:
    game = clock("turn", 5)
    game.start(O, now=0.0)
    assert game.stop(now=1.0) == 1000
    assert game.snapshot(now=1.0) == {X: 5000, O: 5000}
    assert game.flag_cause is EndCause.TIMEOUT


def test_turn_counts_down_for_the_running_side_only() -> None:
    game = clock("turn", 5)
    game.start(X, now=100.0)
    assert game.remaining_ms(X, now=101.5) == 3500
    assert game.remaining_ms(X) == 5000  # without now: as at the start of the turn
    assert game.remaining_ms(O, now=101.5) == 5000


def test_turn_flags_exactly_at_the_deadline() -> None:
    game = clock("turn", 5)
    game.start(X, now=100.0)
    assert game.deadline() == 105.0
    assert not game.flagged(now=104.999)
    assert game.flagged(now=105.0)


def test_turn_time_limit_is_the_allowance() -> None:
    assert clock("turn", 2.5).move_time_limit(O) == 2.5


# ------------------------------------------------------------------- match


def test_match_deducts_the_charge_from_the_side() -> None:
    game = clock("match", 60)
    game.start(O, now=0.0)
    assert game.stop(now=12.0) == 12000
    game.start(X, now=12.0)
    assert game.stop(now=15.0) == 3000
    assert game.snapshot(now=15.0) == {X: 57000, O: 48000}


def test_match_counts_down_live_and_deadline_follows_remaining_time() -> None:
    game = clock("match", 60)
    game.start(O, now=0.0)
    game.stop(now=20.0)
    game.start(O, now=30.0)
    assert game.remaining_ms(O, now=35.0) == 35000
    assert game.deadline() == 70.0
    assert not game.flagged(now=69.999)
    assert game.flagged(now=70.0)


def test_match_time_never_goes_below_zero() -> None:
    game = clock("match", 1)
    game.start(O, now=0.0)
    assert game.remaining_ms(O, now=5.0) == 0
    assert game.stop(now=5.0) == 5000
    assert game.remaining_ms(O) == 0
    assert game.move_time_limit(O) == 0.001  # the wire needs a positive limit


def test_match_time_limit_is_the_remaining_time() -> None:
    game = clock("match", 60)
    game.start(X, now=0.0)
    game.stop(now=10.0)
    assert game.move_time_limit(X) == 50.0


# ------------------------------------------------------------- incremental


def test_incremental_adds_the_increment_after_the_charge() -> None:
    game = clock("incremental", 10, 3)
    game.start(O, now=0.0)
    assert game.stop(now=4.0) == 4000
    assert game.remaining_ms(O) == 9000


def test_incremental_adds_the_increment_even_to_a_spent_clock() -> None:
    # The session flags a late move before stopping; the clock itself only clamps.
    game = clock("incremental", 1, 2)
    game.start(O, now=0.0)
    game.stop(now=3.0)
    assert game.remaining_ms(O) == 2000


def test_incremental_flags_at_base_plus_earned_increments() -> None:
    game = clock("incremental", 10, 5)
    game.start(X, now=0.0)
    game.stop(now=0.0)
    game.start(X, now=1.0)
    assert game.deadline() == 16.0
    assert game.flagged(now=16.0)


# ------------------------------------------------- round trip and grace


@pytest.mark.parametrize("kind", ["turn", "match", "incremental"])
def test_round_trip_is_not_charged(kind: ClockType) -> None:
    game = clock(kind, 60)
    game.start(O, now=0.0)
    assert game.stop(now=2.0, rtt=0.5) == 1500


@pytest.mark.parametrize("kind", ["none", "turn", "match", "incremental"])
def test_charge_is_never_below_zero(kind: ClockType) -> None:
    game = clock(kind, None if kind == "none" else 60)
    game.start(O, now=10.0)
    assert game.stop(now=10.1, rtt=0.5) == 0
    if kind != "none":
        assert game.remaining_ms(O) == 60000


@pytest.mark.parametrize("kind", ["turn", "match"])
def test_grace_extends_the_deadline_but_not_the_shown_time(kind: ClockType) -> None:
    game = clock(kind, 5)
    game.start(X, now=10.0, grace=0.25)
    assert game.deadline() == 15.25
    assert game.remaining_ms(X, now=15.0) == 0
    assert game.remaining_ms(X, now=15.1) == 0
    assert not game.flagged(now=15.0)
    assert not game.flagged(now=15.2)
    assert game.flagged(now=15.25)


def test_grace_extends_the_stall_limit() -> None:
    game = clock(stall_limit=10.0)
    game.start(X, now=0.0, grace=0.5)
    assert game.deadline() == 10.5


def test_grace_lasts_one_turn() -> None:
    game = clock("turn", 5)
    game.start(X, now=0.0, grace=1.0)
    game.stop(now=1.0)
    game.start(O, now=1.0)
    assert game.deadline() == 6.0


# ------------------------------------------------------------------ misuse


def test_stop_without_start_raises() -> None:
    with pytest.raises(ClockNotRunning, match="call start first"):
        clock("match", 60).stop(now=1.0)


def test_stop_twice_raises() -> None:
    game = clock("turn", 5)
    game.start(O, now=0.0)
    game.stop(now=1.0)
    with pytest.raises(ClockError):
        game.stop(now=2.0)


def test_start_while_running_raises() -> None:
    game = clock("turn", 5)
    game.start(O, now=0.0)
    with pytest.raises(ClockAlreadyRunning, match="o's turn is still being timed"):
        game.start(X, now=1.0)


@pytest.mark.parametrize(
    ("grace", "rtt"), [(-0.1, 0.0), (float("nan"), 0.0), (0.0, -1.0), (0.0, float("inf"))]
)
def test_impossible_times_raise(grace: float, rtt: float) -> None:
    game = clock("turn", 5)
    with pytest.raises(ClockTimeError):
        game.start(O, now=0.0, grace=grace)
        game.stop(now=1.0, rtt=rtt)


def test_stop_before_start_time_raises() -> None:
    game = clock("turn", 5)
    game.start(O, now=10.0)
    with pytest.raises(ClockTimeError, match="before the turn started"):
        game.stop(now=9.0)


# ---------------------------------------------------------------- snapshot


def test_snapshot_has_both_sides_and_counts_down_the_runner() -> None:
    game = clock("match", 30)
    game.start(O, now=0.0)
    assert game.snapshot(now=10.0) == {X: 30000, O: 20000}
    assert game.running is O
    game.stop(now=10.0)
    assert game.running is None
    assert game.deadline() is None
    assert not game.flagged(now=1e9)


# -------------------------------------------------------------- properties

turns = st.lists(
    st.tuples(
        st.sampled_from([X, O]),
        st.floats(min_value=0, max_value=40, allow_nan=False),  # elapsed
        st.floats(min_value=0, max_value=2, allow_nan=False),  # round trip
    ),
    max_size=20,
)


@given(turns)
def test_match_remaining_is_base_minus_the_sum_of_charges(
    sequence: list[tuple[Player, float, float]],
) -> None:
    # 20 turns of at most 40 s never spend a 1000 s clock, so nothing is clamped.
    game = clock("match", 1000)
    charged = {X: 0, O: 0}
    now = 1000.0
    for side, elapsed, rtt in sequence:
        game.start(side, now=now)
        now += elapsed
        charge = game.stop(now=now, rtt=rtt)
        assert charge >= 0
        charged[side] += charge
    assert game.snapshot(now=now) == {side: 1_000_000 - charged[side] for side in (X, O)}


@given(turns, st.floats(min_value=0, max_value=10, allow_nan=False))
def test_incremental_remaining_adds_an_increment_per_move(
    sequence: list[tuple[Player, float, float]], increment: float
) -> None:
    game = clock("incremental", 1000, increment)
    charged = {X: 0, O: 0}
    moves = {X: 0, O: 0}
    now = 0.0
    for side, elapsed, rtt in sequence:
        game.start(side, now=now)
        now += elapsed
        charged[side] += game.stop(now=now, rtt=rtt)
        moves[side] += 1
    increment_ms = round(increment * 1000)
    assert game.snapshot(now=now) == {
        side: 1_000_000 - charged[side] + moves[side] * increment_ms for side in (X, O)
    }


@given(
    st.sampled_from(["turn", "match", "incremental"]),
    st.floats(min_value=0.001, max_value=1e4, allow_nan=False),
    st.floats(min_value=0, max_value=1e5, allow_nan=False),
    st.floats(min_value=0, max_value=1e5, allow_nan=False),
)
def test_shown_time_is_never_negative_and_flag_means_deadline_passed(
    kind: ClockType, seconds: float, start: float, elapsed: float
) -> None:
    game = clock(kind, seconds)
    game.start(O, now=start)
    now = start + elapsed
    shown = game.remaining_ms(O, now=now)
    assert shown is not None and shown >= 0
    deadline = game.deadline()
    assert deadline is not None
    assert game.flagged(now) == (now >= deadline)
