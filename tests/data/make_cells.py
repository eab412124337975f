"""Regenerate the committed real cells under tests/data/cells/ (the fast tier's data).

Each cell is a real `harness run` of the real suites on a real torch build, natively:

    cpu-2.13.0             torch 2.13.0+cpu (the CPU build)
    cu130-2.14.1-cpu-only  PyPI's torch 2.14.1 (the CUDA 13.0 build) on a host without a GPU
    cu132-2.15.0-cpu-only  PyPI's torch 2.15.0 (the CUDA 13.2 build, PyPI's default) on a host without a GPU

Three releases side by side, in today's cell format. Made with (each venv: torch, numpy, pytest,
pytest-xdist; PyPI's 2.15.0 is `PIP_CONFIG_FILE=/dev/null pip install torch==2.15.0` where a pip
configuration caps torch):

    python tests/data/make_cells.py --python cpu=/venvs/cpu/bin/python \\
        --python cu130-2.14.1=/venvs/t2141/bin/python --python cu132-2.15.0=/venvs/t2150/bin/python

    python tests/data/make_cells.py --samples     # tests/data/cells-sample/: the publishing tests' cells

Each interpreter needs torch (and numpy, pytest, pytest-xdist); the harness runs them. The
output.log of each cell is cut to its last 200 lines to keep the repository small (everything
the matrix reads is kept whole); the cells are otherwise exactly what the run wrote.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "cells"
CELLS = {
    "cpu": ("cpu-2.13.0", []),
    "cu130-2.14.1": ("cu130-2.14.1-cpu-only", ["--cpu-only", "--backend", "cu130"]),
    "cu132-2.15.0": ("cu132-2.15.0-cpu-only", ["--cpu-only", "--backend", "cu132"]),
}


def make(name: str, python: str, workdir: Path) -> Path:
    cell_id, extra = CELLS[name]
    results = workdir / name
    argv = [sys.executable, "-m", "harness", "run", "--native", "--python", python, "--cell-id", cell_id,
            "--results-dir", str(results), "--no-progress", "--quiet", "--workers", "2", *extra]  # fmt: skip
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    print(f"{cell_id}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    (cell,) = [p for p in results.iterdir() if p.is_dir()]
    log = cell / "output.log"
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    if len(lines) > 200:
        log.write_text("\n".join(["[... earlier lines cut by tests/data/make_cells.py ...]", *lines[-200:]]) + "\n")
    return cell


def make_samples() -> None:
    sys.path.insert(0, str(REPO))
    from tests.publishing_cells import COMMITTED, COMMITTED_NAMES, run_cells

    with tempfile.TemporaryDirectory() as tmp:
        for key, cell in run_cells(Path(tmp)).items():
            target = COMMITTED / COMMITTED_NAMES[key]
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(cell, target)
            print(f"{key} -> {target.relative_to(REPO)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", default=[], metavar="NAME=PATH", help=f"one of {list(CELLS)}")
    parser.add_argument("--samples", action="store_true", help="(re)make the publishing tests' sample cells")
    args = parser.parse_args()
    pythons = dict(item.split("=", 1) for item in args.python)
    unknown = set(pythons) - set(CELLS)
    if unknown or not (pythons or args.samples):
        parser.error(f"--python NAME=PATH with NAME in {list(CELLS)}, or --samples")
    if args.samples:
        make_samples()
    with tempfile.TemporaryDirectory() as tmp:
        for name, python in pythons.items():
            cell = make(name, python, Path(tmp))
            target = OUT / CELLS[name][0]
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(cell, target)
            print(f"  -> {target.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
