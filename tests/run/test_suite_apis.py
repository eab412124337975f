"""The torch APIs the suites exercise, read from their sources and features.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InputError, UsageError
from harness.run.suite_apis import exercised_apis, names_in_source

SOURCE = """
import torch
import torch.nn.functional as F
from torch.nn.attention.varlen import varlen_attn
from _support.requires import api, requires

pytestmark = requires(api("torch.accelerator.random.get_rng_state", since="2.14"))

def test_x():
    y = F.scaled_addmm(a, b, c)
    torch.compiler.precompile.capture(fn)
    varlen_attn(q, k, v)
    z = {}.get("torch.not a path")
"""


def test_names_in_source() -> None:
    found = names_in_source(SOURCE)
    for name in (
        "torch.nn.functional.scaled_addmm",
        "torch.compiler.precompile.capture",
        "torch.compiler.precompile",
        "torch.nn.attention.varlen.varlen_attn",
        "torch.accelerator.random.get_rng_state",
    ):
        assert name in found, name
    assert "torch" not in found and not any(" " in n for n in found)
    assert names_in_source("def broken(:") == set()


def test_exercised_apis_joins_features_and_sources(tmp_path: Path) -> None:
    (tmp_path / "features.toml").write_text('[features.x]\napis = ["torch.compiler.set_default_backend"]\n')
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "test_x.py").write_text(SOURCE)
    found = exercised_apis(tmp_path)
    assert {"torch.compiler.set_default_backend", "torch.nn.functional.scaled_addmm"} <= found


def test_suites_without_features_toml_are_a_usage_error_and_bad_toml_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no features\.toml"):
        exercised_apis(tmp_path)
    (tmp_path / "features.toml").write_text("[features\n")
    with pytest.raises(InputError, match="invalid TOML"):
        exercised_apis(tmp_path)
