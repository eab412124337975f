"""harness/images/verify_torch.py: the image check, run for real against this machine's torch (a +cpu build).
The build rule itself is tested in tests/core/test_torch_build.py, the library check in
tests/images/test_library_check.py; a real cu130 image and a broken cu130 wheelhouse in tests/docker/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.images import verify_torch
from harness.images.recipes import VERIFIER_FILES
from harness.registry import load_registry

SCRIPT = Path(verify_torch.__file__)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, check=False
    )


def _claim(backend_id: str) -> list[str]:
    b = load_registry()[backend_id]
    return ["--backend", b.id, "--local-tag", b.local_tag, "--build", b.build, "--runtime", b.runtime_version]


@pytest.mark.slow  # runs the verifier, which imports torch in a child
def test_the_local_cpu_torch_passes_as_cpu(tmp_path: Path) -> None:
    facts_file = tmp_path / "torch.json"
    done = _run(*_claim("cpu"), "--version", "2.13.0", "--write", str(facts_file))
    assert done.returncode == 0, done.stderr
    assert "image verified: torch 2.13.0+cpu is the cpu build on CPython 3." in done.stdout
    assert "bundled libraries load" in done.stdout
    assert '"local_tag": "cpu"' in facts_file.read_text()


@pytest.mark.slow  # runs the verifier, which imports torch in a child
@pytest.mark.parametrize("backend_id", ["cu126", "cu130", "cu132", "rocm7.2", "rocm7.14", "xpu"])
def test_the_local_cpu_torch_is_refused_for_other_backends(backend_id: str) -> None:
    done = _run(*_claim(backend_id))
    assert done.returncode == 1
    # Only the verifier's own lines are judged: torch may warn on stderr too (no numpy, say).
    lines = [line for line in done.stderr.strip().splitlines() if line.startswith(verify_torch.FAILED_PREFIX)]
    assert lines, done.stderr
    assert not [line for line in done.stderr.splitlines() if "Traceback" in line], done.stderr
    tag = load_registry()[backend_id].local_tag
    assert any(f"carries +cpu, backend {backend_id} needs +{tag}" in line for line in lines), lines


@pytest.mark.slow  # runs the verifier, which imports torch in a child
def test_a_wrong_version_is_refused() -> None:
    done = _run(*_claim("cpu"), "--version", "2.12.1")
    assert done.returncode == 1
    assert "torch 2.13.0+cpu installed, 2.12.1 was asked for" in done.stderr


@pytest.mark.slow  # runs the verifier, which imports torch in a child
def test_the_verifier_runs_standalone_as_it_does_in_an_image(tmp_path: Path) -> None:
    """In an image there is no harness: the three files lie side by side in /opt/torch-compat."""
    for name, source in VERIFIER_FILES.items():
        (tmp_path / name).write_text(source.read_text())
    done = subprocess.run(
        [sys.executable, str(tmp_path / "verify_torch.py"), *_claim("cu130")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ""},
    )
    assert done.returncode == 1
    assert "carries +cpu, backend cu130 needs +cu130" in done.stderr, done.stderr


@pytest.mark.slow  # runs the verifier, which imports torch in a child
def test_importing_the_verifier_imports_no_torch() -> None:
    code = "import sys; import harness.images.verify_torch; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False"


# -- the image proves its interpreter (issue 41) ---------------------------------------------------------
def test_an_image_proves_its_python_and_refuses_a_wheel_of_another_abi() -> None:
    from harness.images.verify_torch import interpreter_problems

    py315 = {"version": "3.15.0", "implementation": "cpython", "abi": "cp315", "free_threaded": False, "key": "3.15"}
    tags = ["cp315-cp315-manylinux_2_28_x86_64"]
    assert interpreter_problems("3.15", py315, tags) == []
    assert interpreter_problems("", py315, tags) == [], "no Python asked: any"
    assert interpreter_problems("3.14t", py315, tags) == [
        "the image's interpreter is CPython 3.15.0 (cp315), the image was built for Python 3.14t"
    ]
    (wrong,) = interpreter_problems("3.15", py315, ["cp311-cp311-manylinux_2_28_x86_64"])
    assert wrong == (
        "torch's wheel is tagged cp311-cp311-manylinux_2_28_x86_64: a wheel for another ABI than the image's "
        "CPython 3.15.0 (cp315)"
    )
    free = {**py315, "abi": "cp315t", "free_threaded": True, "key": "3.15t"}
    assert interpreter_problems("3.15t", free, ["cp315-cp315t-manylinux_2_28_x86_64"]) == []
    assert interpreter_problems("3.15t", free, tags), "a GIL build's wheel on a free-threaded interpreter"


def test_this_interpreter_reads_as_the_probe_records_it() -> None:
    import sys

    from harness.images.verify_torch import interpreter

    me = interpreter()
    assert me["key"] == f"{sys.version_info.major}.{sys.version_info.minor}" + ("t" if me["free_threaded"] else "")
    assert me["abi"] == "cp" + me["key"].replace(".", "")
