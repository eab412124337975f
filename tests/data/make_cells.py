"""Regenerate the committed real cells under tests/data/cells/ (the fast tier's data).

Each cell is a real `harness run` of the real suites on a real torch build, natively:

    cpu-2.13.0                   torch 2.13.0+cpu (the CPU build)
    cu130-2.14.1-cpu-only        PyPI's torch 2.14.1 (the CUDA 13.0 build) on a host without a GPU
    cu132-2.15.0-cpu-only        PyPI's torch 2.15.0 (the CUDA 13.2 build, PyPI's default) on a host without a GPU,
                                 on Python 3.11
    cu132-2.15.0-cp315-cpu-only  the same build on Python 3.15: PyPI's cp315 wheel in an image of Debian forky's
                                 python3.15, built here from a local wheelhouse, run with no device (--cpu-only)

Three releases side by side, and one release on two Pythons. The first two cells predate the interpreter
record (they read "Python not recorded"); the 2.15.0 cells record it. Made with (each venv: torch, numpy,
pytest, pytest-xdist; PyPI's 2.15.0 is `PIP_CONFIG_FILE=/dev/null pip install torch==2.15.0` where a pip
configuration caps torch):

    python tests/data/make_cells.py --python cpu=/venvs/cpu/bin/python \\
        --python cu130-2.14.1=/venvs/t2141/bin/python --python cu132-2.15.0=/venvs/t2150/bin/python

and, for the Python 3.15 cell (a Docker engine, debootstrap, about 3 GB of wheels; the base and the image are
reused once made):

    DEBIAN_SUITE=forky PYTHONS="3.13 3.14 3.15" tools/make-base-image.sh torch-compat/local-base:forky
    harness wheelhouse --backend cu132 --torch 2.15.0 --python 3.15 --base-image torch-compat/local-base:forky \\
        -o /cache/wh-cu132-2.15.0-cp315
    python tests/data/make_cells.py --image cu132-2.15.0-cp315=$(harness build --backend cu132 --python 3.15 \\
        --base-image torch-compat/local-base:forky --wheelhouse /cache/wh-cu132-2.15.0-cp315 --build-network none)

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
# Cells run in an image (--image NAME=REF): the device build's image run with no device, on its Python.
IMAGE_CELLS = {
    "cu132-2.15.0-cp315": ("cu132-2.15.0-cp315-cpu-only", ["--cpu-only", "--backend", "cu132", "--python", "3.15"]),
}


def make(name: str, python: str, workdir: Path, image: str | None = None) -> Path:
    cell_id, extra = IMAGE_CELLS[name] if image else CELLS[name]
    results = workdir / name
    where = ["--image", image] if image else ["--native", "--python", python]
    argv = [sys.executable, "-m", "harness", "run", *where, "--cell-id", cell_id,
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
    parser.add_argument("--image", action="append", default=[], metavar="NAME=REF", help=f"one of {list(IMAGE_CELLS)}")
    parser.add_argument("--samples", action="store_true", help="(re)make the publishing tests' sample cells")
    args = parser.parse_args()
    pythons = dict(item.split("=", 1) for item in args.python)
    images = dict(item.split("=", 1) for item in args.image)
    unknown = (set(pythons) - set(CELLS)) | (set(images) - set(IMAGE_CELLS))
    if unknown or not (pythons or images or args.samples):
        parser.error(
            f"--python NAME=PATH with NAME in {list(CELLS)}, --image NAME=REF in {list(IMAGE_CELLS)}, or --samples"
        )
    if args.samples:
        make_samples()
    with tempfile.TemporaryDirectory() as tmp:
        for name, python in [*pythons.items(), *images.items()]:
            image = images.get(name)
            cell = make(name, python, Path(tmp), image)
            target = OUT / (IMAGE_CELLS[name] if image else CELLS[name])[0]
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(cell, target)
            print(f"  -> {target.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
