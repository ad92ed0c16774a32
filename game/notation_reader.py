"""HTTTX notation's reader: ``loads`` replays a parsed main line into a ``GameRecord``.

The tags become the record's fields (match settings, players, start, result) and the
main line is checked with the rules engine; see ``game.notation`` for what goes where.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TypeVar

from pydantic import ValidationError

from game.notation_syntax import _DIGITS, NotatedTurn, NotationError, Tag, parse
from game.notation_writer import _FIELD_KEYS, _IMPLIED_CAUSES, _field_tags
from game.rules import IllegalMoveError, InvalidSetupError, Outcome, Position, Termination
from models import (
    Cell,
    Coord,
    EndCause,
    GameRecord,
    GameResult,
    Match,
    Player,
    PositionEvaluation,
    RecordedMove,
    RecordPlayer,
    ResultReason,
    TimeControl,
    TimeControlError,
)
from wire.errors import _problems

__all__ = [
    "loads",
]


def loads(text: str) -> GameRecord:
    """Read a version 1 or 2 game into a ``GameRecord``, checking its main line.

    Raises ``NotationError`` for text that is not notation, and for a main line the
    rules do not allow (the message names the turn).
    """
    notation = parse(text)
    tags = {tag.key: tag for tag in notation.tags}
    match = _match_from_tags(tags)
    if notation.setup is None:
        setup = [Cell(q=0, r=0, p=Player.X)]
        first_to_move = Player.O
    else:
        setup = [Cell(q=q, r=r, p=side) for q, r, side in notation.setup.stones]
        first_to_move = notation.setup.first_to_move
    try:
        position = Position(
            match.view_distance,
            match.win_distance,
            setup=[(cell.q, cell.r, cell.p.value) for cell in setup],
            to_move=first_to_move.value,
            turn_limit=match.turn_limit,
        )
    except InvalidSetupError as error:
        assert notation.setup is not None  # the standard setup is always playable
        raise NotationError(
            f"the setup cannot be played: {error}", notation.setup.line, notation.setup.column
        ) from None
    moves = [_replay(turn, first_to_move, position) for turn in notation.main_line]
    record = GameRecord(
        name=_tag_value(tags, "name"),
        player_x=RecordPlayer(
            name=_tag_value(tags, "playercross"),
            time_control=_read_seat_clock(_tag_value(tags, "timecontrolcross")),
        ),
        player_o=RecordPlayer(
            name=_tag_value(tags, "playercircle"),
            time_control=_read_seat_clock(_tag_value(tags, "timecontrolcircle")),
        ),
        match=match,
        started_at=_read_utc(tags["utcdatetime"].value) if "utcdatetime" in tags else None,
        setup=setup,
        first_to_move=first_to_move,
        moves=moves,
        result=_read_result(tags, position.outcome),
    )
    # Keep verbatim every tag that the fields would not give back as written.
    derived = _field_tags(record)
    record.tags = {
        tag.key: tag.value
        for tag in notation.tags
        if tag.key != "version"
        and (tag.key not in _FIELD_KEYS or derived.get(tag.key) != tag.value)
    }
    return record


def _replay(turn: NotatedTurn, first_to_move: Player, position: Position) -> RecordedMove:
    side = first_to_move if turn.number % 2 else first_to_move.other
    pieces: list[Coord] = []
    clock_ms: int | None = None
    evaluation: PositionEvaluation | None = None
    for move in turn.moves:
        if move.stone is not None:
            q, r = move.stone
            try:
                position.place(q, r)
            except IllegalMoveError as error:
                raise NotationError(
                    f"turn {turn.number}: {side.value.upper()} cannot play [{q},{r}]: {error}",
                    move.line,
                    move.column,
                ) from None
            pieces.append(Coord(q=q, r=r))
        info = move.info
        if info is not None:  # field by field, the last stone's info wins
            if info.clock_ms is not None:
                clock_ms = info.clock_ms
            if info.open_evaluation is not None:
                evaluation = PositionEvaluation(heuristic=info.open_evaluation / 100)
            elif info.closed_evaluation is not None:
                evaluation = PositionEvaluation(win_in=info.closed_evaluation)
    return RecordedMove(side=side, pieces=pieces, evaluation=evaluation, clock_ms=clock_ms)


def _tag_value(tags: Mapping[str, Tag], key: str) -> str | None:
    tag = tags.get(key)
    return None if tag is None else tag.value


def _tag_error(tag: Tag, reason: str) -> NotationError:
    return NotationError(reason, tag.line, tag.column)


def _match_from_tags(tags: Mapping[str, Tag]) -> Match:
    settings: dict[str, object] = {}
    for key, field in (
        ("viewdistance", "view_distance"),
        ("windistance", "win_distance"),
        ("turnlimit", "turn_limit"),
    ):
        if key in tags:
            settings[field] = _setting(tags[key], field, _read_count(tags[key]))
    if "turnclock" in tags:  # our own tag: a value we cannot use is an error
        turnclock = tags["turnclock"]
        seconds = _read_seconds(turnclock.value)
        if seconds is None or seconds <= 0:
            raise _tag_error(turnclock, "turnclock needs a number of seconds above 0")
        settings.update(clock_type="turn", clock=_setting(turnclock, "clock", seconds))
    elif "timecontrol" in tags:  # another tool's timecontrol we cannot read stays a tag
        settings.update(_read_time_control(tags["timecontrol"].value))
    return Match.model_validate(settings)


def _read_count(tag: Tag) -> int:
    value = tag.value
    if not value or value[0] == "0" or any(c not in _DIGITS for c in value):
        raise _tag_error(tag, f"{tag.key} needs a positive integer, found {value!r}")
    try:
        return int(value)
    except ValueError:  # beyond Python's limit on digits, and so beyond any setting's
        raise _tag_error(tag, f"{tag.key} has too many digits") from None


_Setting = TypeVar("_Setting", int, float)


def _setting(tag: Tag, field: str, value: _Setting) -> _Setting:
    try:  # Match knows the limits; ask it rather than repeat them
        Match.model_validate({field: value})
    except ValidationError as error:
        # The tag names the field: the problem without its location (the field's name).
        problem = _problems(error)[0].removeprefix(f"{field}: ")
        raise _tag_error(tag, f"{tag.key}[{tag.value}]: {problem}") from None
    return value


_SECONDS = r"([0-9]+(?:\.[0-9]+)?)"
# "60", "60+5", and with a leading name as in the specs' examples: "Fischer 60+5".
_TIME_CONTROL = re.compile(rf"(?:[A-Za-z][A-Za-z ]*\s)?\s*{_SECONDS}(?:\s*\+\s*{_SECONDS})?")


def _read_seconds(text: str) -> float | None:
    return float(text) if re.fullmatch(_SECONDS, text) else None


def _read_time_control(text: str) -> dict[str, object]:
    """The match settings of a ``timecontrol`` tag; none for text we cannot read or
    settings beyond ``Match``'s limits (the tag then stays in ``tags``, verbatim)."""
    found = _TIME_CONTROL.fullmatch(text.strip())
    if found is None:
        return {}
    settings: dict[str, object] = {"clock_type": "match", "clock": float(found[1])}
    if found[2] is not None:
        settings.update(clock_type="incremental", increment=float(found[2]))
    try:  # Match knows the limits (a clock above 0, at most MAX_CLOCK_SECONDS...)
        Match.model_validate(settings)
    except ValidationError:
        return {}
    return settings


def _read_seat_clock(text: str | None) -> TimeControl | None:
    """A seat's own clock from its tag; None for text ``TimeControl.parse`` cannot read
    (the tag then stays in ``tags``, verbatim, like any other we cannot use)."""
    if text is None:
        return None
    try:
        return TimeControl.parse(text)
    except TimeControlError:
        return None


def _read_utc(text: str) -> datetime | None:
    """The moment of a ``utcdatetime`` tag; None for text we cannot read (the tag then
    stays in ``tags``, verbatim), such as a moment whose UTC time is beyond year 1..9999."""
    try:
        moment = datetime.fromisoformat(text)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


_END_REASONS = {
    "win": ResultReason.WIN,
    "draw": ResultReason.DRAW,
    "time": ResultReason.FORFEIT,
    "resign": ResultReason.FORFEIT,
}
_WINNERS = {"cross": Player.X, "circle": Player.O}
_CAUSES = {cause.value: cause for cause in EndCause}
# The causes each ``endreason`` can have, as the server ends games (None: no cause tag).
# A forfeit's cause is a seat's failure; a draw's, the turn limit or a void game (an
# aborted one written as a draw by older versions).
_CAUSES_OF_END_REASON: dict[str, frozenset[EndCause | None]] = {
    "win": frozenset({None, EndCause.ADJUDICATION}),
    "draw": frozenset({None, EndCause.TURN_LIMIT, EndCause.ABORTED, EndCause.NO_SHOW}),
    "time": frozenset({None, EndCause.TIMEOUT}),
    "resign": frozenset(
        {
            None,
            EndCause.RESIGN,
            EndCause.ILLEGAL_MOVE,
            EndCause.PROTOCOL_ERROR,
            EndCause.DISCONNECT,
            EndCause.NO_SHOW,
            EndCause.STALL,
        }
    ),
}


def _read_result(tags: Mapping[str, Tag], outcome: Outcome | None) -> GameResult | None:
    """The result from the tags and the board; see "Result when reading" above."""
    endreason, winner_tag, cause_tag = tags.get("endreason"), tags.get("winner"), tags.get("cause")
    reason = _END_REASONS.get(endreason.value) if endreason else None
    winner = _WINNERS.get(winner_tag.value) if winner_tag else None
    cause = _CAUSES.get(cause_tag.value) if cause_tag else None
    # Where to point when the tags are wrong: at endreason if we read it, else at winner.
    anchor = endreason if reason is not None else winner_tag
    if reason is ResultReason.DRAW and winner is not None:
        assert endreason is not None and winner_tag is not None
        raise _tag_error(
            endreason, f"endreason[draw] with winner[{winner_tag.value}]: a draw has no winner"
        )
    if cause is not None and reason is not None:
        assert endreason is not None and cause_tag is not None
        if cause not in _CAUSES_OF_END_REASON[endreason.value]:
            raise _tag_error(
                cause_tag,
                f"cause[{cause_tag.value}] does not go with endreason[{endreason.value}]",
            )

    if outcome is not None:
        if outcome.termination is Termination.LINE:
            board_winner = Player(outcome.winner)
            line = f"{board_winner.value.upper()} has {len(outcome.line)} in a row"
            if reason not in (None, ResultReason.WIN) or winner not in (None, board_winner):
                assert anchor is not None
                raise _tag_error(anchor, f"the result tags contradict the board: {line}")
            if cause is not None:  # a line ends a game by itself: no other cause did
                assert cause_tag is not None
                raise _tag_error(
                    cause_tag, f"cause[{cause_tag.value}] contradicts the board: {line}"
                )
            return GameResult(winner=board_winner, reason=ResultReason.WIN)
        if reason not in (None, ResultReason.DRAW) or winner is not None:
            assert anchor is not None
            raise _tag_error(
                anchor, "the result tags contradict the board: the turn limit ended it in a draw"
            )
        if cause not in (None, EndCause.TURN_LIMIT):
            assert cause_tag is not None
            raise _tag_error(
                cause_tag,
                f"cause[{cause_tag.value}] contradicts the board: the turn limit ended it",
            )
        return GameResult(winner=None, reason=ResultReason.DRAW, cause=EndCause.TURN_LIMIT)

    if reason is None and winner_tag is None and cause is not None:
        void = GameResult(winner=None, reason=ResultReason.DRAW, cause=cause)
        if void.void:  # ``cause[aborted]`` or ``cause[no_show]`` alone: nobody played
            return void
    if reason is None or (reason is not ResultReason.DRAW and winner is None):
        return None  # nothing we can read; the tags stay in ``tags``
    assert endreason is not None
    return GameResult(
        winner=winner, reason=reason, cause=cause or _IMPLIED_CAUSES.get(endreason.value)
    )


# ------------------------------------------------------------------------ writing
