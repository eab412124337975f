"""Cyclic garbage collection paused while a large, acyclic structure is built.

Reading a cell or a matrix creates hundreds of thousands of dicts, tuples and dataclasses,
none of them in a reference cycle (plain reference counting frees them). The cyclic
collector still runs every 700 allocations, and its full passes walk every object alive:
in a merge of 5 cells x 50,000 tests they took about a tenth of the time (gc callbacks,
benchmarks/bench_merge.py's data), for nothing to collect. So the merge and the matrix
reader pause it, and restore it after with what they built in the oldest generation.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block; on leaving, the collector is as it was (so
    nested blocks leave it off until the outermost one ends)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # What the block built is still young: the first collection after it would walk all
            # of it. Moved (freeze, then unfreeze: two list splices) to the oldest generation, it
            # waits for the rare full collection instead, where long-lived data belongs.
            gc.freeze()
            gc.unfreeze()
            gc.enable()
