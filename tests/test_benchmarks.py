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


def _bench_import():
    _bench_merge()  # bench_import takes Step and the lxml script from it
    sys.path.insert(0, str(BENCH.parent))  # and the cell generator
    spec = importlib.util.spec_from_file_location("bench_import", BENCH.parent / "bench_import.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _steps(module, seconds: dict[str, float]) -> dict:
    steps = {}
    for name, value in seconds.items():
        step = module.Step(name, seconds=value, peak_mb=100.0, note="10 cases 1 results")
        module.CPU[name] = value
        steps[name] = step
    return steps


def test_first_ingest_is_held_to_the_peers_own_code_when_given_else_to_the_model(capsys) -> None:
    """With the action's code measured, the first ingest passes when it beats the action even if
    the (faster) minimal model beats it; without it, the model is the bar and the same run misses."""
    bench = _bench_import()
    s = _steps(bench, {"lxml": 1.0, "action": 9.0, "model": 4.5, "first": 7.0, "merge": 1.2})
    summary: dict = {}
    counted = "10 cases 1 results"
    missed = bench._verdict("lean", s["lxml"], s["action"], s["model"], s["first"], s["merge"], counted, summary)
    out = capsys.readouterr().out
    assert missed == 0, out
    assert "PASS lean: first ingest vs the peer's own code: 1.29x" in out
    assert summary["lean"]["first_ingest_vs_peer"] == round(9.0 / 7.0, 3)
    missed = bench._verdict("lean", s["lxml"], None, s["model"], s["first"], s["merge"], counted, summary)
    out = capsys.readouterr().out
    assert missed == 1, out
    assert "MISS lean: first ingest vs the minimal model (--peer-source for the peer): 0.64x" in out
    slow_merge = _steps(bench, {"merge-slow": 1.3})["merge-slow"]
    assert bench._verdict("lean", s["lxml"], s["action"], s["model"], s["first"], slow_merge, counted, summary) == 1


def test_peer_source_is_the_checkouts_python_folder(tmp_path: Path) -> None:
    bench = _bench_import()
    assert bench.peer_package(tmp_path) is None
    (tmp_path / "python" / "publish").mkdir(parents=True)
    (tmp_path / "python" / "publish" / "junit.py").write_text("")
    assert bench.peer_package(tmp_path) == (tmp_path / "python").resolve()
    assert bench.peer_package(tmp_path / "python") == (tmp_path / "python").resolve()
