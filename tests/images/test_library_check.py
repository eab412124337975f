"""harness/images/library_check.py on real shared libraries (compiled here with g++, or a copy of a system
library cut short) inside a real installed distribution (dist-info with METADATA and RECORD): a
missing or truncated library is refused naming the wheel and the library; a library that crashes
the loader (SIGBUS) costs its child process, not the check; one that needs only what a GPU host
or a cluster provides is noted, not refused."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.images import library_check

HOST = [("libmpi.so*", "an MPI library of the cluster")]
SOURCE = "int answer(void) { return 42; }\n"


def _gxx() -> str:
    gxx = shutil.which("g++")
    assert gxx, "g++ is needed (the images have it; .ci/run installs it)"
    return gxx


def _compile(out: Path, *, soname: str | None = None, needs: Path | None = None) -> Path:
    src = out.with_suffix(".c")
    src.write_text(SOURCE)
    argv = [_gxx(), "-shared", "-fPIC", "-x", "c", str(src), "-o", str(out)]
    if soname:
        argv += [f"-Wl,-soname,{soname}"]
    if needs is not None:
        argv.insert(1, "-Wl,--no-as-needed")  # keep the dependency although nothing calls into it
        argv += [f"-L{needs.parent}", f"-l:{needs.name}"]
    subprocess.run(argv, check=True, capture_output=True, timeout=120)
    src.unlink()
    return out


def _record_row(root: Path, path: Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root)},sha256={digest},{len(data)}"


def make_dist(root: Path, libs: dict[str, Path], *, name: str = "fakewheel") -> Path:
    """An installed distribution `name` 1.0 whose package holds `libs` (name -> built file), with a RECORD."""
    package = root / name / "lib"
    package.mkdir(parents=True)
    rows = []
    for lib_name, built in libs.items():
        target = package / lib_name
        shutil.copyfile(built, target)
        rows.append(_record_row(root, target))
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text("\n".join([*rows, f"{name}-1.0.dist-info/RECORD,,"]) + "\n")
    return root


def run_check(site: Path, root: str = "fakewheel") -> dict:
    """library_check.check in a fresh interpreter that sees `site` (as an image's venv would)."""
    code = (
        "import json, sys; from harness.images import library_check as lc; "
        f"r = lc.check({HOST!r}, root={root!r}); "
        "print(json.dumps({'problems': r.problems, 'notes': r.notes, 'loaded': r.loaded, 'libraries': r.libraries}))"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": f"{site}:{repo}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("built")
    mpi = _compile(out / "libmpi.so.40", soname="libmpi.so.40")
    foo = _compile(out / "libfoo.so.1", soname="libfoo.so.1")
    libs = {
        "good": _compile(out / "libgood.so"),
        "needs_mpi": _compile(out / "libneeds_mpi.so", needs=mpi),
        "needs_foo": _compile(out / "libneeds_foo.so", needs=foo),
    }
    mpi.unlink()  # neither is anywhere the loader looks: like a GPU host's or a cluster's library
    foo.unlink()
    system = Path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
    if system.exists():
        cut = out / "libcut.so"
        cut.write_bytes(system.read_bytes()[:1_200_000])  # mapped past its end: the loader dies of SIGBUS
        libs["cut"] = cut
    return libs


@pytest.mark.slow  # loads libraries in child processes
def test_a_whole_wheel_passes(tmp_path: Path, built: dict[str, Path]) -> None:
    site = make_dist(tmp_path, {"libgood.so": built["good"], "libneeds_mpi.so.1": built["needs_mpi"]})
    report = run_check(site)
    assert report["problems"] == []
    assert report["loaded"] == 1 and report["libraries"] == 2
    # (where torch is not installed, the check says so and loads the libraries without it)
    assert [n for n in report["notes"] if not n.startswith("import torch failed")] == [
        "fakewheel 1.0: fakewheel/lib/libneeds_mpi.so.1 needs what the host provides "
        "(libmpi.so.40: an MPI library of the cluster)"
    ]


@pytest.mark.slow  # loads libraries in child processes
def test_a_library_the_record_lists_but_the_wheel_lacks_is_refused(tmp_path: Path, built: dict[str, Path]) -> None:
    site = make_dist(tmp_path, {"libgood.so": built["good"], "libgone.so.9": built["good"]})
    (site / "fakewheel" / "lib" / "libgone.so.9").unlink()  # taken out of the wheel, RECORD left as it was
    report = run_check(site)
    assert report["problems"] == ["fakewheel 1.0: fakewheel/lib/libgone.so.9 is missing (the wheel's RECORD lists it)"]


@pytest.mark.slow  # loads libraries in child processes
def test_a_truncated_library_is_refused_before_anything_loads_it(tmp_path: Path, built: dict[str, Path]) -> None:
    site = make_dist(tmp_path, {"libgood.so": built["good"]})
    lib = site / "fakewheel" / "lib" / "libgood.so"
    size = lib.stat().st_size
    lib.write_bytes(lib.read_bytes()[: size // 2])
    (problem,) = run_check(site)["problems"]
    assert problem == (
        f"fakewheel 1.0: fakewheel/lib/libgood.so is {size // 2} bytes, the wheel's RECORD says {size} "
        "(truncated or replaced)"
    )


@pytest.mark.slow  # loads libraries in child processes
def test_a_library_that_crashes_the_loader_costs_one_child(tmp_path: Path, built: dict[str, Path]) -> None:
    """A cut library whose RECORD was rewritten to match: only loading it finds it, and it kills
    the loading process (SIGBUS). The check names it and still loads the libraries after it."""
    if "cut" not in built:
        pytest.skip("no system libstdc++ to cut short on this host")
    site = make_dist(tmp_path, {"liba_cut.so.1": built["cut"], "libz_good.so": built["good"]})
    report = run_check(site)
    assert report["problems"] == ["fakewheel 1.0: fakewheel/lib/liba_cut.so.1 crashed the loader (SIGBUS)"]
    assert report["loaded"] == 1  # libz_good.so, loaded by a fresh child after the crash


@pytest.mark.slow  # loads libraries in child processes
def test_a_dependency_nobody_provides_is_refused_naming_it(tmp_path: Path, built: dict[str, Path]) -> None:
    site = make_dist(tmp_path, {"libneeds_foo.so": built["needs_foo"]})
    (problem,) = run_check(site)["problems"]
    assert problem.startswith("fakewheel 1.0: fakewheel/lib/libneeds_foo.so does not load: needs libfoo.so.1, ")
    assert "which neither the wheels nor the image provide" in problem


@pytest.mark.slow  # loads libraries in child processes
def test_requirements_are_followed_and_extras_are_not(tmp_path: Path, built: dict[str, Path]) -> None:
    make_dist(tmp_path, {"libgood.so": built["good"]}, name="vendorlib")
    top = tmp_path / "toppkg-1.0.dist-info"
    top.mkdir()
    (top / "METADATA").write_text(
        'Metadata-Version: 2.1\nName: toppkg\nVersion: 1.0\nRequires-Dist: vendorlib>=1; platform_system == "Linux"\n'
        'Requires-Dist: fakewheel ; extra == "opt"\n'
    )
    (top / "RECORD").write_text("toppkg-1.0.dist-info/RECORD,,\n")
    report = run_check(tmp_path, root="toppkg")
    assert report["libraries"] == 1 and report["loaded"] == 1 and report["problems"] == []


@pytest.mark.slow  # loads libraries in child processes
def test_the_child_loader_speaks_one_json_line_per_event(built: dict[str, Path]) -> None:
    done = subprocess.run(
        [sys.executable, library_check.__file__],
        input=json.dumps([str(built["good"]), "/nonexistent/libnothing.so"]),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0] == {"begin": 0} and events[1] == {"done": 0}
    assert events[3]["done"] == 1 and "libnothing.so" in events[3]["error"]
