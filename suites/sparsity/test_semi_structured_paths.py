"""2:4 sparsity as a release engineer checks it: the sparse kernel itself, its speed-up, dtypes, layouts, bias,
backward and ``torch.compile``, every value against a float64 reference.

* the profiler shows the sparse kernel running (cuSPARSELt ``..._sparse_gemm_..._cusparselt``, CUTLASS's sparse GEMM),
  not a dense GEMM of the decompressed matrix; its speed-up over the dense ``mm`` is a measured figure (shown, never
  gated);
* int8 (exact against the integer product) and float32 (CUTLASS computes it in TF32; cuSPARSELt refuses it);
* the transposed paths (dense @ sparse.T, sparse @ dense.T) and the bias paths (``F.linear`` with bias, ``addmm``);
* backward: the input gradient through ``F.linear`` with a weight from ``prune_dense_static_sort`` (which keeps the
  transposed compression for the backward pass);
* ``torch.compile`` of a module whose weight is a ``SparseSemiStructuredTensor``.

Off CUDA the conversion is refused (``_support/refusals.py``): ``[unsupported]``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from _support.perf import best_time, record_perf
from _support.refusals import SEMI_STRUCTURED, refused
from _support.sparse24 import BACKENDS, device_kernels, gate, mask, refused_off_cuda, sm, sparse_class, two_way_mask
from _support.tolerances import SEMI_STRUCTURED as TOL

SPARSE_KERNEL = ("sparse", "cusparselt", "sp_gemm", "spgemm")  # lower-cased name fragments of a sparse GEMM kernel


def _sparse(weight: torch.Tensor, backend_name: str, compat_env, monkeypatch, what: str):
    """``to_sparse_semi_structured(weight)`` on the backend asked for; outside PyTorch's gate a refusal is judged."""
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured

    outside = gate(backend_name, compat_env)
    monkeypatch.setattr(SparseSemiStructuredTensor, "_FORCE_CUTLASS", backend_name == "cutlass")
    try:
        sparse = to_sparse_semi_structured(weight)
    except (RuntimeError, NotImplementedError) as e:
        if outside or weight.dtype == torch.float32:  # judged by the table (cuSPARSELt refuses float32)
            refused(SEMI_STRUCTURED, e, f"{what}: {backend_name} 2:4 on sm_{sm(compat_env)}")
        raise
    assert isinstance(sparse, sparse_class(backend_name)), type(sparse).__name__
    if outside:  # the conversion may pass where the matmul refuses (CUTLASS's MAD op on sm_90, seen on an H200)
        try:
            torch.mm(sparse, torch.zeros(weight.shape[-1], 8, dtype=weight.dtype, device=weight.device))
        except (RuntimeError, NotImplementedError) as e:
            refused(SEMI_STRUCTURED, e, f"{what}: {backend_name} 2:4 mm on sm_{sm(compat_env)}")
    return sparse


def _bound(dtype: torch.dtype, want: torch.Tensor) -> dict[str, float]:
    tol = TOL[dtype]
    return {"rtol": tol.rtol, "atol": tol.atol * float(want.abs().max())}


def _weights(rows: int, cols: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    return (torch.randn(rows, cols, generator=gen, dtype=torch.float64) * mask(rows, cols)).to(dtype)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_the_sparse_kernel_runs(device: torch.device, compat_env, monkeypatch, backend_name: str) -> None:
    """On the device the profiler must show a sparse GEMM kernel for ``mm(A_sparse, B)`` (the names are recorded)."""
    if device.type != "cuda":
        refused_off_cuda(device, torch.float16)
    gen = torch.Generator().manual_seed(0)
    a = _weights(256, 128, torch.float16, gen).to(device)
    b = torch.randn(128, 64, generator=gen).half().to(device)
    a_sparse = _sparse(a, backend_name, compat_env, monkeypatch, "mm")
    try:
        kernels = device_kernels(lambda: torch.mm(a_sparse, b), device)
    except (RuntimeError, NotImplementedError) as e:  # the conversion passed; a refused matmul is judged the same
        refused(SEMI_STRUCTURED, e, f"mm on {backend_name} 2:4 on sm_{sm(compat_env)}")
    sparse = [k for k in kernels if any(f in k.lower() for f in SPARSE_KERNEL)]
    assert sparse, f"{backend_name}: no sparse GEMM kernel among the kernels mm launched: {kernels}"
    want = a.double().cpu() @ b.double().cpu()
    torch.testing.assert_close(torch.mm(a_sparse, b).double().cpu(), want, **_bound(torch.float16, want))


@pytest.mark.perf
@pytest.mark.measurement
@pytest.mark.timeout(300)
def test_speedup_over_dense(device: torch.device, compat_env, monkeypatch, record_property) -> None:
    """cuSPARSELt 2:4 ``mm`` against the dense ``mm`` of the same (masked) float16 matrix: a measured figure."""
    if device.type != "cuda":
        refused_off_cuda(device, torch.float16)
    n = 4096
    gen = torch.Generator().manual_seed(1)
    a = _weights(n, n, torch.float16, gen).to(device)
    b = torch.randn(n, n, generator=gen).half().to(device)
    a_sparse = _sparse(a, "cusparselt", compat_env, monkeypatch, "speed-up")
    t_sparse = best_time(lambda: torch.mm(a_sparse, b), device, repeats=10, warmup=2)
    t_dense = best_time(lambda: torch.mm(a, b), device, repeats=10, warmup=2)
    record_perf(
        record_property,
        "semi_structured_vs_dense",
        t_dense / t_sparse,
        "x",
        label="2:4 sparse mm vs dense mm (cuSPARSELt)",
        shape=f"({n},{n})x({n},{n})",
        dtype="float16",
        note="dense time / sparse time, best of 10; the sparse product is the dense one's (checked)",
    )
    torch.testing.assert_close(torch.mm(a_sparse, b), torch.mm(a, b), rtol=1e-2, atol=1e-1)


@pytest.mark.parametrize("dtype", [torch.int8, torch.float32], ids=["int8", "float32"])
@pytest.mark.parametrize("backend_name", BACKENDS)
def test_int8_and_float32(device: torch.device, compat_env, monkeypatch, backend_name: str, dtype: torch.dtype) -> None:
    """int8: exact against the integer product (entries -1, 0, 1: no saturation), dense operand transposed as
    PyTorch's own tests do; float32: CUTLASS's TF32 against float64; cuSPARSELt refuses float32 ([unsupported])."""
    if device.type != "cuda":
        refused_off_cuda(device, dtype)
    gen = torch.Generator().manual_seed(2)
    rows, k, cols = 128, 128, 64
    if dtype == torch.int8:
        a = (torch.randint(-1, 2, (rows, k), generator=gen) * mask(rows, k)).to(torch.int8)
        b = torch.randint(-1, 2, (cols, k), generator=gen).to(torch.int8)
    else:
        a = _weights(rows, k, dtype, gen)
        b = torch.randn(cols, k, generator=gen)
    a_sparse = _sparse(a.to(device), backend_name, compat_env, monkeypatch, f"{dtype} mm")
    out = torch.mm(a_sparse, b.to(device).t())
    if dtype == torch.int8:
        want = a.long() @ b.long().t()
        assert out.dtype == torch.int8, f"int8 2:4 mm returned {out.dtype}"
        assert torch.equal(out.cpu().long(), want), f"int8 2:4 mm differs from the integer product: {out.cpu()[:2]}"
        return
    want = a.double() @ b.double().t()
    torch.testing.assert_close(out.double().cpu(), want, **_bound(dtype, want), msg=lambda m: f"float32 2:4: {m}")


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_transposed_and_bias_paths(device: torch.device, compat_env, monkeypatch, backend_name: str) -> None:
    if device.type != "cuda":
        refused_off_cuda(device, torch.float16)
    gen = torch.Generator().manual_seed(3)
    w = _weights(128, 256, torch.float16, gen)  # (out, in): the layout of a Linear weight
    x = torch.randn(64, 256, generator=gen).half()
    y = torch.randn(32, 256, generator=gen).half()
    bias = torch.randn(128, generator=gen).half()
    w_sparse = _sparse(w.to(device), backend_name, compat_env, monkeypatch, "linear")
    xd, yd, bd = x.to(device), y.to(device), bias.to(device)
    w64, x64, y64, b64 = w.double(), x.double(), y.double(), bias.double()
    cases = {
        "dense @ sparse.T": (torch.mm(xd, w_sparse.t()), x64 @ w64.t()),
        "sparse @ dense.T (a transposed dense operand)": (torch.mm(w_sparse, yd.t()), w64 @ y64.t()),
        "F.linear with bias": (F.linear(xd, w_sparse, bd), x64 @ w64.t() + b64),
        "addmm(bias, dense, sparse.T)": (torch.addmm(bd, xd, w_sparse.t()), x64 @ w64.t() + b64),
    }
    for name, (out, want) in cases.items():
        assert out.shape == want.shape, f"{name}: shape {tuple(out.shape)}, want {tuple(want.shape)}"
        torch.testing.assert_close(
            out.double().cpu(), want, **_bound(torch.float16, want), msg=lambda m, n=name: f"{backend_name} {n}: {m}"
        )


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_backward_through_a_sparse_weight(device: torch.device, compat_env, monkeypatch, backend_name: str) -> None:
    """The input gradient of ``F.linear(x, W_sparse, b)``: ``grad_out @ W``, computed from the transposed compression
    ``prune_dense_static_sort`` keeps; the weight is 2:4 along rows and columns, so the pruning keeps all of it."""
    if device.type != "cuda":
        refused_off_cuda(device, torch.float16)
    outside = gate(backend_name, compat_env)
    gen = torch.Generator().manual_seed(4)
    w = (torch.randn(128, 128, generator=gen, dtype=torch.float64) * two_way_mask(128, 128)).half()
    x = torch.randn(64, 128, generator=gen).half()
    bias = torch.randn(128, generator=gen).half()
    grad_out = torch.randn(64, 128, generator=gen).half()  # float16 as the backward sees it
    try:
        w_sparse = sparse_class(backend_name).prune_dense_static_sort(w.to(device))
    except (RuntimeError, NotImplementedError) as e:  # the pruning kernels are CUDA sm80+: judged by the table
        refused(SEMI_STRUCTURED, e, f"prune_dense_static_sort on {backend_name}, sm_{sm(compat_env)}")
    xd = x.to(device).requires_grad_(True)
    try:
        out = F.linear(xd, w_sparse, bias.to(device))
        out.backward(grad_out.to(device))
    except (RuntimeError, NotImplementedError) as e:
        if not outside:  # inside PyTorch's gate a refusal is no refusal: it fails
            raise
        refused(SEMI_STRUCTURED, e, f"linear and backward on {backend_name} 2:4, sm_{sm(compat_env)}")
    want_out = x.double() @ w.double().t() + bias.double()
    want_grad = grad_out.double() @ w.double()
    torch.testing.assert_close(out.detach().double().cpu(), want_out, **_bound(torch.float16, want_out))
    assert xd.grad is not None, "no gradient reached the input"
    torch.testing.assert_close(
        xd.grad.double().cpu(), want_grad, **_bound(torch.float16, want_grad), msg=lambda m: f"input gradient: {m}"
    )


@pytest.mark.timeout(600)
def test_compile_with_sparse_weights(device: torch.device, compat_env, monkeypatch) -> None:
    """``torch.compile`` (Inductor) of a Linear-ReLU-Linear whose weights are cuSPARSELt 2:4 tensors (PyTorch's own
    test_mlp_contiguous_relu_compile_cusparselt), against the float64 MLP."""
    if device.type != "cuda":
        refused_off_cuda(device, torch.float16)
    gen = torch.Generator().manual_seed(5)
    w1, w2 = _weights(256, 128, torch.float16, gen), _weights(128, 256, torch.float16, gen)
    x = torch.randn(64, 128, generator=gen).half()
    model = torch.nn.Sequential(torch.nn.Linear(128, 256, bias=False), torch.nn.ReLU(), torch.nn.Linear(256, 128))
    model = model.half().to(device).eval()
    model[2].bias.data.zero_()
    for layer, w in ((model[0], w1), (model[2], w2)):
        layer.weight = torch.nn.Parameter(_sparse(w.to(device), "cusparselt", compat_env, monkeypatch, "compile"))
        layer.weight.requires_grad_(False)
    torch.compiler.reset()
    compiled = torch.compile(model)
    with torch.no_grad():
        out = compiled(x.to(device))
    want = torch.relu(x.double() @ w1.double().t()) @ w2.double().t()
    torch.testing.assert_close(out.double().cpu(), want, **_bound(torch.float16, want), msg=lambda m: f"compiled: {m}")
