"""Bodies of the series routes (``POST /series`` and the views of one).

A series is two bots playing one game at a time, sides alternating (game 1: ``player_a``
is X), until the score decides it: best of N, or first to K points (a win 1, a draw ½).
It is run as a tournament of two bots with that stop rule (``TournamentRequest.series``),
so it is stored, stopped, resumed and survives a restart like one.

>>> from models import parse_body
>>> request = parse_body(SeriesRequest, '{"player_a": {"name": "a", "bot_url": "http://x"},'
...     ' "player_b": {"name": "b", "bot_url": "http://y"}, "best_of": 7}')
>>> tournament = request.tournament()
>>> tournament.series.max_games, tournament.rounds, tournament.games, tournament.concurrency
(7, 4, 7, 1)
>>> parse_body(SeriesRequest, '{"player_a": {"name": "a", "type": "human"},'
...     ' "player_b": {"name": "b", "bot_url": "http://y"}, "first_to": 2}')
Traceback (most recent call last):
...
models.ProtocolError: player_a: a series seats bots only: give 'bot_url' (no human seats)
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from wire.errors import _problems
from wire.match import DEFAULT_TURN_LIMIT, Match, TimeControl
from wire.names import Name
from wire.records import GameResult
from wire.rest import MAX_URL_LENGTH, Adjudication
from wire.tournaments import (
    MAX_BOOK_CHARS,
    MAX_SERIES_GAMES,
    OpeningOrder,
    SeriesSettings,
    SeriesStanding,
    TournamentBot,
    TournamentRequest,
    TournamentStatus,
)

__all__ = [
    "SeriesCreated",
    "SeriesGame",
    "SeriesLinks",
    "SeriesPage",
    "SeriesPlayer",
    "SeriesRequest",
    "SeriesSummary",
    "SeriesView",
]


class SeriesPlayer(BaseModel):
    """One side of a series: a bot's ``name`` (letters, digits, ``_.-``) and ``bot_url``
    (anything ``POST /game/new`` takes), with its seat's ``config``, ``time_control``
    (else the series') and ``send_board`` as in ``POST /game/new``. Bots only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[StrictStr, Field(max_length=64)]
    bot_url: Annotated[StrictStr, Field(max_length=MAX_URL_LENGTH)]
    config: dict[str, Any] | None = None
    time_control: TimeControl | None = None
    send_board: StrictBool | None = None

    @model_validator(mode="before")
    @classmethod
    def _bots_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and (data.get("type", "bot") != "bot" or "bot_url" not in data):
            raise ValueError("a series seats bots only: give 'bot_url' (no human seats)")
        if isinstance(data, dict) and "type" in data:
            data = {key: value for key, value in data.items() if key != "type"}
        return data

    def entrant(self) -> TournamentBot:
        """This side as a tournament's entrant (which checks the name)."""
        return TournamentBot(
            name=self.name,
            url=self.bot_url,
            config=self.config,
            time_control=self.time_control,
            send_board=self.send_board,
        )


class SeriesRequest(BaseModel):
    """Body of ``POST /series``.

    * ``player_a``, ``player_b``: the bots; A is X in odd games (1, 3, ...), B in even.
    * ``best_of`` N (at most N games, a void one too; decided once a lead exceeds the games left) or
      ``first_to`` K (decided once a bot has K points; at most 2K games): exactly one.
    * ``openings``, ``book``, ``opening_order``, ``seed``, ``match``, ``time_control``,
      ``adjudication``: as ``POST /tournaments`` takes them. Games 1 and 2 play the same
      opening with sides swapped, then games 3 and 4 the next one, and so on.
    * ``rated``: every game counts for the arena's ratings (``GET /leaderboard``); both
      players must then be bots registered under these names (``POST /bots``) with
      these URLs.
    """

    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    player_a: SeriesPlayer
    player_b: SeriesPlayer
    best_of: Annotated[StrictInt, Field(ge=1, le=MAX_SERIES_GAMES)] | None = None
    first_to: Annotated[StrictInt, Field(ge=1, le=MAX_SERIES_GAMES // 2)] | None = None
    openings: Literal["default", "none", "book"] = "default"
    book: Annotated[StrictStr, Field(max_length=MAX_BOOK_CHARS)] | None = None
    opening_order: OpeningOrder = "sequential"
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1)] | None = None
    match: Match = Field(default_factory=lambda: Match(turn_limit=DEFAULT_TURN_LIMIT))
    time_control: TimeControl | None = None
    adjudication: Adjudication | None = None
    rated: StrictBool = False

    @model_validator(mode="after")
    def _checked(self) -> SeriesRequest:
        if (self.best_of is None) == (self.first_to is None):
            raise ValueError("give exactly one of best_of and first_to")
        try:
            self.tournament()  # the tournament's own checks: names, match, book
        except ValidationError as error:
            raise ValueError("; ".join(_problems(error))) from None
        return self

    def tournament(self) -> TournamentRequest:
        """The two-bot tournament that plays this series."""
        return TournamentRequest(
            name=self.name,
            bots=[self.player_a.entrant(), self.player_b.entrant()],
            openings=self.openings,
            book=self.book,
            opening_order=self.opening_order,
            seed=self.seed,
            match=self.match,
            time_control=self.time_control,
            adjudication=self.adjudication,
            series=SeriesSettings(best_of=self.best_of, first_to=self.first_to, rated=self.rated),
        )


class SeriesCreated(BaseModel):
    """Answer to ``POST /series``: the series' id and its ``control_token``, shown this
    once (as ``TournamentCreated``'s): ``POST /series/{id}/stop`` and ``/resume`` ask
    for it (``Authorization: Bearer <control_token>``), besides the server's API token."""

    series_id: str
    control_token: str = Field(
        description="Secret: stops and resumes this series (shown only here)"
    )


class SeriesLinks(BaseModel):
    """Where to see a game of a series: its record (JSON), its notation, its spectator
    stream (WebSocket) and its web page."""

    record: str
    notation: str
    spectate: str
    page: str


class SeriesGame(BaseModel):
    """A started game of a series: its number (from 1), the bots on each side, the
    score before it (``score_before``, as its record's ``SeriesScore`` tag), its record's
    id and links, where it stands, and whether it ``counted`` (a game cut short by a
    stop or a restart is played again, and not counted)."""

    number: int
    x: str
    o: str
    score_before: str
    game_id: str
    counted: bool
    status: str | None
    result: GameResult | None
    links: SeriesLinks


class SeriesSummary(BaseModel):
    """A series in ``GET /series``: who plays, the rule, the score and the status."""

    series_id: str
    name: str | None
    status: TournamentStatus
    player_a: str
    player_b: str
    rule: str
    rated: bool
    score: SeriesStanding
    created_at: datetime
    ended_at: datetime | None = None
    reason: str | None = None


class SeriesPage(BaseModel):
    """Answer to ``GET /series``: newest first."""

    series: list[SeriesSummary]


class SeriesView(SeriesSummary):
    """Answer to ``GET /series/{id}``: the summary, the request, and every started game
    in order with its links (``games_running``: 1 while a game is being played)."""

    best_of: int | None
    first_to: int | None
    request: TournamentRequest
    games_running: int
    games: list[SeriesGame]
