"""Breakages for the tests issue 39 added to the five release features, injected into real suite runs.

The same mechanism as sabotage.py (a ``sitecustomize`` calls :func:`apply` at start-up, in pytest and in every child
process the suites start; ``COMPAT_SABOTAGE`` names the breakage). Each one breaks what a test checks the way a
faulty build would: a gradient off by half while the forward stays right, a pseudo-inverse 1% off, a scale dropped,
a hub that skips its prompt or its fork check, a package whose outputs drift, a graph that replays nothing.
"""

from __future__ import annotations

import os

MODE_ENV = "COMPAT_SABOTAGE"


def _half_gradient(t):  # the value unchanged, the gradient halved
    return t.detach() + 0.5 * (t - t.detach())


def _eigh_gradient_halved() -> None:
    import torch

    real = torch.linalg.eigh

    def eigh(a, *args, **kwargs):
        w, v = real(a, *args, **kwargs)
        return torch.return_types.linalg_eigh((_half_gradient(w), v))

    torch.linalg.eigh = eigh


def _svd_gradient_halved() -> None:
    import torch

    real = torch.linalg.svd

    def svd(a, *args, **kwargs):
        u, s, vh = real(a, *args, **kwargs)
        return torch.return_types.linalg_svd((u, _half_gradient(s), vh))

    torch.linalg.svd = svd


def _lstsq_gradient_halved() -> None:
    import torch

    real = torch.linalg.lstsq

    def lstsq(a, b, *args, **kwargs):
        out = real(a, b, *args, **kwargs)
        return torch.return_types.linalg_lstsq((_half_gradient(out.solution), *out[1:]))

    torch.linalg.lstsq = lstsq


def _lstsq_not_minimum_norm() -> None:
    """lstsq adds a null-space component to an underdetermined solution: A X = B still holds, the norm is not least."""
    import torch

    real = torch.linalg.lstsq

    def lstsq(a, b, *args, **kwargs):
        out = real(a, b, *args, **kwargs)
        if a.shape[-2] >= a.shape[-1]:
            return out
        eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        null = (eye - torch.linalg.pinv(a) @ a) @ torch.ones_like(out.solution)
        return torch.return_types.linalg_lstsq((out.solution + null, *out[1:]))

    torch.linalg.lstsq = lstsq


def _lstsq_refuses_drivers() -> None:
    """The CPU refuses every driver but gels with CUDA's words: the CPU's table must not accept them."""
    import torch

    real = torch.linalg.lstsq

    def lstsq(a, b, *args, driver=None, **kwargs):
        if driver not in (None, "gels"):
            raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
        return real(a, b, *args, driver=driver, **kwargs)

    torch.linalg.lstsq = lstsq


def _eig_eigenvalues_drift() -> None:
    import torch

    real = torch.linalg.eig

    def eig(a, *args, **kwargs):
        w, v = real(a, *args, **kwargs)
        return torch.return_types.linalg_eig((w * 1.001, v))

    torch.linalg.eig = eig


def _cholesky_off() -> None:
    import torch

    real = torch.linalg.cholesky
    torch.linalg.cholesky = lambda a, *args, **kwargs: real(a, *args, **kwargs) * 1.001


def _pinv_off() -> None:
    import torch

    real = torch.linalg.pinv
    torch.linalg.pinv = lambda a, *args, **kwargs: real(a, *args, **kwargs) * 1.01


def _eigh_ignores_nan() -> None:
    """eigh computes through NaNs (they read as zero) instead of failing for the batch element that holds one."""
    import torch

    real = torch.linalg.eigh
    torch.linalg.eigh = lambda a, *args, **kwargs: real(torch.nan_to_num(a), *args, **kwargs)


def _eigh_eigenvalues_drift() -> None:
    import torch

    real = torch.linalg.eigh

    def eigh(a, *args, **kwargs):
        w, v = real(a, *args, **kwargs)
        return torch.return_types.linalg_eigh((w * 1.001, v))

    torch.linalg.eigh = eigh


def _eigh_vectors_decay() -> None:
    """From the third call on, eigh's eigenvectors are 1% too long (pytorch#192483's kind of failure)."""
    import torch

    real = torch.linalg.eigh
    calls = [0]

    def eigh(a, *args, **kwargs):
        calls[0] += 1
        w, v = real(a, *args, **kwargs)
        return torch.return_types.linalg_eigh((w, v * 1.01 if calls[0] >= 3 else v))

    torch.linalg.eigh = eigh


def _svd_values_shifted() -> None:
    import torch

    real = torch.linalg.svd

    def svd(a, *args, **kwargs):
        u, s, vh = real(a, *args, **kwargs)
        return torch.return_types.linalg_svd((u, s + 1e-3 * s[..., :1], vh))

    torch.linalg.svd = svd


def _linalg_library_reads_magma() -> None:
    """preferred_linalg_library() reads MAGMA whatever was set."""
    import torch

    real = torch.backends.cuda.preferred_linalg_library

    def preferred_linalg_library(backend=None):
        out = real(backend)
        return torch._C._LinalgBackend.Magma if backend is None else out

    torch.backends.cuda.preferred_linalg_library = preferred_linalg_library


def _fp8_scaled_mm_ignores_scales() -> None:
    """Tensor-wise and row-wise FP8 scaled_mm multiply the fp8 elements and drop the scales."""
    import torch
    import torch.nn.functional as F

    real_private, real_public = torch._scaled_mm, F.scaled_mm

    def _scaled_mm(a, b, scale_a=None, scale_b=None, *args, out_dtype=None, **kwargs):
        if a.dtype == torch.float8_e4m3fn and type(a) is torch.Tensor:
            return (a.float() @ b.float()).to(out_dtype or torch.bfloat16)
        return real_private(a, b, scale_a, scale_b, *args, out_dtype=out_dtype, **kwargs)

    def scaled_mm(a, b, scale_a, recipe_a, scale_b, recipe_b, *args, output_dtype=None, **kwargs):
        if recipe_a in (F.ScalingType.TensorWise, F.ScalingType.RowWise):
            return (a.float() @ b.float()).to(output_dtype or torch.bfloat16)
        return real_public(a, b, scale_a, recipe_a, scale_b, recipe_b, *args, output_dtype=output_dtype, **kwargs)

    torch._scaled_mm, F.scaled_mm = _scaled_mm, scaled_mm


def _hub_list_trusts_without_asking() -> None:
    import torch.hub as hub

    real_list = hub.list

    def list(github, *args, trust_repo="check", **kwargs):
        return real_list(github, *args, trust_repo=True if trust_repo == "check" else trust_repo, **kwargs)

    hub.list = list


def _hub_none_prompts() -> None:
    """trust_repo=None asks, as "check" does for an untrusted repository."""
    import torch.hub as hub

    real = hub.load

    def load(*args, trust_repo="check", **kwargs):
        return real(*args, trust_repo=False if trust_repo is None else trust_repo, **kwargs)

    hub.load = load


def _hub_local_prompts() -> None:
    """source="local" asks the trust question before running the directory's hubconf."""
    import builtins

    import torch.hub as hub

    real = hub.load

    def load(repo_or_dir, model, *args, source="github", **kwargs):
        if source == "local":
            builtins.input(f"The repository {repo_or_dir} does not belong to the list of trusted repositories (y/N)?")
        return real(repo_or_dir, model, *args, source=source, **kwargs)

    hub.load = load


def _hub_force_reload_ignored() -> None:
    import torch.hub as hub

    real = hub.load

    def load(*args, force_reload=False, **kwargs):
        return real(*args, **kwargs)

    hub.load = load


def _hub_skips_fork_check() -> None:
    import torch.hub as hub

    hub._validate_not_a_forked_repo = lambda *args, **kwargs: None


def _hub_ignores_hashes() -> None:
    """download_url_to_file drops the expected hash prefix: a file that fails its hash is kept."""
    import torch.hub as hub

    real = hub.download_url_to_file

    def download_url_to_file(url, dst, hash_prefix=None, progress=True):
        return real(url, dst, None, progress)

    hub.download_url_to_file = download_url_to_file


def _aoti_package_drifts() -> None:
    """The loaded AOTInductor package computes 1% off."""
    import torch._inductor

    real = torch._inductor.aoti_load_package

    def aoti_load_package(*args, **kwargs):
        model = real(*args, **kwargs)

        def run(*inputs, **kw):
            out = model(*inputs, **kw)
            return [o * 1.01 for o in out] if isinstance(out, (list, tuple)) else out * 1.01

        return run

    torch._inductor.aoti_load_package = aoti_load_package


def _export_load_scales_a_buffer() -> None:
    """torch.export.load hands back the program with its e8m0 scales doubled (one exponent step)."""
    import torch

    real = torch.export.load

    def load(*args, **kwargs):
        ep = real(*args, **kwargs)
        for value in ep.state_dict.values():
            if value.dtype == torch.float8_e8m0fnu:
                value.copy_((value.float() * 2).to(torch.float8_e8m0fnu))
        return ep

    torch.export.load = load


# ---------------------------------------------------------------- on a CUDA device only
def _cuda_graph_replays_nothing() -> None:
    import torch

    torch.cuda.CUDAGraph.replay = lambda self: None


def _compile_drops_reduce_overhead() -> None:
    import torch

    real = torch.compile

    def compile(model=None, **kwargs):
        kwargs.pop("mode", None)
        return real(model, **kwargs)

    torch.compile = compile


def _cuda_graph_accepts_any_mode() -> None:
    import torch

    real = torch.cuda.graph.__init__

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global", **kwargs):
        if capture_error_mode not in ("global", "thread_local", "relaxed"):
            capture_error_mode = "global"
        real(self, cuda_graph, pool=pool, stream=stream, capture_error_mode=capture_error_mode, **kwargs)

    torch.cuda.graph.__init__ = __init__


def _semi_structured_stays_dense() -> None:
    """to_sparse_semi_structured hands back the dense matrix (a dense GEMM runs instead of the sparse kernel)."""
    import torch.sparse

    torch.sparse.to_sparse_semi_structured = lambda t, *args, **kwargs: t


def _move_to_device_is_a_no_op() -> None:
    import torch.export.passes

    torch.export.passes.move_to_device_pass = lambda ep, location: ep


SABOTAGE = {
    "eigh-gradient-halved": _eigh_gradient_halved,
    "svd-gradient-halved": _svd_gradient_halved,
    "lstsq-gradient-halved": _lstsq_gradient_halved,
    "lstsq-not-minimum-norm": _lstsq_not_minimum_norm,
    "lstsq-refuses-drivers": _lstsq_refuses_drivers,
    "eig-eigenvalues-drift": _eig_eigenvalues_drift,
    "cholesky-off": _cholesky_off,
    "pinv-off": _pinv_off,
    "eigh-ignores-nan": _eigh_ignores_nan,
    "eigh-eigenvalues-drift": _eigh_eigenvalues_drift,
    "eigh-vectors-decay": _eigh_vectors_decay,
    "svd-values-shifted": _svd_values_shifted,
    "linalg-library-reads-magma": _linalg_library_reads_magma,
    "fp8-scaled-mm-ignores-scales": _fp8_scaled_mm_ignores_scales,
    "hub-list-trusts-without-asking": _hub_list_trusts_without_asking,
    "hub-none-prompts": _hub_none_prompts,
    "hub-local-prompts": _hub_local_prompts,
    "hub-force-reload-ignored": _hub_force_reload_ignored,
    "hub-skips-fork-check": _hub_skips_fork_check,
    "hub-ignores-hashes": _hub_ignores_hashes,
    "aoti-package-drifts": _aoti_package_drifts,
    "export-load-scales-a-buffer": _export_load_scales_a_buffer,
    "cuda-graph-replays-nothing": _cuda_graph_replays_nothing,
    "compile-drops-reduce-overhead": _compile_drops_reduce_overhead,
    "cuda-graph-accepts-any-mode": _cuda_graph_accepts_any_mode,
    "semi-structured-stays-dense": _semi_structured_stays_dense,
    "move-to-device-is-a-no-op": _move_to_device_is_a_no_op,
}


def apply() -> None:
    mode = os.environ.get(MODE_ENV)
    if mode:
        SABOTAGE[mode]()
