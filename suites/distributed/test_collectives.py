"""Collectives and differentiable functional collectives on the device's process-group backend.

A group of 2 ranks (and, for one-device hosts, of 1 rank) on gloo (CPU), NCCL (CUDA; RCCL on ROCm) or
XCCL (XPU) runs every collective once (``rank_program.py``, scenario ``everything``); each test checks
one collective on every rank against the value it must have, exactly (integer-valued tensors).
The functional collectives (``torch.distributed._functional_collectives``) are checked forward and
backward against hand-derived gradients: the 2.11 "differentiable collectives" (pytorch#168140),
and once under ``torch.compile(fullgraph=True)``. Every collective is claimed on every backend
(``features.toml``): an error, a refusal included, fails.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from _support.multiproc import GroupOutcome, group_backend, group_requirement, run_ranks_once, session_dir
from _support.requires import need

PROGRAM = Path(__file__).with_name("rank_program.py")
DEADLINE_S = 150.0

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module", params=[2, 1], ids=["2-ranks", "1-rank"])
def group(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, GroupOutcome]:
    world = request.param
    need(group_requirement(world))
    # once per session: the xdist workers share one group run (it costs both cores for seconds)
    shared = session_dir(tmp_path_factory)
    backend = group_backend()
    run = run_ranks_once(
        shared, f"{backend}-{world}", PROGRAM, "everything", world=world, backend=backend, deadline_s=DEADLINE_S
    )
    return world, run


def _per_rank(group: tuple[int, GroupOutcome], section: str, op: str) -> tuple[int, list[Any]]:
    """Every rank's observed value of ``op``; the group must have run (a teardown crash after the
    results were written is ``test_group_tears_down_cleanly``'s failure, not every collective's)."""
    world, run = group
    assert not run.timed_out, run.describe()
    for r in run.ranks:
        assert r.result and section in r.result, f"rank {r.rank} reported no {section} results\n{run.describe()}"
        assert r.result.get("backend") == group_backend(), run.describe()
    values = []
    for rank in run.ranks:
        entry = rank.result[section][op]
        if "error" in entry:
            # no collective of gloo, NCCL, RCCL or XCCL is claimed to refuse: any error is a failure
            raise RuntimeError(
                f"{op} failed on rank {rank.rank} of a {world}-rank {group_backend()} group: {entry['error']}"
            )
        values.append(entry["value"])
    return world, values


def _tri(w: int) -> float:
    return w * (w + 1) / 2  # sum over ranks of (rank + 1)


EXPECTED = {
    "all_reduce_sum": lambda r, w: [_tri(w)] * 4,
    "all_reduce_sum_int64": lambda r, w: [w * 10**10 + w * (w - 1) // 2] * 4,
    "all_reduce_max": lambda r, w: [3.0 * (w - 1) - 1] * 4,
    "all_reduce_avg": lambda r, w: [float(w - 1)] * 4,  # mean of 2 * rank
    "all_gather": lambda r, w: [[10.0 * k + j for j in range(3)] for k in range(w)],
    "all_gather_into_tensor": lambda r, w: [10.0 * k + j for k in range(w) for j in range(3)],
    "reduce_scatter_tensor": lambda r, w: [w * (2.0 * r + j) + 100.0 * w * (w - 1) / 2 for j in range(2)],
    "broadcast": lambda r, w: [7.0 * (w - 1)] * 4,  # from the last rank
    "barrier": lambda r, w: list(range(w)),  # every rank's arrival is visible after the barrier
}


def test_group_tears_down_cleanly(group: tuple[int, GroupOutcome]) -> None:
    """Every rank joined, ran, destroyed its process group and exited 0 by itself."""
    _, run = group
    assert not run.timed_out and all(r.ok for r in run.ranks), run.describe()


@pytest.mark.parametrize("op", list(EXPECTED))
def test_collective(group: tuple[int, GroupOutcome], op: str) -> None:
    world, values = _per_rank(group, "collectives", op)
    for rank, got in enumerate(values):
        want = EXPECTED[op](rank, world)
        assert got == want, f"{op} on rank {rank} of {world}: got {got}, want {want}"


FUNCTIONAL = {
    # y = all_reduce(x_r = rank+1); loss_r = (rank+1) * sum(y): grad = all_reduce of the upstream grads
    "all_reduce": lambda r, w: {"out": [_tri(w)] * 4, "grad": [_tri(w)] * 4},
    # loss = sum(all_gather(x) * arange): grad_r = reduce_scatter = world * coefficients of chunk r
    "all_gather_tensor": lambda r, w: {
        "out": [10.0 * k + j for k in range(w) for j in range(3)],
        "grad": [w * (3.0 * r + j) for j in range(3)],
    },
    # out_r = sum_k (k+1) * ones; loss = sum(out * [1, 2]): grad = (rank+1) * all_gather([1, 2])
    "reduce_scatter_tensor": lambda r, w: {"out": [_tri(w)] * 2, "grad": [(r + 1.0) * c for c in (1.0, 2.0) * w]},
    # chunk k of rank r goes to rank k; the gradient comes back the same way
    "all_to_all_single": lambda r, w: {
        "out": [2.0 * r + j + 100.0 * k for k in range(w) for j in range(2)],
        "grad": [2.0 * r + j + 1 for _ in range(w) for j in range(2)],
    },
}


@pytest.mark.parametrize("op", list(FUNCTIONAL))
def test_functional_collective_forward_and_gradient(group: tuple[int, GroupOutcome], op: str) -> None:
    world, values = _per_rank(group, "functional", op)
    for rank, got in enumerate(values):
        want = FUNCTIONAL[op](rank, world)
        assert got == want, f"funcol {op} on rank {rank} of {world}: got {got}, want {want}"


def test_functional_collective_under_compile(group: tuple[int, GroupOutcome]) -> None:
    """loss = sum over ranks of sin(x_k)^2 through all_gather: d loss / d x_r = world * sin(2 x_r)."""
    world, values = _per_rank(group, "functional", "compiled_all_gather")
    for rank, got in enumerate(values):
        want = [world * math.sin(2 * (j + rank)) for j in range(3)]
        for name in ("grad", "eager_grad"):
            assert got[name] == pytest.approx(want, rel=1e-5, abs=1e-5), f"{name} on rank {rank}: {got[name]} vs {want}"
