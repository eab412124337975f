"""``torch.compiler.set_default_backend`` / ``get_default_backend`` (2.13).

Upstream's words (the 2.13 docstring): "Set the default backend for ``torch.compile`` when no ``backend``
argument is specified. Passing ``None`` resets the default back to ``"inductor"``." A recording backend set
as the default must be the one ``torch.compile`` uses when none is given (and the compiled function must
still compute the right values, against float64), an explicit ``backend=`` must win over it, and ``None``
must restore ``"inductor"``. Only Dynamo runs (the recording backend runs the captured graph as is), so
this costs no code generation on any device.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from _support.requires import api, requires

pytestmark = requires(
    api("torch.compiler.set_default_backend", since="2.13"), api("torch.compiler.get_default_backend", since="2.13")
)


def _fn(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * 2 + x


class Recording:
    """A torch.compile backend that runs the captured graph unchanged and counts the graphs it got."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> object:
        self.graphs += 1
        return gm.forward


@pytest.fixture
def fresh_default() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch.compiler.set_default_backend(None)
    torch._dynamo.reset()


def test_default_backend_starts_as_inductor_and_resets(fresh_default) -> None:
    assert torch.compiler.get_default_backend() == "inductor"
    torch.compiler.set_default_backend("eager")
    assert torch.compiler.get_default_backend() == "eager"
    torch.compiler.set_default_backend(None)
    assert torch.compiler.get_default_backend() == "inductor", "set_default_backend(None) must restore inductor"


def test_compile_uses_the_default_backend(fresh_default, device) -> None:
    recording = Recording()
    torch.compiler.set_default_backend(recording)
    assert torch.compiler.get_default_backend() is recording
    x = torch.linspace(-3, 3, 257, device=device)
    out = torch.compile(_fn)(x)
    assert recording.graphs == 1, f"torch.compile without backend= gave the default backend {recording.graphs} graphs"
    want = _fn(x.double().cpu())
    torch.testing.assert_close(out.double().cpu(), want, rtol=1e-6, atol=1e-6)


def test_an_explicit_backend_wins_over_the_default(fresh_default, device) -> None:
    recording, explicit = Recording(), Recording()
    torch.compiler.set_default_backend(recording)
    torch.compile(_fn, backend=explicit)(torch.ones(8, device=device))
    assert (recording.graphs, explicit.graphs) == (0, 1), (
        f"default backend got {recording.graphs} graphs, the explicit one {explicit.graphs}"
    )
