"""The search's hot core: make/unmake a stone, evaluate, generate and order pair moves,
alpha-beta (PVS) with a transposition table, and threat-space search.

Written once, in the subset of Python that numba compiles: integers, flat arrays
(``mem``, the move buffers, the table; see ``bot.bots.search.layout``), loops, plain
functions calling each other (and themselves). ``bot.bots.search.backend`` runs this
module as it is (the pure-Python fallback, on lists) or loads a second copy of it whose
functions it replaces by ``numba.njit`` ones (on numpy arrays).

Conventions: sides are 0 (X) and 1 (O); a move is two stones ``a`` and ``b``, encoded
``a * NN + b``; scores are from the side to move's point of view (negamax), a win found
at ply ``p`` scoring ``WIN_SCORE - p``.
"""

from __future__ import annotations

import time
from typing import Any

from bot.bots.search.layout import (
    ABORT,
    BEST,
    BOARD,
    BUDGET,
    CN,
    CPOS,
    CSET,
    HASH,
    INF,
    KINNER,
    KROOT,
    MAXM,
    MAXPLY,
    NN,
    NODES,
    ROOTN,
    ROOTX,
    SCR,
    SELDEPTH,
    SIDE_KEY,
    STM,
    STOP_AT,
    TCAP,
    TN,
    TOFF,
    TOT,
    TOUCH,
    TPOS,
    TRN,
    TSET,
    WC,
    WIN,
    WIN_SCORE,
    WN,
    WON,
    WT,
    ZOB,
    N,
)

# Arrays are numpy int64 arrays when compiled, lists when not: typed loosely here.
Mem = Any

MATE_BOUND = WIN_SCORE - 1000
EXACT, LOWER, UPPER = 0, 1, 2
#: Cells besides the blocking ones paired with a stone that blocks every threat alone.
SPARE = 6
#: The same in the threat-space search, whose wins are played without a second look.
SPARE_THREATS = 24
#: Below the nominal depth only forced blocks are searched: this many plies of them at
#: most, the best ``QMOVES`` blocks of each.
QDEPTH = 4
QMOVES = 10
#: Cells the threat-space search pairs to make threats.
KTHREAT = 10


def axis_step(axis: int) -> int:
    if axis == 0:
        return N
    if axis == 1:
        return 1
    return N - 1


def _set_add(mem: Mem, pos: int, base: int, count: int, item: int) -> None:
    n = mem[count]
    mem[base + n] = item
    mem[pos + item] = n
    mem[count] = n + 1


def _set_remove(mem: Mem, pos: int, base: int, count: int, item: int) -> None:
    n = mem[count] - 1
    p = mem[pos + item]
    last = mem[base + n]
    mem[base + p] = last
    mem[pos + last] = p
    mem[pos + item] = -1
    mem[count] = n


def place(mem: Mem, idx: int, side: int) -> None:
    """Put a stone of ``side`` on the empty cell ``idx``; every count kept up to date."""
    other = 1 - side
    win = mem[WIN]
    threat = win - 2
    mem[BOARD + idx] = side + 1
    mem[HASH] ^= mem[ZOB + side * NN + idx]
    for axis in range(3):
        step = axis_step(axis)
        for k in range(win):
            w = axis * NN + idx - k * step
            own = mem[WC + side * WN + w]
            theirs = mem[WC + other * WN + w]
            if theirs == 0:
                mem[TOT + side] += mem[WT + own + 1] - mem[WT + own]
                if own + 1 == threat or (own + 1 > threat and own == 0):
                    _set_add(mem, TPOS + side * WN, TSET + side * TCAP, TN + side, w)
                if own + 1 >= win:
                    mem[WON + side] += 1
            elif own == 0:
                mem[TOT + other] -= mem[WT + theirs]
                if theirs >= threat:
                    _set_remove(mem, TPOS + other * WN, TSET + other * TCAP, TN + other, w)
                if theirs >= win:
                    mem[WON + other] -= 1
            mem[WC + side * WN + w] = own + 1
    for t in range(mem[TRN]):
        c = idx + mem[TOFF + t]
        mem[TOUCH + c] += 1
        if mem[TOUCH + c] == 1:
            _set_add(mem, CPOS, CSET, CN, c)


def unplace(mem: Mem, idx: int, side: int) -> None:
    """Take back the stone of ``side`` on ``idx`` (the last placed there)."""
    other = 1 - side
    win = mem[WIN]
    threat = win - 2
    mem[BOARD + idx] = 0
    mem[HASH] ^= mem[ZOB + side * NN + idx]
    for axis in range(3):
        step = axis_step(axis)
        for k in range(win):
            w = axis * NN + idx - k * step
            own = mem[WC + side * WN + w] - 1
            theirs = mem[WC + other * WN + w]
            mem[WC + side * WN + w] = own
            if theirs == 0:
                mem[TOT + side] -= mem[WT + own + 1] - mem[WT + own]
                if own + 1 == threat or (own + 1 > threat and own == 0):
                    _set_remove(mem, TPOS + side * WN, TSET + side * TCAP, TN + side, w)
                if own + 1 >= win:
                    mem[WON + side] -= 1
            elif own == 0:
                mem[TOT + other] += mem[WT + theirs]
                if theirs >= threat:
                    _set_add(mem, TPOS + other * WN, TSET + other * TCAP, TN + other, w)
                if theirs >= win:
                    mem[WON + other] += 1
    for t in range(mem[TRN]):
        c = idx + mem[TOFF + t]
        mem[TOUCH + c] -= 1
        if mem[TOUCH + c] == 0:
            _set_remove(mem, CPOS, CSET, CN, c)


def evaluate(mem: Mem) -> int:
    """The static score for the side to move (with neither side holding a threat): what
    it has built against what the opponent has, its own counted 3/2 for the tempo."""
    stm = mem[STM]
    score: int = (mem[TOT + stm] * 3) // 2 - mem[TOT + 1 - stm]
    return score


def cell_score(mem: Mem, c: int, side: int, defence: int) -> int:
    """What a stone of ``side`` on ``c`` adds to its live windows, plus ``defence``/4 of
    the worth of the opponent's live windows it spoils."""
    other = 1 - side
    win = mem[WIN]
    s = 0
    for axis in range(3):
        step = axis_step(axis)
        for k in range(win):
            w = axis * NN + c - k * step
            own = mem[WC + side * WN + w]
            theirs = mem[WC + other * WN + w]
            if theirs == 0:
                s += mem[WT + own + 1] - mem[WT + own]
            elif own == 0:
                s += (mem[WT + theirs] * defence) >> 2
    return s


def top_cells(mem: Mem, side: int, k: int, defence: int, out: int, skip: int, nskip: int) -> int:
    """The ``k`` best empty candidate cells for ``side`` into ``mem[out:]`` (their
    scores after them, at ``out + 64``), best first, leaving out ``mem[skip:skip+nskip]``;
    returns how many."""
    n = 0
    for i in range(mem[CN]):
        c = mem[CSET + i]
        if mem[BOARD + c] != 0:
            continue
        skipped = False
        for j in range(nskip):
            if mem[skip + j] == c:
                skipped = True
                break
        if skipped:
            continue
        s = cell_score(mem, c, side, defence)
        if n == k and s <= mem[out + 64 + k - 1]:
            continue
        j = n if n < k else k - 1
        while j > 0 and mem[out + 64 + j - 1] < s:
            mem[out + j] = mem[out + j - 1]
            mem[out + 64 + j] = mem[out + 64 + j - 1]
            j -= 1
        mem[out + j] = c
        mem[out + 64 + j] = s
        if n < k:
            n += 1
    return n


def gen_blocks(mem: Mem, mv: Mem, base: int, side: int, spare_cells: int) -> int:
    """Every pair of ``side``'s stones that spoils all the opponent's threat windows (a
    stone that spoils them all alone is paired with the other blocking cells and the
    ``spare_cells`` best cells); 0 when no pair does (the opponent wins next move)."""
    other = 1 - side
    nt = mem[TN + other]
    if nt > 60:
        return 0
    win = mem[WIN]
    cells = SCR  # blocking cells, their masks at SCR + 128
    nc = 0
    for j in range(nt):
        w = mem[TSET + other * TCAP + j]
        axis = w // NN
        start = w - axis * NN
        step = axis_step(axis)
        for k in range(win):
            c = start + k * step
            if mem[BOARD + c] != 0:
                continue
            found = -1
            for i in range(nc):
                if mem[cells + i] == c:
                    found = i
                    break
            if found < 0:
                if nc == 120:
                    return 0
                found = nc
                mem[cells + nc] = c
                mem[cells + 128 + nc] = 0
                nc += 1
            mem[cells + 128 + found] |= 1 << j
    full = (1 << nt) - 1
    n = 0
    for i in range(nc):
        for j in range(i + 1, nc):
            if (mem[cells + 128 + i] | mem[cells + 128 + j]) == full and n < MAXM:
                mv[base + n] = mem[cells + i] * NN + mem[cells + j]
                n += 1
    for i in range(nc):
        if mem[cells + 128 + i] == full:
            spare = SCR + 256
            ns = top_cells(mem, side, spare_cells, 3, spare, cells, nc)
            for j in range(ns):
                if n < MAXM:
                    mv[base + n] = mem[cells + i] * NN + mem[spare + j]
                    n += 1
    return n


def gen_pairs(mem: Mem, mv: Mem, base: int, side: int, k: int) -> int:
    """All pairs of the ``k`` best cells for ``side``."""
    top = SCR + 512
    nc = top_cells(mem, side, k, 3, top, top, 0)
    n = 0
    for i in range(nc):
        for j in range(i + 1, nc):
            mv[base + n] = mem[top + i] * NN + mem[top + j]
            n += 1
    return n


def order_moves(mem: Mem, mv: Mem, ms: Mem, base: int, n: int, first: int) -> None:
    """Sort ``mv[base:base+n]`` best first: ``first`` (the table's move), then by the
    static worth of the position after the move for its mover (threats weigh most)."""
    side = mem[STM]
    for i in range(n):
        m = mv[base + i]
        if m == first:
            ms[base + i] = INF
            continue
        a = m // NN
        b = m - a * NN
        place(mem, a, side)
        place(mem, b, side)
        mem[NODES] += 1
        ms[base + i] = mem[TOT + side] - mem[TOT + 1 - side]
        unplace(mem, b, side)
        unplace(mem, a, side)
    for i in range(1, n):
        m = mv[base + i]
        s = ms[base + i]
        j = i
        while j > 0 and ms[base + j - 1] < s:
            mv[base + j] = mv[base + j - 1]
            ms[base + j] = ms[base + j - 1]
            j -= 1
        mv[base + j] = m
        ms[base + j] = s


def out_of_time(mem: Mem) -> bool:
    """Whether the clock has reached ``mem[STOP_AT]`` (``time.monotonic_ns``; 0: never),
    checked at every node on top of the node budget: a thread starved of the CPU then
    stops on time whatever its speed. Pure Python only: numba compiles no clock, so the
    compiled kernels get a version that answers False (``backend``) and keep to their
    budget, which they spend too fast to overrun by much."""
    stop: int = mem[STOP_AT]
    return stop > 0 and time.monotonic_ns() >= stop


def tt_slot(tt: Mem, key: int) -> int:
    slot: int = 4 * (key & (len(tt) // 4 - 1))
    return slot


def negamax(
    mem: Mem, tt: Mem, mv: Mem, ms: Mem, depth: int, alpha: int, beta: int, ply: int
) -> int:
    """PVS: the score of the position for the side to move, searched ``depth`` moves
    deep (forced blocks searched on past it); 0 with ``mem[ABORT]`` set once the node
    budget is spent or the clock has run out (``out_of_time``)."""
    mem[NODES] += 1
    if mem[NODES] >= mem[BUDGET] or out_of_time(mem):
        mem[ABORT] = 1
        return 0
    if ply > mem[SELDEPTH]:
        mem[SELDEPTH] = ply
    stm = mem[STM]
    opp = 1 - stm
    if mem[TN + stm] > 0:
        return WIN_SCORE - ply
    forced = mem[TN + opp] > 0
    if ply >= MAXPLY - 2 or (depth <= 0 and not forced) or depth <= -QDEPTH:
        return evaluate(mem)
    key = mem[HASH] ^ (SIDE_KEY * stm)
    slot = tt_slot(tt, key)
    first = -1
    if tt[slot] == key:
        first = tt[slot + 1]
        stored = tt[slot + 3]
        if ply > 0 and (stored >> 2) >= depth:
            s: int = tt[slot + 2]
            if s > MATE_BOUND:
                s -= ply
            elif s < -MATE_BOUND:
                s += ply
            flag = stored & 3
            if flag == EXACT or (flag == LOWER and s >= beta) or (flag == UPPER and s <= alpha):
                return s
    base = ply * MAXM
    if forced:
        n = gen_blocks(mem, mv, base, stm, SPARE)
        if n == 0:
            return -(WIN_SCORE - ply - 1)
    else:
        n = gen_pairs(mem, mv, base, stm, mem[KROOT] if ply == 0 else mem[KINNER])
        if n == 0:
            return evaluate(mem)
    order_moves(mem, mv, ms, base, n, first)
    if depth <= 0 and n > QMOVES:
        n = QMOVES
    if ply == 0:
        mem[ROOTN] = n
    best = -INF
    best_move = mv[base]
    alpha0 = alpha
    for i in range(n):
        m = mv[base + i]
        a = m // NN
        b = m - a * NN
        place(mem, a, stm)
        place(mem, b, stm)
        mem[STM] = opp
        # Only a score inside the window it was searched with is exact; a null-window
        # search that fails low only says the move is no better than alpha.
        exact = 0
        if i == 0:
            s = -negamax(mem, tt, mv, ms, depth - 1, -beta, -alpha, ply + 1)
            if alpha < s < beta:
                exact = 1
        else:
            s = -negamax(mem, tt, mv, ms, depth - 1, -alpha - 1, -alpha, ply + 1)
            if alpha < s < beta:
                s = -negamax(mem, tt, mv, ms, depth - 1, -beta, -alpha, ply + 1)
                if alpha < s < beta:
                    exact = 1
        mem[STM] = stm
        unplace(mem, b, stm)
        unplace(mem, a, stm)
        if mem[ABORT] != 0:
            if ply == 0:
                # This root move and those after it were not searched to the end: no
                # score for them (the engine reads an unfinished iteration's moves).
                for j in range(i, n):
                    ms[base + j] = -INF
                    mem[ROOTX + j] = 0
            return 0
        if ply == 0:
            ms[base + i] = s
            mem[ROOTX + i] = exact
        if s > best:
            best = s
            best_move = m
            if ply == 0:
                mem[BEST] = m
            if s > alpha:
                alpha = s
                if alpha >= beta:
                    if ply == 0:
                        for j in range(i + 1, n):
                            ms[base + j] = -INF
                            mem[ROOTX + j] = 0
                    break
    stored_score = best
    if best > MATE_BOUND:
        stored_score = best + ply
    elif best < -MATE_BOUND:
        stored_score = best - ply
    flag = EXACT
    if best <= alpha0:
        flag = UPPER
    elif best >= beta:
        flag = LOWER
    tt[slot] = key
    tt[slot + 1] = best_move
    tt[slot + 2] = stored_score
    tt[slot + 3] = max(depth, 0) * 4 + flag
    return best


def search_root(mem: Mem, tt: Mem, mv: Mem, ms: Mem, depth: int) -> int:
    """One iteration of the deepening at the root (ply 0): its score; the best move in
    ``mem[BEST]``, every root move and its score in ``mv[0:n]``, ``ms[0:n]``, with
    ``mem[ROOTX + i]`` 1 where that score is exact (the first move's, and those of the
    moves that raised alpha when searched) and 0 where it is an upper bound (a move
    found no better than the best so far by a null-window search). An iteration cut by
    its budget (``mem[ABORT]``) leaves ``-INF`` as the score of every root move it did
    not finish; ``mem[BEST]`` is set only when a root move is finished."""
    mem[ABORT] = 0
    mem[SELDEPTH] = 0
    # Every argument an int64 read from the array, not a literal: numba then compiles
    # negamax once, for the signature its recursive calls use.
    zero = mem[ABORT]
    return negamax(mem, tt, mv, ms, depth + zero, zero - INF, zero + INF, zero)


def threat_move(mem: Mem, mv: Mem, ms: Mem, ply: int, depth: int) -> int:
    """Threat-space search: 1 if the side to move wins by threats alone within
    ``depth`` more of its moves after this one (each of its moves makes threats, every
    pair of blocks is answered), its first move in ``mem[BEST]`` at ply 0; else 0."""
    mem[NODES] += 1
    if mem[NODES] >= mem[BUDGET] or out_of_time(mem):
        mem[ABORT] = 1
        return 0
    stm = mem[STM]
    opp = 1 - stm
    if mem[TN + stm] > 0:
        return 1
    if mem[TN + opp] > 0 or depth < 0 or ply >= MAXPLY - 3:
        return 0
    top = SCR + 640
    nc = top_cells(mem, stm, KTHREAT, 0, top, top, 0)
    cells = ms  # the attacking pairs, kept in this ply's buffer across the recursion
    base = ply * MAXM
    n = 0
    for i in range(nc):
        for j in range(i + 1, nc):
            cells[base + n] = mem[top + i] * NN + mem[top + j]
            n += 1
    for i in range(n):
        m = cells[base + i]
        a = m // NN
        b = m - a * NN
        place(mem, a, stm)
        place(mem, b, stm)
        won = 0
        if mem[TN + stm] > 0 and mem[TN + opp] == 0:
            mem[STM] = opp
            nb = gen_blocks(mem, mv, base + MAXM, opp, SPARE_THREATS)
            if nb == 0:
                won = 1
            elif depth > 0:
                won = 1
                for j in range(nb):
                    block = mv[base + MAXM + j]
                    c = block // NN
                    d = block - c * NN
                    place(mem, c, opp)
                    place(mem, d, opp)
                    mem[STM] = stm
                    r = threat_move(mem, mv, ms, ply + 2, depth - 1)
                    mem[STM] = opp
                    unplace(mem, d, opp)
                    unplace(mem, c, opp)
                    if r == 0:
                        won = 0
                        break
            mem[STM] = stm
        unplace(mem, b, stm)
        unplace(mem, a, stm)
        if mem[ABORT] != 0:
            return 0
        if won == 1:
            if ply == 0:
                mem[BEST] = m
            return 1
    return 0
