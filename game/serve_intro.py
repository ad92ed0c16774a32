"""What ``htttx-server`` prints when it starts: the banner with the server's URLs and a
``curl`` to paste, and with ``--demo`` one game between two hosted bots played through the
server's own API (its board, result and notation).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from typing import Any

import aiohttp

from game import notation
from game.ascii import render
from game.connect_errors import safe_url
from game.ladder import LadderSettings
from game.rules import Position
from game.server import HOSTED_BOTS, GameServer
from game.server_state import hosted_bot_named
from models import GameRecord, GameResult, ResultReason
from wire.listening import reachable_url

__all__ = [
    "API_TOKEN_VARIABLE",
    "DEMO_TIMEOUT",
    "TOKEN_ROUTES",
    "banner",
    "curl_command",
    "describe",
    "local_base",
    "outcome_text",
    "play_demo",
    "run_demo",
    "safe_url",
]

API_TOKEN_VARIABLE = "HTTTX_API_TOKEN"
#: What the API token guards (``game.server_state._without_token``): every route that
#: starts, stops or registers something. Reading, spectating, the queue and challenges
#: stay open (a person's own token guards their name).
TOKEN_ROUTES = (
    "POST /game/new, /tournaments, /series and /bots, a tournament's or series' "
    "/stop and /resume, and /ladder/pause|resume"
)
#: The demo game gives up after this long (it normally takes well under a second).
DEMO_TIMEOUT = 120.0


def local_base(server: GameServer) -> str:
    """A URL that reaches the server from this machine, even when bound to 0.0.0.0."""
    return reachable_url(server.config.host, server.port)


def curl_command(base: str, *, with_token: bool) -> str:
    """A ready-to-paste ``curl`` that pairs two hosted bots."""
    body = {
        "player_x": {"type": "bot", "bot_url": f"{base}/bots/threat"},
        "player_o": {"type": "bot", "bot_url": f"{base}/bots/random"},
    }
    auth = f' -H "authorization: Bearer ${API_TOKEN_VARIABLE}"' if with_token else ""
    return (
        f"curl -s -X POST {base}/game/new -H 'content-type: application/json'{auth} "
        f"-d {shlex.quote(json.dumps(body, separators=(',', ':')))}"
    )


def banner(
    server: GameServer,
    *,
    db_url: str,
    example_bots: bool,
    with_token: bool,
    analysis_bot: str | None = None,
    ladder: LadderSettings | None = None,
    ladder_hosted_bots: bool = False,
) -> str:
    base = local_base(server)
    ws = "ws" + base[4:]
    lines = [
        f"htttx-arena game server on {base}",
        f"  web page    {base}/   (live games, replays, bots, tournaments)",
        f"  REST        POST {base}/game/new",
        "              GET /games   /games/<id>   /games/<id>/notation   /bots   /health",
        "              POST/GET /tournaments   GET /tournaments/<id>[/games]  POST .../stop|resume",
        "              POST/GET /series   GET /series/<id>   POST /series/<id>/stop|resume",
        "              POST/GET /bots   GET|PATCH|DELETE /bots/<name>[/ratings]   GET /leaderboard",
        f"  docs        {base}/docs   (OpenAPI 3.1: {base}/openapi.json)",
        f"  humans      {ws}/ws?token=<token_x or token_o>",
        f"  spectators  {ws}/spectate/<game_id>",
        f"  people      {ws}/queue   (matchmaking)   POST {base}/challenges   {base}/c/<id>",
        f"  store       {safe_url(db_url)}",
    ]
    if analysis_bot is not None:
        hosted = hosted_bot_named(analysis_bot)
        where = analysis_bot if hosted is None else f"{hosted.__name__}, in this process"
        lines.append(f"  analysis    {where}   (evaluates watched games for spectators)")
    if ladder is not None:
        joined = ", with the example bots" if ladder_hosted_bots else ""
        lines.append(
            f"  ladder      GET {base}/ladder   ({ladder.concurrency} at once, at most "
            f"{ladder.rate:g} a minute, {ladder.clock.text}{joined}; POST /bots to join)"
        )
    if example_bots:
        lines.append("  bots        " + "   ".join(f"{base}{path}" for path in HOSTED_BOTS))
        lines += ["", "Pair two hosted bots:", "  " + curl_command(base, with_token=with_token)]
    if with_token:
        lines.append(f"  ({API_TOKEN_VARIABLE} is set: {TOKEN_ROUTES} need it as a Bearer token)")
    lines += ["", "Ctrl-C stops the server (running games are recorded as aborted)."]
    return "\n".join(lines)


# ---------------------------------------------------------------------- demo


async def play_demo(base: str, api_token: str | None) -> GameRecord:
    """Play one game between two hosted bots through the server's own API: create it,
    follow it as a spectator until its ``end``, and read its record back."""
    headers = {"authorization": f"Bearer {api_token}"} if api_token else {}
    body = {
        "name": "htttx-arena demo",
        "player_x": {"type": "bot", "bot_url": f"{base}/bots/threat"},
        "player_o": {"type": "bot", "bot_url": f"{base}/bots/random"},
    }
    timeout = aiohttp.ClientTimeout(total=DEMO_TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        async with http.post(f"{base}/game/new", json=body, headers=headers) as response:
            answer: dict[str, Any] = await response.json()
            if response.status != 200:
                raise RuntimeError(f"POST /game/new answered {response.status}: {answer}")
        game_id = str(answer["game_id"])
        # The spectator socket closes after the end (or at once, if the game is already
        # over: then the record is complete anyway).
        async with http.ws_connect(f"ws{base[4:]}/spectate/{game_id}") as socket_:
            async for _message in socket_:
                pass
        for _ in range(100):  # the result is written just before the socket closes
            async with http.get(f"{base}/games/{game_id}") as response:
                record = GameRecord.model_validate_json(await response.read())
            if record.result is not None:
                return record
            await asyncio.sleep(0.05)
        return record


def outcome_text(result: GameResult | None) -> str:
    """A game's result in a few words, for the demo's summary.

    A line is said as such ("wins by win" said nothing); a forfeit names its cause.

    >>> from models import EndCause, Player
    >>> outcome_text(GameResult(winner=Player.X, reason=ResultReason.WIN))
    'x wins with a line'
    >>> outcome_text(GameResult(winner=Player.O, reason=ResultReason.FORFEIT,
    ...                         cause=EndCause.TIMEOUT))
    'o wins by forfeit (timeout)'
    >>> outcome_text(GameResult(winner=Player.X, reason=ResultReason.WIN,
    ...                         cause=EndCause.ADJUDICATION))
    'x wins by adjudication'
    >>> outcome_text(GameResult(winner=None, reason=ResultReason.DRAW,
    ...                         cause=EndCause.TURN_LIMIT))
    'draw (turn_limit)'
    >>> outcome_text(None)
    'unfinished'
    """
    if result is None:
        return "unfinished"
    cause = result.cause.value if result.cause is not None else None
    if result.winner is None:
        return "draw" if cause is None else f"draw ({cause})"
    won = f"{result.winner.value} wins"
    if result.reason is ResultReason.WIN:
        return f"{won} with a line" if cause is None else f"{won} by {cause}"
    return f"{won} by {result.reason.value}" + ("" if cause is None else f" ({cause})")


def describe(record: GameRecord) -> str:
    """The board, the result and the notation of a finished game."""
    position = Position(record.match.view_distance, record.match.win_distance)
    for move in record.moves:
        for piece in move.pieces:
            if position.outcome is None:
                position.place(piece.q, piece.r)
    line = position.outcome.line if position.outcome is not None else ()
    players = f"{record.player_x.name or 'x'} (x) vs {record.player_o.name or 'o'} (o)"
    return "\n".join(
        [
            f"Demo game {record.game_id}: {players}",
            "",
            render(position.stones, highlight=line),
            "",
            f"{outcome_text(record.result)} after {len(record.moves)} moves",
            "",
            notation.dumps(record).rstrip(),
        ]
    )


async def run_demo(server: GameServer, api_token: str | None) -> None:
    base = local_base(server)
    try:
        record = await play_demo(base, api_token)
    except (aiohttp.ClientError, TimeoutError, RuntimeError, ValueError) as error:
        print(f"The demo game failed: {error}", file=sys.stderr, flush=True)
        return
    print("\n" + describe(record), flush=True)
    print(
        f"\nIts record: {base}/games/{record.game_id}  and  {base}/games/{record.game_id}/notation",
        flush=True,
    )
