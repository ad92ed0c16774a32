"""HTTTX notation's writer: ``dumps`` writes a ``GameRecord`` as version 2.

The format, what goes where and what is not carried are described in ``game.notation``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal

from game.notation_syntax import _KEY_CHARS, _KEY_START
from models import (
    NOTATION_FIELD_TAGS,
    Cell,
    EndCause,
    GameRecord,
    Match,
    Player,
    RecordedMove,
    ResultReason,
)

__all__ = [
    "dumps",
]


# Tags written from the record's fields, in the order written (``models`` defines them:
# a game request may not set them).
_TAG_ORDER = NOTATION_FIELD_TAGS
_FIELD_KEYS = frozenset(_TAG_ORDER) - {"platform"}
_DEFAULT_MATCH = Match()
_STANDARD_SETUP = [Cell(q=0, r=0, p=Player.X)]
_IMPLIED_CAUSES = {"time": EndCause.TIMEOUT, "resign": EndCause.RESIGN}


def dumps(record: GameRecord, *, clean_tags: bool = False) -> str:
    """Write a record as HTTTX notation version 2 (see the module docstring).

    ``clean_tags`` makes every tag writable instead of raising: ``]`` in a value becomes
    ``)``, a line break a space, and a tag whose key cannot be written is left out. A
    server exporting records named by its users wants this; a round trip does not.

    >>> from models import RecordPlayer
    >>> print(dumps(GameRecord(player_x=RecordPlayer(name="bot]2")), clean_tags=True), end="")
    version[2]
    playercross[bot)2];
    o : x [0,0];
    """
    derived = _field_tags(record)
    tags = [("version", "2")]
    for key in _TAG_ORDER:  # a value kept verbatim in ``tags`` replaces the derived one
        if key in record.tags:
            tags.append((key, record.tags[key]))
        elif key in derived:
            tags.append((key, derived[key]))
    tags += [(key, value) for key, value in record.tags.items() if key not in _TAG_ORDER]
    if clean_tags:
        tags = [tags[0]] + [
            (key, _clean_tag_value(value)) for key, value in tags[1:] if _writable_key(key)
        ]
    for key, value in tags[1:]:
        _check_tag(key, value)
    lines = [f"{key}[{value}]" for key, value in tags]
    lines[-1] += ";"
    standard = record.setup == _STANDARD_SETUP and record.first_to_move is Player.O
    if not standard or not record.moves:  # the grammar wants a setup or a turn
        lines.append(_setup_text(record.setup, record.first_to_move))
    last = len(record.moves)
    for number, move in enumerate(record.moves, start=1):
        side = record.first_to_move if number % 2 else record.first_to_move.other
        if move.side is not side:
            raise ValueError(
                f"move {number} is {move.side.value}'s, but sides alternate from "
                f"first_to_move {record.first_to_move.value}: it should be {side.value}'s"
            )
        if len(move.pieces) == 1 and number != last:
            raise ValueError(f"move {number} has one stone; only the last move may")
        stones = [f"[{p.q},{p.r}]" for p in move.pieces]
        if len(stones) == 1:
            stones.append("[/]")
        info = _info_text(move)
        lines.append(f"{number}. {' '.join(stones)}{' ' + info if info else ''};")
    return "\n".join(lines) + "\n"


def _writable_key(key: str) -> bool:
    return key != "version" and key[:1] in _KEY_START and all(c in _KEY_CHARS for c in key)


def _clean_tag_value(value: str) -> str:
    return value.replace("]", ")").replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def _check_tag(key: str, value: str) -> None:
    if not _writable_key(key):
        raise ValueError(f"{key!r} cannot be written as a tag key")
    if "]" in value or "\n" in value or "\r" in value:
        raise ValueError(f"tag {key}: a value cannot hold ']' or a line break: {value!r}")


def _setup_text(setup: Iterable[Cell], first_to_move: Player) -> str:
    lists = {first_to_move: [first_to_move.value], first_to_move.other: [first_to_move.other.value]}
    for cell in setup:
        lists[cell.p].append(f"[{cell.q},{cell.r}]")
    return f"{' '.join(lists[first_to_move])} : {' '.join(lists[first_to_move.other])};"


def _info_text(move: RecordedMove) -> str:
    parts = [] if move.clock_ms is None else [f"@{move.clock_ms}"]
    evaluation = move.evaluation
    if evaluation is not None:
        if evaluation.win_in is not None:
            parts.append(f"#{evaluation.win_in}")
        elif evaluation.heuristic is not None and not math.isnan(evaluation.heuristic):
            parts.append(f"%{_open_evaluation(evaluation.heuristic)}")
    return "{" + ":".join(parts) + "}" if parts else ""


def _open_evaluation(heuristic: float) -> int:
    """The ``%n`` for a heuristic: 100 times the value clamped to [-1, 1], rounded half away
    from zero.

    >>> [_open_evaluation(h) for h in (0.42, -3.0, 0.005, -0.005, -0.004)]
    [42, -100, 1, -1, 0]
    """
    scaled = 100 * min(1.0, max(-1.0, heuristic))
    magnitude = math.floor(abs(scaled) + 0.5)
    return magnitude if scaled >= 0 else -magnitude


def _field_tags(record: GameRecord) -> dict[str, str]:
    """The tags ``dumps`` derives from the record's fields (not from ``record.tags``)."""
    tags: dict[str, str] = {}
    if record.name is not None:
        tags["name"] = record.name
    if record.started_at is not None:
        tags["utcdatetime"] = _utc_text(record.started_at)
    if record.player_x.name is not None:
        tags["playercross"] = record.player_x.name
    if record.player_o.name is not None:
        tags["playercircle"] = record.player_o.name
    match = record.match
    if match.clock is not None:
        if match.clock_type == "match":
            tags["timecontrol"] = _seconds_text(match.clock)
        elif match.clock_type == "incremental":
            tags["timecontrol"] = f"{_seconds_text(match.clock)}+{_seconds_text(match.increment)}"
        elif match.clock_type == "turn":
            tags["turnclock"] = _seconds_text(match.clock)
    for key, player in (
        ("timecontrolcross", record.player_x),
        ("timecontrolcircle", record.player_o),
    ):
        if player.time_control is not None:
            tags[key] = player.time_control.text
    result = record.result
    if result is not None and result.winner is None and result.void:
        # Nobody played it (aborted, or neither seat came): no standard result, which a
        # reader of the standard tags alone would count as a draw; our cause says why.
        assert result.cause is not None
        tags["cause"] = result.cause.value
    elif result is not None:
        endreason = {
            ResultReason.WIN: "win",
            ResultReason.DRAW: "draw",
            ResultReason.FORFEIT: "time" if result.cause is EndCause.TIMEOUT else "resign",
        }[result.reason]
        tags["endreason"] = endreason
        if result.winner is not None:
            tags["winner"] = "cross" if result.winner is Player.X else "circle"
        if result.cause is not None and result.cause is not _IMPLIED_CAUSES.get(endreason):
            tags["cause"] = result.cause.value
    if match.view_distance != _DEFAULT_MATCH.view_distance:
        tags["viewdistance"] = str(match.view_distance)
    if match.win_distance != _DEFAULT_MATCH.win_distance:
        tags["windistance"] = str(match.win_distance)
    if match.turn_limit is not None:
        tags["turnlimit"] = str(match.turn_limit)
    return tags


def _utc_text(moment: datetime) -> str:
    if moment.tzinfo is not None:  # a naive datetime is taken to be UTC already
        moment = moment.astimezone(UTC)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d} "
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )


def _seconds_text(seconds: float) -> str:
    if seconds.is_integer():
        return str(int(seconds))
    # repr is the shortest text that reads back as the same float; Decimal spells out
    # the exponent that repr uses for very small or large numbers.
    return format(Decimal(repr(seconds)), "f")
