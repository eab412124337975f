"""Free-threaded CPython (PEP 703): torch on an interpreter built with the GIL disabled (``3.14t``, ``3.15t``).

Upstream ships free-threaded wheels (``cp314t`` for 2.12-2.14, ``cp314t`` and ``cp315t`` for 2.15: PyPI's
file list of torch) whose extension modules declare that they do not need the GIL, so ``import torch``
leaves it disabled (an extension that does not declare it turns the GIL back on, with a RuntimeWarning).
Three checks:

* the GIL is still disabled after ``import torch`` (``sys._is_gil_enabled()``);
* ops used from several threads at once give the same values as from one (matmul, a convolution, a
  reduction and an elementwise chain, each thread on its own tensors, against a single-threaded run);
* ``torch.compile`` is admitted or refused as upstream's guard says: 2.15's ``torch/__init__.py`` raises
  "torch.compile is not supported on Python < 3.13.3 built with GIL disabled" and admits 3.13.3 and later.

On an interpreter with the GIL, the row is "not in this release" (the merge reads ``python`` in
features.toml); the thread check still runs there, as a plain concurrency check.
"""

from __future__ import annotations

import sys
import sysconfig
import threading

import pytest
import torch
from _support.requires import skip_dependency

FREE_THREADED = sysconfig.get_config_var("Py_GIL_DISABLED") == 1
THREADS = 4


def _skip_unless_free_threaded() -> None:
    if not FREE_THREADED:
        skip_dependency(f"needs a free-threaded Python (3.14t); this runner has {sys.version.split()[0]} with the GIL")


def test_gil_stays_disabled_after_import_torch() -> None:
    _skip_unless_free_threaded()
    assert not sys._is_gil_enabled(), (  # type: ignore[attr-defined]
        f"import torch {torch.__version__} re-enabled the GIL on free-threaded Python {sys.version.split()[0]}"
    )


def _work(seed: int, device) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(64, 64, generator=gen, dtype=torch.float64).to(device)
    b = torch.randn(64, 64, generator=gen, dtype=torch.float64).to(device)
    img = torch.randn(2, 3, 16, 16, generator=gen, dtype=torch.float64).to(device)
    weight = torch.randn(4, 3, 3, 3, generator=gen, dtype=torch.float64).to(device)
    outs = []
    for _ in range(20):
        outs = [
            a @ b,
            torch.nn.functional.conv2d(img, weight, padding=1),
            (a * b).sum(dim=0),
            torch.tanh(a).exp().clamp(max=3.0),
        ]
    return [o.cpu() for o in outs]


def test_ops_from_threads_match_one_thread(device) -> None:
    expected = [_work(seed, device) for seed in range(THREADS)]
    got: dict[int, list[torch.Tensor]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def run(seed: int) -> None:
        try:
            start.wait()
            got[seed] = _work(seed, device)
        except BaseException as e:  # reported below, with the thread it came from
            errors.append(e)

    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, f"an op raised in a thread: {errors[0]!r}"
    assert sorted(got) == list(range(THREADS)), "a thread did not finish within 120 s"
    for seed in range(THREADS):
        for one, many in zip(expected[seed], got[seed], strict=True):
            torch.testing.assert_close(many, one, rtol=0, atol=0, msg=lambda m, seed=seed: f"thread {seed}: {m}")


def _fn(x: torch.Tensor) -> torch.Tensor:
    return torch.cos(x) * x + 1


def test_compile_admitted_as_upstream_says(device) -> None:
    _skip_unless_free_threaded()
    torch._dynamo.reset()
    if sys.version_info < (3, 13, 3):  # upstream refuses: the refusal is the expected answer
        with pytest.raises(RuntimeError, match="built with GIL disabled"):
            torch.compile(_fn, backend="eager")
        return
    compiled = torch.compile(_fn, backend="eager")
    x = torch.linspace(-4, 4, 257, device=device)
    torch.testing.assert_close(compiled(x).double().cpu(), _fn(x.double().cpu()), rtol=1e-5, atol=1e-5)
