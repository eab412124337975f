"""TorchScript is deprecated in favour of torch.export: every entry point warns, and still works."""

from __future__ import annotations

import io
import re
import warnings
from typing import Any

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


# Both are deprecation categories: DeprecationWarning (torch 2.13) is hidden from end users by
# default, FutureWarning (torch 2.14) is shown to them. Which one a release uses is recorded.
DEPRECATION_CATEGORIES = (DeprecationWarning, FutureWarning)


def _deprecations(record: list[warnings.WarningMessage], api: str) -> list[str]:
    pat = re.compile(rf"`{re.escape(api)}` is deprecated")
    return [
        str(w.message) for w in record if issubclass(w.category, DEPRECATION_CATEGORIES) and pat.search(str(w.message))
    ]


@pytest.mark.parametrize("entry", ["script", "trace"])
def test_torchscript_warns_and_still_works(device: torch.device, entry: str) -> None:
    m = Small().to(device).eval()
    x = torch.randn(4, 6, device=device)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ts = torch.jit.script(m) if entry == "script" else torch.jit.trace(m, (x,))
    msgs = _deprecations(rec, f"torch.jit.{entry}")
    assert msgs, f"torch.jit.{entry} did not emit a deprecation warning; got {[str(w.message) for w in rec]}"
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


def test_torchscript_warning_category_is_deprecation(record_property: Any) -> None:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        torch.jit.script(torch.nn.functional.relu)
    found = [w for w in rec if re.search(r"torch\.jit\.script. is deprecated", str(w.message))]
    assert found, f"torch.jit.script did not warn; got {[str(w.message) for w in rec]}"
    category = found[0].category
    record_property("warning_category", category.__name__)
    assert issubclass(category, DEPRECATION_CATEGORIES), f"a {category.__name__} is not a deprecation warning"
