"""The body of ``GET /ladder``: what the ladder (``game.ladder``) is doing now.

>>> status = LadderStatus(enabled=False, running=False)
>>> status.in_flight, status.backoffs
(0, [])
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class LadderGame(BaseModel):
    """A ladder game being played."""

    game_id: str
    x: str
    o: str


class LadderBackoff(BaseModel):
    """A bot the ladder does not schedule until ``until``, and why."""

    name: str
    until: datetime
    reason: str | None = None


class LadderStatus(BaseModel):
    """The ladder now. ``enabled``: the server was started with ``--ladder``;
    ``running``: its scheduler runs and is not paused (on a cluster the pause is the
    cluster's, whichever worker schedules). The counts are since the server started; the
    ratings and each bot's record are in ``GET /leaderboard`` and ``GET /bots``."""

    enabled: bool
    running: bool
    concurrency: int = 0
    rate_per_minute: float = 0.0
    time_control: str | None = Field(
        default=None, description="The ladder games' clock, as htttx-tournament writes it."
    )
    entrants: int = Field(default=0, description="Bots opted in and active.")
    in_flight: int = Field(default=0, description="Games being created or played.")
    games_started: int = 0
    games_finished: int = 0
    games_void: int = Field(
        default=0,
        description=(
            "Games nobody played: aborted (say, by a shutdown) or neither bot connected"
            " (both are backed off for the no-show): not rated, not counted."
        ),
    )
    failed_starts: int = Field(
        default=0, description="Games that could not start: a bot did not answer."
    )
    started_at: datetime | None = None
    live: list[LadderGame] = Field(default_factory=list)
    backoffs: list[LadderBackoff] = Field(default_factory=list)
