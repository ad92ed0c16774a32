"""What ``htttx-server`` logs per game at ``--log-level info``: a line or two, however
the game was played, so that a server running for months has a log of a size to read."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.http_json import finished_record, post_json
from tests.test_server import TIMEOUT, server_process


def test_a_game_of_two_hosted_bots_is_two_lines_of_the_servers_own_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with server_process(tmp_path, "--log-level", "info", log=log) as (process, base):
        seats = {
            side: {"type": "bot", "bot_url": f"{base}/bots/{name}"}
            for side, name in (("player_x", "threat"), ("player_o", "random"))
        }
        status, created = post_json(f"{base}/game/new", seats)
        assert status == 200, created
        game_id = created["game_id"]
        finished_record(base, game_id)
        process.send_signal(signal.SIGINT)
        assert process.wait(TIMEOUT) == 0
    # The server's own lines ("<time> INFO <logger>: ..."), not uvicorn's request lines.
    own = [line for line in log.read_text().splitlines() if not line.startswith("INFO:")]
    about_the_game = [line for line in own if game_id in line or "game over" in line]
    assert len(about_the_game) == 2, "\n".join(about_the_game)
    assert "created" in about_the_game[0] and "over" in about_the_game[1]
