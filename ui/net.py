"""All of the client's network I/O, off the GUI thread.

One daemon thread runs an asyncio event loop with one ``aiohttp.ClientSession``; the GUI
thread hands it work and hears back through Qt signals, so no click ever waits for the
network:

* ``Network.request`` makes one HTTP request and returns a ``Call`` whose ``finished``
  carries the answer (parsed JSON, or text) and ``failed`` a sentence for the person;
* ``Network.open_socket`` opens a WebSocket and returns a ``SocketLink`` whose signals
  carry its frames and its end; ``send`` may be called from any thread;
* ``ArenaClient`` is the REST API of one game server, with typed answers parsed in the
  worker thread.

``Call`` and ``SocketLink`` objects are created by the GUI thread and live there; the
worker thread only emits their signals, which Qt then queues to the GUI thread (a
signal emitted in one thread reaches a receiver living in another through its event
loop). Slots therefore always run in the GUI thread.

``Network.close()`` ends everything: sockets are closed with 1001 "going away", calls
still running are cancelled (their signals never fire), the aiohttp session and the
loop are closed and the thread is joined. Use it when the window closes.

Error messages are sentences a person can act on, e.g. "Cannot reach the server at
http://127.0.0.1:9: connection refused", "The server refused the game (422):
player_x.bot_url: ...", "Timed out after 10 s waiting for the list of games from
http://127.0.0.1:8001".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
import msgspec
from pydantic import BaseModel, ValidationError
from PyQt5.QtCore import QObject, QTimer, pyqtSignal, pyqtSlot

# GamePage and GameSummary come from the store so the client reads exactly what the
# server writes; importing it also imports SQLAlchemy, which costs little at start-up.
from game.store import GamePage, GameSummary
from models import (
    CLOSE_GOING_AWAY,
    CLOSE_NORMAL,
    GameRecord,
    HostedBot,
    HostedBots,
    NewGameRequest,
    NewGameResponse,
    ProtocolError,
    clip_close_reason,
    dump_packet,
    parse_body,
)

__all__ = [
    "CLOSE_ABNORMAL",
    "ArenaClient",
    "Call",
    "GamePage",
    "GameSummary",
    "HostedBot",
    "Network",
    "ServerAddressError",
    "SocketLink",
    "normalize_server_url",
]

log = logging.getLogger("ui.net")

#: The close code reported when a socket ended without a close frame (RFC 6455).
CLOSE_ABNORMAL: Final = 1006
#: How long closing a socket waits for the server's close frame.
_CLOSE_TIMEOUT: Final = 3.0
#: How long ``Network.close`` waits for the worker thread to finish.
_JOIN_TIMEOUT: Final = 10.0
#: Largest frame a socket accepts: a spectator's ``setup`` carries the whole game.
_MAX_FRAME_BYTES: Final = 64 * 1024 * 1024

T = TypeVar("T")


# --------------------------------------------------------------------- addresses


class ServerAddressError(ValueError):
    """A server address the client cannot use; the message says what is expected."""


def normalize_server_url(text: str) -> str:
    """The base URL of a game server from what a person typed: ``http://`` is assumed
    when no scheme is given, ``ws://``/``wss://`` mean ``http://``/``https://``, and a
    trailing ``/`` is dropped. Raises ``ServerAddressError`` for anything else.

    >>> normalize_server_url(" localhost:8001/ ")
    'http://localhost:8001'
    >>> normalize_server_url("ftp://example.org")
    Traceback (most recent call last):
    ...
    ui.net.ServerAddressError: The server address must start with http:// or https://, \
like http://127.0.0.1:8001 (got 'ftp://example.org')
    """
    given = text.strip()
    example = "like http://127.0.0.1:8001"
    if not given:
        raise ServerAddressError(f"Enter the server's address, {example}")
    url = given if "://" in given else f"http://{given}"
    scheme, _, rest = url.partition("://")
    scheme = {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme.lower())
    if scheme not in ("http", "https"):
        raise ServerAddressError(
            f"The server address must start with http:// or https://, {example} (got {given!r})"
        )
    url = f"{scheme}://{rest}".rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ServerAddressError(
            f"The server address {given!r} has an invalid port, {example}"
        ) from None
    if not parts.hostname:
        raise ServerAddressError(f"The server address {given!r} has no host name, {example}")
    if parts.query or parts.fragment:
        raise ServerAddressError(
            f"The server address {given!r} must not have a query or fragment, {example}"
        )
    return url


def _origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url


# ------------------------------------------------------------------- the signals


class Call(QObject):
    """One HTTP request in flight. ``finished`` carries the answer (parsed JSON, text
    for ``text/plain``, or the typed value an ``ArenaClient`` method promises);
    ``failed`` a sentence saying what went wrong. Exactly one of them fires, once,
    unless the call is cancelled."""

    finished = pyqtSignal(object)
    failed = pyqtSignal(str)
    # Internal, after finished/failed: the Network lets go of the call.
    _done = pyqtSignal(object)

    def __init__(self, description: str) -> None:
        super().__init__()
        #: What the call fetches, for messages: "the list of games".
        self.description = description
        self._future: concurrent.futures.Future[None] | None = None
        self._cancelled = False

    def cancel(self) -> None:
        """Stop the request; neither signal fires afterwards. Thread-safe."""
        self._cancelled = True
        future = self._future
        if future is not None:
            future.cancel()


class SocketLink(QObject):
    """One WebSocket. ``opened`` once connected; ``message`` for each text frame;
    ``failed`` with a sentence when the connection cannot be made or breaks; ``closed``
    with the close code and reason exactly once, at the very end, whatever happened
    (1006 when the connection ended without a close frame)."""

    opened = pyqtSignal()
    message = pyqtSignal(str)
    closed = pyqtSignal(int, str)
    failed = pyqtSignal(str)
    _done = pyqtSignal(object)

    def __init__(self, network: Network, url: str) -> None:
        super().__init__()
        self.url = url
        self._network = network
        self._loop = network._loop_for_links()
        # Frames to send, then None to stop the writer. Bound to the worker's loop on
        # first use; only ever touched there.
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._task: asyncio.Task[None] | None = None
        self._close_request: tuple[int, str] | None = None
        self._ending = False
        self._finished = False

    def send(self, text: str) -> None:
        """Send one text frame (in order with earlier ones). Thread-safe; frames sent
        before the socket opens wait for it, frames after it closed are dropped."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the link is over
            self._loop.call_soon_threadsafe(self._outbox.put_nowait, text)

    def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        """Close the socket with ``code`` and ``reason`` (sent to the server; trimmed to
        the 123 bytes a close frame holds). Thread-safe; ``closed`` follows."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._request_close, code, reason)

    @property
    def is_finished(self) -> bool:
        """True once the link has ended (``closed`` has been emitted)."""
        return self._finished

    # -- in the worker thread

    def _request_close(self, code: int, reason: str) -> None:
        # Cancelling the link's task interrupts whatever it waits for (the connection,
        # a frame); its handler then closes the socket with this code and reason.
        if self._close_request is not None or self._ending:
            return
        self._close_request = (code, reason)
        if self._task is not None:
            self._task.cancel()

    async def _run(self, session: aiohttp.ClientSession) -> None:
        code, reason = CLOSE_ABNORMAL, "the connection was lost"
        writer: asyncio.Task[None] | None = None
        try:
            if self._close_request is not None:  # closed before it could start
                code, reason = self._close_request
                return
            try:
                ws = await session.ws_connect(
                    self.url,
                    max_msg_size=_MAX_FRAME_BYTES,
                    timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=_CLOSE_TIMEOUT),
                    autoping=True,
                )
            except asyncio.CancelledError:
                code, reason = self._close_request or (CLOSE_GOING_AWAY, "the client is closing")
                raise
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
                reason = _connection_error(self.url, exc, "connect to")
                self.failed.emit(reason)
                return
            self._ws = ws
            self.opened.emit()
            writer = asyncio.create_task(self._write(ws), name=f"ui.net: write {self.url}")
            code, reason = await self._read(ws)
        except asyncio.CancelledError:
            if self._ws is not None and not self._ws.closed:
                going = self._close_request or (CLOSE_GOING_AWAY, "the client is closing")
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        self._ws.close(code=going[0], message=clip_close_reason(going[1]).encode()),
                        _CLOSE_TIMEOUT,
                    )
                code, reason = going
            elif self._close_request is not None:
                code, reason = self._close_request
        finally:
            self._ending = True  # a close requested from now on changes nothing
            try:
                await self._clean_up(writer)
            except asyncio.CancelledError:
                pass  # cancelled again (the network is closing): the session drops it
            finally:
                self._finished = True
                self.closed.emit(code, reason)
                self._done.emit(self)

    async def _clean_up(self, writer: asyncio.Task[None] | None) -> None:
        if writer is not None:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
        if self._ws is not None and not self._ws.closed:
            with contextlib.suppress(Exception):
                await self._ws.close()

    async def _read(self, ws: aiohttp.ClientWebSocketResponse) -> tuple[int, str]:
        """Emit each frame until the socket closes; the close code and reason."""
        while True:
            message = await ws.receive()
            kind = message.type
            if kind is aiohttp.WSMsgType.TEXT:
                self.message.emit(message.data)
            elif kind is aiohttp.WSMsgType.BINARY:
                self.message.emit(bytes(message.data).decode("utf-8", errors="replace"))
            elif kind is aiohttp.WSMsgType.CLOSE:
                # The server closed: its code and reason (aiohttp has answered it).
                return int(message.data), str(message.extra or "")
            elif kind is aiohttp.WSMsgType.ERROR:
                reason = _connection_error(self.url, message.data, "read from")
                self.failed.emit(reason)
                return ws.close_code or CLOSE_ABNORMAL, reason
            else:  # CLOSED: the connection dropped
                return ws.close_code or CLOSE_ABNORMAL, "the connection was lost"

    async def _write(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        while True:
            text = await self._outbox.get()
            if text is None or ws.closed:
                return
            try:
                await ws.send_str(text)
            except (aiohttp.ClientError, ConnectionError, RuntimeError) as exc:
                log.info("could not send to %s: %s", self.url, exc)
                return


# --------------------------------------------------------------------- network


class Network(QObject):
    """The worker thread, its event loop and its HTTP session.

    Created in the GUI thread; the thread starts on ``start()`` or on the first
    request. Every method is meant for the GUI thread (``SocketLink.send``/``close``
    and ``Call.cancel`` may be called from anywhere)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        # The Calls and SocketLinks in flight: Python must not delete them while the
        # worker may still emit their signals.
        self._calls: set[Call] = set()
        self._links: set[SocketLink] = set()
        self._tasks: set[asyncio.Future[Any]] = set()

    # ------------------------------------------------------------------ life

    def start(self) -> None:
        """Start the worker thread (idempotent). Never waits for it."""
        if self._closed:
            raise RuntimeError("the network has been closed")
        if self._thread is not None:
            return
        # The loop is made here, so work can be queued on it at once; the thread only
        # runs it.
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run_loop, args=(self._loop,), name="htttx-ui network", daemon=True
        )
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the worker thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Close every socket (1001), cancel every call, close the HTTP session, stop the
        loop and join the thread. Idempotent. Waits (at most 10 s) for the worker: call
        it when the window closes."""
        if self._closed:
            return
        self._closed = True
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        thread.join(_JOIN_TIMEOUT)
        if thread.is_alive():
            log.warning("the network thread did not stop within %.0f s", _JOIN_TIMEOUT)
        self._calls.clear()
        self._links.clear()

    # ----------------------------------------------------------------- work

    # Both start the work when control returns to the Qt event loop: connect the
    # returned object's signals right away, in the same function.

    def request(
        self,
        method: str,
        url: str,
        body: object | None = None,
        *,
        timeout: float = 10.0,
        description: str | None = None,
        parse: Callable[[object], object] | None = None,
        refused: str | None = None,
    ) -> Call:
        """Make one HTTP request in the worker thread.

        ``body`` is sent as JSON (a pydantic model through ``dump_packet``). The answer
        is JSON-decoded (text for ``text/plain``), then given to ``parse`` in the worker
        thread if given; a ``ProtocolError``/``ValueError`` from it fails the call.
        ``description`` names what is fetched in messages ("the list of games");
        ``refused`` starts the message of an HTTP error ("The server refused the
        game"). Statuses from 400 up fail the call, quoting the server's ``detail``.
        """
        what = description or f"{method.upper()} {urlsplit(url).path or '/'}"
        call = Call(what)
        self._calls.add(call)
        call._done.connect(self._forget)

        def launch() -> None:
            if self._closed or call._cancelled:
                call._done.emit(call)
                return
            coroutine = self._request(call, method.upper(), url, body, timeout, parse, refused)
            call._future = self._submit(coroutine)

        self._start_soon(launch)
        return call

    def open_socket(self, url: str) -> SocketLink:
        """Open a WebSocket to ``url`` (``ws://`` or ``wss://``) in the worker thread."""
        link = SocketLink(self, url)
        self._links.add(link)
        link._done.connect(self._forget)

        def launch() -> None:
            if self._closed:
                link._finished = True
                link.closed.emit(CLOSE_GOING_AWAY, "the client is closing")
                link._done.emit(link)
                return
            self._submit(self._open(link))

        self._start_soon(launch)
        return link

    # -------------------------------------------------------------- internals

    @pyqtSlot(object)
    def _forget(self, done: object) -> None:
        """A call or link has emitted its last signal (runs in the GUI thread, after
        them): it may now be deleted whenever its owner lets go."""
        if isinstance(done, Call):
            self._calls.discard(done)
        elif isinstance(done, SocketLink):
            self._links.discard(done)

    def _loop_for_links(self) -> asyncio.AbstractEventLoop:
        self.start()
        assert self._loop is not None
        return self._loop

    def _start_soon(self, launch: Callable[[], None]) -> None:
        # Work starts once the GUI thread is back in its event loop, so the caller has
        # connected its slots before the first signal can be emitted: the worker could
        # otherwise answer (on loopback, in microseconds) before anyone listens.
        self.start()
        QTimer.singleShot(0, launch)

    def _submit(self, coroutine: Coroutine[Any, Any, None]) -> concurrent.futures.Future[None]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop_for_links())

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()

    async def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None),
                headers={"User-Agent": "htttx-ui"},
            )
        return self._session

    def _track(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _request(
        self,
        call: Call,
        method: str,
        url: str,
        body: object | None,
        timeout: float,
        parse: Callable[[object], object] | None,
        refused: str | None,
    ) -> None:
        self._track()
        try:
            if call._cancelled:
                return
            result = await self._fetch(call, method, url, body, timeout, parse, refused)
        except _CallFailed as failure:
            if not call._cancelled:
                call.failed.emit(str(failure))
        except Exception as exc:  # a bug here must fail the call, not the thread
            log.exception("request %s %s failed", method, url)
            if not call._cancelled:
                call.failed.emit(f"Could not get {call.description}: {exc!r}")
        else:
            if not call._cancelled:
                call.finished.emit(result)
        finally:
            call._done.emit(call)

    async def _fetch(
        self,
        call: Call,
        method: str,
        url: str,
        body: object | None,
        timeout: float,
        parse: Callable[[object], object] | None,
        refused: str | None,
    ) -> object:
        origin = _origin(url)
        data: bytes | None = None
        headers: dict[str, str] = {"Accept": "application/json, text/plain"}
        if body is not None:
            data = dump_packet(body) if isinstance(body, BaseModel) else msgspec.json.encode(body)
            headers["Content-Type"] = "application/json"
        session = await self._http()
        try:
            async with (
                asyncio.timeout(timeout),
                session.request(method, url, data=data, headers=headers) as response,
            ):
                status = response.status
                content_type = response.content_type
                raw = await response.read()
        except TimeoutError:
            raise _CallFailed(
                f"Timed out after {timeout:g} s waiting for {call.description} from {origin}"
            ) from None
        except (aiohttp.InvalidURL, ValueError) as exc:
            raise _CallFailed(f"{url!r} is not a valid server address ({exc})") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise _CallFailed(_connection_error(origin, exc, "reach")) from None
        if status >= 400:
            detail = _detail(raw, content_type)
            prefix = refused or f"The server refused {call.description}"
            if status >= 500:
                prefix = f"The server failed to answer for {call.description}"
            raise _CallFailed(f"{prefix} ({status}): {detail}")
        try:
            value: object
            if content_type == "application/json" or (not content_type and raw[:1] in b"[{"):
                value = msgspec.json.decode(raw)
            else:
                value = raw.decode("utf-8", errors="replace")
            return parse(value) if parse is not None else value
        except (msgspec.DecodeError, ProtocolError, ValidationError, ValueError) as exc:
            raise _CallFailed(
                f"The server's answer for {call.description} is not what this client "
                f"understands: {exc}"
            ) from None

    async def _open(self, link: SocketLink) -> None:
        self._track()
        link._task = asyncio.current_task()
        await link._run(await self._http())

    async def _shutdown(self) -> None:
        """Close the sockets, cancel the rest, close the session and stop the loop."""
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        links = [link._task for link in list(self._links) if link._task is not None]
        for link in list(self._links):
            link._request_close(CLOSE_GOING_AWAY, "the client is closing")
        calls = [task for task in self._tasks if task is not me and task not in links]
        for task in calls:
            task.cancel()
        pending = [task for task in self._tasks if task is not me and not task.done()]
        if pending:
            # Sockets close with a handshake (bounded by _CLOSE_TIMEOUT each).
            await asyncio.wait(pending, timeout=2 * _CLOSE_TIMEOUT)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None
        loop.stop()


class _CallFailed(Exception):
    """Why a call failed, as the sentence ``Call.failed`` carries."""


def _detail(raw: bytes, content_type: str) -> str:
    """The server's reason for an HTTP error: its ``detail`` when it sent one."""
    if content_type == "application/json":
        try:
            value = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            value = None
        if isinstance(value, dict) and "detail" in value:
            detail = value["detail"]
            return detail if isinstance(detail, str) else msgspec.json.encode(detail).decode()
    text = raw.decode("utf-8", errors="replace").strip()
    return text[:300] if text else "no reason given"


_ERRNO_WORDS: Final = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "the connection was reset",
    errno.ETIMEDOUT: "the connection timed out",
    errno.EHOSTUNREACH: "the host is unreachable",
    errno.ENETUNREACH: "the network is unreachable",
    errno.EADDRNOTAVAIL: "the address is not available",
}


def _connection_error(url: str, exc: BaseException, verb: str) -> str:
    """``"Cannot reach the server at <origin>: connection refused"`` and the like."""
    where = f"the server at {_origin(url)}"
    why: str
    if isinstance(exc, aiohttp.WSServerHandshakeError):
        return f"The server at {_origin(url)} refused the connection ({exc.status}): {exc.message}"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        why = "its host name cannot be resolved"
    elif isinstance(exc, aiohttp.ClientConnectorError):
        why = _os_words(exc.os_error)
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        why = "the server closed the connection"
    elif isinstance(exc, OSError):
        why = _os_words(exc)
    elif isinstance(exc, TimeoutError):
        why = "it did not answer in time"
    else:
        why = str(exc) or type(exc).__name__
    return f"Cannot {verb} {where}: {why}"


def _os_words(error: OSError) -> str:
    if error.errno in _ERRNO_WORDS:
        return _ERRNO_WORDS[error.errno]
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    text = error.strerror or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


# ------------------------------------------------------------------- REST API


class ArenaClient(QObject):
    """The REST API of one game server. Each method returns a ``Call`` whose
    ``finished`` carries the typed answer named in its docstring.

    Raises ``ServerAddressError`` for a ``base_url`` that is not an http(s) address.
    """

    def __init__(self, network: Network, base_url: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.network = network
        self.base_url = normalize_server_url(base_url)

    def health(self, *, timeout: float = 5.0) -> Call:
        """``GET /health`` -> ``dict`` (``{"status": "ok", "live_games": n}``)."""
        return self._get("/health", "the server's health", _as_dict, timeout=timeout)

    def bots(self) -> Call:
        """``GET /bots`` -> ``list[HostedBot]``, the bots the server hosts."""
        return self._get("/bots", "the list of hosted bots", _hosted_bots)

    def new_game(self, request: NewGameRequest, *, timeout: float = 30.0) -> Call:
        """``POST /game/new`` -> ``NewGameResponse``. The server fetches the bots'
        capabilities before answering, hence the longer timeout."""
        return self.network.request(
            "POST",
            self.base_url + "/game/new",
            request,
            timeout=timeout,
            description="a new game",
            parse=_model(NewGameResponse),
            refused="The server refused the game",
        )

    def games(self, status: str | None = None, cursor: str | None = None, limit: int = 50) -> Call:
        """``GET /games`` -> ``GamePage`` (newest first; ``next_cursor`` for more)."""
        query: dict[str, str | int] = {"limit": limit}
        if status is not None:
            query["status"] = status
        if cursor is not None:
            query["cursor"] = cursor
        return self._get(f"/games?{urlencode(query)}", "the list of games", _model(GamePage))

    def game(self, game_id: str) -> Call:
        """``GET /games/{id}`` -> ``GameRecord``."""
        return self._get(f"/games/{quote(game_id, safe='')}", f"game {game_id}", _model(GameRecord))

    def notation(self, game_id: str) -> Call:
        """``GET /games/{id}/notation`` -> ``str``, the game in HTTTX notation."""
        return self._get(
            f"/games/{quote(game_id, safe='')}/notation",
            f"the notation of game {game_id}",
            _as_text,
        )

    def seat_url(self, token: str) -> str:
        """The WebSocket address of a human seat."""
        return f"{self._ws_base()}/ws?{urlencode({'token': token})}"

    def spectate_url(self, game_id: str) -> str:
        """The WebSocket address to watch a game."""
        return f"{self._ws_base()}/spectate/{quote(game_id, safe='')}"

    def _ws_base(self) -> str:
        scheme, rest = self.base_url.split("://", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}://{rest}"

    def _get(
        self,
        path: str,
        description: str,
        parse: Callable[[object], object],
        *,
        timeout: float = 10.0,
    ) -> Call:
        return self.network.request(
            "GET", self.base_url + path, timeout=timeout, description=description, parse=parse
        )


def _model(model: type[BaseModel]) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if not isinstance(value, dict):
            raise ProtocolError(f"expected a JSON object, got {type(value).__name__}")
        return parse_body(model, msgspec.json.encode(value))

    return parse


def _hosted_bots(value: object) -> object:
    page = _model(HostedBots)(value)
    assert isinstance(page, HostedBots)
    return list(page.bots)


def _as_dict(value: object) -> object:
    if not isinstance(value, dict):
        raise ProtocolError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _as_text(value: object) -> object:
    if not isinstance(value, str):
        raise ProtocolError("expected text")
    return value
