"""The search behind ``SearchBot`` (``bot.bots.search_bot``), one concept per module:

* ``layout``: the flat memory the kernels share (board, window counts, threat and
  candidate sets, Zobrist keys), its offsets, and the board's frame;
* ``kernels``: make/unmake with incremental window counts and evaluation, move
  generation and ordering over stone pairs, PVS alpha-beta with a transposition table,
  threat-space search; numba-compilable Python;
* ``backend``: those kernels compiled with numba (lazily, in a worker thread) or as
  plain Python;
* ``engine``: the driver: iterative deepening, time kept as a node budget, results;
* ``solver``: a small exhaustive solver for forced wins, to check the tactics suite.
"""
