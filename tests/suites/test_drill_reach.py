"""Every op a claim names is watched and broken (issue 38, item 4): in-process, on this machine's torch.

For each claimed op this torch has: an ``eager`` op is wrapped by the on-device watch (_support.ondevice), and
each drill of its kind (``ondevice.DRILLS_BY_KIND``) hands back something other than the real API. And the
``wrong-values`` drill reaches every kind of result: floats, integers (a memory statistic, RNG state bytes, a
count), booleans, dicts of statistics.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SUITES = Path(__file__).resolve().parents[2] / "suites"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the drills need torch"),
]


@pytest.fixture(scope="module")
def support():
    sys.path.insert(0, str(SUITES))
    try:
        from _support import claims, drills, ondevice

        yield claims, drills, ondevice
    finally:
        sys.path.remove(str(SUITES))


def test_every_claimed_op_of_this_torch_is_watched_and_broken_by_each_drill_of_its_kind(support) -> None:
    claims, drills, ondevice = support
    ops = sorted({op for c in claims.load() for op in c.ops})
    present, missed = 0, []
    for op in ops:
        found = drills.split(op)
        if found is None:
            continue  # an API of a later release, or of another device's build: absent from this torch
        present += 1
        holder, name = found
        real = getattr(holder, name)
        kind = ondevice.kind(op)
        if kind == "eager":
            with pytest.MonkeyPatch.context() as mp:
                watched = ondevice.install(mp, {op}, "cpu")
                if watched != [op] or getattr(holder, name) is real:
                    missed.append(f"{op}: not watched")
        for mode in ondevice.DRILLS_BY_KIND[kind]:
            if drills.drilled(mode, op, real, "cpu") is real:
                missed.append(f"{op}: --drill={mode} leaves it as it is")
            with pytest.MonkeyPatch.context() as mp:  # installed where the test calls it (an immutable C type too)
                drills.install(mp, mode, {op}, "cpu")
                now = drills.split(op)
                if now is None or getattr(*now) == real:
                    missed.append(f"{op}: --drill={mode} is not installed where {op} is called")
            after = drills.split(op)
            if after is None or getattr(*after) != real:
                missed.append(f"{op}: --drill={mode} is not undone after the test")
    assert present >= 40, f"only {present} claimed ops found in this torch"
    assert not missed, "\n".join(missed)


def test_wrong_values_reaches_every_kind_of_result(support) -> None:
    import torch

    _, drills, _ = support

    def stats() -> dict[str, int]:
        return {"allocated_bytes.all.current": 1024, "num_alloc_retries": 0}

    cases = {
        "an integer statistic": (lambda: 4096, lambda got, want: got != want),
        "a float reading": (lambda: 41.5, lambda got, want: got != want),
        "a boolean": (lambda: True, lambda got, want: got is not want),
        "a dict of statistics": (stats, lambda got, want: got != want),
        "RNG state bytes": (lambda: torch.arange(16, dtype=torch.uint8), lambda got, want: not torch.equal(got, want)),
        "an int64 tensor": (lambda: torch.tensor([3, 1, 2]), lambda got, want: not torch.equal(got, want)),
        "a float tensor": (lambda: torch.ones(3), lambda got, want: not torch.equal(got, want)),
    }
    for what, (real, differs) in cases.items():
        broken = drills.drilled("wrong-values", "torch.accelerator.memory_allocated", real, "cpu")
        first, second = broken(), broken()
        assert differs(first, real()), f"wrong-values left {what} as it was: {first!r}"
        assert differs(second, first) or isinstance(first, bool), f"{what}: two calls agree: {first!r}"
