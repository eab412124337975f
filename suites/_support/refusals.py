"""Every refusal the suites accept as ``[unsupported]``: the exact text of that backend and op, with its source.

:func:`refused` is the one place an error becomes a skip. On a device the claims cover (``features.toml``
``[[features.<id>.claims]]``, :mod:`_support.claims`) a refusal is a failure. Elsewhere it is ``[unsupported]``
only when the error's type and first line match an entry of :data:`REFUSALS` for this op and the family that
ran; any other error is re-raised, so a crash never reads as "unsupported". A refusal the test observed
without an exception (Inductor's skip counter) goes through :func:`refused_silently`, with the same rule.

A row may be bounded by release: ``since`` (the first release whose build answers so) and ``until`` (the first that
is not known to, or is known not to: there the refusal fails until someone reads that release again). A refusal that
belongs to some devices of a family only (MX below sm_100) is listed under an op variant the test names only there.
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
    *(
        Refusal(
            "torch.nn.functional.scaled_dot_product_attention",
            ("cuda",),
            ("RuntimeError",),
            rf"^No available kernel\. Aborting execution\. \(the kernel's reasons: .*{reason}",
            f"{ATEN}/transformers/cuda/sdp_utils.cpp and sdp_utils_cpp.h ({where}); the error is select_sdp_backend's, "
            "the reason the kernel's warning (_support/kernel_reasons.py puts them in one line); seen on an H200 with "
            "2.11.0+cu130 (tests/data/gpu-facts/h200-2.11.0+cu130.json)",
            f"No available kernel. Aborting execution. (the kernel's reasons: {example})",
        )
        for reason, where, example in (
            (
                r"Expected query, key and value to all be of dtype: \{Half, BFloat16\}",
                "check_dtypes_low_precision: flash and cuDNN take float16/bfloat16 only",
                "Expected query, key and value to all be of dtype: {Half, BFloat16}. Got Query dtype: float, Key "
                "dtype: float, and Value dtype: float instead.",
            ),
            (
                r"Flash Attention does not support non-null attn_mask",
                "check_for_attn_mask: flash takes no arbitrary mask",
                "Flash Attention does not support non-null attn_mask.",
            ),
            (
                r"For dense input, both fused kernels require query, key and value to have the same num_heads",
                "check_batch_size_and_num_heads_dense: the efficient kernel requires equal head counts (no GQA)",
                "For dense input, both fused kernels require query, key and value to have the same num_heads.",
            ),
            (
                r"Mem efficient attention requires last dimension of inputs to be divisible by \d+",
                "check_head_dim_size_mem_efficient: head dim a multiple of 8 (4 in float32)",
                "Mem efficient attention requires last dimension of inputs to be divisible by 8.",
            ),
            (
                r"head_dim should be a multiple of 8",
                "check_cudnn_tensor_shapes: cuDNN's head dim a multiple of 8",
                "head_dim should be a multiple of 8",
            ),
        )
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
    *(
        Refusal(
            "torch.nn.functional.scaled_mm:mx-below-sm100",
            ("cuda",),
            (error,),
            text,
            "torch 2.11.0+cu130 on an H200 (sm_90; tests/data/gpu-cells/cu130-2.11.0-h200-run1): cuBLASLt has MX "
            "kernels for sm_100/sm_103 only, and before the explicit 'only supported in CUDA for B200/B300' check "
            "(aten/src/ATen/native/cuda/ScaledBlas.cpp, v2.13.0) the call reached cuBLASLt; the test names this op "
            "only on an NVIDIA GPU below sm_100 (the capability bound), the release bound is `until`",
            example,
            until="2.13",
        )
        for error, text, example in (
            (
                "RuntimeError",
                r"^CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmulAlgoGetHeuristic\(",
                "CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasLtMatmulAlgoGetHeuristic( ltHandle, "
                "computeDesc.descriptor(), Adesc.descriptor(), Bdesc.descriptor(), Cdesc.descriptor(), "
                "Ddesc.descriptor(), preference.descriptor(), 1, &heuristicResult, &returnedResult)`",
            ),
            (
                "ValueError",
                r"^Multiplication of two Float8_e5m2 matrices is not supported$",
                "Multiplication of two Float8_e5m2 matrices is not supported",
            ),
            (
                "RuntimeError",
                r"^Invalid scaling configuration\.",  # the unswizzled scales (tests/data/gpu-facts: mxfp8)
                "Invalid scaling configuration.",
            ),
            (
                "ValueError",  # F.scaled_mm's own check of the unswizzled layout (H200, 2.11: gpu-cells run3)
                r"^scale_a must be swizzled to SWIZZLE_32_4_4 format$",
                "scale_a must be swizzled to SWIZZLE_32_4_4 format",
            ),
        )
    ),
    *(
        Refusal(
            op,
            ("cuda", "rocm"),
            ("RuntimeError",),
            r"^torch\._scaled_mm is only supported on CUDA devices with compute capability >= 9\.0 or 8\.9, or ROCm "
            r"MI300\+",
            f"{ATEN}/cuda/ScaledBlas.cpp (the FP8 recipes need sm_89/sm_90+ or MI300+; the text read in "
            "libtorch_cuda.so of 2.12.1+cu130, its only FP8 capability refusal)",
            "torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+",
        )
        for op in ("torch._scaled_mm", "torch.nn.functional.scaled_mm:fp8")
    ),
    Refusal(
        "torch.linalg.lstsq:driver",
        ("cuda", "rocm"),
        ("RuntimeError",),
        r"^torch\.linalg\.lstsq: `driver` other than `gels` is not supported on CUDA$",
        f"{ATEN}/BatchLinearAlgebra.cpp (linalg_lstsq: on CUDA tensors, ROCm's included, only gels); seen on an H200 "
        "with 2.11.0+cu130 (tests/data/gpu-facts)",
        "torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA",
    ),
    Refusal(
        "torch.export.load:older-release",
        ("cpu", "cuda", "rocm", "xpu"),
        ("SerializeError",),
        r"^Serialized schema version .* does not match our current schema version",
        "torch/_export/serde/serialize.py (a file whose schema major version differs is refused); torch.export.load's "
        "docstring: 'saved files may not be usable in newer versions of PyTorch' (no cross-release claim)",
        "Serialized schema version SchemaVersion(major=8, minor=20) does not match our current schema version (9, 0).",
    ),
    *(
        Refusal(
            f"torch.backends.cuda.preferred_linalg_library:{backend.lower()}",
            families,
            ("RuntimeError",),
            rf"^Cannot set preferred backend to {backend} if PyTorch has not been compiled with {backend}\.$",
            "aten/src/ATen/Context.cpp (setLinalgPreferredBackend; the text read in libtorch_cpu.so of 2.13.0+cpu): a "
            f"build without {backend} refuses to prefer it",
            f"Cannot set preferred backend to {backend} if PyTorch has not been compiled with {backend}.",
        )
        for backend, families in (("cuSOLVER", ("cpu", "xpu")), ("MAGMA", ("cpu", "cuda", "rocm", "xpu")))
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
        r"^Graph is not supported on device type: cuda$",
        "https://github.com/pytorch/pytorch/pull/190307 (the CUDA Graph adapter, open: libtorch_cuda registers none); "
        "read in the wheels 2.13.0, 2.14.1+cu130 and 2.15.0+cu132: torch.accelerator.Graph arrived in 2.12 (since), "
        "and a release after 2.15 is not known to refuse (until): there a refusal fails until it is read again",
        "Graph is not supported on device type: cuda",
        since="2.12",
        until="2.16",
    ),
    Refusal(
        "torch.compile:reduce-overhead:cond",
        ("cuda", "rocm"),
        ("RuntimeError",),
        r"^Inductor ran torch\.cond without a CUDA graph",
        "https://github.com/pytorch/pytorch/pull/168912 (torch.cond in CUDA graphs, 2.12: the eager and cudagraphs "
        "backends, 'no inductor support at this time'); on an H200 with 2.11.0 Inductor skipped it (cudagraph_skips 1, "
        "no launch, tests/data/gpu-facts); read up to 2.15's notes, so bounded there",
        "Inductor ran torch.cond without a CUDA graph (cudagraph_skips +1, no graph launched)",
        until="2.16",
    ),
    Refusal(
        "torch._higher_order_ops.while_loop:cuda-graph",
        ("cuda", "rocm"),
        ("RuntimeError",),
        r"operation not permitted when stream is capturing|cudaErrorStreamCapture\w+|hipErrorStreamCapture\w+|"
        r"operation failed due to a previous error during capture",
        "torch/_higher_order_ops/cudagraph_conditional_nodes.py of 2.13.0 makes IF nodes for torch.cond only: a "
        "while_loop under capture runs its loop on the host, whose predicate read is a synchronisation the capture "
        "refuses (WHILE nodes: pytorch/pytorch#186055, after the 2.13 branch; not read in 2.14: bounded by until)",
        "CUDA error: operation not permitted when stream is capturing",
        until="2.14",
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
        SEMI_STRUCTURED,
        ("cuda",),
        ("RuntimeError",),
        r"^Error original_tensor\.dtype torch\.float32 is not a supported dtype for "
        r"<class 'torch\.sparse\.semi_structured\.SparseSemiStructuredTensorCUSPARSELT'>!$",
        "torch/sparse/semi_structured.py (SparseSemiStructuredTensorCUSPARSELT._DTYPE_SHAPE_CONSTRAINTS: "
        "float8_e4m3fn, int8, float16, bfloat16; CUTLASS also takes float32); seen on an H200 with 2.11.0+cu130",
        "Error original_tensor.dtype torch.float32 is not a supported dtype for "
        "<class 'torch.sparse.semi_structured.SparseSemiStructuredTensorCUSPARSELT'>!",
    ),
    Refusal(
        SEMI_STRUCTURED,
        ("cuda",),
        ("RuntimeError",),
        r"^sparse_semi_structured_mad_op : Supported only on GPUs with compute capability 8\.x$",
        f"{ATEN}/sparse/cuda/SparseSemiStructuredOps.cu (the CUTLASS 2:4 kernels are built for sm8x); seen on an H200 "
        "with 2.11.0+cu130",
        "sparse_semi_structured_mad_op : Supported only on GPUs with compute capability 8.x",
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
