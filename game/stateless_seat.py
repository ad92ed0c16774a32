"""The adapter of a stateless-only bot's seat: one ``POST .../turn`` a move, and
nothing else (no rules, no clocks, no decisions; see ``game.seats`` for the socket's).

``StatelessSeat`` plays one move: the ``StatelessMoveRequest``, bounded in time and size,
sent again after a failure that may pass (no connection, one closed before any answer,
a 502, 503 or 504) as the pure policy of ``game.stateless_retry`` says, and reports each
try it makes again (``on_failed_try``: the session names them if the seat flags before
an answer). Its failures are the exception classes below, which the session maps to
causes (``TimeoutError`` -> ``timeout``, ``ConnectionError`` -> ``disconnect``,
anything else -> ``protocol_error``).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable

import aiohttp

from game.stateless_retry import (
    CONNECTION_FAILED,
    FINAL,
    StatelessRetry,
    TurnFailure,
    failure_of_status,
)
from models import (
    ProtocolError,
    StatelessMoveRequest,
    StatelessMoveResponse,
    dump_packet,
    parse_body,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_RETRY",
    "DEFAULT_TURN_MARGIN",
    "StatelessAnswerTooLarge",
    "StatelessBadAnswer",
    "StatelessConnectionFailed",
    "StatelessHttpError",
    "StatelessSeat",
    "StatelessTimeout",
]

log = logging.getLogger("game.stateless_seat")

DEFAULT_TURN_MARGIN = 1.0
DEFAULT_MAX_BODY_BYTES = 1 << 20
#: A stateless turn with no clock and no stall limit still gets a deadline.
MAX_TURN_SECONDS = 3600.0
#: A stateless turn's POST has no aiohttp timeout of its own: the turn's deadline bounds
#: it all. Else the session's (aiohttp's default: 300 s in all) would cut a turn that
#: the game's clock or stall limit still allows, and the bot would forfeit on time.
_TURN_HTTP_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=None)
#: When a failed stateless turn is tried again (``game.stateless_retry``).
DEFAULT_RETRY = StatelessRetry()


class StatelessTimeout(TimeoutError):
    """No complete answer to ``POST .../turn`` within the turn's time (``timeout``)."""


class StatelessConnectionFailed(ConnectionError):
    """``POST .../turn`` could not connect or the connection broke (``disconnect``).
    ``failure`` says whether another try may pass (``game.stateless_retry``)."""

    def __init__(self, message: str, *, failure: TurnFailure = FINAL) -> None:
        super().__init__(message)
        self.failure = failure


class StatelessHttpError(Exception):
    """The bot answered ``POST .../turn`` with a status other than 200 (``protocol_error``).
    ``failure`` says whether another try may pass (a 502, 503 or 504)."""

    def __init__(self, message: str, *, failure: TurnFailure = FINAL) -> None:
        super().__init__(message)
        self.failure = failure


class StatelessAnswerTooLarge(Exception):
    """The answer to ``POST .../turn`` is over the size cap (``protocol_error``)."""


class StatelessBadAnswer(Exception):
    """The answer to ``POST .../turn`` is not a valid ``StatelessMoveResponse``
    (``protocol_error``)."""


class StatelessSeat:
    """Plays a stateless-only bot: one ``POST .../turn`` per move, sent again after a
    failure that may pass (no connection, a 502, 503 or 504) while the turn's time
    allows it (``retry``: the policy, ``game.stateless_retry``). ``on_failed_try`` is
    awaited with each failure that is tried again, before the wait for the next try
    (a failure that is not tried again is what ``turn`` raises)."""

    def __init__(
        self,
        turn_url: str,
        http: aiohttp.ClientSession,
        *,
        margin: float = DEFAULT_TURN_MARGIN,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        retry: StatelessRetry = DEFAULT_RETRY,
        on_failed_try: Callable[[Exception], Awaitable[None]] | None = None,
    ) -> None:
        self.turn_url = turn_url
        self._http = http
        self._margin = margin
        self._max_body_bytes = max_body_bytes
        self._retry = retry
        self._on_failed_try = on_failed_try

    async def turn(
        self, request: StatelessMoveRequest, time_limit: float | None
    ) -> StatelessMoveResponse:
        """The bot's answer to ``request``. ``time_limit`` is the seconds until the side
        flags; the HTTP requests may take ``margin`` more in all, so the session (not
        the HTTP timeout) decides a flag whenever it can. A try that fails for a reason
        that may pass is made again until the policy gives up (before the flag); the
        error then is the last try's, its message ending with how many were made
        (``... (3 tries)``).

        Raises StatelessTimeout, StatelessConnectionFailed, StatelessHttpError,
        StatelessAnswerTooLarge or StatelessBadAnswer.
        """
        flag_in: float | None
        if time_limit is None or not math.isfinite(time_limit):
            flag_in, limit = None, MAX_TURN_SECONDS
        else:
            flag_in = max(time_limit, 0.0)
            limit = flag_in + self._margin
        failed: list[Exception] = []
        try:
            async with asyncio.timeout(limit):
                return await self._answer(request, flag_in, failed)
        except StatelessConnectionFailed:
            raise  # ours, already said in full (it is an OSError too: not wrapped again)
        except TimeoutError:
            tried = f" (after {len(failed)} failed tries)" if failed else ""
            raise StatelessTimeout(
                f"{self.turn_url}: no answer within {limit:g} s{tried}"
            ) from None
        except (aiohttp.ClientConnectionError, OSError) as exc:  # while reading the answer
            raise StatelessConnectionFailed(f"{self.turn_url}: {exc!r}") from None
        except aiohttp.ClientError as exc:  # payload errors and the like: a bad answer
            raise StatelessBadAnswer(f"{self.turn_url}: {exc!r}") from None

    async def _answer(
        self, request: StatelessMoveRequest, flag_in: float | None, failed: list[Exception]
    ) -> StatelessMoveResponse:
        """Try until a try is answered or the policy gives up; each failure goes into
        ``failed``. The adapter's loop only: what to do after a failure is the policy's."""
        loop = asyncio.get_running_loop()
        sent = loop.time()
        first_failed_at = sent
        body = dump_packet(request)
        while True:
            try:
                return await self._post(body)
            except (StatelessConnectionFailed, StatelessHttpError) as exc:
                now = loop.time()
                if not failed:
                    first_failed_at = now
                failed.append(exc)
                wait = self._retry.delay(
                    exc.failure,
                    len(failed),
                    failing_for=now - first_failed_at,
                    time_left=None if flag_in is None else sent + flag_in - now,
                )
                if wait is None:
                    if len(failed) == 1:
                        raise
                    raise type(exc)(f"{exc} ({len(failed)} tries)", failure=exc.failure) from None
                log.debug("%s; trying again in %g s", exc, wait)
                if self._on_failed_try is not None:
                    await self._on_failed_try(exc)
            await asyncio.sleep(wait)
            body = _resent_body(request, loop.time() - sent)

    async def _post(self, body: bytes) -> StatelessMoveResponse:
        async with await self._send(body) as response:
            if 300 <= response.status < 400 and "Location" in response.headers:
                # Never followed (game.address_policy): the bot's URLs are the ones its
                # capabilities give. Where it points tells the bot's author what to fix.
                location = response.headers["Location"][:200]
                raise StatelessHttpError(
                    f"{self.turn_url}: HTTP {response.status}, a redirect to {location!r}, "
                    "which is not followed (expected 200 with a move at the api_root "
                    "that the bot's capabilities give)"
                )
            if response.status != 200:
                text = await _read_capped(response, 200)
                raise StatelessHttpError(
                    f"{self.turn_url}: HTTP {response.status} (expected 200 with a "
                    f"move): {text.decode(errors='replace')!r}",
                    failure=failure_of_status(response.status, response.headers.get("Retry-After")),
                )
            if (response.content_length or 0) > self._max_body_bytes:
                raise StatelessAnswerTooLarge(
                    f"{self.turn_url}: answer of {response.content_length} bytes; at most "
                    f"{self._max_body_bytes}"
                )
            data = await _read_capped(response, self._max_body_bytes + 1)
            if len(data) > self._max_body_bytes:
                raise StatelessAnswerTooLarge(
                    f"{self.turn_url}: answer over {self._max_body_bytes} bytes"
                )
        try:
            answer = data.decode("utf-8")  # JSON is UTF-8: anything else is a bad answer
        except UnicodeDecodeError as exc:
            raise StatelessBadAnswer(
                f"{self.turn_url}: invalid answer: not valid UTF-8 (byte "
                f"0x{data[exc.start]:02x} at offset {exc.start})"
            ) from None
        try:
            return parse_body(StatelessMoveResponse, answer)
        except ProtocolError as exc:
            raise StatelessBadAnswer(f"{self.turn_url}: invalid answer: {exc}") from None

    async def _send(self, body: bytes) -> aiohttp.ClientResponse:
        """The response to ``POST .../turn``, its head read.

        ``StatelessConnectionFailed`` when no answer came: the connection could not be
        opened (the bot's server restarting) or broke before any answer (a kept-alive
        connection its server closed as the request went out: its idle timeout fired,
        uvicorn's is 5 s, and the opponent may think that long). Both may pass, and
        ``/turn`` is stateless, so asking again is safe (RFC 9112, 9.3.1). A TLS
        failure is final: trying again meets the same certificate.
        """
        try:
            return await self._http.post(
                self.turn_url,
                data=body,
                headers={"Content-Type": "application/json"},
                allow_redirects=False,
                timeout=_TURN_HTTP_TIMEOUT,
            )
        except (aiohttp.ClientSSLError, aiohttp.ServerFingerprintMismatch) as exc:
            raise StatelessConnectionFailed(f"{self.turn_url}: {exc!r}") from None
        except (aiohttp.ClientConnectionError, OSError) as exc:
            raise StatelessConnectionFailed(
                f"{self.turn_url}: {exc!r}", failure=CONNECTION_FAILED
            ) from None


def _resent_body(request: StatelessMoveRequest, elapsed: float) -> bytes:
    """The body of a try made ``elapsed`` seconds after the first: its ``time_limit``,
    if it has one, is the time left now, not the time the first try was given.

    >>> from models import Board, Player, StatelessBoard
    >>> board = StatelessBoard(cells=Board.standard().cells, to_move=Player.O)
    >>> _resent_body(StatelessMoveRequest(board=board, time_limit=5.0), 1.5)[:18]
    b'{"time_limit":3.5,'
    """
    if request.time_limit is None:
        return dump_packet(request)
    left = max(request.time_limit - elapsed, 0.0)
    return dump_packet(request.model_copy(update={"time_limit": left}))


async def _read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """At most ``limit`` bytes of the body (the rest is never read)."""
    data = bytearray()
    async for chunk in response.content.iter_chunked(64 * 1024):
        data += chunk
        if len(data) >= limit:
            break
    return bytes(data[:limit])
