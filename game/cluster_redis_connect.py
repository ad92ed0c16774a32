"""A worker's connection to the cluster's Redis (``connect_redis``, for
``game.cluster_redis.ClusterNode.open``), and why it failed, in one line that says
what to fix: what ``htttx-server --redis`` prints (``ClusterUnavailable``). Imported
only with ``--redis``, as ``game.cluster_redis`` is.

redis-py alone lets some mistakes through (``redis://host/x`` is database 0, and
``redis://host/0/1`` database 1) and words others for its own developers ("HELLO must
be called with the client already authenticated" for a password left out, "Error 111
connecting to ..."): ``redis_url_problem`` says the first before connecting,
``why_redis_failed`` the others after.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, unquote, urlsplit

import redis.asyncio as aioredis
from redis.exceptions import AuthenticationError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from game.connect_errors import unreachable

__all__ = [
    "CONNECT_TIMEOUT",
    "REDIS_URL_FORMS",
    "ClusterUnavailable",
    "connect_redis",
    "redis_url_problem",
    "why_redis_failed",
]

REDIS_URL_FORMS = "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss://... (TLS) or unix:///PATH"
#: Redis's port unless the URL says otherwise.
DEFAULT_REDIS_PORT = 6379
#: How long Redis has to accept the connection, and then to answer a command, in seconds.
CONNECT_TIMEOUT = 5
COMMAND_TIMEOUT = 15


class ClusterUnavailable(Exception):
    """Redis cannot be reached (or the URL is not a Redis URL); the message is one line
    saying why and what to fix, without the URL."""


async def connect_redis(url: str) -> aioredis.Redis:
    """A client of the Redis at ``url`` that has answered a PING. Raises
    ``ClusterUnavailable``."""
    if (problem := redis_url_problem(url)) is not None:
        raise ClusterUnavailable(problem)
    try:
        client = aioredis.from_url(
            url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=COMMAND_TIMEOUT
        )
    except ValueError as error:  # what redis_url_problem does not look at
        raise ClusterUnavailable(f"{error}; expected {REDIS_URL_FORMS}") from None
    try:
        await client.ping()
    except (RedisError, OSError) as error:
        await client.aclose()
        raise ClusterUnavailable(why_redis_failed(url, error)) from None
    return client


def redis_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as a Redis URL, or ``None``; said before connecting.

    >>> print(redis_url_problem("http://127.0.0.1:6379"))
    not a Redis URL; expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], rediss://... (TLS) or unix:///PATH
    >>> print(redis_url_problem("redis://127.0.0.1:6379/cache"))
    the database after the host must be a number, as in redis://HOST:6379/0, got '/cache'
    >>> print(redis_url_problem("redis://127.0.0.1:99999/0"))
    the port must be a number from 1 to 65535
    >>> redis_url_problem("redis://:secret@127.0.0.1:6379/2") is None
    True
    """
    try:
        parts = urlsplit(url)
    except ValueError as error:  # "Invalid IPv6 URL"
        return f"{error}; expected {REDIS_URL_FORMS}"
    try:
        port = parts.port
    except ValueError:  # not a number, or not from 0 to 65535
        return "the port must be a number from 1 to 65535"
    if parts.scheme not in ("redis", "rediss", "unix"):
        return f"not a Redis URL; expected {REDIS_URL_FORMS}"
    if port == 0:
        return "the port must be a number from 1 to 65535"
    if parts.scheme == "unix":
        return None if parts.path else "a unix:// URL needs the socket's path: unix:///PATH"
    if not re.fullmatch(r"/?(\d+)?", unquote(parts.path)):
        return (
            "the database after the host must be a number, as in "
            f"redis://HOST:{DEFAULT_REDIS_PORT}/0, got {parts.path!r}"
        )
    return None


def _where(parts: SplitResult) -> str:
    if parts.scheme == "unix":
        return f"the socket {parts.path}"
    host = parts.hostname or "localhost"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parts.port or DEFAULT_REDIS_PORT}"


def why_redis_failed(url: str, error: BaseException) -> str:
    """One line on why Redis at ``url`` did not answer a PING (``error``), saying what
    to check or do. It does not repeat the URL."""
    parts = urlsplit(url)
    where = _where(parts)
    if isinstance(error, AuthenticationError):
        if parts.password is None and "password=" not in parts.query:
            return (
                f"Redis at {where} wants a password; give it in the URL: "
                "redis://:PASSWORD@HOST:PORT/DB (redis://USER:PASSWORD@... for an ACL user)"
            )
        return f"Redis at {where} refused the user or password; check them in the URL"
    if isinstance(error, ResponseError) and "DB index is out of range" in str(error):
        return (
            f"Redis at {where} has no database {unquote(parts.path).strip('/')}; its "
            "databases are numbered from 0 to its 'databases' setting less 1 (16 by default)"
        )
    if isinstance(error, RedisTimeoutError):
        return (
            f"cannot connect to Redis at {where}: no answer in time; is the host up and "
            "the port open, and is the scheme the server's (rediss:// for TLS, redis:// "
            "without)?"
        )
    if (network := unreachable("Redis", where, error)) is not None:
        return network
    if isinstance(error, RedisConnectionError) and "closed by server" in str(error):
        return (
            f"{where} closed the connection; is it a Redis server, and is the scheme its "
            "own (rediss:// for TLS, redis:// without)?"
        )
    return f"Redis at {where} did not answer a PING: {error}"
