"""The test run's speed tricks, in one place: what runs beside what, and what is made once.

`python3 -m pytest tests -n 2` (what .ci/run and the README run) starts two pytest-xdist workers, which
`dist_by_groups` makes `--dist loadgroup`: tests are handed out one by one, except that the tests of one
*group* run in a row on one worker. What it buys: on CI's 2 cores one worker runs the act workflows or the
Docker tests while the other runs the suites, the faults and the torch-free tier, so the engine's,
act's and the suites' waiting overlap (docs: README "Development"). tests/conftest.py wires it:

- `group_of(item)`: a test's group, from what it uses, so a new test joins the right one by itself:
  `act` for the workflows run under act (tests/workflows), `docker` for the rest of the engine's tests
  (tests/docker, or any test using `docker_client`): one worker builds and removes images and
  containers at a time, in each group; then a test using a session- or module-scoped fixture of
  tests/ joins the group of that fixture, so a real cell, a run of the suites or a merge a fixture
  makes is made once per test run, not once per worker. Tests without such a fixture are free.
  xdist sends the largest groups out first (--loadscope-reorder, its default).
- `built_once(name)`: a lock held while a fixture builds what tests share across workers and runs
  (the base image, the wheelhouses, the cpu image): the first builds, the others wait and reuse, so
  no image is built twice at once, by two workers or by two runs on one machine.
- `private_tmpdir()`: each test process its own TMPDIR, so a test that looks at the temp folder sees
  only what its own process left there (the merge's spill folders).

The plain path is a run without `-n` (or `-n 0`): one process, the same tests, the groups unused, the
locks uncontended. tests/test_parallel.py runs a sample both ways and compares.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

TESTS: Final = Path(__file__).resolve().parent
CACHE: Final = Path(os.environ.get("TORCH_COMPAT_CACHE") or "~/.cache/torch-compat").expanduser()
# Folders whose tests share one engine's images and containers: folder -> group.
ENGINE_FOLDERS: Final = {"workflows": "act", "docker": "docker"}
# Fixtures that bring the engine to a test outside those folders.
ENGINE_FIXTURES: Final = {"docker_client": "docker"}
SHARED_SCOPES: Final = ("session", "package", "module")
# Fixtures every test process makes for itself, whatever its group (autouse).
PER_PROCESS: Final = frozenset({"private_tmp"})


def _shared_fixtures(item: pytest.Item, root: Path) -> list[tuple[str, str, str]]:
    """(scope, name, where) of the fixtures of `root` (tests/) this test uses that outlive it."""
    info = getattr(item, "_fixtureinfo", None)
    found = []
    for name in sorted(set(getattr(item, "fixturenames", ())) - PER_PROCESS):
        for fixturedef in (info.name2fixturedefs.get(name, ()) if info else ())[-1:]:
            where = Path(fixturedef.func.__code__.co_filename).resolve()
            if fixturedef.scope in SHARED_SCOPES and root in where.parents:
                found.append((fixturedef.scope, name, where.relative_to(root).as_posix()))
    return found


def group_of(item: pytest.Item, root: Path = TESTS) -> str | None:
    """The xdist group a test runs in (None: any worker, any time). See the module's docstring.
    `root`: the folder of the tests (another one for a sample run)."""
    path = Path(str(item.path)).resolve()
    parts = path.relative_to(root).parts if root in path.parents else ()
    if len(parts) > 1 and parts[0] in ENGINE_FOLDERS:
        return ENGINE_FOLDERS[parts[0]]
    names = set(getattr(item, "fixturenames", ()))
    for fixture, group in ENGINE_FIXTURES.items():
        if fixture in names:
            return group
    shared = _shared_fixtures(item, root)
    for scope in SHARED_SCOPES:  # the widest scope decides: its fixture is made once for all its users
        for fixture_scope, name, where in shared:
            if fixture_scope == scope:
                # a module-scoped fixture is made once per test module; no `@` (xdist's separator)
                return f"{name}:{where}" if scope != "module" else f"module:{'/'.join(parts) or path.name}"
    return None


def dist_by_groups(config: pytest.Config) -> None:
    """`-n N` hands tests out by group (`--dist loadgroup`) unless another mode was named. Not pyproject's
    addopts: a `--dist` there makes plugins believe tests are distributed when they are not. Called in
    the controller."""
    # Before or after pytest-xdist's own hook: `-n N` with no mode named is "no" before xdist's hook and
    # "load" after it; either way it becomes loadgroup here.
    workers = getattr(config.option, "numprocesses", None)
    dist = getattr(config.option, "dist", "no")
    if workers and dist in ("no", "load") and not getattr(config.option, "distload", False):
        config.option.dist = "loadgroup"


WORKER_DIST: Final = "harness_dist"


def tell_worker(node: Any) -> None:
    """The controller's mode, passed to a worker as it starts: a worker parses the command line again
    and would not know that `-n N` came to mean `--dist loadgroup`."""
    node.workerinput[WORKER_DIST] = node.config.option.dist


def group_in_worker(config: pytest.Config) -> None:
    """In a worker: name each test's group in its id (pytest-xdist does it when `loadgroup` is set)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get(WORKER_DIST) == "loadgroup":
        config.option.loadgroup = True


def assign_groups(items: list[pytest.Item], root: Path = TESTS) -> None:
    for item in items:
        group = group_of(item, root)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@contextlib.contextmanager
def built_once(name: str) -> Iterator[None]:
    """Hold the machine-wide lock of `name` (a file under the cache) while a fixture checks for and
    builds what tests share: a second worker, or a second run on this machine, waits and then finds it."""
    locks = CACHE / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def private_tmpdir(name: str) -> Iterator[Path]:
    """A new folder in the temp folder, as TMPDIR (and tempfile's cached choice) for the block, then the
    old ones put back and the folder removed. Made like /tmp (sticky, anyone may write): a test may
    run a command as another user (`nobody`), whose temp files go there too."""
    saved_env, saved_cached = os.environ.get("TMPDIR"), tempfile.tempdir
    folder = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    folder.chmod(0o1777)
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # tempfile.gettempdir() reads TMPDIR again
    try:
        yield folder
    finally:
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        tempfile.tempdir = saved_cached
        shutil.rmtree(folder, ignore_errors=True)
