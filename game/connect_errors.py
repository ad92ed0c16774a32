"""The server's connections to its database and to Redis as a person reads them: the
URL with its password hidden (``safe_url``), and a connection that failed at the level
of the network or the socket, said with where it went and what to check
(``unreachable``). ``game.store.open_errors`` and ``game.cluster_redis_errors`` build
on these for what each server says back.

The drivers' own words leave out the very thing to fix: asyncpg reports a PostgreSQL
socket that is not there as "[Errno 2] No such file or directory", with no path.
"""

from __future__ import annotations

import errno
import re
import socket
from collections.abc import Iterator

__all__ = ["causes", "safe_url", "unreachable"]

#: ``scheme://user:password@`` up to the last ``@`` before the path's query: the password
#: may hold ``@`` or ``/`` that its writer did not percent-encode.
_PASSWORD_IN_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://[^:/?#@]*):[^?#]*@")
#: ``?password=...`` (asyncpg and redis-py both take it from the query too).
_PASSWORD_IN_QUERY = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def safe_url(url: str) -> str:
    """``url`` as given with any password hidden, for printing. The text is not parsed
    as a whole, so a URL that cannot be parsed (a port that is not a number) is still
    shown without its password, and one that can keeps its writer's spelling.

    >>> safe_url("postgresql+asyncpg://htttx:s3cret@db:5432/arena")
    'postgresql+asyncpg://htttx:***@db:5432/arena'
    >>> safe_url("redis://:s3cret@127.0.0.1:6379/0")
    'redis://:***@127.0.0.1:6379/0'
    >>> safe_url("postgresql://u:p@ss/w@h:notaport/db")
    'postgresql://u:***@h:notaport/db'
    >>> safe_url("postgresql:///arena?host=/run/postgresql&password=s3cret")
    'postgresql:///arena?host=/run/postgresql&password=***'
    >>> safe_url("postgresql://u@h:5432/db"), safe_url("sqlite:///./data/a:b@c.sqlite")
    ('postgresql://u@h:5432/db', 'sqlite:///./data/a:b@c.sqlite')
    """
    hidden = _PASSWORD_IN_AUTHORITY.sub(r"\1:***@", url, count=1)
    return _PASSWORD_IN_QUERY.sub(r"\1***", hidden)


def causes(error: BaseException) -> Iterator[BaseException]:
    """``error`` and what it wraps, outermost first: SQLAlchemy's ``DBAPIError.orig``,
    then each ``__cause__`` (or ``__context__``: redis-py raises its ``ConnectionError``
    inside the handler of the ``OSError``, without ``from``)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        wrapped = getattr(current, "orig", None)
        if isinstance(wrapped, BaseException) and id(wrapped) not in seen:
            current = wrapped
        else:
            current = current.__cause__ or current.__context__


def _all_refused(error: OSError) -> bool:
    """A refusal, also asyncio's ``OSError("Multiple exceptions: ...")`` of a host name
    with several addresses (localhost: ::1 and 127.0.0.1), each refused."""
    if isinstance(error, ConnectionRefusedError):
        return True
    text = str(error)
    refused = f"[Errno {errno.ECONNREFUSED}]"
    return text.startswith("Multiple exceptions:") and text.count(refused) == text.count("[Errno")


def unreachable(service: str, where: str, error: BaseException) -> str | None:
    """Why ``service`` (``"PostgreSQL"``, ``"Redis"``) at ``where`` (``host:port``, or
    ``the socket PATH``) could not be reached, with what to check; ``None`` when the
    error is not one of the network or of a socket (it is the service's own answer).

    >>> print(unreachable("Redis", "127.0.0.1:6379", ConnectionRefusedError(111, "refused")))
    cannot connect to Redis at 127.0.0.1:6379: connection refused; is Redis running, and listening on that address and port?
    >>> print(unreachable("PostgreSQL", "the socket /x/.s.PGSQL.5432", FileNotFoundError(2, "No such file")))
    cannot connect to PostgreSQL at the socket /x/.s.PGSQL.5432: there is no such socket; is PostgreSQL running, and is that its socket?
    >>> unreachable("Redis", "h:1", ValueError("no")) is None
    True
    """  # noqa: E501
    lead = f"cannot connect to {service} at {where}"
    for cause in causes(error):
        if isinstance(cause, socket.gaierror):
            return f"{lead}: unknown host ({cause.strerror}); check the host name"
        if isinstance(cause, TimeoutError):
            return f"{lead}: no answer in time; is the host up, and its port open to this machine?"
        if isinstance(cause, OSError) and _all_refused(cause):
            return (
                f"{lead}: connection refused; is {service} running, and listening on that "
                "address and port?"
            )
        if isinstance(cause, FileNotFoundError):
            return f"{lead}: there is no such socket; is {service} running, and is that its socket?"
        if isinstance(cause, PermissionError):
            return f"{lead}: permission denied; may this user use that socket?"
        if isinstance(cause, OSError) and cause.errno is not None:
            return f"{lead}: {cause.strerror or cause}"
    return None
