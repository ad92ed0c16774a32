"""``POST /game/new``'s ``opening`` and ``tags`` as read from a body
(``models.NewGameRequest``): every bad opening and tag refused with one clear reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from game.notation_writer import _TAG_ORDER
from game.openings import NonStandardOpeningError, Opening, default_book
from models import (
    MAX_OPENING_MOVES,
    MAX_TAGS,
    OPENING_MOVES_TAG,
    RESERVED_TAG_KEYS,
    NewGameRequest,
    ProtocolError,
    parse_body,
)

HUMANS: dict[str, Any] = {"player_x": {"type": "human"}, "player_o": {"type": "human"}}

Json = dict[str, Any]


def move(side: str, *stones: tuple[int, int]) -> Json:
    return {"side": side, "pieces": [{"q": q, "r": r} for q, r in stones]}


def request(**fields: Any) -> NewGameRequest:
    return parse_body(NewGameRequest, json.dumps({**HUMANS, **fields}))


def refused(**fields: Any) -> str:
    with pytest.raises(ProtocolError) as caught:
        request(**fields)
    return str(caught.value)


# -------------------------------------------------------------------- opening


def test_an_opening_and_tags_are_read_in_order() -> None:
    game = request(
        opening=[move("o", (1, 0), (2, 0)), move("x", (-1, 0), (-2, 0))],
        tags={"tournament": "t1", "round": "2"},
    )
    assert game.opening is not None
    assert [(m.side.value, [p.as_tuple() for p in m.pieces]) for m in game.opening] == [
        ("o", [(1, 0), (2, 0)]),
        ("x", [(-1, 0), (-2, 0)]),
    ]
    assert list((game.tags or {}).items()) == [("tournament", "t1"), ("round", "2")]


def test_an_empty_opening_is_no_opening() -> None:
    assert request(opening=[]).opening == []


@pytest.mark.parametrize(
    ("opening", "match", "reason"),
    [
        (
            [move("o", (1, 0), (2, 0)), move("x", (-1, 0), (12, 0))],
            {},
            "opening[1].pieces[1]: (12, 0) is farther than view_distance 8 from every stone",
        ),
        (
            [move("o", (1, 0), (4, 0))],
            {"view_distance": 2},
            "opening[0].pieces[1]: (4, 0) is farther than view_distance 2 from every stone",
        ),
        (
            [move("o", (1, 0), (2, 0)), move("x", (-1, 0), (1, 0))],
            {},
            "opening[1].pieces[1]: (1, 0) is already taken by o",
        ),
        (
            [move("o", (1, 0), (2, 0)), move("x", (0, 1), (0, 2))],
            {"win_distance": 3},
            "opening[1].pieces[1]: (0, 2) makes 3 in a row for x: an opening must leave the "
            "game undecided",
        ),
        (
            [move("o", (1, 0), (2, 0)), move("x", (0, 1), (0, 2))],
            {"turn_limit": 2},
            "opening[1]: reaches the turn limit of 2 moves",
        ),
        (
            [move("x", (1, 0), (2, 0))],
            {},
            "opening[0].side: expected 'o' (the moves alternate, O first), got 'x'",
        ),
        (
            [move("o", (1, 0), (2, 0)), move("o", (3, 0), (4, 0))],
            {},
            "opening[1].side: expected 'x' (the moves alternate, O first), got 'o'",
        ),
        (
            [move("o", (1, 0))],
            {},
            "opening[0].pieces: expected 2 stones (every move of an opening places 2), got 1",
        ),
        ([move("o", (1, 0), (2, 0), (3, 0))], {}, "opening[0].pieces: expected at most 2"),
        (
            [move("o" if i % 2 == 0 else "x", (i + 1, 0), (i + 1, 1)) for i in range(41)],
            {},
            f"opening: expected at most {MAX_OPENING_MOVES} moves, got 41",
        ),
    ],
    ids=[
        "out-of-view",
        "out-of-view-of-the-games-own-distance",
        "taken-cell",
        "already-won",
        "reaches-the-turn-limit",
        "x-first",
        "sides-do-not-alternate",
        "one-stone",
        "three-stones",
        "too-long",
    ],
)
def test_an_opening_that_cannot_start_a_game_is_refused_naming_the_move(
    opening: list[Json], match: Json, reason: str
) -> None:
    assert reason in refused(opening=opening, match_config=match)


def test_an_opening_is_checked_against_the_default_turn_limit_when_none_is_given() -> None:
    game = request(opening=[move("o", (1, 0), (2, 0))])
    assert game.match_config.turn_limit is not None


def test_every_opening_of_the_shipped_book_is_a_valid_request() -> None:
    for opening in default_book():
        game = request(opening=[m.model_dump(mode="json") for m in opening.wire_moves()])
        assert game.opening is not None and len(game.opening) == len(opening.moves)


def test_an_opening_with_a_setup_of_its_own_has_no_wire_moves() -> None:
    opening = Opening("set", moves=(((1, 0), (2, 0)),), setup=((0, 0, "x"), (5, 5, "o")))
    with pytest.raises(NonStandardOpeningError, match="a setup of its own"):
        opening.wire_moves()


# ----------------------------------------------------------------------- tags


@pytest.mark.parametrize(
    ("tags", "reason"),
    [
        ({"name": "x"}, "tags: key 'name' is reserved"),
        ({"Winner": "x"}, "tags: key 'Winner' is reserved"),
        ({"VERSION": "3"}, "tags: key 'VERSION' is reserved"),
        ({OPENING_MOVES_TAG: "9"}, f"tags: key '{OPENING_MOVES_TAG}' is reserved"),
        ({"round-1": "x"}, "tags: key 'round-1': expected a letter, then at most 31 letters"),
        ({"1st": "x"}, "tags: key '1st': expected a letter"),
        ({"": "x"}, "tags: key '': expected a letter"),
        ({"k" * 33: "x"}, "expected a letter, then at most 31 letters, digits or '_'"),
        ({"round": "semi]final"}, "tags: the value of 'round': expected no ']'"),
        (
            {"round": "a\nb"},
            "tags: the value of 'round': expected no control characters, got U+000A at position 1",
        ),
        ({"round": "\u202eevil"}, "expected no control characters, got U+202E"),
        ({"round": "r" * 201}, "tags: the value of 'round': expected at most 200 characters"),
        ({f"k{i}": "v" for i in range(MAX_TAGS + 1)}, f"expected at most {MAX_TAGS} tags, got 17"),
        ({"round": 3}, "tags.round: expected a string, got 3"),
    ],
    ids=[
        "reserved",
        "reserved-in-another-case",
        "version",
        "the-servers-own",
        "dash",
        "digit-first",
        "empty-key",
        "long-key",
        "bracket",
        "newline",
        "bidi-control",
        "long-value",
        "too-many",
        "not-a-string",
    ],
)
def test_a_tag_notation_cannot_carry_is_refused(tags: Json, reason: str) -> None:
    assert reason in refused(tags=tags)


def test_a_long_bad_key_is_echoed_clipped() -> None:
    assert len(refused(tags={"-" * 5000: "x"})) < 200


def test_tags_at_the_bounds_are_accepted() -> None:
    tags = {f"K{i}_" + "k" * 28: "v" * 200 for i in range(MAX_TAGS)}
    assert request(tags=tags).tags == tags


def test_every_tag_notation_writes_from_a_records_fields_is_reserved() -> None:
    assert {"version", OPENING_MOVES_TAG, *_TAG_ORDER} <= RESERVED_TAG_KEYS
