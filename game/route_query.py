"""The query of a REST request, checked the same way by every route of the API,
whatever its method.

A parameter the route does not take is refused (422), as a body refuses a field it
does not know, rather than ignored: ``GET /games?before=...`` in place of ``?cursor=``
would answer the first page again, with the same ``next_cursor``, and a client that
follows it would never get further; ``POST /game/new?wait=1`` or ``POST
/tournaments?dry_run=1`` would start what the client believes it only tried. The
reason names the parameter and the ones the route takes: ``before: unknown query
parameter; this route takes status, player, bot_url, limit, cursor``. A route that
takes none (``GET /health``, ``POST /game/new``) refuses any: ``foo: unknown query
parameter; this route takes none``. A route checks its query first, before the API
token, the body or anything it does: a refused request has changed nothing. ``token``
is a parameter only of ``GET`` and ``DELETE /challenges/{id}`` (the creator's person
token); every other route takes its token in ``Authorization`` or in its body.

Not in scope: the web page's routes (``game.web_routes``), whose query is the page's
own (the filters of ``/web/games?status=finished``), read by its script, not by the
server; the WebSockets (``/ws?token=``, ``/spectate/{id}?board=0``, ``/queue``), which
read the parameters they take and refuse only a bad value, with a close code (a socket
has no 422 to answer); and the hosted example bots' mounts, which serve the HTTTX
Bot API, not this one.
"""

from __future__ import annotations

from starlette.requests import Request

from models import MAX_ECHO_CHARS, clip_text

__all__ = ["unknown_query"]


def unknown_query(request: Request, accepted: tuple[str, ...]) -> str | None:
    """The 422 reason for the first query parameter of ``request`` not in ``accepted``;
    None when it has none.

    >>> from starlette.requests import Request
    >>> def query(text: str) -> Request:
    ...     return Request({"type": "http", "query_string": text.encode()})
    >>> unknown_query(query("limit=2&before=2"), ("limit", "cursor"))
    'before: unknown query parameter; this route takes limit, cursor'
    >>> unknown_query(query("limit=2"), ("limit", "cursor")) is None
    True
    >>> unknown_query(query("=1"), ("limit",))
    "'': unknown query parameter; this route takes limit"
    >>> unknown_query(query("t=1700000000"), ())
    't: unknown query parameter; this route takes none'
    """
    takes = ", ".join(accepted) if accepted else "none"
    for name in request.query_params:
        if name not in accepted:
            plain = name != "" and name.isprintable() and name == name.strip()
            shown = name if plain else repr(name)
            return (
                f"{clip_text(shown, MAX_ECHO_CHARS)}: unknown query parameter; "
                f"this route takes {takes}"
            )
    return None
