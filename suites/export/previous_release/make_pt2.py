"""Make the ``.pt2`` that export/test_export_compat.py loads: a program saved by a real older torch.

Run with the previous release's torch (the committed file was made with 2.12.1, PyPI's cu130 wheel, on a host
without a GPU: export and save are host-side), from any directory::

    /path/to/venv-2.12.1/bin/python suites/export/previous_release/make_pt2.py

The program is an LSTM (RNN export, 2.11) followed by an MXFP8 projection whose fp8 elements and float8_e8m0fnu
block scales are buffers (MX serialization, 2.12). ``reference.json``, saved inside the archive as an extra file,
holds what the loading release checks against: the input, the float64 output of the same module computed by the
saving release, and each buffer and parameter's dtype and SHA-256 of its bytes. Only torch and the standard
library are used; the weights come from a seeded generator.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
OUT = HERE / f"lstm_mxfp8-torch{torch.__version__.split('+')[0]}.pt2"
BLOCK = 32


class LSTMThenMXFP8(torch.nn.Module):
    """LSTM(8 -> 32), then a 32 -> 4 projection stored as MXFP8 (e4m3 elements, one e8m0 scale per 32)."""

    def __init__(self, gen: torch.Generator) -> None:
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 32, batch_first=True)
        with torch.no_grad():
            for p in self.rnn.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
        w = torch.randn(4, 1, BLOCK, generator=gen)
        exponent = torch.floor(torch.log2(w.abs().amax(-1, keepdim=True))) - 8  # e4m3's largest exponent
        scale = torch.exp2(exponent)
        self.register_buffer("scale", scale.to(torch.float8_e8m0fnu))
        self.register_buffer("qweight", (w / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.rnn(x)[0]
        w = (self.qweight.to(torch.float32) * self.scale.to(torch.float32)).reshape(4, BLOCK)
        return h @ w.t()


def reference(model: LSTMThenMXFP8, x: torch.Tensor) -> torch.Tensor:
    """The same computation in float64: the LSTM in float64, the MX weights dequantized exactly."""
    rnn = torch.nn.LSTM(8, 32, batch_first=True).double()
    rnn.load_state_dict({k: v.double() for k, v in model.rnn.state_dict().items()})
    w = (model.qweight.to(torch.float64) * model.scale.to(torch.float32).to(torch.float64)).reshape(4, BLOCK)
    with torch.no_grad():
        return rnn(x.double())[0] @ w.t()


def sha256(t: torch.Tensor) -> str:
    """SHA-256 of a tensor's bytes (no numpy: the saving venv need not have it)."""
    return hashlib.sha256(bytes(t.detach().contiguous().reshape(-1).view(torch.uint8).tolist())).hexdigest()


def main() -> None:
    gen = torch.Generator().manual_seed(2026)
    model = LSTMThenMXFP8(gen).eval()
    x = torch.randn(2, 5, 8, generator=gen)
    ep = torch.export.export(model, (x,))
    tensors = {**ep.state_dict, **{k: v for k, v in ep.constants.items() if isinstance(v, torch.Tensor)}}
    meta = {
        "torch": torch.__version__,
        "input": x.tolist(),
        "expected_float64": reference(model, x).tolist(),
        "tensors": {
            name: {
                "dtype": str(t.dtype),
                "shape": list(t.shape),
                "sha256": sha256(t),
            }
            for name, t in sorted(tensors.items())
        },
    }
    torch.export.save(ep, str(OUT), extra_files={"reference.json": json.dumps(meta, indent=1)})
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) with torch {torch.__version__}")


if __name__ == "__main__":
    main()
