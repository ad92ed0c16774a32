"""The client's network worker: one thread that does all network I/O off the GUI thread.

One daemon thread runs an asyncio event loop with one ``aiohttp.ClientSession``; the GUI
thread hands it work and hears back through Qt signals, so no click ever waits for the
network:

* ``Network.request`` makes one HTTP request and returns a ``Call`` whose ``finished``
  carries the answer (parsed JSON, or text) and ``failed`` a sentence for the person;
* ``Network.open_socket`` opens a WebSocket and returns a ``ui.socket_link.SocketLink``
  whose signals carry its frames and its end; ``send`` may be called from any thread.

The REST API of a game server on top of ``request`` is ``ui.arena_client.ArenaClient``;
server addresses are read by ``ui.server_address``.

``Call`` and ``SocketLink`` objects are created by the GUI thread and live there; the
worker thread only emits their signals, which Qt then queues to the GUI thread (a
signal emitted in one thread reaches a receiver living in another through its event
loop). Slots therefore always run in the GUI thread.

``Network.close()`` ends everything: sockets are closed with 1001 "going away", calls
still running are cancelled (their signals never fire), the aiohttp session and the
loop are closed and the thread is joined. Use it when the window closes.

Error messages are sentences a person can act on, e.g. "Cannot reach the server at
http://127.0.0.1:9: connection refused", "The server refused the game (422):
player_x.bot_url: ...", "Game 4f2a does not exist on http://127.0.0.1:8001" (a 404),
"Timed out after 10 s waiting for the list of games from http://127.0.0.1:8001".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import aiohttp
import msgspec
from pydantic import BaseModel, ValidationError
from PyQt5.QtCore import QObject, QTimer, pyqtSignal, pyqtSlot

from models import CLOSE_GOING_AWAY, ProtocolError, dump_packet
from ui.connection_errors import connection_error
from ui.server_address import server_origin
from ui.socket_link import CLOSE_TIMEOUT_S, SocketLink

__all__ = ["Call", "Network"]

log = logging.getLogger("ui.net")

#: How long ``Network.close`` waits for the worker thread to finish.
_JOIN_TIMEOUT: Final = 10.0
#: The status of an answer that says there is no such thing (``missing``).
HTTP_NOT_FOUND: Final = 404


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
        missing: str | None = None,
    ) -> Call:
        """Make one HTTP request in the worker thread.

        ``body`` is sent as JSON (a pydantic model through ``dump_packet``). The answer
        is JSON-decoded (text for ``text/plain``), then given to ``parse`` in the worker
        thread if given; a ``ProtocolError``/``ValueError`` from it fails the call.
        ``description`` names what is fetched in messages ("the list of games");
        ``refused`` starts the message of an HTTP error ("The server refused the
        game"). Statuses from 400 up fail the call, quoting the server's ``detail``;
        a 404 with ``missing`` given fails it with ``missing`` alone ("Game 4f2a does
        not exist on ..."): the thing asked for is not there, nothing was refused.
        """
        what = description or f"{method.upper()} {urlsplit(url).path or '/'}"
        call = Call(what)
        self._calls.add(call)
        call._done.connect(self._forget)

        def launch() -> None:
            if self._closed or call._cancelled:
                call._done.emit(call)
                return
            request = _Request(method.upper(), url, body, timeout, parse, refused, missing)
            call._future = self._submit(self._request(call, request))

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

    async def _request(self, call: Call, request: _Request) -> None:
        self._track()
        try:
            if call._cancelled:
                return
            result = await self._fetch(call, request)
        except _CallFailed as failure:
            if not call._cancelled:
                call.failed.emit(str(failure))
        except Exception as exc:  # a bug here must fail the call, not the thread
            log.exception("request %s %s failed", request.method, request.url)
            if not call._cancelled:
                call.failed.emit(f"Could not get {call.description}: {exc!r}")
        else:
            if not call._cancelled:
                call.finished.emit(result)
        finally:
            call._done.emit(call)

    async def _fetch(self, call: Call, request: _Request) -> object:
        method, url, body, timeout = request.method, request.url, request.body, request.timeout
        origin = server_origin(url)
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
            raise _CallFailed(connection_error(origin, exc, "reach")) from None
        if status == HTTP_NOT_FOUND and request.missing is not None:
            # The server's detail ("no game '4f2a'") would only say it again.
            raise _CallFailed(request.missing)
        if status >= 400:
            detail = _detail(raw, content_type)
            prefix = request.refused or f"The server refused {call.description}"
            if status >= 500:
                prefix = f"The server failed to answer for {call.description}"
            raise _CallFailed(f"{prefix} ({status}): {detail}")
        try:
            value: object
            if content_type == "application/json" or (not content_type and raw[:1] in b"[{"):
                value = msgspec.json.decode(raw)
            else:
                value = raw.decode("utf-8", errors="replace")
            return request.parse(value) if request.parse is not None else value
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
            # Sockets close with a handshake (bounded by CLOSE_TIMEOUT_S each).
            await asyncio.wait(pending, timeout=2 * CLOSE_TIMEOUT_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None
        loop.stop()


@dataclass(frozen=True)
class _Request:
    """One HTTP request as ``Network.request`` was given it, for the worker thread."""

    method: str
    url: str
    body: object | None
    timeout: float
    #: Turns the decoded answer into the value ``Call.finished`` carries.
    parse: Callable[[object], object] | None
    #: How the message of an HTTP error starts ("The server refused the game").
    refused: str | None
    #: The whole message of a 404 ("Game 4f2a does not exist on ..."), if given.
    missing: str | None


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
