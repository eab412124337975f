"""``torch.compile`` on Python 3.15 (2.15).

2.13 and 2.14 ship Python 3.15 wheels but refuse ``torch.compile`` there ("torch.compile is not supported on
Python 3.15+", pytorch#184352); 2.15 moves the guard to 3.16 ("torch.compile is not supported on Python
3.16+"). Two checks: which Pythons this build's ``torch.compile`` admits, asked on any interpreter by
presenting it version 3.15 (the guard reads ``sys.version_info``; Dynamo is imported first so nothing else
reads the borrowed version), and a real compile on a Python 3.15 interpreter: a column of its own (``--python
3.15``); elsewhere it skips as ``[dependency]`` and its group (``python`` in features.toml) is not judged.
The admission check compiles with the ``eager`` backend (Dynamo alone), the 3.15 run with the default one
(Inductor); the values are checked against float64. A build that refuses 3.15 is ``[unsupported]`` with its
refusal.
"""

from __future__ import annotations

import sys
from typing import NamedTuple, NoReturn

import pytest
import torch
import torch._dynamo
from _support.compiler import inductor_toolchain
from _support.refusals import COMPILE_PY315, refused
from _support.requires import need, skip_dependency


class VersionInfo(NamedTuple):  # compares like sys.version_info and has its attributes
    major: int
    minor: int
    micro: int
    releaselevel: str
    serial: int


PY315 = VersionInfo(3, 15, 0, "final", 0)


def _fn(x: torch.Tensor) -> torch.Tensor:
    return torch.cos(x) * x + 1


def _check(compiled, device, what: str) -> None:
    x = torch.linspace(-4, 4, 513, device=device)
    torch.testing.assert_close(
        compiled(x).double().cpu(), _fn(x.double().cpu()), rtol=1e-5, atol=1e-5, msg=lambda m: f"{what}: {m}"
    )


def _refused(e: RuntimeError) -> NoReturn:
    refused(COMPILE_PY315, e, f"torch {torch.__version__} refuses torch.compile on Python 3.15")


@pytest.mark.host
def test_compile_admits_python_3_15(monkeypatch: pytest.MonkeyPatch, device) -> None:
    torch._dynamo.reset()
    monkeypatch.setattr(sys, "version_info", PY315)
    try:
        compiled = torch.compile(_fn, backend="eager")
    except RuntimeError as e:
        monkeypatch.undo()
        _refused(e)
    monkeypatch.undo()  # run it on the real interpreter: only admission was asked under 3.15
    _check(compiled, device, f"torch.compile admitted under Python 3.15, run on {device}, vs float64")


def test_compile_runs_on_python_3_15(device) -> None:
    if sys.version_info[:2] != (3, 15):
        skip_dependency(
            f"needs a Python 3.15 interpreter (a --python 3.15 column); this runner has {sys.version.split()[0]}"
        )
    need(inductor_toolchain())
    torch._dynamo.reset()
    try:
        compiled = torch.compile(_fn)
        _check(compiled, device, f"torch.compile on Python 3.15, on {device}, vs float64")
    except RuntimeError as e:
        _refused(e)
