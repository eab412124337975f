"""torch.export of LSTM / GRU / RNN (2.11): dynamic batch, dynamic sequence length, save/load, numerics."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from _support.requires import UNSUPPORTED, fact, need, requires, torch_at_least
from torch.export import Dim


class Wrap(torch.nn.Module):
    def __init__(self, rnn: torch.nn.Module) -> None:
        super().__init__()
        self.rnn = rnn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]


RNNS: dict[str, Callable[[], torch.nn.Module]] = {
    "LSTM": lambda: torch.nn.LSTM(8, 16, num_layers=2, batch_first=True),
    "LSTM-bidir-proj": lambda: torch.nn.LSTM(8, 16, batch_first=True, bidirectional=True, proj_size=4),
    "GRU": lambda: torch.nn.GRU(8, 16, num_layers=2, batch_first=True),
    "RNN-tanh": lambda: torch.nn.RNN(8, 16, batch_first=True),
    "RNN-relu": lambda: torch.nn.RNN(8, 16, nonlinearity="relu", batch_first=True),
}


def _tol(device: torch.device) -> dict[str, float]:
    return {"atol": 1e-5, "rtol": 1e-5} if device.type == "cpu" else {"atol": 1e-4, "rtol": 1e-4}


def _save_load(ep: torch.export.ExportedProgram, path: Path) -> torch.export.ExportedProgram:
    torch.export.save(ep, str(path))
    return torch.export.load(str(path))


@requires(torch_at_least("2.11", "RNN export with dynamic shapes"))
@pytest.mark.parametrize("name", list(RNNS))
def test_rnn_export_dynamic_batch(device: torch.device, tmp_path: Path, name: str) -> None:
    m = Wrap(RNNS[name]()).to(device).eval()
    x = torch.randn(3, 5, 8, device=device)
    ep = torch.export.export(m, (x,), dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
    placeholder = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name.startswith("x"))
    batch_dim = placeholder.meta["val"].shape[0]
    assert not isinstance(batch_dim, int), f"batch dimension was specialised to {batch_dim}"
    ep2 = _save_load(ep, tmp_path / f"{name}.pt2")
    with torch.no_grad():
        for batch in (1, 7, 64):
            x2 = torch.randn(batch, 5, 8, device=device)
            torch.testing.assert_close(ep2.module()(x2), m(x2), **_tol(device))
        # the decomposed (core ATen) program computes the same
        dec = ep.run_decompositions()
        x3 = torch.randn(9, 5, 8, device=device)
        torch.testing.assert_close(dec.module()(x3), m(x3), **_tol(device))


PATCHED = {
    "LSTM": ("register_lstm_while_loop_decomposition", RNNS["LSTM"]),
    "LSTM-bidir": (
        "register_lstm_while_loop_decomposition",
        lambda: torch.nn.LSTM(8, 16, batch_first=True, bidirectional=True),
    ),
    "GRU": ("register_gru_while_loop_decomposition", RNNS["GRU"]),
}


@requires(torch_at_least("2.11", "dynamic sequence length through the RNN while_loop decomposition"))
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", list(PATCHED))
def test_rnn_export_dynamic_time_while_loop(device: torch.device, tmp_path: Path, name: str) -> None:
    patch_name, ctor = PATCHED[name]
    try:
        import torch.export._patches as patches
    except ImportError as e:
        patches, err = None, f"{type(e).__name__}: {e}"
    else:
        err = f"torch.export._patches has no {patch_name}"
    need(fact(hasattr(patches, patch_name), UNSUPPORTED, f"dynamic RNN sequence length: {err}"))

    m = Wrap(ctor()).to(device).eval()
    x = torch.randn(3, 5, 8, device=device)
    dims = ({0: Dim("batch", min=1, max=64), 1: Dim("time", min=2, max=512)},)
    with getattr(patches, patch_name)():
        ep = torch.export.export(m, (x,), dynamic_shapes=dims)
    ep2 = _save_load(ep, tmp_path / f"{name}-time.pt2")
    with torch.no_grad():
        for shape in ((7, 11, 8), (1, 96, 8), (2, 2, 8)):
            x2 = torch.randn(*shape, device=device)
            torch.testing.assert_close(ep2.module()(x2), m(x2), **_tol(device), msg=lambda s, sh=shape: f"{sh}: {s}")
