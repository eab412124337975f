"""Cyclic GC paused while a large structure is built (harness/gcpause.py): off inside the block,
restored after (on an exception too), nested blocks leave it off until the outermost ends, and a
collector that was off stays off."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from harness.gcpause import paused


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()
    gc.unfreeze()


def test_off_inside_and_on_after() -> None:
    gc.enable()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0, "nothing is left frozen (moved to the oldest generation only)"


def test_restored_after_an_exception() -> None:
    gc.enable()
    with pytest.raises(ValueError, match="inside"), paused():
        raise ValueError("inside")
    assert gc.isenabled()


def test_nested_blocks_keep_it_off_until_the_outermost_ends() -> None:
    gc.enable()
    with paused():
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the inner block must not turn it back on"
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_what_the_block_built_waits_in_the_oldest_generation() -> None:
    """Without the move, the first collections after the block would walk all it built."""
    gc.enable()
    with paused():
        built = [[i] for i in range(2_000)]  # lists are always tracked by the collector
    assert all(map(gc.is_tracked, built))
    young = {id(o) for generation in (0, 1) for o in gc.get_objects(generation=generation)}
    left_young = [d for d in built if id(d) in young]
    assert not left_young, f"{len(left_young)} of the block's objects are still in a young generation"
