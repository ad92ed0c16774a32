"""The ``POST /game/new`` body of a tournament's game (``game.tournament_games``)."""

from __future__ import annotations

from typing import Any

from game import notation
from game.tournament_games import game_request
from models import GameRecord, RecordPlayer, TimeControl
from wire.tournaments import TournamentBot, TournamentRequest

URLS = ("http://127.0.0.1:9/a", "http://127.0.0.1:9/b")


def request(**fields: Any) -> TournamentRequest:
    bots = fields.pop("bots", [{"name": "a", "url": URLS[0]}, {"name": "b", "url": URLS[1]}])
    return TournamentRequest.model_validate({"bots": bots, **fields})


def body(tournament: TournamentRequest) -> Any:
    x, o = tournament.bots
    return game_request(tournament, x, o, urls=URLS, name="t: game 1")


def test_a_clock_both_bots_play_is_the_games_clock_as_other_tools_read_it() -> None:
    game = body(request(time_control={"clock_type": "incremental", "clock": 5, "increment": 0.1}))
    match = game.match_config
    assert (match.clock_type, match.clock, match.increment) == ("incremental", 5.0, 0.1)
    assert match.turn_limit == request().match.turn_limit  # the rest of the match unchanged
    record = GameRecord(
        game_id="g",
        match=game.match_config,
        player_x=RecordPlayer(name="a", time_control=game.player_x.time_control),
        player_o=RecordPlayer(name="b", time_control=game.player_o.time_control),
    )
    tags = notation.dumps(record).splitlines()
    assert "timecontrol[5+0.1]" in tags
    # Said once: the seats play the game's clock, no clock of their own (as in queue games).
    assert (game.player_x.time_control, game.player_o.time_control) == (None, None)
    assert not [tag for tag in tags if tag.startswith(("timecontrolcross", "timecontrolcircle"))]


def test_bots_on_clocks_of_their_own_keep_them_and_the_game_has_none() -> None:
    own = TournamentBot(name="a", url=URLS[0], time_control=TimeControl.parse("60"))
    clock = {"clock_type": "incremental", "clock": 5}
    game = body(request(bots=[own, {"name": "b", "url": URLS[1]}], time_control=clock))
    assert game.match_config.clock_type == "none"
    assert game.player_x.time_control == TimeControl.parse("60")
    assert game.player_o.time_control == TimeControl.parse("5+0")


def test_a_stall_limit_stays_each_seats_own() -> None:
    game = body(request(time_control={"stall_limit": 30}))
    assert game.match_config.clock_type == "none"
    assert game.player_x.time_control == TimeControl(stall_limit=30)
