"""``python -m bot.bots.search``: compile SearchBot's kernels into numba's disk cache now,
so that the next process to need them loads them (about 2 s) instead of compiling them
(some 15 s on an idle core, more on a busy one). ``make`` runs it after installing; a bot
server does the same at its start anyway (``SearchBot.warm_up``), before it says it is
ready. Exit status 1 when numba is installed but compiling failed."""

from __future__ import annotations

import sys
import time

from bot.bots.search.backend import compiled_backend, numba_available, pure_forced


def main() -> int:
    if pure_forced() or not numba_available():
        print("search kernels: nothing to compile (no numba, or HTTTX_SEARCH_PURE is set)")
        return 0
    started = time.monotonic()
    built = compiled_backend(wait=True)
    if built is None:
        print("search kernels: compiling with numba failed (see above)", file=sys.stderr)
        return 1
    cache = getattr(getattr(built.module.search_root, "_cache", None), "_cache_path", None)
    print(
        f"search kernels: compiled or loaded in {time.monotonic() - started:.1f} s; "
        f"numba's disk cache: {cache or 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
