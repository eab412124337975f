"""A public functional optimizer API, ``torch.optim.functional`` (2.15).

Upstream's words (the 2.15 module): "Functional optimizer APIs": ``adadelta``, ``adafactor``, ``adagrad``,
``adam``, ``adamax``, ``adamw``, ``asgd``, ``muon``, ``nadam``, ``radam``, ``rmsprop``, ``rprop``, ``sgd`` and
``sparse_adam``, each "redefined in this module as its own API while calling the exact same implementation"
as ``torch.optim.<name>.<name>``. Checked: every listed name is that wrapper, and three steps of SGD with
momentum and weight decay and of Adam, on the probed device, match the update rules computed in float64 and
the optimizer classes on the same gradients.
"""

from __future__ import annotations

import importlib

import pytest
import torch
from _support.requires import api, requires
from _support.tolerances import OPTIM_STEP

NAMES = (
    "adadelta", "adafactor", "adagrad", "adam", "adamax", "adamw", "asgd", "muon", "nadam", "radam", "rmsprop",
    "rprop", "sgd", "sparse_adam",
)  # fmt: skip
# Where each one's implementation lives (the private modules of 2.15: torch.optim._adafactor, ...).
HOMES = {"adafactor": "torch.optim._adafactor", "muon": "torch.optim._muon", "sparse_adam": "torch.optim._functional"}
LR, MOMENTUM, WEIGHT_DECAY, BETAS, EPS, STEPS = 0.1, 0.9, 0.01, (0.9, 0.999), 1e-8, 3

pytestmark = requires(api("torch.optim.functional", since="2.15"), api("torch.optim.functional.adam", since="2.15"))


@pytest.mark.host
def test_functional_optimizers_wrap_the_implementations() -> None:
    functional = importlib.import_module("torch.optim.functional")
    assert sorted(functional.__all__) == sorted(NAMES), f"torch.optim.functional.__all__ = {functional.__all__}"
    for name in NAMES:
        fn = getattr(functional, name)
        home = importlib.import_module(HOMES.get(name, f"torch.optim.{name}"))
        assert fn.__module__ == "torch.optim.functional", f"{name}.__module__ = {fn.__module__}"
        assert getattr(fn, "__wrapped__", None) is getattr(home, name), f"{name} does not call {home.__name__}.{name}"


def _problem(device) -> tuple[torch.Tensor, list[torch.Tensor]]:
    gen = torch.Generator().manual_seed(0)
    param = torch.randn(257, generator=gen)
    grads = [torch.randn(257, generator=gen) for _ in range(STEPS)]
    return param.to(device), [g.to(device) for g in grads]


def _close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    torch.testing.assert_close(
        got.double().cpu(), want.double().cpu(), **OPTIM_STEP.kwargs(), msg=lambda m: f"{what}: {m}"
    )


def test_functional_sgd_steps(device) -> None:
    from torch.optim.functional import sgd

    param, grads = _problem(device)
    p, buffers = param.clone(), [None]
    ref, buf = param.double().cpu(), None
    klass = torch.nn.Parameter(param.clone())
    opt = torch.optim.SGD([klass], lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
    for grad in grads:
        sgd([p], [grad.clone()], buffers, weight_decay=WEIGHT_DECAY, momentum=MOMENTUM, lr=LR, dampening=0.0,
            nesterov=False, maximize=False)  # fmt: skip
        d = grad.double().cpu() + WEIGHT_DECAY * ref
        buf = d if buf is None else MOMENTUM * buf + d
        ref = ref - LR * buf
        klass.grad = grad.clone()
        opt.step()
    _close(p, ref, f"functional sgd on {device}, {STEPS} steps with momentum and weight decay, vs float64")
    _close(p, klass.detach(), f"functional sgd on {device} vs torch.optim.SGD")


def test_functional_adam_steps(device) -> None:
    from torch.optim.functional import adam

    param, grads = _problem(device)
    p = param.clone()
    exp_avg, exp_avg_sq, steps = torch.zeros_like(p), torch.zeros_like(p), [torch.tensor(0.0)]
    ref, m, v = (
        param.double().cpu(),
        torch.zeros(p.shape, dtype=torch.float64),
        torch.zeros(p.shape, dtype=torch.float64),
    )
    klass = torch.nn.Parameter(param.clone())
    opt = torch.optim.Adam([klass], lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY)
    for t, grad in enumerate(grads, 1):
        adam([p], [grad.clone()], [exp_avg], [exp_avg_sq], [], steps, amsgrad=False, beta1=BETAS[0], beta2=BETAS[1],
             lr=LR, weight_decay=WEIGHT_DECAY, eps=EPS, maximize=False)  # fmt: skip
        g = grad.double().cpu() + WEIGHT_DECAY * ref
        m = BETAS[0] * m + (1 - BETAS[0]) * g
        v = BETAS[1] * v + (1 - BETAS[1]) * g * g
        ref = ref - LR * (m / (1 - BETAS[0] ** t)) / ((v / (1 - BETAS[1] ** t)).sqrt() + EPS)
        klass.grad = grad.clone()
        opt.step()
    assert float(steps[0]) == STEPS, f"adam counted {float(steps[0])} steps"
    _close(p, ref, f"functional adam on {device}, {STEPS} steps with weight decay, vs float64")
    _close(p, klass.detach(), f"functional adam on {device} vs torch.optim.Adam")
