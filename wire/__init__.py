"""The wire: the pieces of ``models.py``, one concept per module, and what both servers'
sockets share.

Import the wire types from ``models``: it re-exports the public names of those modules,
and those names are the stable API. Four modules are not types and are not re-exported:
``frames`` (a whole text frame, a refused frame), ``inbound_ws`` (uvicorn's WebSocket
protocol with control-frame limits and a frame writer), ``ratelimit`` (the token
bucket behind those limits) and ``listening`` (the socket bound before a server starts),
used by the game server and the bot server alike.
"""
