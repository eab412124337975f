"""Deliberate breakage injected into a real pytest run of the real suites.

``COMPAT_SABOTAGE`` names one breakage; a ``sitecustomize`` module that calls :func:`apply` is put on
``PYTHONPATH``, so it takes effect at start-up in the pytest process and in every process the suites
start (the distributed suite's ranks). Each one breaks the feature a suite checks the way a faulty
backend would: wrong numbers, a dropped rank, a quantizer that distorts, an API that stops refusing
on a CPU build.
"""

from __future__ import annotations

import os

MODE_ENV = "COMPAT_SABOTAGE"


def _compile_returns_garbage() -> None:
    """torch.compile compiles, and the compiled callable's outputs come back 1% off (a miscompile: the suites'
    check that torch.compile hands back a compiled callable still passes, the value check must catch it)."""
    import functools

    import torch

    real = torch.compile

    def compile(model=None, **kwargs):
        compiled = real(model, **kwargs)
        if isinstance(compiled, torch.nn.Module):
            compiled.register_forward_hook(lambda module, args, out: out * 1.01)
            return compiled
        return functools.wraps(compiled)(lambda *a, **k: compiled(*a, **k) * 1.01)

    torch.compile = compile


def _sdpa_off_by_a_little() -> None:
    """Every SDPA call below float64 (the reference) is 1% off."""
    import torch
    import torch.nn.functional as F

    real = F.scaled_dot_product_attention

    def sdpa(query, *args, **kwargs):
        out = real(query, *args, **kwargs)
        return out if query.dtype == torch.float64 else out * 1.01

    F.scaled_dot_product_attention = sdpa


def _grad_scaler_zeroes_the_loss() -> None:
    """GradScaler.scale multiplies the loss by 0 instead of the scale: no gradient, no training."""
    import torch

    real = torch.amp.GradScaler.scale

    def scale(self, outputs):
        return real(self, outputs) * 0.0

    torch.amp.GradScaler.scale = scale


def _all_reduce_drops_a_rank() -> None:
    """all_reduce on rank 1 contributes zeros instead of its tensor."""
    import torch.distributed as dist

    real = dist.all_reduce

    def all_reduce(tensor, *args, **kwargs):
        if dist.get_rank() == 1:
            tensor.zero_()
        return real(tensor, *args, **kwargs)

    dist.all_reduce = all_reduce


def _quantizer_distorts() -> None:
    """quantize_dynamic returns a quantized model whose outputs are 20% off."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch.ao.quantization as tq

    real = tq.quantize_dynamic

    def quantize_dynamic(model, *args, **kwargs):
        quantized = real(model, *args, **kwargs)
        quantized.register_forward_hook(lambda module, inputs, out: out * 1.2)
        return quantized

    tq.quantize_dynamic = quantize_dynamic


def _sdpa_low_precision_off() -> None:
    """Every bfloat16/float16 SDPA call is 8% off: beyond their bounds (3e-2, 5e-3), where 1% would pass bf16."""
    import torch
    import torch.nn.functional as F

    real = F.scaled_dot_product_attention

    def sdpa(query, *args, **kwargs):
        out = real(query, *args, **kwargs)
        return out * 1.08 if query.dtype in (torch.bfloat16, torch.float16) else out

    F.scaled_dot_product_attention = sdpa


def _cond_takes_the_other_branch() -> None:
    """torch.cond runs the false branch for a true predicate and the reverse (graphs' value check)."""
    import torch

    real = torch.cond

    def cond(pred, true_fn, false_fn, operands, *args, **kwargs):
        return real(pred, false_fn, true_fn, operands, *args, **kwargs)

    torch.cond = cond


def _eigh_eigenvalues_drift() -> None:
    """torch.linalg.eigh returns eigenvalues 0.1% off: a few hundred n*eps in float32, far more in float64."""
    import torch

    real = torch.linalg.eigh

    def eigh(a, *args, **kwargs):
        w, v = real(a, *args, **kwargs)
        return torch.return_types.linalg_eigh((w * 1.001, v))

    torch.linalg.eigh = eigh


def _svd_loses_a_singular_value() -> None:
    """torch.linalg.svd returns its smallest singular value as zero (a rank-deficient answer)."""
    import torch

    real = torch.linalg.svd

    def svd(a, *args, **kwargs):
        u, s, vh = real(a, *args, **kwargs)
        s = s.clone()
        s[..., -1] = 0
        return torch.return_types.linalg_svd((u, s, vh))

    torch.linalg.svd = svd


def _export_load_flips_a_bit() -> None:
    """torch.export.load returns a program whose first buffer has its lowest bit flipped."""
    import torch

    real = torch.export.load

    def load(*args, **kwargs):
        ep = real(*args, **kwargs)
        for value in ep.state_dict.values():
            if isinstance(value, torch.Tensor) and value.numel():
                bits = value.view(torch.uint8) if value.element_size() == 1 else value
                if bits.dtype == torch.uint8:
                    bits.view(-1)[0] ^= 1
                else:
                    value.view(-1)[0] += 1
                break
        return ep

    torch.export.load = load


def _hub_trusts_without_asking() -> None:
    """torch.hub.load with trust_repo="check" trusts an unknown repository without the prompt."""
    import torch.hub as hub

    real = hub.load

    def load(*args, trust_repo="check", **kwargs):
        return real(*args, trust_repo=True if trust_repo == "check" else trust_repo, **kwargs)

    hub.load = load


def _sparsifier_keeps_the_smallest() -> None:
    """WeightNormSparsifier keeps the two smallest magnitudes of each group of four instead of the largest."""
    import torch
    from torch.ao.pruning import WeightNormSparsifier

    real = WeightNormSparsifier.update_mask

    def update_mask(self, module, tensor_name, *args, **kwargs):
        real(self, module, tensor_name, *args, **kwargs)
        mask = getattr(module.parametrizations, tensor_name)[0].mask
        mask.data = ~mask.data if mask.dtype == torch.bool else 1 - mask.data

    WeightNormSparsifier.update_mask = update_mask


def _memory_api_stops_refusing() -> None:
    """torch.accelerator.memory_allocated answers 0 on a CPU build instead of refusing."""
    import torch

    torch.accelerator.memory_allocated = lambda *a, **k: 0


# ---------------------------------------------------------------- 2.13-2.15 device features (issue 19)
# torch 2.13.0+cpu lacks some of these APIs (they arrived in 2.14/2.15) and has no device: a stand-in of
# the API that misbehaves the way a faulty build would lets the test's own logic be proven to fail here.


def _graph_takes_a_stream() -> None:
    """torch.accelerator.Graph grows a stream argument (it would no longer capture on the current stream)."""
    import torch

    real = torch.accelerator.Graph

    class Graph(real):  # type: ignore[misc, valid-type]
        def __init__(self, keep_graph=False, *, pool=None, capture_error_mode="default", stream=None):
            super().__init__(keep_graph, pool=pool, capture_error_mode=capture_error_mode)

    torch.accelerator.Graph = Graph


def _graph_builds_without_a_device() -> None:
    """torch.accelerator.Graph constructs on a host without an accelerator and captures nothing."""
    import torch

    class Graph:
        def __init__(self, keep_graph=False, *, pool=None, capture_error_mode="default"):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def replay(self):
            pass

    torch.accelerator.Graph = Graph


def _compile_drops_reduce_overhead() -> None:
    """torch.compile ignores mode=: reduce-overhead silently records no device graph and skips nothing."""
    import torch

    real = torch.compile

    def compile(model=None, **kwargs):
        kwargs.pop("mode", None)
        return real(model, **kwargs)

    torch.compile = compile


def _xpu_graph_builds_without_a_device() -> None:
    """torch.xpu.XPUGraph constructs on a build without XPU instead of refusing."""
    import torch

    class XPUGraph:
        def __init__(self, keep_graph=False):
            pass

    torch.xpu.XPUGraph = XPUGraph


TELEMETRY = ("temperature", "clock_rate", "power_draw", "utilization", "memory_usage", "device_memory_used")


def _xpu_telemetry_answers_without_a_device() -> None:
    """Every torch.xpu telemetry query answers 0 on a host without an Intel GPU instead of refusing."""
    import torch

    def reading(name):
        def query(device: object = None) -> float:
            return 0.0

        query.__name__ = name
        return query

    for name in TELEMETRY:
        setattr(torch.xpu, name, reading(name))


def _xpu_temperature_takes_an_index() -> None:
    """torch.xpu.temperature takes a device index instead of device=None."""
    import torch

    def temperature(device_id: int = 0) -> float:
        return 0.0

    torch.xpu.temperature = temperature


def _xpu_process_list_stand_in() -> None:
    """A torch.xpu.list_gpu_processes (2.14) that neither mirrors CUDA's signature nor refuses without XPU."""
    import torch

    def list_gpu_processes(device_index=None) -> str:
        return ""

    torch.xpu.list_gpu_processes = list_gpu_processes


def _mx_scaled_mm_ignores_scales() -> None:
    """MXFP8 scaled_mm on the CPU multiplies the fp8 elements and drops their e8m0 block scales."""
    import torch
    import torch.nn.functional as F

    real = F.scaled_mm
    fp8 = (torch.float8_e4m3fn, torch.float8_e5m2)

    def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, *args, **kwargs):
        if mat_a.device.type == "cpu" and mat_a.dtype in fp8 and scale_recipe_a == F.ScalingType.BlockWise1x32:
            return (mat_a.float() @ mat_b.float()).to(kwargs.get("output_dtype") or torch.bfloat16)
        return real(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, *args, **kwargs)

    F.scaled_mm = scaled_mm


def _symmetric_memory_stand_in() -> None:
    """symm_mem.empty hands out a plain CPU tensor, and rendezvous takes a group name, not a group."""
    import torch
    import torch.distributed._symmetric_memory as symm_mem

    def empty(*size, dtype=None, device=None):
        return torch.empty(*size, dtype=dtype, device=device)

    def rendezvous(tensor, group_name):
        raise RuntimeError("stand-in")

    symm_mem.empty, symm_mem.rendezvous = empty, rendezvous


def _cuda13_build_targets_volta() -> None:
    """This build poses as a +cu130 wheel whose architecture list still has sm_70 (Volta)."""
    import torch
    from torch.torch_version import TorchVersion

    torch.__version__ = TorchVersion(torch.__version__.split("+")[0] + "+cu130")
    torch.version.cuda = "13.0"
    torch.cuda.get_arch_list = lambda: ["sm_70", "sm_75", "sm_80", "sm_90"]


def _cpu_build_lists_cuda_archs() -> None:
    """A CPU build claims a CUDA architecture."""
    import torch

    torch.cuda.get_arch_list = lambda: ["sm_75"]


def _rocm714_facade() -> None:
    """This build poses as a +rocm7.14 wheel (which must load its HIP runtime from a pip package)."""
    import torch
    from torch.torch_version import TorchVersion

    torch.__version__ = TorchVersion(torch.__version__.split("+")[0] + "+rocm7.14")
    torch.version.hip = "7.14.0"


def _mps_streams_stand_in() -> None:
    """torch.mps stream API (2.15) whose set_stream differs from CUDA's and whose Stream builds without MPS."""
    import contextlib

    import torch

    class Stream:
        def __init__(self, *args, **kwargs):
            self.stream_id = 1

        def synchronize(self):
            pass

    torch.mps.Stream = Stream
    torch.mps.stream = lambda stream: contextlib.nullcontext()
    torch.mps.current_stream = torch.mps.default_stream = Stream
    torch.mps.set_stream = lambda s: None


SABOTAGE = {
    "compile-garbage": _compile_returns_garbage,
    "sdpa-off": _sdpa_off_by_a_little,
    "scaler-zeroes-loss": _grad_scaler_zeroes_the_loss,
    "all-reduce-drops-rank": _all_reduce_drops_a_rank,
    "quantizer-distorts": _quantizer_distorts,
    "memory-api-no-refusal": _memory_api_stops_refusing,
    "sdpa-low-precision-off": _sdpa_low_precision_off,
    "cond-other-branch": _cond_takes_the_other_branch,
    "eigh-eigenvalues-drift": _eigh_eigenvalues_drift,
    "svd-loses-singular-value": _svd_loses_a_singular_value,
    "export-load-flips-bit": _export_load_flips_a_bit,
    "hub-trusts-without-asking": _hub_trusts_without_asking,
    "sparsifier-keeps-smallest": _sparsifier_keeps_the_smallest,
    "graph-takes-stream": _graph_takes_a_stream,
    "graph-builds-without-device": _graph_builds_without_a_device,
    "compile-drops-reduce-overhead": _compile_drops_reduce_overhead,
    "xpu-graph-builds-without-device": _xpu_graph_builds_without_a_device,
    "xpu-telemetry-answers-without-device": _xpu_telemetry_answers_without_a_device,
    "xpu-temperature-takes-index": _xpu_temperature_takes_an_index,
    "xpu-process-list-stand-in": _xpu_process_list_stand_in,
    "mx-scaled-mm-ignores-scales": _mx_scaled_mm_ignores_scales,
    "symmetric-memory-stand-in": _symmetric_memory_stand_in,
    "cuda13-build-targets-volta": _cuda13_build_targets_volta,
    "cpu-build-lists-cuda-archs": _cpu_build_lists_cuda_archs,
    "rocm714-facade": _rocm714_facade,
    "mps-streams-stand-in": _mps_streams_stand_in,
}


def apply() -> None:
    mode = os.environ.get(MODE_ENV)
    if mode:
        SABOTAGE[mode]()
