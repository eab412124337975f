"""harness/verify_torch.py: the image check, run for real against this machine's torch (a +cpu build)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import verify_torch
from harness.registry import load_registry

SCRIPT = Path(verify_torch.__file__)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False
    )


def _claim(backend_id: str) -> list[str]:
    b = load_registry()[backend_id]
    return ["--backend", b.id, "--local-tag", b.local_tag, "--build", b.build, "--runtime", b.runtime_version]


def test_the_local_cpu_torch_passes_as_cpu(tmp_path: Path) -> None:
    facts_file = tmp_path / "torch.json"
    done = _run(*_claim("cpu"), "--version", "2.13.0", "--write", str(facts_file))
    assert done.returncode == 0, done.stderr
    assert "image verified: torch 2.13.0+cpu is the cpu build" in done.stdout
    assert '"local_tag": "cpu"' in facts_file.read_text()


@pytest.mark.parametrize("backend_id", ["cu126", "cu130", "rocm", "xpu"])
def test_the_local_cpu_torch_is_refused_for_other_backends(backend_id: str) -> None:
    done = _run(*_claim(backend_id))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines and all(line.startswith(verify_torch.FAILED_PREFIX) for line in lines)
    tag = load_registry()[backend_id].local_tag
    assert any(f"carries +cpu, backend {backend_id} needs +{tag}" in line for line in lines), lines


def test_a_wrong_version_is_refused() -> None:
    done = _run(*_claim("cpu"), "--version", "2.12.1")
    assert done.returncode == 1
    assert "torch 2.13.0+cpu installed, 2.12.1 was asked for" in done.stderr


FACTS = {
    "cu126": {"version": "2.13.0+cu126", "local_tag": "cu126", "cuda": "12.6", "hip": None, "xpu": None},
    "cu130": {"version": "2.13.0+cu130", "local_tag": "cu130", "cuda": "13.0", "hip": None, "xpu": None},
    "rocm": {"version": "2.13.0+rocm7.2", "local_tag": "rocm7.2", "cuda": None, "hip": "7.2.26015", "xpu": None},
    "xpu": {"version": "2.13.0+xpu", "local_tag": "xpu", "cuda": None, "hip": None, "xpu": "20250301"},
}


@pytest.mark.parametrize("backend_id", sorted(FACTS))
def test_each_gpu_build_matches_only_its_own_backend(backend_id: str) -> None:
    """Facts as each GPU wheel reports them (torch.version.*): right backend passes, every other is refused."""
    for other in load_registry().values():
        problems = verify_torch.mismatches(
            FACTS[backend_id],
            backend=other.id,
            local_tag=other.local_tag,
            build=other.build,
            runtime=other.runtime_version,
        )
        assert (problems == []) == (other.id == backend_id), (other.id, problems)


def test_pypi_cuda_wheel_without_tag_is_not_cu126() -> None:
    """PyPI's plain `torch` is the CUDA 13.0 build since 2.11; as cu126 it must be refused."""
    pypi = {"version": "2.13.0", "local_tag": "", "cuda": "13.0", "hip": None, "xpu": None}
    problems = verify_torch.mismatches(pypi, backend="cu126", local_tag="cu126", build="cuda", runtime="12.6")
    assert any("needs +cu126" in p for p in problems) and any("12.6" in p for p in problems)
