"""HTTTX notation: read versions 1 and 2, write version 2.

The community's text format for hexagonal tic-tac-toe games (public repositories
``hex-tic-tac-toe/htttx-notation`` for version 2 and
``hex-tic-tac-toe/hexagonal-tic-tac-toe-notation`` for version 1; our summary is
``../shared/notation.md``). ``dumps`` writes a ``GameRecord`` as version 2, ``loads``
reads either version back into a ``GameRecord`` and checks the main line with the rules
engine; ``parse`` gives the whole text as a tree, variations and visuals included.
Each part has its module, and every name stays importable from here:
``game.notation_syntax`` (the tree, ``parse``, ``NotationError``), ``game.notation_reader``
(``loads``) and ``game.notation_writer`` (``dumps``).

>>> from models import Coord, GameRecord, Player, RecordedMove
>>> record = GameRecord(
...     name="Final",
...     moves=[RecordedMove(side=Player.O, pieces=[Coord(q=1, r=0), Coord(q=2, r=0)],
...                         clock_ms=4500)],
... )
>>> print(dumps(record), end="")
version[2]
name[Final];
1. [1,0] [2,0] {@4500};
>>> loads(dumps(record)) == record
True
>>> move = loads("version[2]; 1. [-1,0] [0,-1] { @4500 : %-1 };").moves[0]
>>> move.side, move.clock_ms, move.evaluation.heuristic
(<Player.O: 'o'>, 4500, -0.01)
>>> try:
...     loads("version[2]; 1. [1,0] [1,0];")
... except NotationError as error:
...     print(error.line, error.column, error.reason)
1 22 turn 1: O cannot play [1,0]: (1, 0) is already taken by o

Reading
-------
* Whitespace may stand between any two tokens (not inside a number, a tag key, or a tag
  value). Columns count characters, from 1. A leading byte order mark is skipped.
* The version comes from a ``version`` tag anywhere in the tag block. Without one the
  text is version 1 (its spec only recommends the tag; its own example has none, and a
  version 1 text may even start straight with ``1.``). Other versions are rejected.
* Version 2 integers have no leading zeros and no ``-0``; version 1's grammar allows
  both, so they are read there.
* Tag keys are a letter then letters, digits, ``_`` or ``-``; a tag appears once. A tag
  value is everything up to the first ``]`` and may not span lines: it holds no line feed
  and no carriage return (this is what lets an unclosed tag be reported where it opens
  instead of swallowing the game, and what ``dumps`` can write back).
* Turns are numbered 1, 2, 3... in every line. In a standard game odd turns are O's and
  even turns X's; with a setup, the side of the list written first makes turn 1, and
  sides alternate.
* ``[/]`` ends a turn after its first stone and only on the last turn of a line.
  Version 1 has no ``[/]``; a one-stone last turn (``5. [1,2];``) is read there instead.
  Version 1's ``!`` threat marks are counted (``NotatedTurn.threats``), not kept in the
  record.
* Info blocks: the record has one clock and one evaluation per move, taken from the
  stones' info blocks field by field, the last stone that has one winning: in
  ``[1,0] {@4505:%3} [2,0] {@4500}`` the clock is 4500 and the evaluation %3. Info on
  ``[/]`` belongs to the first stone's position, like the spec says. ``%n`` becomes
  ``heuristic = n / 100``, ``#n`` becomes ``win_in = n``.
* Visuals and variations are parsed and checked for syntax (a visual with a section
  this reader does not know is dropped, as the spec asks), and kept in the tree that
  ``parse`` returns; a ``GameRecord`` has no place for them, so ``loads`` leaves them
  out. Only the main line is checked against the rules.
* Our own setting tags (``viewdistance``, ``windistance``, ``turnlimit``, ``turnclock``)
  must hold a value that ``Match`` allows, else ``NotationError`` points at the tag.
  Another tool's ``timecontrol`` or ``utcdatetime`` that we cannot read, or that is beyond
  what a ``Match`` or a ``datetime`` holds (``timecontrol[99999999999+5]``), leaves its
  field unset (the game untimed, no ``started_at``) and stays a tag, verbatim. So
  ``loads`` raises nothing but ``NotationError`` for any tag value.
* ``loads`` replays the main line with the rules engine, using the view and win
  distances and turn limit from the tags (8, 6 and none by default): a stone on an
  occupied cell, out of view, or after the game ended raises ``NotationError`` naming
  the turn and pointing at the stone.

Result when reading
-------------------
``endreason`` ``win``/``draw``/``time``/``resign`` with ``winner`` ``cross``/``circle``
(and our ``cause`` tag, below) give the result; ``time`` means a forfeit on time,
``resign`` a forfeit by resignation unless ``cause`` names another cause. A ``cause``
of ``aborted`` or ``no_show`` with neither ``endreason`` nor ``winner`` is a void game
(below): no winner, reason ``draw``, that cause. Version 1's ``endreason[forfeit]``
names no cause, which a forfeit of ours must have, so it gives no result: its tags stay
in ``tags``, like an unknown ``endreason``'s. Without result tags, a main line that
ends in a line of ``win_distance`` is a win for that side and one that reaches the turn
limit a draw. The board has the last word: tags that
contradict a line on the board (or a turn-limit draw) raise ``NotationError``. A win the
board does not show is believed, because version 1 writers that cannot write a
one-stone turn may leave out the winning stone. A known ``cause`` must go with the
``endreason`` as the server writes them, else ``NotationError`` points at it: ``win``
with none or ``adjudication``; ``draw`` with none, ``turn_limit``, ``aborted`` or
``no_show``; ``time`` with none or ``timeout``; ``resign`` with none or a seat's
failure (``resign``, ``illegal_move``, ``protocol_error``, ``disconnect``, ``no_show``,
``stall``). A line on the board goes with no cause, a turn-limit draw with none or
``turn_limit``. (``endreason[win] cause[aborted]`` would be a void game that someone
won.)

What goes where
---------------
==============================  =============================================
tag                             record
==============================  =============================================
``name``                        ``name``
``utcdatetime``                 ``started_at`` (UTC, whole seconds)
``playercross``                 ``player_x.name``
``playercircle``                ``player_o.name``
``timecontrol`` ``60``          ``match``: ``clock_type="match"``, ``clock=60``
``timecontrol`` ``60+5``        ``match``: ``"incremental"``, 60 s, increment 5 s
``endreason`` ``winner``        ``result``
anything else (``platform``)    ``tags``
==============================  =============================================

Extra tags of ours, written only when needed, for what the standard tags cannot say
(standard readers ignore them and still find the standard tags):

* ``cause[illegal_move]``: the result's cause when ``endreason`` does not imply it. A
  forfeit is written ``endreason[resign]`` (the standard value nearest to "lost without
  a line or a flag fall") plus ``cause`` for ``illegal_move``, ``protocol_error``,
  ``disconnect``, ``no_show`` (one seat never came) and ``stall``; a turn-limit draw is
  ``endreason[draw] cause[turn_limit]``. A time forfeit is plain ``endreason[time]``.
  A game adjudicated on the bots' evaluations is ``endreason[win] cause[adjudication]``
  with its ``winner`` (read back as such, though the board shows no line).
* ``cause[aborted]``, ``cause[no_show]`` alone: a void game (``GameResult.void``: the
  server aborted it, or neither seat came), which has no result to speak of. It is
  written without ``endreason`` and ``winner``, so that a reader of the standard tags
  does not count it as a draw (PGN's ``*``); our ``GameResult`` calls it a draw with
  that cause, and ``loads`` gives that back.
* ``viewdistance[10]``, ``windistance[5]``, ``turnlimit[200]``: match settings that
  differ from the defaults (8, 6, no limit).
* ``turnclock[30]``: a per-move clock (``clock_type="turn"``) of 30 seconds. It is not
  written as ``timecontrol``, which other readers would take for a clock per game.
* ``timecontrolcross[10+0.1]``, ``timecontrolcircle[turn=5]``: a seat's own clock
  (``player_x.time_control``, ``player_o.time_control``), written as
  ``TimeControl.text`` (``10+0.1``, ``60``, ``turn=5``, ``none``, ``stall=30``) and read
  with ``TimeControl.parse``; a value it cannot read stays in ``tags``.

Seconds are written as integers when whole, else as exact decimals (``timecontrol[2.5]``);
a naive ``started_at`` is taken to be UTC.

A tag that ``loads`` cannot turn into a field exactly as ``dumps`` would write it back
(``timecontrol[Fischer 60+5]``, ``utcdatetime[2026-03-18T23:20:14Z]``, a
``timecontrol`` beyond our clocks' limits, an unknown
``endreason``...) is also kept, verbatim, in ``tags``, and ``dumps`` writes a key found in
``tags`` in place of the value it would derive. So writing what we read from another
tool gives back its tags; it may add ``endreason``/``winner``/``cause`` tags when the
result was inferred from the board.

Writing
-------
``version[2]`` and one tag per line, then ``;``; the setup only when it is not the
standard one (or when there are no moves, because the grammar wants a setup or a turn);
then one turn per line, ``N. [q,r] [q,r] {@ms:%n};``, or ``N. [q,r] [/] {...};`` for a
one-stone last move. The move's clock and evaluation go in one info block after its
last stone. A move with both ``heuristic`` and ``win_in`` is written with the closed
evaluation ``#n`` only (a proven result says more than an estimate); ``heuristic`` is
written as ``%n`` with ``n = 100 * clamp(heuristic, -1, 1)`` rounded half away from zero
(a NaN heuristic is not written). Setup stones are written as two lists, the side to
move's first, each in record order; read back, ``setup`` lists them in that order.

Not carried: ``game_id``, players' ``type`` and ``bot_url``, ``heartbeat``, each move's
``thinking_ms`` and ``considerations``, extra fields of an evaluation, sub-second parts
of ``started_at``, the result's ``detail`` (free text that a tag value could not give
back as it was). ``dumps`` drops them; ``loads`` leaves them at their defaults.
``dumps`` raises ``ValueError`` for what it cannot write: a tag value with ``]`` or a
line break, a tag key that is not a key or is ``version`` (``clean_tags=True`` cleans or
drops those instead), sides that do not alternate, a one-stone move that is not the last.
"""

from __future__ import annotations

from game.notation_reader import loads
from game.notation_syntax import (
    Info,
    NotatedMove,
    NotatedTurn,
    Notation,
    NotationError,
    Setup,
    Tag,
    Visual,
    parse,
)
from game.notation_writer import dumps

__all__ = [
    "Info",
    "NotatedMove",
    "NotatedTurn",
    "Notation",
    "NotationError",
    "Setup",
    "Tag",
    "Visual",
    "dumps",
    "loads",
    "parse",
]
