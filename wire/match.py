"""The settings of one game (``Match``) and their bounds."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, model_validator

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

    @model_validator(mode="after")
    def _clock_is_consistent(self) -> Match:
        if self.clock_type != "none" and self.clock is None:
            raise ValueError(
                f"clock_type {self.clock_type!r} needs 'clock' (seconds, greater than 0)"
            )
        if self.increment and self.clock_type != "incremental":
            raise ValueError("'increment' only applies to clock_type 'incremental'")
        return self
