"""What a real accelerator does for the ops the suites claim: kernel names, graph launches, refusal texts.

    python3 tools/gpu-facts.py OUT.json

Run once per new kind of device (H200, MI300X, B200, ...) beside tools/device-proof.sh: the evidence the
suites record (suites/_support/evidence.py) is matched against kernel names, graph launches and refusal texts,
and those are facts of the device, read here, never guessed. Every section runs on its own (a failure is
recorded as its exception text, which is itself a fact: the exact refusal of that op on that device) and the
file is written after each section, so a kill keeps what was read so far. Needs torch; never the harness.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections import Counter
from typing import Any

import torch

FACTS: dict[str, Any] = {}
OUT = sys.argv[1] if len(sys.argv) > 1 else "gpu-facts.json"
DEV = os.environ.get("GPU_FACTS_DEVICE", "cuda")  # "cpu": a dry run of the script itself


def sync() -> None:
    if DEV != "cpu":
        torch.cuda.synchronize()


def save() -> None:
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        json.dump(FACTS, f, indent=1, sort_keys=True, default=str)
    os.replace(tmp, OUT)


def section(name: str):
    def wrap(fn):
        t0 = time.perf_counter()
        try:
            FACTS[name] = fn()
        except BaseException as e:  # a refusal is a fact too
            FACTS[name] = {"error": f"{type(e).__name__}: {e}"[:2000], "trace": traceback.format_exc()[-1500:]}
        FACTS.setdefault("_seconds", {})[name] = round(time.perf_counter() - t0, 2)
        save()
        print(f"gpu-facts: {name} {FACTS['_seconds'][name]} s", flush=True)
        return fn

    return wrap


def profiled(fn, *args, **kwargs) -> dict[str, Any]:
    """Run fn under the profiler; the device-side activity by Kineto activity type, and runtime calls."""
    from torch.profiler import ProfilerActivity, profile

    sync()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEV != "cpu" else [])
    with profile(activities=acts) as prof:
        out = fn(*args, **kwargs)
        sync()
    kinds: dict[str, Counter] = {}
    for e in prof.profiler.kineto_results.events():
        kind = _kind(e)
        if kind is None:
            continue
        kinds.setdefault(kind, Counter())[e.name()[:160]] += 1
    legacy = Counter(
        (str(e.device_type), e.name[:120]) for e in prof.events() if str(e.device_type) != "DeviceType.CPU"
    )
    return {
        "by_activity": {k: dict(v.most_common(40)) for k, v in kinds.items()},
        "legacy_device_events": [f"{d} {n} x{c}" for (d, n), c in legacy.most_common(40)],
        "out": _describe(out),
    }


def _kind(e: Any) -> str | None:
    """Kineto's activity type (torch >= 2.13), else the same read from the device type and the name (2.11)."""
    if hasattr(e, "activity_type"):
        kind = str(e.activity_type())
        return None if kind in ("cpu_op", "python_function", "user_annotation") else kind
    name = e.name()
    if str(e.device_type()) != "DeviceType.CPU":
        return "gpu_memcpy" if name.startswith("Memcpy") else "gpu_memset" if name.startswith("Memset") else "kernel"
    return "runtime" if name.startswith(("cuda", "cu", "hip", "nccl")) else None


def _describe(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return f"{tuple(out.shape)} {out.dtype} {out.device}"
    if isinstance(out, (tuple, list)):
        return [_describe(o) for o in out][:6]
    return type(out).__name__


@section("env")
def _env() -> dict[str, Any]:
    p = torch.cuda.get_device_properties(0)
    info: dict[str, Any] = {
        "python": sys.version,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "git": getattr(torch.version, "git_version", None),
        "device": p.name,
        "capability": list(torch.cuda.get_device_capability(0)),
        "sms": p.multi_processor_count,
        "memory": p.total_memory,
        "arch_list": torch.cuda.get_arch_list(),
        "cudnn": torch.backends.cudnn.version(),
        "cusparselt": getattr(getattr(torch.backends, "cusparselt", None), "version", lambda: None)(),
        "preferred_linalg": str(torch.backends.cuda.preferred_linalg_library()),
        "preferred_blas": str(getattr(torch.backends.cuda, "preferred_blas_library", lambda: None)()),
        "accelerator": str(torch.accelerator.current_accelerator()),
        "has_accelerator_graph": hasattr(torch.accelerator, "Graph"),
        "has_F_scaled_mm": hasattr(torch.nn.functional, "scaled_mm"),
        "has_scaled_addmm": hasattr(torch, "_scaled_addmm") or hasattr(torch.nn.functional, "scaled_addmm"),
        "rng_state_bytes": torch.cuda.get_rng_state().numel(),
        "flash_sdp": torch.backends.cuda.flash_sdp_enabled(),
        "cudnn_sdp": torch.backends.cuda.cudnn_sdp_enabled(),
        "env_vars": {k: v for k, v in os.environ.items() if k.startswith(("CUDA", "NVIDIA", "TORCH"))},
    }
    try:
        import triton

        info["triton"] = triton.__version__
    except Exception as e:
        info["triton"] = repr(e)
    return info


@section("sdpa")
def _sdpa() -> dict[str, Any]:
    import warnings

    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    res: dict[str, Any] = {}
    backends = (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH)
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for case in ("plain", "causal", "hd80", "hd33", "hd256", "bool-mask", "gqa"):
            hd = {"hd80": 80, "hd33": 33, "hd256": 256}.get(case, 64)
            q = torch.randn(2, 8, 256, hd, device=DEV, dtype=dtype)
            kv_heads = 2 if case == "gqa" else 8
            k, v = (torch.randn(2, kv_heads, 256, hd, device=DEV, dtype=dtype) for _ in range(2))
            kw: dict[str, Any] = {"is_causal": case == "causal"}
            if case == "bool-mask":
                kw["attn_mask"] = torch.rand(256, 256, device=DEV) > 0.3
            if case == "gqa":
                kw["enable_gqa"] = True
            ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), **kw)
            for b in backends:
                key = f"{b.name} {str(dtype)[6:]} {case}"
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        with sdpa_kernel([b]):
                            r = profiled(F.scaled_dot_product_attention, q, k, v, **kw)
                            out = F.scaled_dot_product_attention(q, k, v, **kw)
                        r["max_err_vs_f64"] = float((out.double() - ref).abs().max())
                        del r["legacy_device_events"]
                        res[key] = r
                    except Exception as e:
                        res[key] = {"error": f"{type(e).__name__}: {e}"[:300]}
                    res[key]["warnings"] = sorted({str(w.message)[:300] for w in caught})[:6]
    q, k, v = (torch.randn(2, 8, 256, 64, device=DEV, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))

    def fwd_bwd():
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, k, v).sum().backward()

    res["FLASH bwd"] = profiled(fwd_bwd)
    return res


@section("sparse24")
def _sparse() -> dict[str, Any]:
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured

    res: dict[str, Any] = {}
    for force_cutlass in (False, True):
        for dtype in (torch.float16, torch.bfloat16, torch.int8, torch.float32, getattr(torch, "float8_e4m3fn", None)):
            if dtype is None:
                continue
            key = f"{'cutlass' if force_cutlass else 'default'} {dtype}"
            try:
                SparseSemiStructuredTensor._FORCE_CUTLASS = force_cutlass
                mask = torch.tensor([1, 1, 0, 0], device=DEV, dtype=torch.bool).tile(256, 64)
                if dtype in (torch.int8,):
                    w = torch.randint(-8, 8, (256, 256), device=DEV, dtype=dtype) * mask
                    x = torch.randint(-8, 8, (256, 128), device=DEV, dtype=dtype)
                elif dtype is getattr(torch, "float8_e4m3fn", None):
                    w = (torch.randn(256, 256, device=DEV) * mask).to(dtype)
                    x = torch.randn(128, 256, device=DEV).to(dtype).t()
                else:
                    w = torch.randn(256, 256, device=DEV, dtype=dtype) * mask
                    x = torch.randn(256, 128, device=DEV, dtype=dtype)
                sw = profiled(to_sparse_semi_structured, w)
                s = to_sparse_semi_structured(w)
                r = profiled(torch.mm, s, x)
                r["convert"] = sw["by_activity"]
                r["class"] = type(s).__name__
                if dtype.is_floating_point and dtype.itemsize >= 2:
                    got = torch.mm(s, x).double()
                    r["max_err_vs_f64"] = float((got - w.double() @ x.double()).abs().max())
                res[key] = r
            except Exception as e:
                res[key] = {"error": f"{type(e).__name__}: {e}"[:600]}
    SparseSemiStructuredTensor._FORCE_CUTLASS = False
    try:
        res["cslt_available"] = bool(torch.backends.cusparselt.is_available())
    except Exception as e:
        res["cslt_available"] = repr(e)
    return res


@section("fp8_scaled_mm")
def _fp8() -> dict[str, Any]:
    res: dict[str, Any] = {}
    f8 = torch.float8_e4m3fn
    a = torch.randn(128, 256, device=DEV)
    b = torch.randn(256, 192, device=DEV)
    cases = {
        "tensorwise": (torch.tensor(0.5, device=DEV), torch.tensor(4.0, device=DEV)),
        "rowwise": (torch.full((128, 1), 0.5, device=DEV), torch.full((1, 192), 4.0, device=DEV)),
    }
    for name, (sa, sb) in cases.items():
        try:
            a8 = (a / sa).to(f8)
            b8 = (b / sb).to(f8).t().contiguous().t()
            r = profiled(torch._scaled_mm, a8, b8, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            out = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            ref = (a8.double() * sa.double()) @ (b8.double() * sb.double())
            r["max_rel_err_vs_f64"] = float((out.double() - ref).abs().max() / ref.abs().max())
            ignored = a8.double() @ b8.double()
            r["max_rel_err_if_scales_ignored"] = float((ignored - ref).abs().max() / ref.abs().max())
            res[name] = r
        except Exception as e:
            res[name] = {"error": f"{type(e).__name__}: {e}"[:800]}
    # MX on Hopper: the exact refusal
    try:
        e8 = torch.float8_e8m0fnu
        a8 = torch.randn(128, 256, device=DEV).to(f8)
        b8 = torch.randn(192, 256, device=DEV).to(f8).t()
        sa = torch.full((128 * 256 // 32,), 1.0, device=DEV).to(e8)
        sb = torch.full((192 * 256 // 32,), 1.0, device=DEV).to(e8)
        torch._scaled_mm(a8, b8, sa, sb, out_dtype=torch.bfloat16)
        res["mxfp8"] = "ran"
    except Exception as e:
        res["mxfp8"] = {"error": f"{type(e).__name__}: {e}"[:800]}
    if hasattr(torch.nn.functional, "scaled_mm"):
        res["F.scaled_mm_doc"] = (torch.nn.functional.scaled_mm.__doc__ or "")[:1500]
    return res


def _graph_launches(r: dict[str, Any]) -> dict[str, int]:
    runtime = {}
    for kind, names in r["by_activity"].items():
        for n, c in names.items():
            if "Graph" in n or "graph" in n:
                runtime[f"{kind}:{n}"] = c
    return runtime


@section("graphs")
def _graphs() -> dict[str, Any]:
    res: dict[str, Any] = {}
    x = torch.randn(1024, 1024, device=DEV)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        x @ x
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        x @ x + 1

    def replay12():
        for _ in range(12):
            g.replay()

    r = profiled(replay12)
    res["CUDAGraph replay x12"] = {
        "graph_events": _graph_launches(r),
        "by_activity_kinds": {k: sum(v.values()) for k, v in r["by_activity"].items()},
    }
    # capture under profiler
    g2 = torch.cuda.CUDAGraph()

    def capture():
        with torch.cuda.graph(g2):
            x.mul_(1.0)

    r = profiled(capture)
    res["CUDAGraph capture"] = {"graph_events": _graph_launches(r)}
    # RNG in capture
    g3 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g3):
        z = torch.rand(4, device=DEV)
    g3.replay()
    a = z.clone()
    g3.replay()
    res["rng in capture differs per replay"] = bool((a != z).any())
    # make_graphed_callables
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).to(DEV)
    inp = torch.randn(16, 64, device=DEV, requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(model, (inp,))
    res["make_graphed_callables type"] = (
        f"{type(graphed).__module__}.{type(graphed).__name__} is_model={graphed is model}"
    )

    def step():
        for _ in range(5):
            graphed(inp).sum().backward()

    r = profiled(step)
    res["make_graphed x5 fwd+bwd"] = _graph_launches(r)
    res["forward attr"] = type(getattr(graphed, "forward", None)).__name__
    return res


@section("compile_reduce_overhead")
def _compile() -> dict[str, Any]:
    from torch._dynamo.utils import counters

    res: dict[str, Any] = {}
    torch._dynamo.reset()
    counters.clear()

    def f(x):
        return torch.sin(x) * 2 + x.cos()

    cf = torch.compile(f, mode="reduce-overhead")
    x = torch.randn(4096, device=DEV)
    for _ in range(3):
        cf(x)

    def run10():
        for _ in range(10):
            cf(x)

    r = profiled(run10)
    res["graph_events x10"] = _graph_launches(r)
    res["kernels"] = r["by_activity"].get("kernel", {})
    res["counters"] = {k: dict(v) for k, v in counters.items()}
    try:
        from torch._inductor import cudagraph_trees

        mgr = cudagraph_trees.get_container(0).tree_manager
        res["tree_manager"] = {
            a: str(getattr(mgr, a, None))[:200]
            for a in ("current_gen", "warmed_up_functions", "roots", "current_node", "graph_counter", "func_counter")
        }
        nodes = []
        roots = getattr(mgr, "roots", {})
        for _fid, rs in roots.items():
            for n in rs:
                nodes.append(type(n).__name__)
        res["tree_nodes"] = nodes
        res["mgr_attrs"] = [a for a in dir(mgr) if not a.startswith("__")][:120]
    except Exception as e:
        res["tree_manager"] = repr(e)
    # cond inside reduce-overhead
    torch._dynamo.reset()
    counters.clear()

    def g(x):
        return torch.cond(x.sum() > 0, lambda y: y.sin(), lambda y: y.cos(), (x,))

    cg = torch.compile(g, mode="reduce-overhead")
    for _ in range(3):
        cg(x)
    r = profiled(lambda: [cg(x) for _ in range(5)])
    res["cond graph_events x5"] = _graph_launches(r)
    res["cond counters"] = {k: dict(v) for k, v in counters.items()}
    # dynamic shapes: re-recording
    torch._dynamo.reset()
    counters.clear()
    cf2 = torch.compile(f, mode="reduce-overhead", dynamic=True)
    for n in (1000, 1000, 1000, 2000, 2000, 2000, 3000, 3000, 3000):
        cf2(torch.randn(n, device=DEV))
    r = profiled(lambda: [cf2(torch.randn(n, device=DEV)) for n in (1000, 2000, 3000)])
    res["dynamic graph_events"] = _graph_launches(r)
    res["dynamic counters"] = {k: dict(v) for k, v in counters.items()}
    return res


@section("linalg")
def _linalg() -> dict[str, Any]:
    res: dict[str, Any] = {"preferred": str(torch.backends.cuda.preferred_linalg_library())}
    A = torch.randn(32, 64, 64, device=DEV, dtype=torch.float64)
    S = A @ A.mT + 64 * torch.eye(64, device=DEV, dtype=torch.float64)
    B = torch.randn(32, 64, 4, device=DEV, dtype=torch.float64)
    ops = {
        "eigh": lambda: torch.linalg.eigh(S),
        "eigvalsh": lambda: torch.linalg.eigvalsh(S),
        "eig": lambda: torch.linalg.eig(A),
        "svd": lambda: torch.linalg.svd(A),
        "lstsq_gels": lambda: torch.linalg.lstsq(A, B),
        "lstsq_underdetermined": lambda: torch.linalg.lstsq(A[:, :32, :], B[:, :32, :]),
        "cholesky": lambda: torch.linalg.cholesky(S),
        "qr": lambda: torch.linalg.qr(A),
        "lu": lambda: torch.linalg.lu(A),
        "lu_factor": lambda: torch.linalg.lu_factor(A),
        "solve": lambda: torch.linalg.solve(A, B),
        "inv": lambda: torch.linalg.inv(A),
        "pinv": lambda: torch.linalg.pinv(A),
        "det": lambda: torch.linalg.det(A),
        "eigh_big_1024": lambda: torch.linalg.eigh(
            torch.randn(1024, 1024, device=DEV).double().add(0).mT.add(torch.eye(1024, device=DEV, dtype=torch.float64))
        ),
        "eigh_c64": lambda: torch.linalg.eigh(torch.randn(8, 32, 32, device=DEV, dtype=torch.complex64)),
    }
    for name, fn in ops.items():
        try:
            r = profiled(fn)
            res[name] = {k: v for k, v in r["by_activity"].items() if k in ("kernel", "gpu_memcpy", "gpu_memset")}
        except Exception as e:
            res[name] = {"error": f"{type(e).__name__}: {e}"[:500]}
    for drv in ("gelsd", "gelsy", "gelss"):
        try:
            torch.linalg.lstsq(A, B, driver=drv)
            res[f"lstsq driver {drv}"] = "ran"
        except Exception as e:
            res[f"lstsq driver {drv}"] = f"{type(e).__name__}: {e}"[:500]
    for lib in ("cusolver", "magma", "default"):
        try:
            torch.backends.cuda.preferred_linalg_library(lib)
            r = profiled(lambda: torch.linalg.eigh(S))
            res[f"eigh with {lib}"] = {
                "set_to": str(torch.backends.cuda.preferred_linalg_library()),
                "kernels": r["by_activity"].get("kernel", {}),
            }
        except Exception as e:
            res[f"eigh with {lib}"] = f"{type(e).__name__}: {e}"[:500]
    torch.backends.cuda.preferred_linalg_library("default")
    # gradients
    Sg = S.clone().requires_grad_()
    r = profiled(lambda: torch.linalg.eigh(Sg)[0].sum().backward())
    res["eigh backward"] = r["by_activity"].get("kernel", {})
    # NaN input
    try:
        n = S.clone()
        n[0, 0, 0] = float("nan")
        w, _ = torch.linalg.eigh(n)
        res["eigh nan"] = {"nan_in_batch0": bool(w[0].isnan().any()), "batch1_finite": bool(w[1].isfinite().all())}
    except Exception as e:
        res["eigh nan"] = f"{type(e).__name__}: {e}"[:500]
    return res


@section("misc_device")
def _misc() -> dict[str, Any]:
    res: dict[str, Any] = {}
    x = torch.randn(1 << 20, device=DEV)
    r = profiled(lambda: x.cpu().to(DEV))
    res["copy roundtrip activity kinds"] = {k: dict(v) for k, v in r["by_activity"].items()}
    r = profiled(lambda: torch.zeros(1 << 20, device=DEV))
    res["zeros activity kinds"] = {k: dict(v) for k, v in r["by_activity"].items()}
    res["memory_stats keys sample"] = sorted(torch.cuda.memory_stats())[:10]
    for name in (
        "memory_allocated",
        "max_memory_allocated",
        "reset_peak_memory_stats",
        "get_memory_info",
        "empty_cache",
    ):
        res[f"accelerator.{name}"] = hasattr(torch.accelerator, name)
    try:
        import torch.nn.functional as F

        lin = torch.nn.Linear(256, 1000, device=DEV)
        h = torch.randn(64, 256, device=DEV)
        t = torch.randint(0, 1000, (64,), device=DEV)
        if hasattr(F, "linear_cross_entropy"):
            r = profiled(F.linear_cross_entropy, h, lin.weight, t)
            res["linear_cross_entropy"] = r["by_activity"].get("kernel", {})
        else:
            res["linear_cross_entropy"] = "absent"
    except Exception as e:
        res["linear_cross_entropy"] = f"{type(e).__name__}: {e}"[:500]
    try:
        from torch.nn.attention.flex_attention import flex_attention

        q, k, v = (torch.randn(1, 4, 256, 64, device=DEV, dtype=torch.bfloat16) for _ in range(3))
        cfl = torch.compile(flex_attention)
        cfl(q, k, v)
        r = profiled(cfl, q, k, v)
        res["flex_attention"] = r["by_activity"].get("kernel", {})
    except Exception as e:
        res["flex_attention"] = f"{type(e).__name__}: {e}"[:500]
    try:
        import torch.nn.attention.varlen as varlen

        res["varlen module"] = [n for n in dir(varlen) if not n.startswith("_")]
    except Exception as e:
        res["varlen module"] = f"{type(e).__name__}: {e}"[:300]
    return res


@section("capture_error_last")
def _capture_error() -> dict[str, Any]:
    """Last: a failed capture leaves the RNG's graph state behind on 2.11 (every later randn fails)."""
    res: dict[str, Any] = {}
    try:
        g4 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g4, capture_error_mode="thread_local"):
            torch.cuda.synchronize()
        res["sync in capture"] = "no error"
    except Exception as e:
        res["sync in capture"] = f"{type(e).__name__}: {e}"[:500]
    try:
        torch.randn(4, device=DEV)
        res["randn after"] = "ok"
    except Exception as e:
        res["randn after"] = f"{type(e).__name__}: {e}"[:300]
    return res


if __name__ == "__main__":
    FACTS["_done"] = True
    save()
    print(f"gpu-facts: wrote {OUT}")
