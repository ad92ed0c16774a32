"""Seat tokens kept out of uvicorn's logs: ``redact_tokens`` and the
``TokenRedactingFilter`` that ``install_token_filter`` puts on uvicorn's loggers."""

from __future__ import annotations

import logging
import re
from typing import Final

__all__ = ["TokenRedactingFilter", "install_token_filter", "redact_tokens"]


def _spelt_any_way(name: str) -> str:
    """A pattern for ``name`` as a query string may spell it: each character as itself
    or percent-encoded (the server decodes ``%74oken`` to ``token`` and takes it)."""
    return "".join(f"(?:{re.escape(c)}|%{ord(c):02x})" for c in name)


_TOKEN_IN_QUERY: Final = re.compile(rf"([?&]{_spelt_any_way('token')}=)[^&\s\"]*", re.IGNORECASE)


def redact_tokens(text: str) -> str:
    """``text`` with the value of every ``token=`` query parameter hidden.

    >>> redact_tokens('127.0.0.1:5 - "GET /ws?token=s3cret&x=1 HTTP/1.1" 101')
    '127.0.0.1:5 - "GET /ws?token=[redacted]&x=1 HTTP/1.1" 101'
    >>> redact_tokens('"GET /ws?x=1&%74ok%65n=s3cret HTTP/1.1" 101')
    '"GET /ws?x=1&%74ok%65n=[redacted] HTTP/1.1" 101'
    """
    return _TOKEN_IN_QUERY.sub(r"\1[redacted]", text)


class TokenRedactingFilter(logging.Filter):
    """Hides seat tokens in uvicorn's log lines: a token in a log is a seat anyone
    with the log can take. uvicorn logs request lines with the query string to
    ``uvicorn.access`` (HTTP) and ``uvicorn.error`` (WebSocket handshakes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_tokens(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_tokens(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


_TOKEN_LOGGERS: Final = ("uvicorn.access", "uvicorn.error")


def install_token_filter() -> None:
    """Put a ``TokenRedactingFilter`` on uvicorn's loggers (once).

    Logger filters only see records logged on that very logger, so it goes on each one
    that writes request lines, not on a parent."""
    for name in _TOKEN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TokenRedactingFilter) for f in logger.filters):
            logger.addFilter(TokenRedactingFilter())
