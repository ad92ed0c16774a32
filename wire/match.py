"""The settings of one game (``Match``), their bounds, and one seat's own clock
(``TimeControl``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Annotated, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    ValidationError,
    model_validator,
)

from wire.errors import _bound, _describe, _problems

ClockType = Literal["none", "turn", "match", "incremental"]

# Bounds of a Match, any game's settings: what the rules can play (distances, as in
# game.rules) and what every tool can represent (times and counts fit a signed 32-bit
# integer, in ms for times). Records, notation and bots' settings are read within these.
MIN_HEARTBEAT_MS: Final = 100
MAX_INT32: Final = 2**31 - 1
#: Clock and increment bound: their milliseconds fit a signed 32-bit integer (24.8 days).
MAX_CLOCK_SECONDS: Final = MAX_INT32 / 1000

# What this server hosts: POST /game/new applies these tighter bounds (NewGameRequest),
# so that every game it runs ends and costs a bounded amount. They are figures, measured
# with bench/game_lengths.py and bench/match_settings.py (the README says more).
#: Turn limit of a game that sets none. The longest game ended by a line between the
#: example bots (RandomBot, CenterBot, ThreatBot, every pairing; bench/game_lengths.py,
#: 200 games each) took 29 moves; the community plays longer games, so 17 times that.
#: RandomBot against RandomBot hardly ever makes a line (none of 8 games within 1000
#: moves): this is what ends such games.
DEFAULT_TURN_LIMIT: Final = 500
#: The most moves a hosted game may last: twice the default, 2000 stones (the largest
#: board bench/rules.py measures). A simple bot's cost per move grows with the board:
#: two hosted RandomBots (view and win distance 20) use 27 s of CPU for 500 moves and
#: 112 s for 1000; at view distance 50, over 190 s without reaching 500.
MAX_TURN_LIMIT: Final = 1000
#: Legal cells (the memory of every position of a game, the server's and each bot's)
#: and a simple bot's time per move grow with the square of the view distance: at 200
#: stones of random play, 2.6x the default's at 12, 5x at 20, 43x at 50
#: (bench/match_settings.py). The most one client may start (16 games of two hosted
#: RandomBots, bench/hosted_load.py) stays within 2x of the default's at 12 (wall time,
#: /health latency, RSS) and not at 20 (5x the time, 3x the latency, 2.2x the memory).
MAX_HOSTED_VIEW_DISTANCE: Final = 12
#: A heartbeat is how a bot tells a live server from a dead one: a minute at most.
MAX_HEARTBEAT_MS: Final = 60_000
#: A day per side (or per turn); an increment of at most an hour.
MAX_HOSTED_CLOCK_SECONDS: Final = 86_400.0
MAX_HOSTED_INCREMENT_SECONDS: Final = 3_600.0


def hosting_problems(bounds: Iterable[tuple[str, float | None, float]]) -> list[str]:
    """One line for each ``(name, value, bound)`` whose value is over what this server
    hosts, in the API's words; none when it hosts them all.

    >>> hosting_problems([("clock", 100_000.0, MAX_HOSTED_CLOCK_SECONDS), ("increment", None, 1)])
    ['clock: expected at most 86400 on this server, got 100000.0']
    """
    return [
        f"{name}: expected at most {_bound(bound)} on this server, got {_describe(value)}"
        for name, value, bound in bounds
        if value is not None and value > bound
    ]


class Match(BaseModel):
    """Settings of one game. Defaults are the prototype's.

    ``clock`` is in seconds: per move for ``turn``, per side for ``match`` and the base of
    ``incremental`` (which adds ``increment`` seconds after each move).

    >>> Match().view_distance, Match().win_distance
    (8, 6)
    >>> Match(clock_type="match")
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Match
    ...
    """

    model_config = ConfigDict(frozen=True)

    heartbeat: Annotated[
        StrictInt, Field(ge=MIN_HEARTBEAT_MS, le=MAX_INT32, description="heartbeat interval in ms")
    ] = 5000
    view_distance: Annotated[StrictInt, Field(ge=1, le=50)] = 8
    win_distance: Annotated[StrictInt, Field(ge=2, le=20)] = 6
    turn_limit: Annotated[StrictInt, Field(ge=1, le=MAX_INT32)] | None = None
    clock_type: ClockType = "none"
    # StrictFloat still takes JSON integers ("clock": 60) but not "60" or true.
    clock: Annotated[StrictFloat, Field(gt=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] | None = (
        None
    )
    increment: Annotated[StrictFloat, Field(ge=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] = 0.0

    def rules_not_standard(self) -> list[str]:
        """The settings of the rules themselves that differ from the standard game's,
        as text (``"view_distance 12"``): what a bot must be told to play legally and
        know a win. A bot cannot learn them from the spec's packets alone, only from our
        ``x-match`` config (``MATCH_CONFIG_KEY``).

        >>> Match().rules_not_standard(), Match(turn_limit=50).rules_not_standard()
        ([], [])
        >>> Match(view_distance=12, win_distance=5).rules_not_standard()
        ['view_distance 12', 'win_distance 5']
        """
        standard = Match()
        return [
            f"{name} {getattr(self, name)}"
            for name in ("view_distance", "win_distance")
            if getattr(self, name) != getattr(standard, name)
        ]

    @model_validator(mode="after")
    def _clock_is_consistent(self) -> Match:
        if self.clock_type != "none" and self.clock is None:
            raise ValueError(
                f"clock_type {self.clock_type!r} needs 'clock' (seconds, greater than 0)"
            )
        if self.increment and self.clock_type != "incremental":
            raise ValueError("'increment' only applies to clock_type 'incremental'")
        return self


# ------------------------------------------------------------ one seat's clock


class TimeControlError(ValueError):
    """Text that ``TimeControl.parse`` cannot read as a time control: ``text``, and the
    ``reason`` (the message is both, ``time control '<text>': <reason>``), so that a
    caller naming the text its own way (a request's field) can give the reason alone."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"time control {text!r}: {reason}")
        self.text = text
        self.reason = reason


# A number of seconds as people write it: "10", "0.1", ".5", "2.".
_SECONDS_RE: Final = r"(\d+(?:\.\d*)?|\.\d+)"
_TIME_CONTROL_TEXT: Final = {
    "incremental": re.compile(rf"{_SECONDS_RE}\+{_SECONDS_RE}"),
    "match": re.compile(_SECONDS_RE),
    "turn": re.compile(rf"turn={_SECONDS_RE}"),
    "stall": re.compile(rf"stall={_SECONDS_RE}"),
}
TIME_CONTROL_SYNTAX: Final = (
    "'BASE+INC' (incremental, seconds), 'TOTAL' (match: seconds per side), "
    "'turn=SECONDS' (per move), 'none' or 'stall=SECONDS' (no clock, a stall limit)"
)


def seconds_text(seconds: float) -> str:
    """Seconds as written in settings: an integer when whole, else the shortest exact
    decimal (no exponent).

    >>> seconds_text(60.0), seconds_text(0.1), seconds_text(1e-05)
    ('60', '0.1', '0.00001')
    """
    if seconds.is_integer():
        return str(int(seconds))
    # repr is the shortest text that reads back as the same float; Decimal spells out
    # the exponent that repr uses for very small or large numbers.
    return format(Decimal(repr(seconds)), "f")


class TimeControl(BaseModel):
    """The clock of one seat, when it is not the game's (``PlayerConfig.time_control``).

    The fields mean what ``Match``'s clock fields mean and have the same bounds (the
    server holds them to its hosting bounds too). ``stall_limit`` (seconds, only with
    ``clock_type="none"``) is this seat's own stall limit; it can only be stricter than
    the server's: the seat gets the smaller of the two.

    ``parse`` reads the text form a tournament command line uses, ``text`` writes it:

    >>> TimeControl.parse("10+0.1")
    TimeControl(clock_type='incremental', clock=10.0, increment=0.1, stall_limit=None)
    >>> [TimeControl.parse(t).text for t in ("60", "turn=5", "none", "stall=30", "10+0")]
    ['60', 'turn=5', 'none', 'stall=30', '10+0']
    >>> TimeControl.parse("40/10")
    Traceback (most recent call last):
    ...
    wire.match.TimeControlError: time control '40/10': expected 'BASE+INC' (incremental, \
seconds), 'TOTAL' (match: seconds per side), 'turn=SECONDS' (per move), 'none' or \
'stall=SECONDS' (no clock, a stall limit)
    """

    model_config = ConfigDict(frozen=True)

    clock_type: ClockType = "none"
    clock: Annotated[StrictFloat, Field(gt=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] | None = (
        None
    )
    increment: Annotated[StrictFloat, Field(ge=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] = 0.0
    stall_limit: (
        Annotated[StrictFloat, Field(gt=0, le=MAX_CLOCK_SECONDS, allow_inf_nan=False)] | None
    ) = None

    @model_validator(mode="after")
    def _clock_is_consistent(self) -> TimeControl:
        if self.clock_type != "none" and self.clock is None:
            raise ValueError(
                f"clock_type {self.clock_type!r} needs 'clock' (seconds, greater than 0)"
            )
        if self.clock_type == "none" and self.clock is not None:
            raise ValueError("'clock' does not apply to clock_type 'none'")
        if self.increment and self.clock_type != "incremental":
            raise ValueError("'increment' only applies to clock_type 'incremental'")
        if self.stall_limit is not None and self.clock_type != "none":
            # A clock bounds every turn already; the server's stall limit still applies.
            raise ValueError("'stall_limit' only applies to clock_type 'none'")
        return self

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Read ``"10+0.1"``, ``"60"``, ``"turn=5"``, ``"none"`` or ``"stall=30"`` (see
        ``TIME_CONTROL_SYNTAX``); raises ``TimeControlError`` with a one-line reason."""
        spelled = text.strip().lower()
        settings: dict[str, object] | None = None
        if spelled == "none":
            settings = {}
        elif found := _TIME_CONTROL_TEXT["incremental"].fullmatch(spelled):
            settings = {
                "clock_type": "incremental",
                "clock": float(found[1]),
                "increment": float(found[2]),
            }
        elif found := _TIME_CONTROL_TEXT["match"].fullmatch(spelled):
            settings = {"clock_type": "match", "clock": float(found[1])}
        elif found := _TIME_CONTROL_TEXT["turn"].fullmatch(spelled):
            settings = {"clock_type": "turn", "clock": float(found[1])}
        elif found := _TIME_CONTROL_TEXT["stall"].fullmatch(spelled):
            settings = {"stall_limit": float(found[1])}
        if settings is None:
            raise TimeControlError(text, f"expected {TIME_CONTROL_SYNTAX}")
        try:
            return cls.model_validate(settings)
        except ValidationError as exc:
            # In the wire contract's words (clock: expected more than 0, got 0.0), not
            # pydantic's; the first problem only: one line.
            raise TimeControlError(text, _problems(exc)[0]) from None

    def match_settings(self) -> dict[str, object]:
        """The ``Match`` fields for a game whose clock this is, for both seats (a
        seat's ``stall_limit`` has no ``Match`` field and is left out).

        >>> Match(**TimeControl.parse("10+0.1").match_settings()).clock_type
        'incremental'
        """
        return self.model_dump(include={"clock_type", "clock", "increment"})

    def hosting_problems(self) -> list[str]:
        """What of this clock the server does not host (``POST /game/new`` holds a
        seat's clock to these bounds), one line a field, named as in the clock's body;
        none when it hosts it.

        >>> clock, increment = TimeControl.parse("100000+5000").hosting_problems()
        >>> clock
        'clock: expected at most 86400 on this server, got 100000.0'
        >>> increment
        'increment: expected at most 3600 on this server, got 5000.0'
        >>> TimeControl.parse("10+0.1").hosting_problems()
        []
        """
        return hosting_problems(
            [
                ("clock", self.clock, MAX_HOSTED_CLOCK_SECONDS),
                ("increment", self.increment, MAX_HOSTED_INCREMENT_SECONDS),
                ("stall_limit", self.stall_limit, MAX_HOSTED_CLOCK_SECONDS),
            ]
        )

    @property
    def text(self) -> str:
        """The text ``parse`` reads back as this time control."""
        if self.clock_type == "none":
            return "none" if self.stall_limit is None else f"stall={seconds_text(self.stall_limit)}"
        assert self.clock is not None  # checked above for every kind but "none"
        clock = seconds_text(self.clock)
        if self.clock_type == "incremental":
            return f"{clock}+{seconds_text(self.increment)}"
        return f"turn={clock}" if self.clock_type == "turn" else clock
