"""Every refusal the suites accept as ``[unsupported]``: the exact text of that backend and op, with its source.

:func:`refused` is the one place an error becomes a skip. On a device the claims cover (``features.toml``
``[[features.<id>.claims]]``, :mod:`_support.claims`) a refusal is a failure. Elsewhere it is ``[unsupported]``
only when the error's type and first line match an entry of :data:`REFUSALS` for this op and the family that
ran; any other error is re-raised, so a crash never reads as "unsupported". A refusal the test observed
without an exception (Inductor's skip counter) goes through :func:`refused_silently`, with the same rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

import pytest

from _support import claims as _claims
from _support import env as _env
from _support.requires import skip, skip_unsupported

ATEN = "https://github.com/pytorch/pytorch/blob/v2.13.0/aten/src/ATen/native"
REDUCE_OVERHEAD = "torch.compile:reduce-overhead"
SEMI_STRUCTURED = "torch.sparse.to_sparse_semi_structured"
EXPANDABLE = "PYTORCH_ALLOC_CONF:expandable_segments"
FLEX_BACKWARD = "torch.nn.attention.flex_attention.flex_attention:backward"
COMPILE_PY315 = "torch.compile:python-3.15"
EXPORT_MX_SAVE = "torch.export.save:mx-dtypes"
PT2E_IN_TORCH = "torch.ao.quantization.quantize_pt2e"
EXPORT_DOT = "torch.cuda.export_dot"
XPU_TELEMETRY = tuple(
    f"torch.xpu.{n}" for n in ("temperature", "clock_rate", "power_draw", "utilization", "memory_usage",
                               "device_memory_used")
)  # fmt: skip
XPU_PROCESSES = "torch.xpu.list_gpu_processes"


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


@dataclass(frozen=True)
class Refusal:
    op: str  # the API (a claim's op), with ":<variant>" where one API refuses several ways
    families: tuple[str, ...]  # the device kinds that say it: cpu, cuda, rocm, xpu
    errors: tuple[str, ...]  # exception class names
    text: str  # regular expression searched in the error's message
    source: str  # where the text comes from
    example: str = ""  # the message as the backend words it (the refuse drill raises it)
    # what the refusal says about this host: "unsupported" (the build lacks it: fails where claimed), or
    # "dependency" / "hardware" (an optional package, a host permission: a skip the claims' backstop judges)
    tag: str = "unsupported"
    since: str | None = None  # the torch release from which this refusal is the build's answer ("2.11")
    until: str | None = None  # the release from which it is not any more (a later release has the feature)

    def matches(self, op: str, family: str, error: BaseException | None, message: str) -> bool:
        if op != self.op or family not in self.families:
            return False
        torch = _env.get().torch_version[:2]
        if self.since and torch < _release(self.since):
            return False
        if self.until and torch >= _release(self.until):
            return False
        if error is not None and type(error).__name__ not in self.errors:
            return False
        return re.search(self.text, message) is not None


REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "torch.nn.functional.scaled_dot_product_attention",
        ("cpu", "cuda", "rocm", "xpu"),
        ("RuntimeError",),
        r"^No viable backend for scaled_dot_product_attention was found\.",
        f"{ATEN}/transformers/attention.cpp (select_sdp_backend; the kernel's reasons come as warnings first)",
        "No viable backend for scaled_dot_product_attention was found.",
    ),
    Refusal(
        "torch.nn.functional.scaled_dot_product_attention:backward",
        ("cpu", "cuda", "rocm", "xpu"),
        ("NotImplementedError",),
        r"^the derivative for '_scaled_dot_product_\w+' is not implemented",
        "tools/autograd/derivatives.yaml (a forward kernel without a registered backward)",
    ),
    Refusal(
        FLEX_BACKWARD,
        ("cpu",),
        ("NotImplementedError", "Unsupported"),
        r"FlexAttention does not support backward on CPU\.",
        "torch/nn/attention/flex_attention.py (2.13: the CPU path is forward-only; Dynamo's Unsupported wraps it under"
        " fullgraph)",
        "FlexAttention does not support backward on CPU. Please set the input requires_grad to False or use another "
        "device.",
    ),
    Refusal(
        "torch.nn.functional.scaled_mm",
        ("cpu",),
        ("ValueError",),
        r"^(CPU does not support swizzle\.|Invalid scaling configuration\."
        r"|scale_a must be swizzled to SWIZZLE_32_4_4 format$)",
        "torch/_meta_registrations.py (_scaled_mm_v2 checks, 2.14-2.15): the CPU has no MX recipe; 2.15's CPU kernel"
        " refuses the swizzled scales ('CPU does not support swizzle.') and asks for them on unswizzled ones (seen"
        " on 2.15.0+cu132 run CPU-only)",
        "Invalid scaling configuration.",
    ),
    Refusal(
        "torch.nn.functional.scaled_mm",
        ("cuda",),
        ("NotImplementedError",),
        r"^MXFP[48] scaling only supported in CUDA for B200/B300",
        f"{ATEN}/cuda/ScaledBlas.cpp (cuBLASLt ships MX kernels for sm_100/sm_103 only)",
        "MXFP8 scaling only supported in CUDA for B200/B300",
    ),
    Refusal(
        "torch.nn.functional.scaled_mm",
        ("rocm",),
        ("NotImplementedError", "RuntimeError"),
        r"^Block-wise scaling for Float8_e8m0fnu is only supported on gfx950",
        f"{ATEN}/cuda/ScaledBlas.cpp (ROCm >= 7.0: MX GEMM on gfx950 only)",
        "Block-wise scaling for Float8_e8m0fnu is only supported on gfx950",
    ),
    Refusal(
        "torch.linalg.svd:driver",
        ("cpu", "rocm", "xpu"),
        ("RuntimeError",),
        r"^torch\.linalg\.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend\.",
        f"{ATEN}/BatchLinearAlgebra.cpp (linalg_svd: driver= is cuSOLVER's)",
        "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.",
    ),
    Refusal(
        "torch.quantize_per_tensor",
        ("xpu", "rocm"),
        ("NotImplementedError",),
        r"^Could not run 'aten::quantize_per_(tensor|channel)' with arguments from the '(XPU|CUDA)' backend",
        "c10/core/dispatch/OperatorEntry.cpp (no kernel registered for the backend's dispatch key)",
    ),
    Refusal(
        "torch.accelerator.Graph",
        ("cuda", "rocm"),
        ("RuntimeError",),
        r"Graph is not supported on device type: cuda",
        "https://github.com/pytorch/pytorch/pull/190307 (the CUDA Graph adapter, open: libtorch_cuda registers none)",
        "Graph is not supported on device type: cuda",
    ),
    Refusal(
        REDUCE_OVERHEAD,
        ("xpu",),
        ("RuntimeError",),
        r"skipping cudagraphs due to|Inductor ran without device graphs",
        "torch/_inductor/cudagraph_utils.py (_CUDAGRAPH_SUPPORTED_DEVICE_TYPES = {'cuda'} in 2.15; 2.13-2.14 hard-code"
        " cuda): a graph on another device is skipped, silently unless it has CUDA nodes",
    ),
    Refusal(
        "torch.distributed._symmetric_memory.empty",
        ("xpu",),
        ("RuntimeError",),
        r"^SymmetricMemory does not support device type xpu",
        "torch/csrc/distributed/c10d/symm_mem/SymmetricMemory.cpp (no XPU allocator before 2.14: pytorch#193475)",
        "SymmetricMemory does not support device type xpu",
    ),
    Refusal(
        SEMI_STRUCTURED,
        ("cpu", "xpu"),
        ("RuntimeError",),
        r"^Error original_tensor\.device= \w+(:\d+)? is not supported! Only CUDA tensors are currently supported\.",
        "torch/sparse/semi_structured.py (SparseSemiStructuredTensor._validate_device_dim_dtype_shape)",
        "Error original_tensor.device= cpu is not supported! Only CUDA tensors are currently supported.",
    ),
    Refusal(
        "torch.nn.attention.varlen.varlen_attn",
        ("cpu",),
        ("NotImplementedError",),
        r"^Could not run 'aten::_flash_attention_forward' with arguments from the 'CPU' backend\.",
        "c10/core/dispatch/OperatorEntry.cpp (seen with 2.13.0+cpu: varlen_attn calls the Flash kernels, which have no"
        " CPU kernel)",
        "Could not run 'aten::_flash_attention_forward' with arguments from the 'CPU' backend. This could be because "
        "the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build).",
    ),
    *(
        Refusal(
            f"torch.nn.functional.{name}",
            ("cpu", "xpu"),
            ("NotImplementedError",),
            r"^Could not run 'aten::_scaled_addmm_?(\.out)?' with arguments from the '(CPU|XPU)' backend\.",
            "torchgen/packaged/ATen/native/native_functions.yaml of the 2.15.0 wheel (_scaled_addmm.out dispatches to"
            " CUDA only; the message is c10/core/dispatch/OperatorEntry.cpp's). ROCm's refusal comes from the C++"
            " library, not seen here: not listed, so it is re-raised. 2.15.0+cu132 on the CPU names the out overload"
            " ('aten::_scaled_addmm.out') for both the in-place and the out-of-place call",
            f"Could not run 'aten::_{name}' with arguments from the 'CPU' backend.",
        )
        for name in ("scaled_addmm", "scaled_addmm_")
    ),
    Refusal(
        COMPILE_PY315,
        ("cpu", "cuda", "rocm", "xpu"),
        ("RuntimeError",),
        r"^torch\.compile is not supported on Python 3\.15\+",
        "torch/__init__.py of the 2.13.0 and 2.14.1 wheels (the Python-version guard; 2.15 moves it to 3.16+)",
        "torch.compile is not supported on Python 3.15+",
    ),
    Refusal(
        EXPANDABLE,
        ("xpu",),
        ("UserWarning",),
        r"expandable_segments not supported on this platform",
        "c10/core/AllocatorConfig.cpp (the warning of an allocator without expandable segments)",
    ),
    Refusal(
        EXPORT_MX_SAVE,
        ("cpu", "cuda", "rocm", "xpu"),
        ("KeyError",),
        r"float8_e8m0fnu|float4_e2m1fn_x2",
        "https://github.com/pytorch/pytorch/pull/176270 (2.12 serializes float8_e8m0fnu; before it torch.export.save"
        " raised KeyError for the MX dtypes, pytorch#176621; seen on 2.11.0+cu130)",
        "torch.float8_e8m0fnu",
        until="2.12",
    ),
    Refusal(
        PT2E_IN_TORCH,
        ("cpu", "cuda", "rocm", "xpu"),
        ("ModuleNotFoundError",),
        r"^No module named 'torch\.ao\.quantization\.(quantize_pt2e|quantizer)",
        "https://github.com/pytorch/pytorch/pull/169151 (PT2E quantization moved from torch to torchao in 2.11)",
        "No module named 'torch.ao.quantization.quantize_pt2e'",
        since="2.11",
    ),
    Refusal(
        EXPORT_DOT,
        ("cuda", "rocm"),
        ("RuntimeError",),
        r"cuda-bindings",
        "torch/cuda/graphs.py (export_dot reads the graph through the cuda-bindings package, an optional dependency)",
        tag="dependency",
    ),
    *(
        Refusal(
            op,
            ("xpu",),
            ("ImportError", "ModuleNotFoundError"),
            r"pyzes",
            "torch/xpu/memory.py and torch/xpu/__init__.py (the readings go through pyzes, Level Zero Sysman's "
            "Python binding, an optional dependency)",
            tag="dependency",
        )
        for op in (*XPU_TELEMETRY, XPU_PROCESSES)
    ),
    *(
        Refusal(
            op,
            ("xpu",),
            ("RuntimeError",),
            r"elevated privileges",
            "Level Zero Sysman (zesInit): a host without the privilege to read the device's telemetry",
            tag="hardware",
        )
        for op in (*XPU_TELEMETRY, XPU_PROCESSES)
    ),
)


def family() -> str:
    """The family that ran (cpu, cuda, rocm, xpu), never the fake claim: refusal texts are what ran said."""
    return _env.get().device_kind


def _current_claims() -> list[_claims.Claim]:
    return _claims.current()


def refusal_for(op: str, error: BaseException | None, message: str) -> Refusal | None:
    return next((r for r in REFUSALS if r.matches(op, family(), error, message)), None)


def refused(op: str, error: BaseException, where: str) -> NoReturn:
    """``error`` came from ``op``: a refusal the table lists for this op, family and release is ``[unsupported]``
    (or its own tag) and fails on a device the claims cover; any other error is raised as it is."""
    __tracebackhide__ = True
    _judge(op, error, str(error), where)
    raise error


def refused_silently(op: str, observed: str, where: str) -> None:
    """A refusal seen without an exception (``observed`` words it): fail on a claimed device, ``[unsupported]``
    where the table lists it for this op and family, else fail."""
    __tracebackhide__ = True
    _judge(op, None, observed, where)
    pytest.fail(f"{where}: {observed} (no refusal of {op} on {family()} is known; see _support/refusals.py)")


def _judge(op: str, error: BaseException | None, message: str, where: str) -> None:
    __tracebackhide__ = True
    first = message.strip().splitlines()[0] if message.strip() else type(error).__name__
    entry = refusal_for(op, error, message)
    if entry is None and error is not None:
        return  # not a refusal the table knows: the error itself (a strict xfail may expect its class)
    if entry is not None and entry.tag != "unsupported":
        # what this host lacks (a package, a permission): the claims' backstop (conftest) judges the skip
        skip(entry.tag, f"{where}: {first} ({entry.op} on {family()}: {entry.source})")
    claimed = _current_claims()
    if claimed:
        label = "; ".join(c.label for c in claimed)
        pytest.fail(f"{where}: refused on a device the claims cover ({label}): {first}", pytrace=False)
    if entry is not None:
        skip_unsupported(f"{where}: {first} (refusal of {entry.op} on {family()}: {entry.source})")
