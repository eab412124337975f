"""Real cells for the publishing tests: a baseline run and a newer run of a small suite, made
once per test session by real pytest runs through the harness (see tests/cellfactory.py).

- `base`: the suite as it was; `new`: one test regressed, one fixed, one added, one removed,
  one newly skipped. Both run natively on this host's torch as column `cpu`.
- `nodata`: a real ROCm cell on this CPU-only host: the health gate fails, the column is NO DATA.
- `stale`: a copy of the baseline cell presented as a second backend (cu130), started 30 days
  ago. Its results are real; only the manifest's identity and date are edited, because a
  second real backend cannot exist on this host.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.cellfactory import run_sample_cell, write_suite

MARKUP_ID = "<img src=x onerror=alert(1)>"
MARKUP_TEST = f"alpha/test_a.py::test_markup[{MARKUP_ID}]"
REGRESSED = "alpha/test_a.py::test_regress"

_ALPHA_COMMON = """
import pytest

def test_stable():
    pass

def test_known_bad():
    assert False, "always broken"

@pytest.mark.parametrize("x", ["<img src=x onerror=alert(1)>"])
def test_markup(x):
    assert False, "message with <script>alert(2)</script> & <b>markup</b>"
"""

BASE_FILES = {
    "alpha/test_a.py": _ALPHA_COMMON
    + """
def test_regress():
    pass

def test_fixed():
    assert False, "broken before"

def test_gone():
    pass

def test_skipnow():
    pass
""",
    "beta/test_b.py": """
import pytest

def test_beta_ok():
    pass

@pytest.mark.xfail(reason="[known-issue https://github.com/pytorch/pytorch/issues/12345] tracked upstream")
def test_beta_known():
    assert False

def test_beta_unsupported():
    pytest.skip("[unsupported] not on this backend")

def test_perf(record_property):
    record_property("gflops", 12.5)
""",
}

NEW_FILES = {
    "alpha/test_a.py": _ALPHA_COMMON
    + """
def test_regress():
    assert 1 == 2, "regressed"

def test_fixed():
    pass

def test_new():
    pass

def test_skipnow():
    pytest.skip("[hardware] needs a GPU")
""",
    "beta/test_b.py": BASE_FILES["beta/test_b.py"],
}


@dataclass(frozen=True)
class Cells:
    base: Path
    new: Path
    nodata: Path
    stale: Path


def _as_other_backend(cell: Path, dest: Path, backend: str, age: timedelta) -> Path:
    shutil.copytree(cell, dest)
    manifest_path = dest / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    started = datetime.now(UTC) - age
    manifest.update(
        backend=backend,
        cell_id=backend,
        run_id=f"{manifest['run_id']}-{backend}",
        started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        finished_at=(started + timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return dest


COMMITTED = Path(__file__).resolve().parent / "data" / "cells-sample"
COMMITTED_NAMES = {"base": "publishing-base", "new": "publishing-new", "nodata": "publishing-nodata"}


def run_cells(root: Path) -> dict[str, Path]:
    """Real runs of the base and new suites (needs torch: the probe): base, new, nodata."""
    base_suites = write_suite(root / "suites-base", BASE_FILES)
    new_suites = write_suite(root / "suites-new", NEW_FILES)
    return {
        "base": run_sample_cell(base_suites, root / "results-base", cell_id="cpu").cell_dir,
        "new": run_sample_cell(new_suites, root / "results-new", cell_id="cpu").cell_dir,
        "nodata": run_sample_cell(new_suites, root / "results-rocm", backend="rocm", cell_id="rocm").cell_dir,
    }


def committed_cells() -> dict[str, Path] | None:
    """The cells as tests/data/make_cells.py --samples committed them (None if absent)."""
    found = {key: COMMITTED / name for key, name in COMMITTED_NAMES.items()}
    return found if all((p / "manifest.json").is_file() for p in found.values()) else None


@functools.cache
def real_cells() -> Cells:
    """The committed cells (the fast tier needs no torch), or fresh runs with TORCH_COMPAT_FRESH_CELLS=1."""
    root = Path(tempfile.mkdtemp(prefix="publishing-cells-"))
    atexit.register(shutil.rmtree, root, True)
    committed = None if os.environ.get("TORCH_COMPAT_FRESH_CELLS") else committed_cells()
    if committed is None:
        made = run_cells(root)
    else:  # copies: some tests edit cells
        made = {key: Path(shutil.copytree(path, root / "committed" / path.name)) for key, path in committed.items()}
    stale = _as_other_backend(made["base"], root / "results-cu130" / "cu130-copy", "cu130", timedelta(days=30))
    return Cells(base=made["base"], new=made["new"], nodata=made["nodata"], stale=stale)


def write_base_and_new(out: Path) -> tuple[Path, Path]:
    """matrix.json files for the baseline run and the newer run (with its NO DATA column)."""
    from harness.matrix_json import write_matrix
    from harness.merge.combine import merge_cell_dirs

    cells = real_cells()
    write_matrix(merge_cell_dirs([cells.base]), out / "base.json")
    write_matrix(merge_cell_dirs([cells.new, cells.nodata]), out / "new.json")
    return out / "base.json", out / "new.json"
