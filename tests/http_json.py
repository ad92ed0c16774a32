"""Blocking JSON over HTTP for tests that drive a browser from a plain (non-async)
test: the server runs in a thread of its own (``tests.ui_server.game_server``)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, cast

__all__ = [
    "Json",
    "finished_record",
    "get_json",
    "get_ok",
    "get_text",
    "post_json",
    "post_ok",
    "wait_for",
]

TIMEOUT = 30.0

#: A JSON object, as the routes answer.
Json = dict[str, Any]


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


def get_ok(url: str) -> Json:
    """The JSON object of a GET that must succeed (200)."""
    status, answer = get_json(url)
    assert status == 200 and isinstance(answer, dict), (url, status, answer)
    return cast(Json, answer)


def post_ok(url: str, body: Any) -> Json:
    """The JSON object answering a POST that must succeed (200 or 201)."""
    status, answer = post_json(url, body)
    assert status in (200, 201) and isinstance(answer, dict), (url, status, answer)
    return cast(Json, answer)


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
        return str(response.read().decode())


def finished_record(url: str, game_id: str, timeout: float = 60.0) -> Json:
    """The record of game ``game_id`` on the server at ``url`` once it has a result."""
    record_url = f"{url}/games/{game_id}"

    def finished() -> Json | None:
        record = get_ok(record_url)
        return record if record["result"] is not None else None

    return cast(Json, wait_for(finished, timeout))


def wait_for(what: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
    """Poll ``what`` until it returns something truthy (bounded only against hangs)."""
    deadline = time.monotonic() + timeout
    while True:
        if value := what():
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"still waiting after {timeout} s")
        time.sleep(0.05)
