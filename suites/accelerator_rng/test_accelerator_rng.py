"""Device-agnostic RNG state: ``torch.accelerator.random`` (2.14).

Upstream's words (the 2.14 docstrings): ``initial_seed`` "Return the initial seed of the default
torch.Generator for the current accelerator on the specified device"; ``get_rng_state`` "Return the RNG
state of the default torch.Generator for the current accelerator as a torch.Tensor of dtype torch.uint8";
``get_rng_state_all`` the states "of all devices for the current accelerator". On an accelerator: the seed
set by ``torch.manual_seed`` is reported, the state is the device module's own (``torch.cuda`` /
``torch.xpu`` ...), and restoring it replays the same random numbers. Without an accelerator the device
list is empty and a device argument is refused, then ``[hardware]``.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from _support.requires import api, requires, skip_hardware

NAMES = ("initial_seed", "get_rng_state", "get_rng_state_all")

pytestmark = requires(*(api(f"torch.accelerator.random.{name}", since="2.14") for name in NAMES))


@pytest.mark.host
def test_rng_state_api() -> None:
    rng = torch.accelerator.random
    for name in ("initial_seed", "get_rng_state"):
        params = list(inspect.signature(getattr(rng, name)).parameters.values())
        shape = [(p.name, p.kind, p.default) for p in params]
        assert shape == [("device", inspect.Parameter.POSITIONAL_ONLY, None)], (
            f"{name}{inspect.signature(getattr(rng, name))}"
        )
    assert not inspect.signature(rng.get_rng_state_all).parameters, "get_rng_state_all takes no argument"


def test_rng_state_per_device(device, compat_env) -> None:
    rng = torch.accelerator.random
    if device.type == "cpu":
        assert rng.get_rng_state_all() == [], "a host without an accelerator has no accelerator RNG state"
        # 2.14 raises RuntimeError; a CUDA build without its GPU says "cpu doesn't match the current accelerator
        # cuda." as a ValueError (2.15.0+cu132): either way a refusal that names the accelerator
        with pytest.raises((RuntimeError, ValueError), match=r"[Aa]ccelerator"):
            rng.get_rng_state(torch.device("cpu"))
        skip_hardware(f"accelerator RNG state needs an accelerator; none is here (device {compat_env.device_label})")
    module = torch.get_device_module(device)
    torch.manual_seed(1234)
    assert rng.initial_seed() == 1234 == rng.initial_seed(device), f"initial_seed() = {rng.initial_seed()}"
    state = rng.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu", f"state {state.dtype} on {state.device}"
    assert torch.equal(state, module.get_rng_state()), f"the state differs from torch.{device.type}.get_rng_state()"
    first = torch.rand(4096, device=device)
    module.set_rng_state(state)
    again = torch.rand(4096, device=device)
    assert torch.equal(first, again), "restoring the state read by torch.accelerator did not replay the numbers"
    states = rng.get_rng_state_all()
    assert len(states) == torch.accelerator.device_count(), (
        f"{len(states)} states for {torch.accelerator.device_count()} devices"
    )
    for index, each in enumerate(states):
        assert torch.equal(each, module.get_rng_state(index)), f"device {index}: state differs from the device module's"
