"""The server process tunes the cyclic collector once it has started (game/serve.py)."""

from __future__ import annotations

import gc

from game.serve import GC_THRESHOLDS, tune_gc


def test_tune_gc_freezes_the_startup_objects_and_raises_the_thresholds() -> None:
    thresholds = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
