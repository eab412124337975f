"""tools/device-proof.sh, run for real on this machine's CPU torch, the way a GPU host runs it: a
fresh Python that has torch and torch's own dependencies and nothing else (no pip, no pytest, no
harness), no network used. It must write the cell and the published page from one command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import EXIT_INFRASTRUCTURE
from harness.images.library_check import dependency_closure

REPO = Path(__file__).resolve().parents[2]
PROOF = REPO / "tools" / "device-proof.sh"
SUBSET = "test_graph_api or test_svd or test_torchscript or test_hub_trust or test_sparse_format"


def torch_only_python(where: Path) -> Path:
    """A venv without pip whose only packages are torch and what torch requires (linked in)."""
    only = where / "torch-only"
    only.mkdir(parents=True)
    tops = set()
    for dist in dependency_closure("torch"):
        for item in dist.files or []:
            first = Path(str(item)).parts[0]
            if first not in ("..", "bin"):
                tops.add(Path(str(dist.locate_file(first))))
    for top in tops:
        (only / top.name).symlink_to(top)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where / "venv")], check=True, timeout=120)
    site = next((where / "venv" / "lib").glob("python3*/site-packages"))
    (site / "torch-only.pth").write_text(f"{only}\n")
    return where / "venv" / "bin" / "python"


@pytest.mark.slow
def test_device_proof_runs_from_one_command_without_network(tmp_path: Path) -> None:
    python = torch_only_python(tmp_path / "host")
    bare = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, timeout=60, check=False)
    assert bare.returncode != 0, "the stand-in host must not have pytest: the proof brings it"
    out = tmp_path / "proof"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHON": str(python),
        # no index, no proxy: nothing may be downloaded
        "PIP_NO_INDEX": "1",
        "https_proxy": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    done = subprocess.run(
        ["bash", str(PROOF), str(out), "--", "-k", SUBSET, "--workers", "2", "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "device proof: done: every test passed" in done.stderr
    cells = [p for p in (out / "results").iterdir() if p.is_dir()]
    assert len(cells) == 1
    manifest = json.loads((cells[0] / "manifest.json").read_text())
    assert manifest["backend"] == "cpu" and manifest["mode"] == "native" and manifest["status"] == "completed"
    assert manifest["environment"]["torch"]["version"].startswith("2.13.0")
    for name in ("junit.xml", "events.jsonl", "collected.json", "output.log"):
        assert (cells[0] / name).stat().st_size > 0, name
    page = (out / "site" / "index.html").read_text()
    assert "cpu" in page
    matrix = json.loads((out / "site" / "matrix.json").read_text())
    assert [c["backend"] for c in matrix["columns"]] == ["cpu"]
    assert (out / "proof.log").read_text().count("device proof:") >= 3
    # nothing of the proof outside its folder: the checkout is untouched
    assert not (REPO / "results").exists() or (REPO / "results").stat().st_mtime < out.stat().st_mtime


@pytest.mark.slow  # runs tools/device-proof.sh
def test_device_proof_without_torch_says_so_in_one_line(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    done = subprocess.run(
        ["bash", str(PROOF), str(tmp_path / "out")],
        env={"PATH": os.environ.get("PATH", ""), "PYTHON": str(tmp_path / "venv" / "bin" / "python")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_INFRASTRUCTURE  # as documented: "3 NO DATA (no device, no torch ...)"
    assert "cannot import torch" in done.stderr and "set PYTHON" in done.stderr
    assert done.stderr.count("\n") == 1


def test_the_proof_wheelhouse_is_small_and_pure_python() -> None:
    wheels = sorted((REPO / "tools" / "proof-wheels").glob("*.whl"))
    names = {w.name.split("-")[0].lower() for w in wheels}
    assert {"pytest", "pytest_xdist", "execnet", "pluggy", "iniconfig", "packaging", "fastjsonschema"} <= names
    assert {"tomli", "exceptiongroup"} <= names  # what pytest needs on Python 3.10
    assert all(w.name.endswith("-py3-none-any.whl") for w in wheels), [w.name for w in wheels]
    assert sum(w.stat().st_size for w in wheels) < 3_000_000
