"""One rank of a distributed test (run by ``_support.multiproc.run_ranks``; not a test module).

It joins the process group, runs one scenario, writes what it observed as JSON to ``--out`` and exits
0; the test process computes what every value should be and asserts. Each collective's outcome is
recorded separately (``{"value": ...}`` or ``{"error": "Type: message"}``), so one failing collective
fails one test. Scenarios ``fail`` and ``hang`` misbehave on purpose, to check that a failed or hung
peer is reported and reaped.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from _support import drills


def _device(backend: str, rank: int) -> torch.device:
    if backend == "nccl":
        torch.cuda.set_device(rank)
        return torch.device("cuda", rank)
    if backend == "xccl":
        torch.xpu.set_device(rank)
        return torch.device("xpu", rank)
    return torch.device("cpu")


def _record(results: dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
    try:
        results[name] = {"value": fn()}
    except Exception as e:  # one collective's failure is that collective's result
        first = str(e).splitlines()[0] if str(e) else ""
        results[name] = {"error": f"{type(e).__name__}: {first}"[:1000]}


def _values(t: torch.Tensor) -> list[Any]:
    return t.detach().cpu().tolist()


def collectives(rank: int, world: int, dev: torch.device, workdir: Path) -> dict[str, Any]:
    r: dict[str, Any] = {}

    def all_reduce(op: dist.ReduceOp, t: torch.Tensor) -> list[Any]:
        dist.all_reduce(t, op=op)
        return _values(t)

    _record(r, "all_reduce_sum", lambda: all_reduce(dist.ReduceOp.SUM, torch.full((4,), rank + 1.0, device=dev)))
    _record(
        r,
        "all_reduce_sum_int64",
        lambda: all_reduce(dist.ReduceOp.SUM, torch.full((4,), 10**10 + rank, dtype=torch.int64, device=dev)),
    )
    _record(r, "all_reduce_max", lambda: all_reduce(dist.ReduceOp.MAX, torch.full((4,), 3.0 * rank - 1, device=dev)))
    _record(r, "all_reduce_avg", lambda: all_reduce(dist.ReduceOp.AVG, torch.full((4,), 2.0 * rank, device=dev)))

    def all_gather() -> list[Any]:
        out = [torch.empty(3, device=dev) for _ in range(world)]
        dist.all_gather(out, torch.arange(3.0, device=dev) + 10 * rank)
        return [_values(t) for t in out]

    def all_gather_into_tensor() -> list[Any]:
        out = torch.empty(3 * world, device=dev)
        dist.all_gather_into_tensor(out, torch.arange(3.0, device=dev) + 10 * rank)
        return _values(out)

    def reduce_scatter() -> list[Any]:
        out = torch.empty(2, device=dev)
        dist.reduce_scatter_tensor(out, torch.arange(2.0 * world, device=dev) + 100 * rank)
        return _values(out)

    def broadcast() -> list[Any]:
        t = torch.full((4,), 7.0 * rank, device=dev)
        dist.broadcast(t, src=world - 1)
        return _values(t)

    def barrier() -> list[Any]:
        # ranks arrive 0.3 s apart; after the barrier every rank must see every arrival
        time.sleep(0.3 * rank)
        (workdir / f"arrived-{rank}").touch()
        dist.barrier()
        return sorted(int(p.name.split("-")[1]) for p in workdir.glob("arrived-*"))

    for name, fn in [
        ("all_gather", all_gather),
        ("all_gather_into_tensor", all_gather_into_tensor),
        ("reduce_scatter_tensor", reduce_scatter),
        ("broadcast", broadcast),
        ("barrier", barrier),
    ]:
        _record(r, name, fn)
    return r


def functional(rank: int, world: int, dev: torch.device, workdir: Path) -> dict[str, Any]:
    """Differentiable functional collectives (2.11): forward values and the gradients they give."""
    import torch.distributed._functional_collectives as funcol

    # 2.13 renamed all_gather_tensor / reduce_scatter_tensor to *_single (the old names warn)
    all_gather_single = getattr(funcol, "all_gather_single", None) or funcol.all_gather_tensor
    reduce_scatter_single = getattr(funcol, "reduce_scatter_single", None) or funcol.reduce_scatter_tensor
    group = dist.group.WORLD
    r: dict[str, Any] = {}

    def all_reduce() -> dict[str, Any]:
        x = torch.full((4,), rank + 1.0, device=dev, requires_grad=True)
        y = funcol.all_reduce(x, "sum", group)
        (y * (rank + 1)).sum().backward()
        return {"out": _values(y), "grad": _values(x.grad)}

    def all_gather() -> dict[str, Any]:
        x = (torch.arange(3.0, device=dev) + 10 * rank).requires_grad_()
        out = all_gather_single(x, 0, group)
        (out * torch.arange(3.0 * world, device=dev)).sum().backward()
        return {"out": _values(out), "grad": _values(x.grad)}

    def reduce_scatter() -> dict[str, Any]:
        x = torch.ones(2 * world, device=dev, requires_grad=True)
        out = reduce_scatter_single(x * (rank + 1), "sum", 0, group)
        (out * torch.tensor([1.0, 2.0], device=dev)).sum().backward()
        return {"out": _values(out), "grad": _values(x.grad)}

    def all_to_all() -> dict[str, Any]:
        x = (torch.arange(2.0 * world, device=dev) + 100 * rank).requires_grad_()
        out = funcol.all_to_all_single(x, [2] * world, [2] * world, group)
        (out * torch.arange(1.0, 2 * world + 1, device=dev)).sum().backward()
        return {"out": _values(out), "grad": _values(x.grad)}

    def compiled() -> dict[str, Any]:
        def f(x: torch.Tensor) -> torch.Tensor:
            return all_gather_single(x.sin(), 0, group).square().sum()

        x = (torch.arange(3.0, device=dev) + rank).requires_grad_()
        xe = x.detach().clone().requires_grad_()
        torch.compile(f, backend="aot_eager", fullgraph=True)(x).backward()
        f(xe).backward()
        return {"grad": _values(x.grad), "eager_grad": _values(xe.grad)}

    for name, fn in [
        ("all_reduce", all_reduce),
        ("all_gather_tensor", all_gather),
        ("reduce_scatter_tensor", reduce_scatter),
        ("all_to_all_single", all_to_all),
        ("compiled_all_gather", compiled),
    ]:
        _record(r, name, fn)
    return r


def everything(rank: int, world: int, dev: torch.device, workdir: Path) -> dict[str, Any]:
    return {"collectives": collectives(rank, world, dev, workdir), "functional": functional(rank, world, dev, workdir)}


def fail(rank: int, world: int, dev: torch.device, workdir: Path) -> dict[str, Any]:
    """The last rank dies; the others enter an all_reduce that can never complete."""
    if rank == world - 1:
        raise RuntimeError(f"deliberate failure on rank {rank}")
    t = torch.ones(4, device=dev)
    dist.all_reduce(t)
    return {"all_reduce": _values(t)}


def hang(rank: int, world: int, dev: torch.device, workdir: Path) -> dict[str, Any]:
    """The last rank never joins; rank 0's all_reduce must end at the group's timeout."""
    if rank == world - 1:
        time.sleep(3600)

    def all_reduce() -> list[Any]:
        t = torch.ones(4, device=dev)
        dist.all_reduce(t)
        return _values(t)

    r: dict[str, Any] = {}
    t0 = time.monotonic()
    _record(r, "all_reduce", all_reduce)
    r["elapsed_s"] = time.monotonic() - t0
    return r


SCENARIOS: dict[str, Callable[[int, int, torch.device, Path], dict[str, Any]]] = {
    "everything": everything,
    "fail": fail,
    "hang": hang,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pg-timeout", type=float, default=120.0, help="process group timeout, seconds")
    a = parser.parse_args(argv)
    drills.install_from_env()  # under --drill, the test's breakage reaches this rank too
    dev = _device(a.backend, a.rank)
    dist.init_process_group(
        a.backend,
        init_method=a.init,
        rank=a.rank,
        world_size=a.world,
        timeout=datetime.timedelta(seconds=a.pg_timeout),
    )
    status = 0
    try:
        result: dict[str, Any] = {"backend": dist.get_backend(), "device": str(dev)}
        result.update(SCENARIOS[a.scenario](a.rank, a.world, dev, a.out.parent))
    except Exception:
        result = {"error": traceback.format_exc()}
        status = 1
    tmp = a.out.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(result), encoding="utf-8")
    tmp.replace(a.out)
    sys.stdout.flush()
    sys.stderr.flush()
    if status != 0 or a.scenario != "everything":
        # a group with a dead or hung peer cannot be torn down: leave without running exit handlers
        os._exit(status)
    dist.destroy_process_group()  # a crash here shows as this rank's exit status
    return status


if __name__ == "__main__":
    sys.exit(main())
