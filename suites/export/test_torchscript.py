"""TorchScript is deprecated in favour of torch.export: every entry point warns, and still works."""

from __future__ import annotations

import io
import re
import warnings

import pytest
import torch


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).relu() + 1


def _exact(device: torch.device) -> dict[str, float]:
    """Bit-identical on CPU; on accelerators TorchScript fusers may reorder float ops."""
    return {"rtol": 0.0, "atol": 0.0} if device.type == "cpu" else {}


def _deprecations(record: list[warnings.WarningMessage], api: str) -> list[str]:
    pat = re.compile(rf"`{re.escape(api)}` is deprecated")
    return [str(w.message) for w in record if issubclass(w.category, DeprecationWarning) and pat.search(str(w.message))]


@pytest.mark.parametrize("entry", ["script", "trace"])
def test_torchscript_warns_and_still_works(device: torch.device, entry: str) -> None:
    m = Small().to(device).eval()
    x = torch.randn(4, 6, device=device)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ts = torch.jit.script(m) if entry == "script" else torch.jit.trace(m, (x,))
    msgs = _deprecations(rec, f"torch.jit.{entry}")
    assert msgs, f"torch.jit.{entry} did not emit its DeprecationWarning; got {[str(w.message) for w in rec]}"
    assert "torch.compile" in msgs[0] or "torch.export" in msgs[0], msgs[0]
    with torch.no_grad():
        torch.testing.assert_close(ts(x), m(x), **_exact(device))
    # save/load still round-trip (and warn too)
    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as rec2:
        warnings.simplefilter("always")
        torch.jit.save(ts, buf)
        buf.seek(0)
        loaded = torch.jit.load(buf, map_location=device)
    assert _deprecations(rec2, "torch.jit.save") and _deprecations(rec2, "torch.jit.load")
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), m(x), **_exact(device))


def test_torchscript_warning_category_is_deprecation() -> None:
    with pytest.warns(DeprecationWarning, match=r"torch\.jit\.script. is deprecated"):
        torch.jit.script(torch.nn.functional.relu)
