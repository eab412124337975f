"""Kill a real `harness` child at its Nth file operation.

The child runs the CLI (`harness.cli.main`) in its own process: a new Python (`python -c CHILD
<verb> ...`, `run_harness`) or, for kill matrices of hundreds of runs, a child forked from the test
with the modules already imported (`start_forked`). Before running the CLI it installs an audit hook
(sys.addaudithook) that counts every file operation the process makes — rename, replace,
unlink, rmdir, mkdir, link, symlink, truncate, flock, every open for writing (the
first write of each file) and the folder swap (`harness.outputs.exchange`, renameat2) — and at
operation N sends itself SIGKILL (or makes the operation fail with ENOSPC, EROFS, EACCES or EDQUOT,
or sleeps, to hold a lock), just before the operation runs.
Killing before operation N+1 is killing just after operation N: nothing else changes the folder
in between but bytes written into a file already open (a temp file, which the next operation
renames or the sweep removes). Only the CLI's own process counts: the merge's forked readers
inherit the hook and are left alone.

An uninterrupted run writes its list of operations to a log, so a test enumerates N over every
operation of that run. This module imports nothing but the standard library (a child imports it).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Counted: what changes a folder. Opens count only when they may write (the first write of a file).
COUNTED = frozenset({
    "os.rename", "os.replace", "os.remove", "os.rmdir", "os.mkdir", "os.link", "os.symlink",
    "os.truncate", "fcntl.flock", "harness.outputs.exchange",
})  # fmt: skip
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _writes(args: tuple) -> bool:
    mode, flags = args[1], args[2] or 0
    return (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(flags & _WRITE_FLAGS)


def install_hook(at: int, action: str = "kill") -> list[str]:
    """In this process from now on: count file operations (returned list) and act at the `at`-th:
    `kill` (SIGKILL), `error:ENOSPC` (the operation raises that OSError) or `pause:SECONDS`."""
    main = os.getpid()
    seen: list[str] = []

    def hook(event: str, args: tuple) -> None:
        if os.getpid() != main or not (event in COUNTED or (event == "open" and _writes(args))):
            return
        seen.append(f"{event} {args[0]!r}")
        if len(seen) == at:
            if action == "kill":
                os.kill(main, signal.SIGKILL)
            if action.startswith("error:"):  # the operation fails as a full or read-only disk makes it fail
                code = getattr(errno, action.split(":", 1)[1])
                raise OSError(code, os.strerror(code), str(args[0]))
            sys.stderr.write("fault: paused\n")  # pause:SECONDS, holding whatever is held
            sys.stderr.flush()
            time.sleep(float(action.split(":", 1)[1]))

    sys.addaudithook(hook)
    return seen


# A child started as `python -c CHILD ARGS`: the hook, then the CLI (FAULT_AT, FAULT_ACTION, FAULT_LOG).
CHILD = f"""
import os, sys
sys.path.insert(0, {str(REPO)!r})
from tests.faults.file_ops import install_hook
seen = install_hook(int(os.environ.get("FAULT_AT", "0")), os.environ.get("FAULT_ACTION", "kill"))
log = os.environ.get("FAULT_LOG")
if log:
    import atexit
    atexit.register(lambda: open(log, "w").write("\\n".join(seen.copy()) + "\\n"))
sys.argv = ["harness", *sys.argv[1:]]
from harness.cli import main
sys.exit(main())
"""


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    operations: list[str]


def run_harness(
    args: list[str],
    *,
    at: int = 0,
    action: str = "kill",
    timeout: float = 120,
    preexec_fn: Callable[[], None] | None = None,
    log: Path | None = None,
) -> Ran:
    """`harness ARGS` in a new Python; with `at`, killed (or paused) at its `at`-th file operation."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAULT_AT": str(at), "FAULT_ACTION": action}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no .pyc written on the way: only the harness's own writes count
    env.pop("GITHUB_STEP_SUMMARY", None)
    if log is not None:
        env["FAULT_LOG"] = str(log)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=preexec_fn,
        check=False,
    )
    operations = log.read_text().splitlines() if log is not None and log.exists() else []
    return Ran(done.returncode, done.stdout, done.stderr, operations)


# -- many kills, fast: forked children ---------------------------------------------------------------
def preload() -> None:
    """Import every module the verbs need here, once, so a forked child starts with them (a kill
    matrix starts hundreds of children; a new interpreter importing the page renderer takes most of one)."""
    from harness import cli
    from harness.commands import publish  # noqa: F401
    from harness.publish import baseline, site  # noqa: F401
    from harness.publish.render import html  # noqa: F401

    cli.build_parser()


def start_forked(args: list[str], out: Path, *, at: int = 0, action: str = "kill", log: Path | None = None) -> int:
    """`harness ARGS` in a child forked from this process (its pid): the same CLI in its own
    process, killed at its `at`-th file operation; stdout and stderr go to `out`."""
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's own streams
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.dont_write_bytecode = True
        os.environ.pop("GITHUB_STEP_SUMMARY", None)
        seen = install_hook(at, action)
        from harness.cli import main

        try:
            code = main(args)
        except SystemExit as err:
            code = err.code if isinstance(err.code, int) else 1
        if log is not None:
            operations = list(seen)
            seen.clear()
            log.write_text("\n".join(operations) + "\n")
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait_forked(pid: int, out: Path) -> Ran:
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    text = out.read_text(errors="replace") if out.exists() else ""
    return Ran(code, "", text, [])


def operations_of(args: list[str], log: Path) -> list[str]:
    """Every file operation of one uninterrupted run (which must succeed), in a forked child."""
    ran = wait_forked(start_forked(args, log.with_suffix(".out"), log=log), log.with_suffix(".out"))
    assert ran.returncode == 0, ran.stderr[-2000:]
    operations = log.read_text().splitlines()
    assert operations, "the audit hook saw no file operation"
    return operations


# The publish time of a run in history/ names (and in the index and the page that list them): the
# one part of a site that differs between two publications of the same matrices.
_STAMP_RE = re.compile(rb"\d{8}T\d{6}\.\d{6}Z")


def tree(folder: Path, *, normalise: bool = False) -> dict[str, bytes]:
    """relative path -> bytes of every file below `folder` (symbolic links as their target)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.name == ".harness-lock":  # not an output: who holds the lock
            continue
        if path.is_symlink():
            found[str(path.relative_to(folder))] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            name, body = str(path.relative_to(folder)), path.read_bytes()
            if normalise:
                name = _STAMP_RE.sub(b"STAMP", name.encode()).decode()
                body = _STAMP_RE.sub(b"STAMP", body)
            found[name] = body
    return found


def temp_files(folder: Path) -> list[str]:
    """Temp files and folders of any writer, anywhere below `folder`."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".harness-tmp-*"))


def fresh_copy(source: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, symlinks=True)
    return dest
