"""A tournament's standings, folded from its results in schedule order. Pure.

Results arrive in whatever order games finish (several run at once, and a resumed run
replays the missing ones), but the standings count them **in schedule order**: a pair
of games is counted when it and every pair before it are complete. The statistics and
the SPRT's decision therefore depend only on the results, never on the concurrency or
on an interruption: a resumed tournament ends exactly as an uninterrupted one would.
Memory is the bots, the pairings and the results not yet counted (at most the games in
flight), whatever the length of the tournament.

An SPRT is tested after every counted pair and, once it decides, nothing more is
counted: the tournament stops there (games still running are void).

A series (``game.series_score``) counts **game by game** instead, still in schedule
order: its score can decide it after the first game of a pair (a best of 3 won 2-0
ends after game 2, one won 2-1 after game 3). A game is then in the bots' lines and
the pair's games as soon as it counts, and in the pentanomial once its pair is whole.

>>> from game.series_score import SeriesRule
>>> series = Standings(Schedule(["a", "b"], "round_robin", rounds=2, openings=0),
...                    series=SeriesRule(best_of=3))
>>> series.add(0, GameOutcome(winner="a")); series.add(1, GameOutcome(winner="a"))
>>> series.complete, series.counted_games, series.series_score.text
(True, 2, 'a 2-0 b')

>>> from game.tournament_schedule import Schedule
>>> standings = Standings(Schedule(["new", "old"], "round_robin", rounds=2, openings=1))
>>> standings.add(1, GameOutcome(winner="new"))    # second game first: not counted yet
>>> standings.counted_games
0
>>> standings.add(0, GameOutcome(winner=None))
>>> standings.counted_games, standings.bot("new").points
(2, 1.5)
>>> standings.pair("new", "old").pairs.counts     # one pair scoring 1.5 of 2
(0, 0, 0, 1, 0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from game.crosstable import Crosstable, RatingsError
from game.elo import StatsError, Tally, los_from_wins_losses
from game.series_score import SeriesRule, SeriesScore
from game.sprt import Sprt, SprtDecision, SprtResult
from game.tournament_ratings import rate_table
from game.tournament_schedule import Schedule
from models import EndCause, GameResult, Player
from wire.tournaments import (
    BotStanding,
    FailureCounts,
    PairStanding,
    SeriesStanding,
    SprtView,
)

__all__ = [
    "FAILURE_OF_CAUSE",
    "Failure",
    "GameOutcome",
    "Standings",
    "outcome_of",
]

Failure = Literal["time", "illegal", "protocol", "disconnect", "crash", "no_show"]

#: The failure a forfeit counts against the side that forfeited, by cause, as fastchess
#: names them. A dropped connection or a no-show of a local program that died is a
#: ``crash`` instead (the runner knows; see ``outcome_of``).
FAILURE_OF_CAUSE: Final[Mapping[EndCause, Failure]] = {
    EndCause.TIMEOUT: "time",
    EndCause.STALL: "time",
    EndCause.ILLEGAL_MOVE: "illegal",
    EndCause.PROTOCOL_ERROR: "protocol",
    EndCause.DISCONNECT: "disconnect",
    EndCause.NO_SHOW: "no_show",
}


@dataclass(frozen=True)
class GameOutcome:
    """What one tournament game counts for: the winning bot (``None``: a draw) and the
    failures by bot (the forfeiting bot's, or both bots' no-show). ``void``: nobody
    played it (neither bot connected): no points, no win, draw or loss, nothing in the
    pair's statistics; only the failures count."""

    winner: str | None
    failures: Mapping[str, Failure] = field(default_factory=dict)
    void: bool = False


def outcome_of(
    result: GameResult, x: str, o: str, *, crashed: frozenset[str] = frozenset()
) -> GameOutcome:
    """The outcome of a finished game between ``x`` and ``o``; ``crashed`` names the
    local programs that died during it (their disconnect or no-show is a ``crash``).

    >>> from models import ResultReason
    >>> forfeit = GameResult(winner=Player.X, reason=ResultReason.FORFEIT,
    ...                      cause=EndCause.TIMEOUT)
    >>> outcome_of(forfeit, "a", "b")
    GameOutcome(winner='a', failures={'b': 'time'}, void=False)
    >>> nobody = GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.NO_SHOW)
    >>> outcome_of(nobody, "a", "b", crashed=frozenset({"a"}))
    GameOutcome(winner=None, failures={'a': 'crash', 'b': 'no_show'}, void=True)
    """
    names = {Player.X: x, Player.O: o}
    winner = None if result.winner is None else names[result.winner]
    failure = FAILURE_OF_CAUSE.get(result.cause) if result.cause is not None else None
    if failure is None:
        return GameOutcome(winner)
    if result.winner is None:  # only a game neither side came to is a draw with a failure
        losers = [x, o]
    else:
        losers = [names[Player.O if result.winner is Player.X else Player.X]]
    failures: dict[str, Failure] = {}
    for bot in losers:
        failures[bot] = (
            "crash" if bot in crashed and failure in ("disconnect", "no_show") else failure
        )
    return GameOutcome(winner, failures, void=result.void)


@dataclass
class _BotTotals:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    failures: dict[str, int] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2


class Standings:
    """The counted results of one tournament. See the module docstring."""

    def __init__(
        self, schedule: Schedule, sprt: Sprt | None = None, *, series: SeriesRule | None = None
    ) -> None:
        if series is not None and (len(schedule.bots) != 2 or sprt is not None):
            raise ValueError("a series is two bots, without an SPRT")
        self.schedule = schedule
        self.sprt = sprt
        self.series_score = (
            None if series is None else SeriesScore(series, schedule.bots[0], schedule.bots[1])
        )
        self._next_game = 0
        self._first_score: float | None = 0.0
        self._bots = {name: _BotTotals() for name in schedule.bots}
        self._tallies = {pairing: Tally() for pairing in schedule.pairings}
        self._waiting: dict[int, GameOutcome] = {}
        self._next_pair = 0
        self._sprt_result: SprtResult | None = None

    # ------------------------------------------------------------------ input

    def add(self, index: int, outcome: GameOutcome) -> None:
        """The result of game ``index``; counted once its pair and all before it are in.
        A result already counted or waiting is ignored (a game is never counted twice)."""
        if self.series_score is not None:
            self._add_series_game(index, outcome)
            return
        if index // 2 < self._next_pair or index in self._waiting or self.decided:
            return
        self.schedule.game(index)  # ScheduleError out of range
        self._waiting[index] = outcome
        while not self.decided and self._next_pair < self.schedule.pairs:
            first, second = 2 * self._next_pair, 2 * self._next_pair + 1
            if first not in self._waiting or second not in self._waiting:
                break
            self._count_pair(self._waiting.pop(first), self._waiting.pop(second))

    def _add_series_game(self, index: int, outcome: GameOutcome) -> None:
        score = self.series_score
        assert score is not None
        if index < self._next_game or index in self._waiting or score.decided:
            return
        self.schedule.game(index)  # ScheduleError out of range
        self._waiting[index] = outcome
        while not score.decided and self._next_game in self._waiting:
            index = self._next_game
            outcome = self._waiting.pop(index)
            pairing = self.schedule.pair_bots(index // 2)
            mine = self._count_game(pairing, outcome)
            if mine is None:
                score.add_void()  # one of the series' games, no point for anybody
            else:
                score.add(outcome.winner)
            tally = self._tallies[pairing]
            games = tally.games if mine is None else tally.games.add(mine)
            if index % 2 == 0:
                self._first_score = mine
                self._tallies[pairing] = Tally(games, tally.pairs)
            else:
                pairs = tally.pairs
                if self._first_score is not None and mine is not None:
                    pairs = pairs.add_pair(self._first_score, mine)
                self._tallies[pairing] = Tally(games, pairs)
                self._next_pair += 1
            self._next_game += 1

    def _count_game(self, pairing: tuple[str, str], outcome: GameOutcome) -> float | None:
        """Count one game in the bots' lines; its score for the pairing's first bot
        (None for a void game, which only counts its failures)."""
        for bot, failure in outcome.failures.items():
            if bot in self._bots:
                counts = self._bots[bot].failures
                counts[failure] = counts.get(failure, 0) + 1
        if outcome.void:
            return None
        a, b = pairing
        score = 0.5 if outcome.winner is None else 1.0 if outcome.winner == a else 0.0
        for bot, mine in ((a, score), (b, 1.0 - score)):
            totals = self._bots[bot]
            if mine == 1.0:
                totals.wins += 1
            elif mine == 0.5:
                totals.draws += 1
            else:
                totals.losses += 1
        return score

    def _count_pair(self, first: GameOutcome, second: GameOutcome) -> None:
        pairing = self.schedule.pair_bots(self._next_pair)
        self._next_pair += 1
        one, two = (self._count_game(pairing, outcome) for outcome in (first, second))
        tally = self._tallies[pairing]
        if one is None or two is None:  # a void game: no pair, only the played game
            games = tally.games
            for score in (one, two):
                games = games if score is None else games.add(score)
            self._tallies[pairing] = Tally(games, tally.pairs)
            return
        self._tallies[pairing] = tally.add_pair(one, two)
        if self.sprt is not None:
            self._sprt_result = self.sprt.test(self._tallies[pairing].pairs)

    # ----------------------------------------------------------------- output

    @property
    def counted_pairs(self) -> int:
        return self._next_pair

    @property
    def counted_games(self) -> int:
        if self.series_score is not None:
            return self._next_game
        return 2 * self._next_pair

    @property
    def complete(self) -> bool:
        """Every game of the schedule counted, or the SPRT (or the series) decided."""
        return self.decided or self._next_pair >= self.schedule.pairs

    @property
    def decided(self) -> bool:
        if self.series_score is not None:
            return self.series_score.decided
        return self._sprt_result is not None and self._sprt_result.finished

    def series_view(self) -> SeriesStanding | None:
        """The series' score (``None``: not a series)."""
        score = self.series_score
        if score is None:
            return None
        return SeriesStanding(
            rule=score.rule.describe(),
            a=score.a,
            b=score.b,
            points_a=score.points_a,
            points_b=score.points_b,
            games=score.games,
            decided=score.decided,
            winner=score.winner,
            text=score.text,
        )

    @property
    def sprt_result(self) -> SprtResult | None:
        """The SPRT after the last counted pair (``None`` before the first, or no SPRT)."""
        return self._sprt_result

    def bot(self, name: str) -> _BotTotals:
        return self._bots[name]

    def pair(self, bot: str, opponent: str) -> Tally:
        """The match of ``bot`` against ``opponent``, from ``bot``'s side."""
        if (bot, opponent) in self._tallies:
            return self._tallies[bot, opponent]
        tally = self._tallies[opponent, bot]
        return Tally(tally.games.flipped(), tally.pairs.flipped())

    def crosstable(self) -> Crosstable:
        counts = {pairing: _wdl(tally) for pairing, tally in self._tallies.items()}
        return Crosstable(self.schedule.bots, counts)

    def bot_standings(self) -> list[BotStanding]:
        """Every bot, best first: by rating (Bradley-Terry from every counted game, any
        format: a two-bot match or a gauntlet too, so the table never has an empty
        rating column once a pair is in), else by points."""
        ratings = None
        if self._next_pair:
            try:
                ratings = rate_table(self.crosstable())  # O(bots²), whatever the games
            except (RatingsError, StatsError):
                ratings = None  # bots that never met yet: points only
        lines = []
        for name, totals in self._bots.items():
            rating = ratings[name] if ratings is not None else None
            lines.append(
                BotStanding(
                    name=name,
                    games=totals.games,
                    wins=totals.wins,
                    draws=totals.draws,
                    losses=totals.losses,
                    points=totals.points,
                    score=totals.points / totals.games if totals.games else None,
                    elo=None if rating is None else rating.elo,
                    elo_error=None if rating is None else rating.error,
                    failures=FailureCounts(**totals.failures),
                )
            )
        lines.sort(
            key=lambda line: (-(line.elo if line.elo is not None else -math.inf), -line.points)
        )
        return lines

    def pair_standings(self) -> list[PairStanding]:
        """Every pairing's match statistics, from the first bot's side."""
        lines = []
        for (a, b), tally in self._tallies.items():
            wins, draws, losses = _wdl(tally)
            elo = error = nelo = nelo_error = los = draw_ratio = score = None
            if tally.games.games:
                score = tally.games.score
                draw_ratio = tally.games.draw_ratio
                los = los_from_wins_losses(wins, losses)
                try:
                    estimate = tally.elo()  # from the pairs, as fastchess reports it
                    # A match won or lost every time keeps its infinite Elo, with its
                    # sign (fastchess prints -inf for a total loss); only NaN is none.
                    elo, error = _number(estimate.elo), _number(estimate.error)
                    nelo, nelo_error = _number(estimate.nelo), _number(estimate.nelo_error)
                    los = estimate.los
                except StatsError:
                    pass
            lines.append(
                PairStanding(
                    bot=a,
                    opponent=b,
                    games=wins + draws + losses,
                    wins=wins,
                    draws=draws,
                    losses=losses,
                    pentanomial=tally.pairs.counts,
                    score=score,
                    elo=elo,
                    elo_error=error,
                    nelo=nelo,
                    nelo_error=nelo_error,
                    los=los,
                    draw_ratio=draw_ratio,
                )
            )
        return lines

    def sprt_view(self) -> SprtView | None:
        if self.sprt is None:
            return None
        result = self._sprt_result or SprtResult(
            0.0, self.sprt.lower, self.sprt.upper, SprtDecision.CONTINUE
        )
        return SprtView(
            elo0=self.sprt.elo0,
            elo1=self.sprt.elo1,
            alpha=self.sprt.alpha,
            beta=self.sprt.beta,
            llr=result.llr,
            lower=result.lower,
            upper=result.upper,
            decision=result.decision.value,
        )


def _wdl(tally: Tally) -> tuple[int, int, int]:
    """Wins, draws, losses (``Trinomial.counts`` is in score order: losses first)."""
    games = tally.games
    return games.wins, games.draws, games.losses


def _rank(line: BotStanding) -> tuple[float, float]:
    """Best first: by rating when there is one (0.0 is a rating), then by points."""
    return (-line.elo if line.elo is not None else math.inf, -line.points)


def _number(value: float) -> float | None:
    """``value``, infinities included; ``None`` for NaN (no value at all)."""
    return None if math.isnan(value) else value
