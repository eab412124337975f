"""Refusals bounded as issue 39 asks: the exact text, the releases it was read in, the devices it belongs to.

* ``torch.accelerator.Graph`` on CUDA: "Graph is not supported on device type: cuda", anchored at both ends, from 2.12
  (the API's arrival) until 2.16 (read in 2.13.0, 2.14.1 and 2.15.0: a later release that still refuses fails until
  someone reads it again);
* MX ``scaled_mm`` below sm_100: the words cuBLASLt and the fp8 checks said on an H200 (2.11), until 2.13 (whose
  ScaledBlas.cpp refuses explicitly), under an op the test names only on an NVIDIA GPU below sm_100;
* ``torch.cond`` under Inductor's reduce-overhead and ``torch.while_loop`` as a graph node: bounded by the releases
  whose notes and sources were read.
Fast: the table is read as data, no torch.
"""

from __future__ import annotations

import re
import sys

import pytest

from tests.suites.support_modules import SUITES

FAST = True


@pytest.fixture(scope="module")
def table() -> tuple:
    sys.path.insert(0, str(SUITES))
    try:
        from _support import refusals

        return refusals.REFUSALS
    finally:
        sys.path.remove(str(SUITES))


def _applies(entry, release: tuple[int, int]) -> bool:
    since, until = getattr(entry, "since", None), getattr(entry, "until", None)
    if since and release < tuple(map(int, since.split("."))):
        return False
    return not (until and release >= tuple(map(int, until.split("."))))


def _rows(table: tuple, op: str) -> list:
    return [r for r in table if r.op == op]


def test_accelerator_graph_refusal_is_exact_and_bounded(table: tuple) -> None:
    (row,) = _rows(table, "torch.accelerator.Graph")
    assert row.text.startswith("^") and row.text.endswith("$"), row.text
    assert re.search(row.text, "Graph is not supported on device type: cuda")
    assert not re.search(row.text, "Graph is not supported on device type: cuda (a later adapter failed to load)")
    assert not re.search(row.text, "CUDA error: Graph is not supported on device type: cuda")
    assert [_applies(row, r) for r in ((2, 11), (2, 12), (2, 15), (2, 16))] == [False, True, True, False]


def test_mx_refusals_below_sm100_are_bounded(table: tuple) -> None:
    rows = _rows(table, "torch.nn.functional.scaled_mm:mx-below-sm100")
    # Three messages seen on an sm_90 (run 2) and F.scaled_mm's unswizzled-scale refusal on 2.11 (run 3).
    assert len(rows) == 4 and all(r.families == ("cuda",) for r in rows)
    assert all(_applies(r, (2, 11)) and _applies(r, (2, 12)) and not _applies(r, (2, 13)) for r in rows)


def test_graph_node_refusals_are_bounded(table: tuple) -> None:
    (cond,) = _rows(table, "torch.compile:reduce-overhead:cond")
    (loop,) = _rows(table, "torch._higher_order_ops.while_loop:cuda-graph")
    assert _applies(cond, (2, 15)) and not _applies(cond, (2, 16))
    assert _applies(loop, (2, 13)) and not _applies(loop, (2, 14))
