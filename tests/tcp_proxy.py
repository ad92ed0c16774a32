"""A loopback TCP forwarder that a test can cut: the way to drop a page's WebSocket.

``TcpProxy(port)`` listens on ``127.0.0.1:0`` and forwards every connection to
``127.0.0.1:port``; ``cut()`` closes every connection open now (new ones still work), as
a network drop would; while ``refusing`` is set, a new connection is closed at once, as
if the server were down. Threads, not asyncio: the tests around it are synchronous::

    with TcpProxy(server_port) as proxy:
        page.goto(f"http://127.0.0.1:{proxy.port}/g/{game_id}")
        proxy.cut()
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["TcpProxy"]

_CHUNK = 65536


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.cuts = 0
        #: While set, each new connection is closed at once (the server looks down).
        self.refusing = False
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="tcp proxy", daemon=True)

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # the listener was closed
            if self.refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(_CHUNK):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self._drop(source, sink)

    def _drop(self, *sockets: socket.socket) -> None:
        with self._lock:
            for sock in sockets:
                self._open.discard(sock)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> int:
        """Close every connection open now; returns how many sockets were closed."""
        with self._lock:
            victims = list(self._open)
        self._drop(*victims)
        self.cuts += 1
        return len(victims)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self.cut()
        self._thread.join(5)
