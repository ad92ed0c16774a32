"""A tournament as text: fastchess's result lines, the standings table, the crosstable. Pure.

``htttx-tournament`` prints this after every pair (when its output is not a terminal)
and at the end; the terminal's live table (``game.tournament_cli``) shows the same
figures. The match block reads like fastchess's, so tools and eyes used to it read it::

    Results of new vs old:
    Elo: 10.42 +/- 5.40, nElo: 15.12 +/- 7.83
    LOS: 99.99 %, DrawRatio: 51.23 %, PairsRatio: 1.12
    Games: 7566, Wins: 2032, Losses: 1805, Draws: 3729, Points: 3896.5 (51.50 %)
    Ptnml(0-2): [66, 838, 1938, 872, 69]
    LLR: 2.96 (-2.94, 2.94) [0.00, 5.00]
"""

from __future__ import annotations

from wire.tournaments import BotStanding, PairStanding, SprtView, TournamentView

__all__ = ["failures_text", "pair_lines", "progress_line", "report", "sprt_line", "standings_table"]


#: What a figure with no value prints as (no games yet, or none of its kind).
NO_VALUE = "n/a"


def _number(value: float | None, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals; an infinite one keeps its sign (``-inf``: every
    game lost, as fastchess prints it); ``n/a`` when there is none."""
    return NO_VALUE if value is None else f"{value:.{digits}f}"


def _percent(ratio: float | None) -> str:
    return NO_VALUE if ratio is None else f"{100 * ratio:.2f} %"


def pair_lines(pair: PairStanding, sprt: SprtView | None = None) -> list[str]:
    """The fastchess block of one match, from ``pair.bot``'s side.

    >>> line = PairStanding(bot="new", opponent="old", games=4, wins=2, draws=1, losses=1,
    ...     pentanomial=(0, 0, 1, 1, 0), score=0.625, elo=88.74, elo_error=400.0,
    ...     los=0.76, draw_ratio=0.25)
    >>> print("\\n".join(pair_lines(line)))
    Results of new vs old:
    Elo: 88.74 +/- 400.00, nElo: n/a +/- n/a
    LOS: 76.00 %, DrawRatio: 25.00 %, PairsRatio: inf
    Games: 4, Wins: 2, Losses: 1, Draws: 1, Points: 2.5 (62.50 %)
    Ptnml(0-2): [0, 0, 1, 1, 0]
    """
    ll, ld, wl_dd, wd, ww = pair.pentanomial
    losing_pairs, winning_pairs = ll + ld, wd + ww
    if losing_pairs:
        pairs_ratio = _number(winning_pairs / losing_pairs)
    else:  # fastchess's ratio is infinite with no losing pair, undefined with no pair at all
        pairs_ratio = "inf" if winning_pairs else NO_VALUE
    points = pair.wins + pair.draws / 2
    percent = 100 * points / pair.games if pair.games else 0.0
    lines = [
        f"Results of {pair.bot} vs {pair.opponent}:",
        f"Elo: {_number(pair.elo)} +/- {_number(pair.elo_error)}, "
        f"nElo: {_number(pair.nelo)} +/- {_number(pair.nelo_error)}",
        f"LOS: {_percent(pair.los)}, DrawRatio: {_percent(pair.draw_ratio)}, "
        f"PairsRatio: {pairs_ratio}",
        f"Games: {pair.games}, Wins: {pair.wins}, Losses: {pair.losses}, Draws: {pair.draws}, "
        f"Points: {points:g} ({percent:.2f} %)",
        # fastchess adds a WL/DD ratio; our pentanomial counts keep the two together.
        f"Ptnml(0-2): [{ll}, {ld}, {wl_dd}, {wd}, {ww}]",
    ]
    if sprt is not None:
        lines.append(sprt_line(sprt))
    return lines


def score_line(pair: PairStanding) -> str:
    """The running score of one match as cutechess and fastchess print it while they
    play: wins - losses - draws from ``pair.bot``'s side, the score, the games, then
    the Elo with its 95% interval and the LOS.

    >>> line = PairStanding(bot="new", opponent="old", games=4, wins=2, draws=1, losses=1,
    ...     pentanomial=(0, 0, 1, 1, 0), score=0.625, elo=88.74, elo_error=400.0,
    ...     los=0.76, draw_ratio=0.25)
    >>> score_line(line)
    'Score of new vs old: 2 - 1 - 1 [0.625] 4, Elo: 88.74 +/- 400.00, LOS: 76.00 %'
    """
    score = NO_VALUE if pair.score is None else f"{pair.score:.3f}"
    return (
        f"Score of {pair.bot} vs {pair.opponent}: {pair.wins} - {pair.losses} - "
        f"{pair.draws} [{score}] {pair.games}, Elo: {_number(pair.elo)} +/- "
        f"{_number(pair.elo_error)}, LOS: {_percent(pair.los)}"
    )


def sprt_line(sprt: SprtView) -> str:
    """``LLR: 2.96 (-2.94, 2.94) [0.00, 5.00]``: the LLR, its bounds, elo0 and elo1.
    An LLR that rounds to zero prints ``0.00``, never ``-0.00``.

    >>> sprt_line(SprtView(elo0=0, elo1=5, alpha=0.05, beta=0.05, llr=-0.001,
    ...     lower=-2.94, upper=2.94, decision="continue"))
    'LLR: 0.00 (-2.94, 2.94) [0.00, 5.00]'
    """
    return (
        f"LLR: {sprt.llr:z.2f} ({sprt.lower:.2f}, {sprt.upper:.2f}) "
        f"[{sprt.elo0:.2f}, {sprt.elo1:.2f}]"
    )


def failures_text(line: BotStanding) -> str:
    """A bot's failures in a few words, ``-`` for none.

    >>> from wire.tournaments import FailureCounts
    >>> failures_text(BotStanding(name="b", games=3, wins=0, draws=0, losses=3, points=0,
    ...     score=0.0, failures=FailureCounts(time=2, crash=1)))
    'time 2, crash 1'
    """
    counts = line.failures.model_dump().items()
    return ", ".join(f"{name} {count}" for name, count in counts if count) or "-"


def standings_table(view: TournamentView) -> str:
    """Rank, bot, rating with its interval (when rated), games, W/L/D (fastchess's and
    cutechess's order), points, score and the failures of each bot, as a fixed-width
    table."""
    header = f"{'Rank':>4}  {'Bot':<20} {'Elo':>8} {'+/-':>7} {'Games':>6} {'W':>5} {'L':>5} "
    header += f"{'D':>5} {'Points':>7} {'Score':>7}  Failures"
    rows = [header]
    for rank, line in enumerate(view.standings, 1):
        elo = "" if line.elo is None else f"{line.elo:.1f}"
        error = "" if line.elo_error is None else f"{line.elo_error:.1f}"
        score = "" if line.score is None else f"{100 * line.score:.1f}%"
        rows.append(
            f"{rank:>4}  {line.name[:20]:<20} {elo:>8} {error:>7} {line.games:>6} "
            f"{line.wins:>5} {line.losses:>5} {line.draws:>5} {line.points:>7g} {score:>7}  "
            f"{failures_text(line)}"
        )
    return "\n".join(rows)


def progress_line(view: TournamentView) -> str:
    """One line: status, games counted of the schedule, games in flight (and a
    series' score)."""
    line = (
        f"{view.name or view.tournament_id[:8]}: {view.status}, "
        f"{view.games_counted}/{view.games_total} games counted, {view.games_running} running"
    )
    if view.series is not None:
        line += f" | {view.series.text}"
    return line


def running_line(view: TournamentView) -> str:
    """What a run prints, off a terminal, each time something was counted: the progress,
    and for a match of two bots (an engine against its last version, say) its running
    score, Elo and LOS, and the SPRT's LLR when there is one."""
    parts = [progress_line(view)]
    if len(view.pairs) == 1:
        parts.append(score_line(view.pairs[0]))
    if view.sprt is not None:
        parts.append(sprt_line(view.sprt))
    return " | ".join(parts)


def report(view: TournamentView) -> str:
    """The whole report: the outcome, the standings, each match, the crosstable."""
    parts = [progress_line(view)]
    if view.reason:
        parts.append(view.reason)
    parts += ["", standings_table(view)]
    two_bots = len(view.pairs) == 1
    for pair in view.pairs:
        if pair.games or two_bots:
            parts += ["", *pair_lines(pair, view.sprt if two_bots else None)]
    if view.sprt is not None and view.sprt.decision != "continue":
        parts += [
            "-" * 50,
            f"SPRT ([{view.sprt.elo0:.2f}, {view.sprt.elo1:.2f}]) completed - "
            f"{view.sprt.decision} was accepted",
        ]
    if view.series is not None:
        parts += ["", f"Series ({view.series.rule}): {view.series.text}"]
    if view.crosstable:
        parts += ["", "Crosstable (points of the row's bot against the column's):", view.crosstable]
    return "\n".join(parts)
