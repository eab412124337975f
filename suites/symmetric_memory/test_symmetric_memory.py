"""Symmetric memory (``torch.distributed._symmetric_memory``; on Intel GPUs from 2.14, pytorch#193756).

``empty`` allocates a tensor every rank of a group can map, ``rendezvous`` exchanges the mappings and
returns a handle through which a rank reads its peers' buffers directly. A 1-rank and a 2-rank group
(one device per rank) on the device's backend (NCCL, RCCL on ROCm, XCCL): each rank fills its buffer with
``rank + 1`` and reads its right-hand peer's. The CPU has no symmetric memory: asserted, then ``[hardware]``.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch
from _support.multiproc import group_backend, group_requirement, run_ranks_once, session_dir
from _support.refusals import refused
from _support.requires import api, need, requires, skip_hardware

PROGRAM = Path(__file__).with_name("symm_rank_program.py")
EMPTY = "torch.distributed._symmetric_memory.empty"

pytestmark = [
    pytest.mark.timeout(240),
    requires(api("torch.distributed._symmetric_memory.empty"), api("torch.distributed._symmetric_memory.rendezvous")),
]


@pytest.mark.host
def test_symmetric_memory_api(compat_env) -> None:
    import torch.distributed._symmetric_memory as symm_mem

    empty = inspect.signature(symm_mem.empty).parameters
    assert next(iter(empty.values())).kind is inspect.Parameter.VAR_POSITIONAL, f"empty{list(empty)}: *size first"
    assert {"dtype", "device"} <= set(empty), f"empty parameters {list(empty)}"
    rendezvous = inspect.signature(symm_mem.rendezvous)
    assert list(rendezvous.parameters) == ["tensor", "group"], f"rendezvous{rendezvous}: want (tensor, group)"
    if compat_env.torch_version[:2] >= (2, 12):  # pytorch#178947
        assert callable(getattr(symm_mem, "is_symm_mem_tensor", None)), "is_symm_mem_tensor missing"


@pytest.mark.parametrize("world", [1, 2], ids=["1-rank", "2-ranks"])
def test_symmetric_tensor_rendezvous(world: int, device: torch.device, compat_env, tmp_path_factory) -> None:
    import torch.distributed._symmetric_memory as symm_mem

    if device.type == "cpu":
        with pytest.raises(RuntimeError, match="does not support device type cpu"):
            symm_mem.empty(16, device="cpu")
        skip_hardware(
            f"symmetric memory needs CUDA/ROCm or XPU devices; none here (device {compat_env.device_label}); "
            "the CPU refused it as it must"
        )
    need(group_requirement(world))
    backend = group_backend()
    run = run_ranks_once(
        session_dir(tmp_path_factory), f"symm-{backend}-{world}", PROGRAM, "rendezvous",
        world=world, backend=backend, deadline_s=150.0,
    )  # fmt: skip
    assert not run.timed_out, run.describe()
    errors = [r.result["error"].strip().splitlines()[-1] for r in run.ranks if r.result and "error" in r.result]
    if errors and len(errors) == len(run.ranks):  # every rank refused alike: judged by the refusal table
        kind, _, said = errors[0].partition(": ")
        error = RuntimeError(said) if kind == "RuntimeError" else RuntimeError(errors[0])
        refused(EMPTY, error, f"symmetric memory on {compat_env.device_label} (rank 0: {errors[0]})")
    for r in run.ranks:
        assert r.ok and r.result and "error" not in r.result, run.describe()
        got = r.result
        peer = (r.rank + 1) % world
        assert got["is_symm_mem_tensor"] is not False, f"rank {r.rank}: symm_mem.empty gave a plain tensor"
        assert got["is_symm_mem_tensor"] is not None or compat_env.torch_version[:2] < (2, 12), (
            f"rank {r.rank}: torch {compat_env.torch_base} has no is_symm_mem_tensor (2.12, pytorch#178947)"
        )
        assert (got["handle_rank"], got["handle_world_size"]) == (r.rank, world), f"rank {r.rank}: handle {got}"
        assert got["peer_values"] == [peer + 1.0] * 4, f"rank {r.rank} read rank {peer}'s buffer as {got}"
