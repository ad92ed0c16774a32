"""A tournament's games and views, from its request: the opening book in play order,
each game's ``POST /game/new`` body, outcomes as the store keeps them, and the standings
and views of a tournament no run holds (``game.tournament_runner`` plays them,
``game.tournament_director`` shows them)."""

from __future__ import annotations

from typing import Any, cast

from game.openings import Opening, OpeningBook, default_book
from game.series_score import SeriesRule
from game.sprt import Sprt
from game.store.tournaments import StoredTournament, TournamentGameRow
from game.tournament_schedule import Schedule
from game.tournament_standings import Failure, GameOutcome, Standings
from models import Match, NewGameRequest, PlayerConfig, PlayerType
from wire.tournaments import (
    TournamentBot,
    TournamentRequest,
    TournamentStatus,
    TournamentSummary,
    TournamentView,
)

__all__ = ["game_request", "is_counted"]


def is_counted(row: TournamentGameRow, games_counted: int) -> bool:
    """Whether the stored game ``row`` is in the standings, which count ``games_counted``
    games. Results count in schedule order, so the counted games are the first
    ``games_counted``; a game stored as done past them ended after the SPRT (or the
    series) had decided, and is kept but not counted (nor exported)."""
    return row.status == "done" and row.idx < games_counted


def _book_for(request: TournamentRequest) -> list[Opening]:
    """The openings of ``request`` in play order (empty: none). Raises ``OpeningError``."""
    if request.openings == "none":
        return []
    book = (
        default_book()
        if request.openings == "default"
        else OpeningBook.from_text(request.book or "", source="book")
    )
    match = request.match
    book.check(view_distance=match.view_distance, win_distance=match.win_distance)
    if request.opening_order == "random":
        return book.order(seed=request.seed if request.seed is not None else 0)
    return book.order()


def game_request(
    request: TournamentRequest,
    x: TournamentBot,
    o: TournamentBot,
    *,
    urls: tuple[str, str],
    name: str,
    opening: Opening | None = None,
    tags: dict[str, str] | None = None,
) -> NewGameRequest:
    """The ``POST /game/new`` body of one game of ``request``: ``x`` against ``o`` at
    ``urls``, each with its own clock (a clock both play is the game's, and not the
    seats' as well) and config, from ``opening`` (its moves played out
    first), with ``tags`` for the record. Raises ``ValidationError`` for settings the
    server does not host (``TournamentDirector.check`` tries them first)."""

    match = _match_with_shared_clock(request, x, o)
    shared = match is not request.match  # the seats' clock is the game's now

    def seat(bot: TournamentBot, url: str) -> PlayerConfig:
        return PlayerConfig(
            type=PlayerType.BOT,
            bot_url=url,
            name=bot.name,
            config=bot.config,
            # Not again as the seat's own: the record would say the clock three times.
            time_control=None if shared else request.time_control_of(bot),
            send_board=bot.send_board,
        )

    return NewGameRequest(
        player_x=seat(x, urls[0]),
        player_o=seat(o, urls[1]),
        match_config=match,
        adjudication=request.adjudication,
        name=name[:64],
        opening=None if opening is None else opening.wire_moves(),
        tags=tags,
    )


def _match_with_shared_clock(
    request: TournamentRequest, x: TournamentBot, o: TournamentBot
) -> Match:
    """The game's ``Match``: with both seats' clock when they play the same one (as
    queue games do), so the record says it as a game's clock (notation
    ``timecontrol[...]``, which other tools read) and not as two seats' ones; else
    ``request.match`` itself."""
    match = request.match
    clock = request.time_control_of(x)
    if clock is None or clock != request.time_control_of(o) or match.clock_type != "none":
        return match
    if clock.clock_type == "none":
        return match  # no clock (a stall limit is a seat's own: Match has no field for it)
    return Match.model_validate({**match.model_dump(), **clock.match_settings()})


def _outcome_json(outcome: GameOutcome, game_id: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "winner": outcome.winner,
        "failures": dict(outcome.failures),
        "game_id": game_id,
    }
    if outcome.void:  # only then: outcomes stored before void existed read the same
        data["void"] = True
    return data


def _outcome_from_json(data: dict[str, Any]) -> GameOutcome:
    failures: dict[str, Failure] = dict(data.get("failures") or {})
    return GameOutcome(winner=data.get("winner"), failures=failures, void=bool(data.get("void")))


def _standings_for(request: TournamentRequest, openings: int) -> Standings:
    """Empty standings of ``request``'s schedule (``openings``: the book's length; it
    places the openings, not the results, so a view of stored results may give 0)."""
    schedule = Schedule(
        [bot.name for bot in request.bots], request.format, rounds=request.rounds, openings=openings
    )
    sprt = request.sprt
    series = request.series
    return Standings(
        schedule,
        None if sprt is None else Sprt(sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta),
        series=None if series is None else SeriesRule(series.best_of, series.first_to),
    )


def _series_rule(request: TournamentRequest) -> str | None:
    """``best of 7`` for a series, ``None`` for a tournament."""
    series = request.series
    return None if series is None else SeriesRule(series.best_of, series.first_to).describe()


def _stored_summary(stored: StoredTournament, request: TournamentRequest) -> TournamentSummary:
    """The summary of a tournament no run holds, as the store has it."""
    return TournamentSummary(
        series_rule=_series_rule(request),
        tournament_id=stored.tournament_id,
        name=stored.name,
        format=request.format,
        status=cast(TournamentStatus, stored.status),
        bots=[bot.name for bot in request.bots],
        games_total=stored.games_total,
        games_done=stored.games_done,
        created_at=stored.created_at,
        ended_at=stored.ended_at,
        reason=stored.reason,
    )


def _view(
    summary: TournamentSummary,
    request: TournamentRequest,
    standings: Standings,
    live: dict[int, str],
) -> TournamentView:
    crosstable = None
    if request.format == "round_robin" and len(request.bots) > 2:
        crosstable = standings.crosstable().render()
    return TournamentView(
        **summary.model_dump(),
        request=request,
        games_running=len(live),
        games_counted=standings.counted_games,
        standings=standings.bot_standings(),
        pairs=standings.pair_standings(),
        sprt=standings.sprt_view(),
        series=standings.series_view(),
        crosstable=crosstable,
        live_games=[live[index] for index in sorted(live)],
    )
