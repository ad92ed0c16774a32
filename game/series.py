"""Series on the game server: best of N or first to K between two bots.

A series is a tournament of two bots with a stop rule (``TournamentRequest.series``):
``TournamentDirector`` runs it with the same ``TournamentRun`` as any tournament, one
game at a time, sides alternating (the schedule's pairs: game 1 A is X, game 2 B is X,
each pair from one opening). ``game.tournament_standings`` counts it game by game and
stops it as soon as ``game.series_score`` says it is decided, the way an SPRT's
decision stops a tournament. So a series is stored, stopped, resumed, and survives a
restart like a tournament (a game cut short is played again, no result counts twice);
the one difference is that the director resumes a series a restart interrupted by
itself (``TournamentDirector.recover``).

Each game's record carries the tags ``Series`` (the series' id), ``SeriesRule``
(``best of 7``) and ``SeriesScore`` (the score before the game: ``alice 2-1 bob``),
besides the tournament's ``tournament``, ``round`` and ``game``; spectators get the
record's tags in their ``setup`` (``docs/extensions.md``).

A rated series (``"rated": true``) declares each game to the arena's ``RatingBook``
as it starts (``TournamentRun._track``): rated exactly once when it ends, void when it
is cut short. Its players must be registered bots at their registered URLs
(``SeriesDesk.create`` asks the ``BotRegistry``), so a rating always belongs to the bot
registered under its name.

``SeriesDesk`` adapts the director to the series routes (``game.series_routes``): it
answers ``SeriesView`` / ``SeriesPage`` and refuses tournaments that are not series.
"""

from __future__ import annotations

from typing import Final

from game.registry import BotRegistry
from game.series_score import SeriesRule, SeriesScore
from game.store.tournaments import StoredTournament, TournamentGameRow
from game.tournament_director import TournamentDirector
from game.tournament_games import _outcome_from_json, is_counted
from game.tournament_runner import TournamentError, UnknownTournamentError
from game.tournament_schedule import Schedule
from models import GameResult
from wire.series import (
    SeriesGame,
    SeriesLinks,
    SeriesPage,
    SeriesPlayer,
    SeriesRequest,
    SeriesSummary,
    SeriesView,
)
from wire.tournaments import TournamentRequest, TournamentView

__all__ = ["MAX_SERIES_LIST", "SeriesDesk", "UnregisteredPlayerError", "game_links"]

#: Series in one ``GET /series`` page at most.
MAX_SERIES_LIST: Final = 500


def game_links(game_id: str) -> SeriesLinks:
    """Where a game is seen, as paths on the server.

    >>> game_links("abc").spectate
    '/spectate/abc'
    """
    return SeriesLinks(
        record=f"/games/{game_id}",
        notation=f"/games/{game_id}/notation",
        spectate=f"/spectate/{game_id}",
        page=f"/g/{game_id}",
    )


def _summary(view: TournamentView) -> SeriesSummary:
    request = view.request
    assert view.series is not None
    return SeriesSummary(
        series_id=view.tournament_id,
        name=view.name,
        status=view.status,
        player_a=request.bots[0].name,
        player_b=request.bots[1].name,
        rule=view.series.rule,
        rated=request.series is not None and request.series.rated,
        score=view.series,
        created_at=view.created_at,
        ended_at=view.ended_at,
        reason=view.reason,
    )


def series_games(
    request: TournamentRequest,
    rows: list[TournamentGameRow],
    live: dict[str, tuple[str, GameResult | None]],
    games_counted: int,
) -> list[SeriesGame]:
    """The started games of a series in order, each with the score before it.
    ``live``: the status and result of games being played, by id (ahead of the store);
    ``games_counted``: the games the series' standings count (its view's).

    A game is counted as the standings count it (``is_counted``: not one stored after
    the series was decided), and the score moves as theirs does: a void game (neither
    bot came) is no draw and leaves the points as they were, but is one of the games."""
    settings = request.series
    assert settings is not None
    a, b = request.bots[0].name, request.bots[1].name
    schedule = Schedule([a, b], "round_robin", rounds=request.rounds, openings=0)
    score = SeriesScore(SeriesRule(settings.best_of, settings.first_to), a, b)
    games = []
    for row in sorted(rows, key=lambda row: row.idx):
        scheduled = schedule.game(row.idx)
        status: str | None = row.game_status
        result = None if row.game_result is None else GameResult.model_validate(row.game_result)
        if row.game_id in live:
            status, result = live[row.game_id]
        counted = is_counted(row, games_counted)
        games.append(
            SeriesGame(
                number=row.idx + 1,
                x=scheduled.x,
                o=scheduled.o,
                score_before=score.text,
                game_id=row.game_id,
                counted=counted,
                status=status,
                result=result,
                links=game_links(row.game_id),
            )
        )
        if counted and row.outcome is not None:
            outcome = _outcome_from_json(row.outcome)
            if outcome.void:
                score.add_void()
            else:
                score.add(outcome.winner)
    return games


class UnregisteredPlayerError(TournamentError):
    """A rated series names a player that is not a registered, active bot with that URL:
    a rating belongs to the bot registered under its name."""


class SeriesDesk:
    """The series of one server, through its ``TournamentDirector``; ``registry``
    vouches for the players of a rated series."""

    def __init__(self, director: TournamentDirector, registry: BotRegistry | None = None) -> None:
        self.director = director
        self.store = director.store
        self.registry = registry

    async def create(self, request: SeriesRequest, *, control_hash: str | None = None) -> str:
        """Store and start a series; its id. Raises what ``TournamentDirector.create``
        raises (``TournamentError``, ``OpeningError``, ``DiscoveryError``), and
        ``UnregisteredPlayerError`` for a rated series' player the registry does not
        know at that URL. ``control_hash`` as ``TournamentDirector.create`` takes it."""
        if request.rated:
            await self._check_registered(request.player_a)
            await self._check_registered(request.player_b)
        run = await self.director.create(request.tournament(), control_hash=control_hash)
        return run.tournament_id

    async def _check_registered(self, player: SeriesPlayer) -> None:
        registry = self.registry
        if registry is None:
            raise UnregisteredPlayerError("rated: this server has no bot registry")
        bot = await registry.get(player.name)
        if bot is None:
            raise UnregisteredPlayerError(
                f"rated: {player.name!r} is not a registered bot (register it with POST /bots)"
            )
        if bot.status == "retired":
            raise UnregisteredPlayerError(f"rated: bot {bot.name!r} is retired")
        if bot.url != player.bot_url:
            raise UnregisteredPlayerError(
                f"rated: bot {bot.name!r} is registered at {bot.url}, not {player.bot_url}"
            )

    async def _stored(self, series_id: str) -> StoredTournament | None:
        stored = await self.store.tournaments.get(series_id)
        if stored is None or stored.request.get("series") is None:
            return None
        return stored

    async def view(self, series_id: str) -> SeriesView | None:
        """The series with its score and games; None if there is no such series."""
        if await self._stored(series_id) is None:
            return None
        view = await self.director.view(series_id)
        if view is None:
            return None
        rows = await self.store.tournaments.games(series_id)
        manager = self.director.manager
        live: dict[str, tuple[str, GameResult | None]] = {}
        for row in rows:
            progress = manager.live_progress(row.game_id)
            if progress is not None:
                live[row.game_id] = ("running", progress.result)
        settings = view.request.series
        assert settings is not None
        return SeriesView(
            **_summary(view).model_dump(),
            best_of=settings.best_of,
            first_to=settings.first_to,
            request=view.request,
            games_running=view.games_running,
            games=series_games(view.request, rows, live, view.games_counted),
        )

    async def page(self, limit: int = 100) -> SeriesPage:
        """The newest series, newest first, with their scores."""
        summaries = []
        for stored in await self.store.series.recent(limit):
            view = await self.director.view(stored.tournament_id)
            if view is not None and view.series is not None:
                summaries.append(_summary(view))
        return SeriesPage(series=summaries)

    async def stop(self, series_id: str) -> SeriesView:
        """Stop a running series (resumable); raises as ``TournamentDirector.stop``."""
        await self._require(series_id)
        await self.director.stop(series_id)
        return await self._view_of(series_id)

    async def resume(self, series_id: str) -> SeriesView:
        """Go on with a stopped or interrupted series; raises as ``TournamentDirector.resume``."""
        await self._require(series_id)
        await self.director.resume(series_id)
        return await self._view_of(series_id)

    async def _require(self, series_id: str) -> None:
        if await self._stored(series_id) is None:
            raise UnknownTournamentError(f"no series {series_id!r}")

    async def _view_of(self, series_id: str) -> SeriesView:
        view = await self.view(series_id)
        assert view is not None
        return view
