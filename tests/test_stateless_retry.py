"""The stateless turn's retry policy (``game.stateless_retry``): pure, no I/O."""

from __future__ import annotations

import math

import pytest

from game.stateless_retry import (
    CONNECTION_FAILED,
    FINAL,
    StatelessRetry,
    TurnFailure,
    failure_of_status,
    retry_after_seconds,
)

RETRY = StatelessRetry()
PLENTY = 600.0  # seconds left on the clock


def test_the_backoff_starts_at_once_then_doubles_up_to_its_cap() -> None:
    assert [RETRY.backoff(tries) for tries in range(1, 9)] == [
        0.0,
        0.1,
        0.2,
        0.4,
        0.8,
        1.6,
        2.0,
        2.0,
    ]
    assert RETRY.backoff(10_000) == 2.0  # no overflow after many tries


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_gateway_error_is_retried(status: int) -> None:
    failure = failure_of_status(status, None)
    assert RETRY.delay(failure, 2, failing_for=0.1, time_left=PLENTY) == 0.1


@pytest.mark.parametrize("status", [301, 400, 401, 404, 408, 422, 429, 500, 501, 505])
def test_any_other_status_is_final(status: int) -> None:
    assert failure_of_status(status, "1") == FINAL
    assert RETRY.delay(failure_of_status(status, "1"), 1, failing_for=0, time_left=PLENTY) is None


def test_a_final_failure_is_never_retried() -> None:
    assert RETRY.delay(FINAL, 1, failing_for=0.0, time_left=PLENTY) is None


def test_a_short_retry_after_is_waited_out_and_a_long_one_is_capped() -> None:
    short = failure_of_status(503, "3")
    assert RETRY.delay(short, 1, failing_for=0.0, time_left=PLENTY) == 3.0
    long = failure_of_status(503, "120")
    assert RETRY.delay(long, 1, failing_for=0.0, time_left=PLENTY) == RETRY.max_retry_after


def test_a_retry_after_shorter_than_the_backoff_does_not_shorten_it() -> None:
    failure = failure_of_status(503, "0")
    assert RETRY.delay(failure, 5, failing_for=1.0, time_left=PLENTY) == RETRY.backoff(5)


def test_no_try_is_made_that_could_only_go_out_at_the_flag_or_after() -> None:
    assert RETRY.delay(CONNECTION_FAILED, 3, failing_for=0.1, time_left=0.25) == 0.2
    assert RETRY.delay(CONNECTION_FAILED, 3, failing_for=0.1, time_left=0.2) is None
    assert RETRY.delay(CONNECTION_FAILED, 1, failing_for=0.0, time_left=0.0) is None
    # A Retry-After that runs past the flag: the bot will not be back in time.
    assert RETRY.delay(failure_of_status(503, "3"), 1, failing_for=0, time_left=2.0) is None


def test_no_deadline_still_gives_up_after_failing_for_long_enough() -> None:
    assert RETRY.delay(CONNECTION_FAILED, 20, failing_for=27.0, time_left=None) == 2.0
    assert RETRY.delay(CONNECTION_FAILED, 21, failing_for=28.0, time_left=None) is None
    # A no-show limit of 0: no waiting out an outage, but the kept-alive connection
    # closed as the request went out is still asked again at once, as before retries.
    never = StatelessRetry(give_up_after=0.0)
    assert never.delay(CONNECTION_FAILED, 1, failing_for=0.0, time_left=PLENTY) == 0.0
    assert never.delay(CONNECTION_FAILED, 2, failing_for=0.0, time_left=PLENTY) is None


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("0", 0.0), ("7", 7.0), (" 2 ", 2.0), (None, None), ("", None), ("1.5", None)],
)
def test_retry_after_reads_delta_seconds_only(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds


@pytest.mark.parametrize("text", ["Fri, 31 Dec 1999 23:59:59 GMT", "-3", "soon", "٣"])
def test_retry_after_that_is_no_number_of_seconds_is_ignored(text: str) -> None:
    assert retry_after_seconds(text) is None
    assert failure_of_status(503, text) == TurnFailure(transient=True)


@pytest.mark.parametrize(
    "name", ["first_backoff", "max_backoff", "max_retry_after", "give_up_after"]
)
@pytest.mark.parametrize("value", [-1.0, math.inf, math.nan])
def test_a_policy_with_an_unusable_number_is_refused(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=name):
        StatelessRetry(**{name: value})


def test_tries_start_at_one() -> None:
    with pytest.raises(ValueError, match="tries"):
        RETRY.backoff(0)
