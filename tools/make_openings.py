"""Make the default opening book, ``game/books/openings.htttx``, from a seed.

How the openings are chosen (every step is deterministic for a given seed):

1. Candidates. X's implicit stone stands at (0, 0). An opening is O's first move and
   then one or two more moves (2 or 3 turns: the openings alternate, 2-turn, 3-turn,
   2-turn...). Each stone is drawn uniformly at random (``random.Random(seed)``) from
   the empty cells within ``--radius`` (3) of the centre that are also within 2 of a
   stone already on the board, so the stones stay near the centre and in contact, the
   way games start.
2. Filters. The opening must be legal and not won (it is replayed through the rules);
   neither side may have ``win_distance - 2`` (4) or more stones in one open window of 6
   cells (an open four: a threat to win next move, which would force the game at once);
   and for balance, the two sides' best open windows (at most 3 stones each) may differ
   by one stone at most.
3. Dedupe. HTTTX has 12-fold symmetry around (0, 0) (6 rotations, each with or without
   a reflection). An opening whose final position is a rotation or mirror image of one
   already chosen (or the same stones reached in another order) is dropped.
4. Count. Draws go on until ``--count`` (60) openings are chosen; they are named
   ``book-01``, ``book-02``... in the order they were found, which is the file's order.

The book is written with ``game.notation.dumps``, one record per opening, a blank line
between records, and read back with ``game.openings.OpeningBook.from_text`` (our
notation reader and the rules) as a check. Running the
script with the defaults reproduces the shipped file byte for byte (a test checks it).

Run: ``python tools/make_openings.py`` (writes the shipped file), or
``python tools/make_openings.py --output -`` to print it.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from game.hexgrid import distance, hexagon  # noqa: E402
from game.openings import Opening, OpeningBook  # noqa: E402
from game.rules import IllegalMoveError, O, X  # noqa: E402

DEFAULT_SEED = 11
DEFAULT_COUNT = 60
DEFAULT_RADIUS = 3
CONTACT = 2  # a stone is drawn within this distance of a stone on the board
WIN_DISTANCE = 6
MAX_IN_WINDOW = 3  # below win_distance - 2: no open four for either side
MAX_DRAWS = 200_000  # a bound on the search; far more than the defaults need

DEFAULT_OUTPUT = ROOT / "game" / "books" / "openings.htttx"


def draw_opening(rng: random.Random, turns: int, radius: int) -> Opening:
    """One candidate: ``turns`` moves of two stones each, near the centre and in contact."""
    area = [cell for cell in hexagon((0, 0), radius)]
    taken: set[tuple[int, int]] = {(0, 0)}
    moves = []
    for _ in range(turns):
        move = []
        for _ in range(2):
            cells = [
                cell
                for cell in area
                if cell not in taken and any(distance(cell, stone) <= CONTACT for stone in taken)
            ]
            cell = rng.choice(cells)
            taken.add(cell)
            move.append(cell)
        moves.append(tuple(move))
    return Opening("candidate", moves=tuple(moves))


def acceptable(opening: Opening) -> bool:
    """Legal, not won, no open four, and balanced (see the module docstring)."""
    try:
        position = opening.position(win_distance=WIN_DISTANCE)
    except IllegalMoveError:
        return False
    if position.outcome is not None:
        return False
    best_o = opening.most_in_window(O, WIN_DISTANCE)
    best_x = opening.most_in_window(X, WIN_DISTANCE)
    return max(best_o, best_x) <= MAX_IN_WINDOW and abs(best_o - best_x) <= 1


def make_book(
    seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT, radius: int = DEFAULT_RADIUS
) -> str:
    """The book's text: ``count`` openings chosen as the module docstring says."""
    rng = random.Random(seed)
    chosen: list[Opening] = []
    seen: set[object] = set()
    for _ in range(MAX_DRAWS):
        if len(chosen) == count:
            break
        turns = 2 if len(chosen) % 2 == 0 else 3
        candidate = draw_opening(rng, turns, radius)
        key = candidate.canonical()
        if key in seen or not acceptable(candidate):
            continue
        seen.add(key)
        chosen.append(Opening(f"book-{len(chosen) + 1:02d}", moves=candidate.moves))
    if len(chosen) < count:
        raise SystemExit(f"found only {len(chosen)} openings in {MAX_DRAWS} draws")
    text = "\n".join(opening.dumps() for opening in chosen)
    OpeningBook.from_text(text)  # read back with our own reader: legal, not over
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0] if __doc__ else None,
        epilog=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (%(default)s)")
    parser.add_argument(
        "--count", type=int, default=DEFAULT_COUNT, help="openings to choose (%(default)s)"
    )
    parser.add_argument(
        "--radius",
        type=int,
        default=DEFAULT_RADIUS,
        help="largest distance of a stone from the centre (%(default)s)",
    )
    parser.add_argument(
        "--output",
        default=str(DEFAULT_OUTPUT),
        help="file to write, or - for standard output (the shipped book)",
    )
    args = parser.parse_args(argv)
    if args.count < 1 or args.radius < 2:
        parser.error("--count must be at least 1 and --radius at least 2")
    text = make_book(args.seed, args.count, args.radius)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {args.count} openings to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
