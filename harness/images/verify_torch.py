"""Check that the torch in an image is the build its backend claims and that its wheels are whole;
the last step of every image build.

Copied into the build context by harness/images/recipes.py, with torch_build.py (is this the backend's
build?) and library_check.py (every bundled shared library present and loading) beside it, and
run inside the image as
`python verify_torch.py --backend cu130 --local-tag cu130 --build cuda --runtime 13.0 [--version 2.13.0]`.
It needs no device (torch.version.* are compile-time facts; libraries load without one) and
imports only the stdlib at module level, so importing it from the harness never imports torch.
torch itself is only ever imported in child processes: a broken library is a refusal that names
it, not a dead verifier. Exit 0: the image is what it claims; exit 1: one line per problem, each
starting with FAILED_PREFIX, so the build log says exactly why the image was refused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

try:  # in the harness
    from harness import torch_build
    from harness.images import library_check
except ImportError:  # in an image: the modules lie beside this file, without the harness
    import library_check  # type: ignore[no-redef]
    import torch_build  # type: ignore[no-redef]

FAILED_PREFIX = "image verification failed:"
NOTE_PREFIX = "verification note:"
FACTS_TIMEOUT = 600.0

# Reads torch's own facts in a child; torch_build.py is found beside this file (image) or in the harness.
_FACTS_CHILD = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import torch_build, torch; "
    "print(json.dumps(torch_build.TorchFacts.from_torch(torch).to_dict()))"
)


def torch_facts() -> tuple[torch_build.TorchFacts | None, str]:
    """The installed torch's facts, read in a child process; (None, why) when it does not import."""
    here = str(Path(torch_build.__file__).resolve().parent)
    try:
        argv = [sys.executable, "-c", _FACTS_CHILD, here]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=FACTS_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None, f"import torch did not finish within {FACTS_TIMEOUT:.0f} s"
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return None, f"import torch failed: {tail}"
    try:
        data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"import torch printed no facts: {done.stdout[-200:]!r}"
    fields = {k: data.get(k) for k in ("cuda", "hip", "xpu")}
    return torch_build.TorchFacts(version=str(data["version"]), build=str(data["build"]), **fields), ""


def interpreter() -> dict[str, Any]:
    """This interpreter as the suites' probe records it: version, implementation, ABI tag, free-threaded."""
    free = sysconfig.get_config_var("Py_GIL_DISABLED") == 1
    major, minor = sys.version_info[:2]
    return {
        "version": ".".join(map(str, sys.version_info[:3])),
        "implementation": sys.implementation.name,
        "abi": f"cp{major}{minor}{'t' if free else ''}",
        "free_threaded": free,
        "key": f"{major}.{minor}{'t' if free else ''}",
    }


def wheel_tags(distribution: str = "torch") -> list[str]:
    """The tags of the installed wheel (its dist-info WHEEL file): cp315-cp315-manylinux_2_28_x86_64."""
    from importlib import metadata

    try:
        text = metadata.distribution(distribution).read_text("WHEEL") or ""
    except metadata.PackageNotFoundError:
        return []
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]


def gil_after_torch() -> bool | None:
    """On a free-threaded interpreter: whether the GIL is enabled after `import torch` (in a child)."""
    child = "import sys, torch; print(int(sys._is_gil_enabled()))"
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=FACTS_TIMEOUT)
    lines = done.stdout.strip().splitlines()
    return lines[-1] == "1" if done.returncode == 0 and lines else None


def interpreter_problems(expected: str, running: dict[str, Any], tags: list[str]) -> list[str]:
    """Why this image is not the CPython it was built for (`expected`: 3.15, 3.14t; "" = any), and a torch
    wheel of another ABI than its interpreter's, each one line."""
    problems: list[str] = []
    name = f"CPython {running['version']} ({running['abi']})"
    if running["implementation"] != "cpython":
        problems.append(f"the image's interpreter is {running['implementation']}, not CPython")
    elif expected and running["key"] != expected:
        problems.append(f"the image's interpreter is {name}, the image was built for Python {expected}")
    abis = {tag.split("-")[1] for tag in tags if tag.count("-") == 2}
    if abis and not abis & {running["abi"], "abi3", "none"}:
        problems.append(f"torch's wheel is tagged {', '.join(tags)}: a wheel for another ABI than the image's {name}")
    return problems


def read_host_libraries(path: str | None) -> list[tuple[str, str]]:
    if not path:
        return []
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [(str(pattern), str(reason)) for pattern, reason in data.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--local-tag", default="")
    parser.add_argument("--build", required=True)
    parser.add_argument("--runtime", default="")
    parser.add_argument("--version", default="", help="exact torch version asked for (empty: any)")
    parser.add_argument("--tools", default="", help="programs that must be on PATH (space-separated)")
    parser.add_argument("--python", default="", help="the CPython the image is built for: 3.15, 3.14t (empty: any)")
    parser.add_argument("--host-libraries", help="JSON {soname glob: reason} of libraries the GPU host provides")
    parser.add_argument("--no-libraries", action="store_true", help="skip loading every bundled library")
    parser.add_argument("--write", help="also write the facts as JSON to this file")
    args = parser.parse_args(argv)
    expected = torch_build.Expected(
        backend=args.backend, local_tag=args.local_tag, build=args.build, runtime=args.runtime, version=args.version
    )

    problems: list[str] = []
    report = library_check.Report()
    if not args.no_libraries:
        report = library_check.check(read_host_libraries(args.host_libraries))
        problems += report.problems
    facts, why = torch_facts() if not problems else (None, "")
    if facts is None and why:
        problems.append(why)
    if facts is not None:
        problems += torch_build.mismatches(facts, expected)
    running = interpreter()
    problems += interpreter_problems(args.python, running, wheel_tags())
    gil = gil_after_torch() if running["free_threaded"] and facts is not None else None
    problems += missing_tools(args.tools.split())
    if not (shutil.which("g++") or shutil.which("c++")):
        problems.append("no C++ compiler (g++) in the image; torch.compile (Inductor) needs one")
    headers = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    if not os.path.exists(headers):
        problems.append(f"no {headers} in the image; torch.compile (Inductor) builds against it (install python3-dev)")
    for note in report.notes:
        print(f"{NOTE_PREFIX} {note}")
    for problem in problems:
        print(f"{FAILED_PREFIX} {problem}", file=sys.stderr)
    if problems or facts is None:
        return 1
    if args.write:
        with open(args.write, "w", encoding="utf-8") as handle:
            python = {**running, "gil_enabled": gil}
            json.dump(
                {"backend": args.backend, **facts.to_dict(), "python": python, "libraries": _summary(report)}, handle
            )
    libraries = "" if args.no_libraries else f"; {_summary(report)}"
    free = ", free-threaded" if running["free_threaded"] else ""
    gil_state = "" if gil is None else f", GIL {'enabled' if gil else 'disabled'} after import torch"
    python = f"CPython {running['version']} ({running['abi']}{free}{gil_state})"
    print(f"image verified: torch {facts.version} is the {args.backend} build on {python}{libraries}")
    return 0


def missing_tools(tools: list[str]) -> list[str]:
    """The programs the image must bring (its health check's) that are not on PATH."""
    path = os.environ.get("PATH", "")
    return [
        f"{tool} is not on the image's PATH ({path}); the health check runs it on the GPU host"
        for tool in tools
        if not shutil.which(tool)
    ]


def _summary(report: library_check.Report) -> str:
    left = report.libraries - report.loaded
    host = f", {left} need what the GPU host or cluster provides" if left else ""
    return f"{report.loaded} of {report.libraries} bundled libraries load{host}"


if __name__ == "__main__":
    sys.exit(main())
