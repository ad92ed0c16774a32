"""Blocking JSON over HTTP for tests that drive a browser from a plain (non-async)
test: the server runs in a thread of its own (``tests.ui_server.game_server``)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

__all__ = ["get_json", "post_json", "wait_for"]

TIMEOUT = 30.0


def _call(request: urllib.request.Request) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def get_json(url: str) -> tuple[int, Any]:
    return _call(urllib.request.Request(url, headers={"accept": "application/json"}))


def post_json(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    head = {"content-type": "application/json", **(headers or {})}
    return _call(urllib.request.Request(url, data=data, headers=head, method="POST"))


def wait_for(what: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
    """Poll ``what`` until it returns something truthy (bounded only against hangs)."""
    deadline = time.monotonic() + timeout
    while True:
        if value := what():
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"still waiting after {timeout} s")
        time.sleep(0.05)
