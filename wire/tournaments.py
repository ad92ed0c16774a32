"""Bodies of the tournament routes (``POST /tournaments`` and the views of one).

A tournament is a schedule of game pairs (each opening twice, colours swapped) between
named bots, played by the game server like any ``POST /game/new`` game. The request is
checked here at the boundary, so a bad one gets one clear message:

>>> from models import parse_body
>>> request = parse_body(TournamentRequest, '{"bots": ['
...     '{"name": "a", "url": "http://127.0.0.1:9001"},'
...     '{"name": "b", "url": "http://127.0.0.1:9002"}], "rounds": 10}')
>>> request.format, request.games, request.concurrency
('round_robin', 20, 1)
>>> parse_body(TournamentRequest, '{"bots": [{"name": "a", "url": "http://x"}]}')
Traceback (most recent call last):
...
models.ProtocolError: a tournament needs at least 2 bots, got 1
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    model_validator,
)

from wire.match import (
    DEFAULT_TURN_LIMIT,
    MAX_HOSTED_VIEW_DISTANCE,
    MAX_TURN_LIMIT,
    Match,
    TimeControl,
)
from wire.names import Name
from wire.records import GameResult
from wire.rest import MAX_URL_LENGTH, Adjudication

#: Bots in one tournament: a round robin of 64 is 2016 pairings a round.
MAX_TOURNAMENT_BOTS: Final = 64
#: Games in one tournament; a long SPRT rarely needs more than 100,000.
MAX_TOURNAMENT_GAMES: Final = 1_000_000
#: Games one tournament plays at once (the server's own limits apply too).
MAX_CONCURRENCY: Final = 256
#: Games one series may take at most (best of N, or first to N/2).
MAX_SERIES_GAMES: Final = 1001
#: A book sent in the request body, as HTTTX notation text.
MAX_BOOK_CHARS: Final = 1 << 20
#: A bot's command (``cmd=``), for the command line only.
MAX_COMMAND_CHARS: Final = 4096

Format = Literal["round_robin", "gauntlet"]

#: A match statistic that is infinite for a match won or lost every time, ``None`` when
#: it has no value yet. JSON has no infinity: the model holding it serializes with
#: ``ser_json_inf_nan="strings"``, so an infinity is sent as ``"Infinity"`` or
#: ``"-Infinity"``, and its schema says so (pydantic's own would be ``number|null``).
MaybeInfinite = Annotated[
    float | None,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number"},
                {"type": "string", "enum": ["Infinity", "-Infinity"]},
                {"type": "null"},
            ]
        }
    ),
]
OpeningOrder = Literal["sequential", "random"]
TournamentStatus = Literal["running", "stopped", "interrupted", "finished", "failed"]

_BOT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


class TournamentBot(BaseModel):
    """One entrant: a bot at ``url`` (anything ``POST /game/new`` takes as ``bot_url``) or,
    on the command line only, a program ``cmd`` that the runner starts itself on a free
    port (``{port}`` in the command). ``config`` is the seat's ``config`` packet;
    ``time_control`` this bot's clock (else the tournament's ``time_control``, else the
    match's clock); ``send_board`` as in ``POST /game/new``. A field it does not know is
    refused, as in the request that holds it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[StrictStr, Field(max_length=64)]
    url: Annotated[StrictStr, Field(max_length=MAX_URL_LENGTH)] | None = None
    cmd: Annotated[StrictStr, Field(max_length=MAX_COMMAND_CHARS)] | None = None
    config: dict[str, Any] | None = None
    time_control: TimeControl | None = None
    #: The full board in every move_request (a prototype bot that reads it); see
    #: ``PlayerConfig.send_board``.
    send_board: bool | None = None

    @model_validator(mode="after")
    def _one_address(self) -> TournamentBot:
        if not _BOT_NAME.fullmatch(self.name):
            raise ValueError(
                f"bot name {self.name!r}: expected 1-64 letters, digits, '_', '.' or '-' "
                "(it names the bot in tables, records and log files)"
            )
        if (self.url is None) == (self.cmd is None):
            raise ValueError(f"bot {self.name!r}: give exactly one of 'url' and 'cmd'")
        return self


class SprtSettings(BaseModel):
    """A sequential probability ratio test of ``elo0`` against ``elo1`` (logistic Elo),
    with false-positive risk ``alpha`` and false-negative risk ``beta``: fastchess's
    ``-sprt elo0=0 elo1=10 alpha=0.05 beta=0.05``. A field it does not know is refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    elo0: Annotated[StrictFloat, Field(ge=-1000, le=1000, allow_inf_nan=False)]
    elo1: Annotated[StrictFloat, Field(ge=-1000, le=1000, allow_inf_nan=False)]
    alpha: Annotated[StrictFloat, Field(gt=0, lt=0.5)] = 0.05
    beta: Annotated[StrictFloat, Field(gt=0, lt=0.5)] = 0.05

    @model_validator(mode="after")
    def _ordered(self) -> SprtSettings:
        if not self.elo0 < self.elo1:
            raise ValueError(
                # No "sprt: " here: the error's location says it (wire.errors._problems).
                f"elo0 must be less than elo1, got {self.elo0:g} and {self.elo1:g}"
            )
        return self


class SeriesSettings(BaseModel):
    """A series' stop rule: ``best_of`` N games (decided once a bot has more than N/2
    points) or ``first_to`` K points; exactly one. A win is 1 point, a draw ½ (see
    ``game.series_score``). ``rated``: each game counts for the arena's ratings
    (``RatingBook.track``). ``POST /series`` builds the tournament that carries it. A
    field it does not know is refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    best_of: Annotated[StrictInt, Field(ge=1, le=MAX_SERIES_GAMES)] | None = None
    first_to: Annotated[StrictInt, Field(ge=1, le=MAX_SERIES_GAMES // 2)] | None = None
    rated: StrictBool = False

    @model_validator(mode="after")
    def _one_rule(self) -> SeriesSettings:
        if (self.best_of is None) == (self.first_to is None):
            raise ValueError("give exactly one of best_of and first_to")
        return self

    @property
    def max_games(self) -> int:
        """The most games the series can take: N for best of N, 2K for first to K."""
        return self.best_of if self.best_of is not None else 2 * (self.first_to or 0)


class TournamentRequest(BaseModel):
    """Body of ``POST /tournaments`` (and what ``htttx-tournament`` builds from its options).

    * ``format``: ``round_robin`` (every pair of bots) or ``gauntlet`` (the first bot
      against each of the others).
    * ``rounds``: how many times each pairing meets; each meeting is a **pair** of games
      from one opening, colours swapped, so a round robin of *n* bots plays
      ``rounds * n(n-1)/2 * 2`` games and a gauntlet ``rounds * (n-1) * 2``.
    * ``openings``: ``default`` (the book shipped with the server), ``none`` (every game
      from X's stone at the origin), or a book as HTTTX notation text in ``book``;
      ``opening_order`` ``sequential`` or ``random`` (with ``seed``).
    * ``match``: the settings of every game (clock, turn limit: a draw when reached).
    * ``time_control``: every bot's clock (``10+0.1``, ``turn=5``, ``stall=30``... see
      ``TimeControl``), unless the bot has its own ``time_control``; each seat is timed
      by the server with its own clock.
    * ``adjudication``: off unless given; ``{"resign": {"moves": K, "score": S}}`` ends
      a game both bots' evaluations agree on (recorded with cause ``adjudication``).
    * ``sprt``: stop as soon as the test decides (two bots only).
    * ``series``: a series (``POST /series``): two bots, one game at a time, sides
      alternating, stopped as soon as the score decides it; ``rounds`` follows from it.

    A field it does not know is refused (a misspelt ``round`` must not run 1 round).
    """

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    format: Format = "round_robin"
    bots: Annotated[list[TournamentBot], Field(max_length=MAX_TOURNAMENT_BOTS)]
    rounds: Annotated[StrictInt, Field(ge=1, le=MAX_TOURNAMENT_GAMES)] = 1
    openings: Literal["default", "none", "book"] = "default"
    book: Annotated[StrictStr, Field(max_length=MAX_BOOK_CHARS)] | None = None
    opening_order: OpeningOrder = "sequential"
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1)] | None = None
    concurrency: Annotated[StrictInt, Field(ge=1, le=MAX_CONCURRENCY)] = 1
    match: Match = Field(default_factory=lambda: Match(turn_limit=DEFAULT_TURN_LIMIT))
    time_control: TimeControl | None = None
    adjudication: Adjudication | None = None
    sprt: SprtSettings | None = None
    series: SeriesSettings | None = None

    def time_control_of(self, bot: TournamentBot) -> TimeControl | None:
        """The clock ``bot`` plays with (``None``: the match's)."""
        return bot.time_control if bot.time_control is not None else self.time_control

    @model_validator(mode="after")
    def _consistent(self) -> TournamentRequest:
        bots = self.bots
        if len(bots) < 2:
            raise ValueError(f"a tournament needs at least 2 bots, got {len(bots)}")
        seen: set[str] = set()
        for bot in bots:
            if bot.name in seen:
                raise ValueError(f"two bots are named {bot.name!r}: names must be unique")
            seen.add(bot.name)
        if self.sprt is not None and len(bots) != 2:
            raise ValueError(f"an SPRT compares exactly 2 bots, got {len(bots)}")
        if self.series is not None:
            if len(bots) != 2 or self.sprt is not None or self.format != "round_robin":
                raise ValueError("a series is two bots in a round robin, without an SPRT")
            if self.concurrency != 1:
                raise ValueError("a series plays one game at a time: concurrency must be 1")
            self.rounds = (self.series.max_games + 1) // 2
        if (self.openings == "book") != (self.book is not None):
            raise ValueError("give 'book' (HTTTX notation text) exactly when openings is 'book'")
        if self.games > MAX_TOURNAMENT_GAMES:
            raise ValueError(
                f"{self.games} games: at most {MAX_TOURNAMENT_GAMES} in one tournament; "
                "lower rounds"
            )
        match = self.match
        if match.view_distance > MAX_HOSTED_VIEW_DISTANCE:
            raise ValueError(
                f"match.view_distance: expected at most {MAX_HOSTED_VIEW_DISTANCE} on this "
                f"server, got {match.view_distance}"
            )
        if match.turn_limit is None:
            self.match = match.model_copy(update={"turn_limit": DEFAULT_TURN_LIMIT})
        elif match.turn_limit > MAX_TURN_LIMIT:
            raise ValueError(
                f"match.turn_limit: expected at most {MAX_TURN_LIMIT} on this server, "
                f"got {match.turn_limit}"
            )
        return self

    @property
    def pairings(self) -> int:
        """Pairings met in each round."""
        n = len(self.bots)
        return n * (n - 1) // 2 if self.format == "round_robin" else n - 1

    @property
    def games(self) -> int:
        """Games in the whole schedule (an SPRT may stop before); a series' most games."""
        if self.series is not None:
            return self.series.max_games
        return self.rounds * self.pairings * 2


class FailureCounts(BaseModel):
    """A bot's lost games by cause, as fastchess reports them."""

    time: int = 0
    illegal: int = 0
    protocol: int = 0
    disconnect: int = 0
    crash: int = 0
    no_show: int = 0


class BotStanding(BaseModel):
    """One bot's line of the standings: games, W/D/L (and as X / as O), points, its
    rating with a 95% interval (Bradley-Terry, Elo scale, mean 0), and its failures."""

    name: str
    games: int
    wins: int
    draws: int
    losses: int
    points: float
    score: float | None
    elo: float | None = None
    elo_error: float | None = None
    failures: FailureCounts = Field(default_factory=FailureCounts)


class PairStanding(BaseModel):
    """A match between two bots, from the first one's side: the games, the pairs
    (pentanomial counts of pair scores 0, 0.5, 1, 1.5, 2), the Elo difference with its
    95% interval (from the pairs), LOS and the draw ratio.

    ``null`` is no value (no games yet). A match won or lost every time has an
    infinite Elo difference (and interval): JSON has no infinity, so it is written as
    the string ``"Infinity"`` or ``"-Infinity"`` (what JavaScript's ``Number()`` and
    Python's ``float()`` read back), keeping its sign.
    """

    model_config = ConfigDict(ser_json_inf_nan="strings")

    bot: str
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, int, int, int, int]
    score: float | None
    elo: MaybeInfinite
    elo_error: MaybeInfinite
    nelo: MaybeInfinite = None
    nelo_error: MaybeInfinite = None
    los: float | None
    draw_ratio: float | None


class SprtView(BaseModel):
    """The SPRT's state: its settings, the LLR and bounds, and the decision."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    llr: float
    lower: float
    upper: float
    decision: Literal["H0", "H1", "continue"]


class SeriesStanding(BaseModel):
    """A series' score: the bots (``a`` played X in game 1), their points, the games
    counted, and once ``decided`` the ``winner`` (``None``: drawn). ``text`` is the
    record tag ``SeriesScore``: ``alice 2-1 bob``."""

    rule: str
    a: str
    b: str
    points_a: float
    points_b: float
    games: int
    decided: bool
    winner: str | None
    text: str


class TournamentSummary(BaseModel):
    """A tournament in ``GET /tournaments``."""

    tournament_id: str
    name: str | None
    format: Format
    status: TournamentStatus
    bots: list[str]
    games_total: int
    #: Games with a stored result. After an SPRT's decision, games that ended before
    #: they could be stopped are kept but not counted: see ``games_counted``.
    games_done: int
    created_at: datetime
    ended_at: datetime | None = None
    reason: str | None = None
    #: A series' rule (``best of 7``, ``first to 4``); ``None`` for a tournament.
    series_rule: str | None = None


class TournamentPage(BaseModel):
    """Answer to ``GET /tournaments``: newest first."""

    tournaments: list[TournamentSummary]


class TournamentView(TournamentSummary):
    """Answer to ``GET /tournaments/{id}``: the summary, the settings, the games in
    flight, the standings, every pair's match statistics, the SPRT and the crosstable."""

    request: TournamentRequest
    games_running: int
    games_counted: int
    standings: list[BotStanding]
    pairs: list[PairStanding]
    sprt: SprtView | None = None
    series: SeriesStanding | None = None
    crosstable: str | None = None
    live_games: list[str] = Field(default_factory=list)


class TournamentGame(BaseModel):
    """A started game of a tournament: its number in the schedule (from 1), the bots
    on each side, its record's id and where it stands. ``counted``: its outcome is in
    the standings (a game cut short by a stop is played again, and not counted)."""

    number: int
    round: int
    x: str
    o: str
    game_id: str
    counted: bool
    status: str | None
    result: GameResult | None


class TournamentGames(BaseModel):
    """A page of a tournament's started games, in game order. ``games_total`` is the
    schedule's length, not how many have started; ``next_offset`` is where the next page
    starts, ``None`` when this one ends the games started so far."""

    items: list[TournamentGame]
    offset: int
    games_total: int
    next_offset: int | None = None


class TournamentCreated(BaseModel):
    """Answer to ``POST /tournaments``: the tournament's id and its ``control_token``.
    The token is shown this once and never stored (only its hash): keep it, it is what
    ``POST /tournaments/{id}/stop`` and ``/resume`` ask for (``Authorization: Bearer
    <control_token>``), besides the server's API token. Nothing else shows it."""

    tournament_id: str
    control_token: str = Field(
        description="Secret: stops and resumes this tournament (shown only here)"
    )
