"""How fast the wire codec of ``models`` is, against stdlib ``json`` + pydantic.

The packet is a ``move_request`` as our server sends it late in a long game: a board of
500 stones (the ``board`` extension), ``previous`` holding 2 moves and a
``move_time_limit``. Each operation is timed in the same run for

- the baseline: ``MoveRequestPacket.model_validate(json.loads(data))`` to decode and
  ``json.dumps(packet.model_dump())`` to encode, the obvious way to write it;
- ours: ``models.parse_packet(data)`` and ``models.dump_packet(packet)``.

Decoding is shown three ways, because ``parse_packet`` keeps a table of interned
``Cell`` objects and a game resends the board with every move:

- "warm": every stone is already in the table (the same packet decoded again);
- "in a game": the stones of the last two moves (4 of 500) are new, the steady state
  of a real game;
- "cold": the table is emptied before every decode, as for the first board of a game;
  here ours is no faster, since building 500 pydantic Cells is the bulk of the work.

Each figure is the median over several runs of ``timeit`` (microseconds per operation);
"Nx faster" is baseline / ours. The script prints figures and checks that both ways
produce the same packet; it asserts nothing about timings.

Run: ``.venv/bin/python bench/serialization.py``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models import (
    Board,
    Cell,
    Coord,
    Move,
    MoveRequestPacket,
    Packet,
    Player,
    dump_packet,
    parse_packet,
)
from wire import codec

BOARD_SIZE = 500
REPEATS = 9
SECONDS_PER_RUN = 0.04


def spiral(count: int) -> list[tuple[int, int]]:
    """The ``count`` cells nearest the origin, ring by ring: a compact, realistic board."""
    directions = [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)]
    cells = [(0, 0)]
    radius = 1
    while len(cells) < count:
        q, r = -radius, radius  # directions[4] * radius: the start of the ring
        for dq, dr in directions:
            for _ in range(radius):
                cells.append((q, r))
                q, r = q + dq, r + dr
        radius += 1
    return cells[:count]


def sample_packet() -> MoveRequestPacket:
    coords = spiral(BOARD_SIZE)
    cells = [
        Cell(q=q, r=r, p=Player.X if i % 4 in (0, 3) else Player.O)
        for i, (q, r) in enumerate(coords)
    ]
    previous = [
        Move(side=Player.X, pieces=[Coord(q=q, r=r) for q, r in coords[-8:-6]]),
        Move(side=Player.O, pieces=[Coord(q=q, r=r) for q, r in coords[-6:-4]]),
    ]
    return MoveRequestPacket(
        side=Player.X, previous=previous, board=Board(cells=cells), move_time_limit=2.5
    )


Operation = Callable[[], object]


@dataclass
class Row:
    """One operation done both ways; ``warm_up`` runs before each timed run, untimed."""

    name: str
    baseline: Operation
    ours: Operation
    warm_up: Operation = lambda: None
    runs: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))

    def timers(self) -> list[tuple[timeit.Timer, int]]:
        timers = []
        for operation in (self.baseline, self.ours):
            timer = timeit.Timer(operation, setup=self.warm_up)
            number, elapsed = timer.autorange()
            timers.append((timer, max(1, round(number * SECONDS_PER_RUN / elapsed))))
        return timers


def measure(rows: list[Row]) -> None:
    """Fill each row's runs with µs per call, ``REPEATS`` timeit runs per side.

    Runs go round-robin over every row and side, so a change of machine speed during
    the script (common on shared VMs) touches all figures alike. timeit pauses the
    garbage collector while timing, which favours the baseline: it allocates far more
    objects than ours.
    """
    timers = [row.timers() for row in rows]
    for _ in range(REPEATS):
        for row, pair in zip(rows, timers, strict=True):
            for runs, (timer, number) in zip(row.runs, pair, strict=True):
                runs.append(timer.timeit(number) / number * 1e6)


def cold_parse(data: bytes) -> object:
    codec._cell_interner.clear()  # benchmark only: forget every interned Cell
    return parse_packet(data)


def in_game_parse(data: bytes, newest: list[Cell]) -> Packet:
    # Benchmark only: forget the stones of the last two moves, as if never seen.
    for cell in newest:
        codec._cell_interner._cells.pop(codec._WireCell(cell.q, cell.r, cell.p), None)
    return parse_packet(data)


def main() -> None:
    # No options: --help says what it measures, and a mistyped option is refused
    # rather than ignored by a run that looks like the one asked for.
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    packet = sample_packet()
    data = dump_packet(packet)

    def baseline_decode() -> MoveRequestPacket:
        return MoveRequestPacket.model_validate(json.loads(data))

    def baseline_encode() -> bytes:
        return json.dumps(packet.model_dump()).encode()

    def baseline_round_trip() -> bytes:
        return json.dumps(baseline_decode().model_dump()).encode()

    # Same packet both ways, or the comparison means nothing.
    if parse_packet(data) != packet or baseline_decode() != packet:
        raise SystemExit("decoders disagree about the sample packet")
    if parse_packet(json.dumps(packet.model_dump())) != parse_packet(data):
        raise SystemExit("encoders disagree about the sample packet")

    assert packet.board is not None
    newest = packet.board.cells[-4:]

    def warm() -> Packet:
        return parse_packet(data)

    rows = [
        Row("decode (warm)", baseline_decode, warm, warm_up=warm),
        Row("decode (in a game)", baseline_decode, lambda: in_game_parse(data, newest), warm),
        Row("decode (cold)", baseline_decode, lambda: cold_parse(data)),
        Row("encode", baseline_encode, lambda: dump_packet(packet)),
        Row(
            "round trip (in a game)",
            baseline_round_trip,
            lambda: dump_packet(in_game_parse(data, newest)),
            warm,
        ),
    ]
    measure(rows)
    print(
        f"move_request with {BOARD_SIZE} cells and 2 previous moves ({len(data)} bytes); "
        f"median of {REPEATS} runs, µs per operation"
    )
    print(f"{'operation':<24}{'json+pydantic':>15}{'models':>10}{'speed-up':>18}")
    for row in rows:
        base_us, ours_us = (statistics.median(runs) for runs in row.runs)
        ratio = base_us / ours_us
        verdict = f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"
        print(f"{row.name:<24}{base_us:>15.1f}{ours_us:>10.1f}{verdict:>17}")


if __name__ == "__main__":
    main()
