"""The benchmarks' own judgements: a comparison that always said "identical" would hide a regression."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_merge.py"


def _bench_merge():
    spec = importlib.util.spec_from_file_location("bench_merge", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_merge"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MATRIX = """{{
  "schema_version": "1.2",
  "generated_at": "{when}",
  "harness_version": "{version}",
  "tests": [
    {{"id": "a", "results": {{"c": ["passed", 0.1]}}}},
    {{"id": "b", "results": {{"c": ["{outcome}", 0.2]}}}}
  ]
}}
"""


def test_same_matrix_ignores_only_the_volatile_fields(tmp_path: Path) -> None:
    same_matrix = _bench_merge().same_matrix
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    a.write_text(MATRIX.format(when="2026-12-01T00:00:00Z", version="0.1.0", outcome="failed"))
    b.write_text(MATRIX.format(when="2026-12-02T09:30:00Z", version="0.2.0", outcome="failed"))
    c.write_text(MATRIX.format(when="2026-12-01T00:00:00Z", version="0.1.0", outcome="passed"))
    assert same_matrix(a, b)[0]
    equal, why = same_matrix(a, c)
    assert not equal and why.startswith("line 7 differs")
    assert not same_matrix(a, tmp_path / "missing.json")[0]
    (tmp_path / "short.json").write_text(a.read_text().rsplit("\n", 3)[0])
    equal, why = same_matrix(a, tmp_path / "short.json")
    assert not equal and "lines against" in why
