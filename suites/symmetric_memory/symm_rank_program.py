"""One rank of the symmetric-memory test (run by ``_support.multiproc.run_ranks``; not a test module).

It joins the process group, allocates a symmetric tensor, fills it with ``rank + 1``, rendezvouses, and
reads its right-hand peer's buffer through the handle: the peer's values arrive without a collective.
What it observed goes to ``--out`` as JSON; the test process asserts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from _support import drills

ELEMENTS = 64


def _device(backend: str, rank: int) -> torch.device:
    if backend == "xccl":
        torch.xpu.set_device(rank)
        return torch.device("xpu", rank)
    torch.cuda.set_device(rank)  # nccl, also RCCL on ROCm builds
    return torch.device("cuda", rank)


def rendezvous(rank: int, world: int, dev: torch.device) -> dict[str, Any]:
    import torch.distributed._symmetric_memory as symm_mem

    t = symm_mem.empty(ELEMENTS, dtype=torch.float32, device=dev)
    t.fill_(rank + 1.0)
    handle = symm_mem.rendezvous(t, dist.group.WORLD)
    handle.barrier()
    peer = (rank + 1) % world
    seen = handle.get_buffer(peer, (ELEMENTS,), torch.float32)
    values = seen[:4].tolist()
    handle.barrier()  # nobody frees its buffer while a peer still reads it
    return {
        # 2.12 (pytorch#178947); absent from 2.11 (seen on an H200): None there, not asked of it
        "is_symm_mem_tensor": bool(symm_mem.is_symm_mem_tensor(t)) if hasattr(symm_mem, "is_symm_mem_tensor") else None,
        "handle_rank": int(handle.rank),
        "handle_world_size": int(handle.world_size),
        "peer": peer,
        "peer_values": values,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=["rendezvous"], required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--out", type=Path, required=True)
    a = parser.parse_args(argv)
    drills.install_from_env()  # under --drill, the test's breakage reaches this rank too
    dev = _device(a.backend, a.rank)
    dist.init_process_group(
        a.backend, init_method=a.init, rank=a.rank, world_size=a.world, timeout=datetime.timedelta(seconds=60)
    )
    status = 0
    try:
        result: dict[str, Any] = {"device": str(dev), **rendezvous(a.rank, a.world, dev)}
    except Exception:
        result = {"error": traceback.format_exc()}
        status = 1
    tmp = a.out.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(result), encoding="utf-8")
    tmp.replace(a.out)
    sys.stdout.flush()
    sys.stderr.flush()
    if status:
        os._exit(status)  # a peer may be stuck in a barrier: leave without tearing down the group
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
