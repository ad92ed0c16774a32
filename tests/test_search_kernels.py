"""The search kernels' incremental state against a recount from scratch, the Zobrist
hash under make/unmake, and the compiled kernels against the pure ones."""

from __future__ import annotations

import random

import pytest

from bot.bots.search import layout as L
from bot.bots.search.backend import PURE, compiled_backend, numba_available
from bot.bots.search.kernels import axis_step, place, unplace


def recount(mem: list[int], lo: int, hi: int) -> None:
    """Check every window with a cell in the square lo..hi against a count of its cells,
    and the evaluation's totals and the threat sets against those counts."""
    win = mem[L.WIN]
    totals = [0, 0]
    threats: list[set[int]] = [set(), set()]
    for axis in range(3):
        step = axis_step(axis)
        for x in range(lo - win, hi + 1):
            for y in range(lo - win, hi + win):
                start = x * L.N + y
                counts = [0, 0]
                for k in range(win):
                    value = mem[L.BOARD + start + k * step]
                    if value:
                        counts[value - 1] += 1
                w = axis * L.NN + start
                assert mem[L.WC + w] == counts[0] and mem[L.WC + L.WN + w] == counts[1]
                for side in (0, 1):
                    if counts[side] and not counts[1 - side]:
                        totals[side] += mem[L.WT + counts[side]]
                        if counts[side] >= win - 2:
                            threats[side].add(w)
    for side in (0, 1):
        assert mem[L.TOT + side] == totals[side]
        held = {mem[L.TSET + side * L.TCAP + i] for i in range(mem[L.TN + side])}
        assert held == threats[side]
        for i in range(mem[L.TN + side]):
            assert mem[L.TPOS + side * L.WN + mem[L.TSET + side * L.TCAP + i]] == i


def zobrist(mem: list[int]) -> int:
    key = 0
    for i in range(L.NN):
        if mem[L.BOARD + i]:
            key ^= mem[L.ZOB + (mem[L.BOARD + i] - 1) * L.NN + i]
    return key


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_counts_match_a_recount_through_random_makes_and_unmakes(seed: int) -> None:
    rng = random.Random(seed)
    win = rng.choice([4, 5, 6])
    mem = L.empty_mem(win, 2)
    middle = L.N // 2
    placed: list[tuple[int, int]] = []
    for step in range(160):
        if placed and rng.random() < 0.35:
            idx, side = placed.pop()
            unplace(mem, idx, side)
        else:
            while True:
                idx = rng.randint(middle - 4, middle + 4) * L.N + rng.randint(
                    middle - 4, middle + 4
                )
                if not mem[L.BOARD + idx]:
                    break
            side = rng.randint(0, 1)
            place(mem, idx, side)
            placed.append((idx, side))
        if step % 40 == 39:
            recount(mem, middle - 4, middle + 4)
            assert mem[L.HASH] == zobrist(mem)
    while placed:
        idx, side = placed.pop()
        unplace(mem, idx, side)
    # Every count, set and the hash back to empty (the sets' storage keeps stale items).
    fresh = L.empty_mem(win, 2)
    for lo, hi in ((L.TSET, L.TSET + 2 * L.TCAP), (L.CSET, L.CSET + L.NN)):
        mem[lo:hi] = fresh[lo:hi]
    assert mem == fresh


def test_the_hash_depends_on_the_stones_not_their_order() -> None:
    cells = [(64 * L.N + 64 + d, d % 2) for d in range(-3, 4)]
    first, second = L.empty_mem(6, 2), L.empty_mem(6, 2)
    for idx, side in cells:
        place(first, idx, side)
    for idx, side in reversed(cells):
        place(second, idx, side)
    assert first[L.HASH] == second[L.HASH] != 0
    unplace(first, cells[0][0], cells[0][1])
    place(first, cells[0][0], cells[0][1])
    assert first[L.HASH] == second[L.HASH]


@pytest.mark.skipif(not numba_available(), reason="numba is not installed")
@pytest.mark.parametrize("budget", [10**9, 5_000], ids=["complete", "cut"])
def test_the_compiled_kernels_search_like_the_pure_ones(budget: int) -> None:
    # "cut": the node budget runs out in the middle of the root moves, which both leave
    # scored up to there and unscored (-INF) from there on.
    compiled = compiled_backend()
    assert compiled is not None and compiled.compiled
    frame = L.Frame.around([(0, 0)])
    stones = [(0, 0, "x"), (1, 0, "o"), (1, 1, "o"), (0, 1, "x"), (-1, 1, "x")]
    found = []
    for kernels in (PURE, compiled):
        mem_list = L.empty_mem(6, 2)
        L.load(mem_list, frame, stones, "o", place)
        mem = kernels.array(mem_list)
        mem[L.BUDGET] = budget
        mem[L.BEST] = -1
        mv, ms = kernels.move_buffers()
        score = kernels.search_root(mem, kernels.zeros(4 << 12), mv, ms, 2)
        n = int(mem[L.ROOTN])
        root = [(int(mv[i]), int(ms[i]), int(mem[L.ROOTX + i])) for i in range(n)]
        found.append((int(score), int(mem[L.BEST]), int(mem[L.NODES]), int(mem[L.ABORT]), root))
    assert found[0] == found[1]
    _, best, _, aborted, root = found[0]
    cut = budget < 10**9
    assert best >= 0 and aborted == cut
    assert any(score == -L.INF for _, score, _ in root) == cut
