"""The ladder's settings (``htttx-server --ladder-*``): how many games at once, how many
a minute, on which clock. Pure; ``game.ladder`` (which re-exports them) plays by them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from game.ladder_pairing import DEFAULT_EXPLORE
from models import TimeControl, TimeControlError

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_RATE",
    "DEFAULT_TIME_CONTROL",
    "MAX_CONCURRENCY",
    "MAX_RATE",
    "LadderSettings",
    "LadderSettingsError",
]

DEFAULT_CONCURRENCY: Final = 4
#: Games started a minute, at most.
DEFAULT_RATE: Final = 60.0
DEFAULT_TIME_CONTROL: Final = "10+0.1"
MAX_CONCURRENCY: Final = 1000
MAX_RATE: Final = 60_000.0


class LadderSettingsError(ValueError):
    """Ladder settings the server cannot run; the message is one line for the user."""


@dataclass(frozen=True)
class LadderSettings:
    """How the ladder plays: ``concurrency`` games at once at most, ``rate`` games
    started a minute at most, each side on ``time_control`` (``TimeControl.parse``'s
    text), ``explore``: the chance of a random opponent; ``seed`` makes the pairing
    repeatable.

    >>> LadderSettings(concurrency=0)
    Traceback (most recent call last):
    ...
    game.ladder_settings.LadderSettingsError: concurrency must be from 1 to 1000, got 0
    >>> LadderSettings(time_control="40/10")
    Traceback (most recent call last):
    ...
    game.ladder_settings.LadderSettingsError: time control '40/10': expected 'BASE+INC' ...
    >>> LadderSettings(time_control="100000+0")
    Traceback (most recent call last):
    ...
    game.ladder_settings.LadderSettingsError: time control '100000+0': clock: expected at \
most 86400 on this server, got 100000.0
    """

    concurrency: int = DEFAULT_CONCURRENCY
    rate: float = DEFAULT_RATE
    time_control: str = DEFAULT_TIME_CONTROL
    explore: float = DEFAULT_EXPLORE
    seed: int | None = None
    clock: TimeControl = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise LadderSettingsError(
                f"concurrency must be from 1 to {MAX_CONCURRENCY}, got {self.concurrency}"
            )
        if not (math.isfinite(self.rate) and 0 < self.rate <= MAX_RATE):
            raise LadderSettingsError(
                f"rate must be more than 0 and at most {MAX_RATE:g} games a minute, "
                f"got {self.rate:g}"
            )
        if not 0.0 <= self.explore <= 1.0:
            raise LadderSettingsError(f"explore must be from 0 to 1, got {self.explore:g}")
        try:
            clock = TimeControl.parse(self.time_control)
        except TimeControlError as error:  # it names the text
            raise LadderSettingsError(str(error)) from None
        # Every ladder game is played on this clock: the server must host it.
        if problems := clock.hosting_problems():
            raise LadderSettingsError(f"time control {self.time_control!r}: {'; '.join(problems)}")
        object.__setattr__(self, "clock", clock)
