"""Make small suites and real cells from them (real pytest runs, no hand-written JUnit)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from harness.registry import get_backend
from harness.run.execute import CellOutcome, RunOptions, run_cell

REPO = Path(__file__).resolve().parent.parent
REAL_PROBE = REPO / "suites" / "_support" / "probe.py"

DEFAULT_FEATURES = {
    "alpha": {"title": "Alpha feature", "since": "2.11", "claim": "alpha works everywhere"},
    "beta": {"title": "Beta feature", "since": "2.12", "claim": "beta is fast"},
}

PYTEST_INI = """\
[pytest]
pythonpath = .
junit_family = xunit1
markers =
    timeout(seconds): per-test timeout
"""


def write_suite(root: Path, files: dict[str, str], features: dict[str, dict[str, str]] | None = None) -> Path:
    """A suites dir like the real one: features.toml, pytest.ini, _support/probe.py, test files."""
    root.mkdir(parents=True, exist_ok=True)
    feats = DEFAULT_FEATURES if features is None else features
    toml = "".join(
        f"[features.{fid}]\n" + "".join(f'{k} = "{v}"\n' for k, v in info.items()) + "\n" for fid, info in feats.items()
    )
    (root / "features.toml").write_text(toml, encoding="utf-8")
    (root / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    support = root / "_support"
    support.mkdir(exist_ok=True)
    shutil.copy(REAL_PROBE, support / "probe.py")
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body), encoding="utf-8")
    return root


def run_sample_cell(
    suites: Path,
    results: Path,
    *,
    backend: str = "cpu",
    cell_id: str | None = None,
    workers: str = "1",
    test_timeout: float = 60.0,
    cell_timeout: float = 600.0,
    hard_timeout_grace: float = 60.0,
    pytest_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> CellOutcome:
    """Run a sample suite natively into a new cell dir (real pytest, real plugin)."""
    opts = RunOptions(
        suites_dir=suites,
        results_dir=results,
        backend=get_backend(backend),
        cell_id=cell_id,
        workers=workers,
        test_timeout=test_timeout,
        cell_timeout=cell_timeout,
        hard_timeout_grace=hard_timeout_grace,
        pytest_args=pytest_args,
        progress=False,
        env=env or {},
    )
    return run_cell(opts)
