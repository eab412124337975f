"""Shared fixtures: sample suites run by real pytest, golden files, CI detection."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, TypeVar

import pytest

from tests import parallel, tiers

REPO = Path(__file__).resolve().parent.parent
F = TypeVar("F", bound=Callable[..., Any])
ARTIFACTS = REPO / "test-artifacts"


# The fast tier (`python -m pytest tests -m "not slow"`, tox -e fast): no torch, no Docker engine,
# no browser, no subprocess, under a minute. A test is slow when it needs one of those, or runs real
# suites: its folder, a fixture that brings one of them, or its own `@pytest.mark.slow` (per test,
# with the reason beside it). The guard below fails a fast test that starts a subprocess, makes a
# Docker client or imports torch, so the fast tier cannot quietly become slow.
SLOW_FOLDERS: Final = ("docker", "workflows", "suites", "faults")
SLOW_FIXTURES: Final = frozenset({"browser", "docker_client", "sample_suite", "main_job", "taxonomy_cell"})


def slow_fixture(reason: str) -> Callable[[F], F]:
    """Marks a fixture as slow (it runs real suites, a browser, Docker...): every test using it is."""

    def mark(func: F) -> F:
        func.slow_reason = reason  # type: ignore[attr-defined]
        return func

    return mark


def _uses_a_slow_fixture(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    if SLOW_FIXTURES & names:
        return True
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info else ():
        if any(getattr(d.func, "slow_reason", None) for d in defs):
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # the xdist groups are read by pytest-xdist's own hook of this name
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests_dir = Path(__file__).parent
    for item in items:
        path = Path(item.path)
        parts = path.relative_to(tests_dir).parts if tests_dir in path.parents else ()
        if (len(parts) > 1 and parts[0] in SLOW_FOLDERS) or _uses_a_slow_fixture(item):
            item.add_marker(pytest.mark.slow)
    parallel.assign_groups(items)


@pytest.fixture(scope="session", autouse=True)
def private_tmp() -> Iterator[Path]:
    """This test process's own TMPDIR (tests/parallel.py): what a test finds in the temp folder is its own."""
    with parallel.private_tmpdir(f"harness-tests-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}") as folder:
        yield folder


@pytest.hookimpl  # after pytest-xdist's own (tryfirst), which makes `-n N` mean `--dist load`
def pytest_cmdline_main(config: pytest.Config) -> None:
    parallel.dist_by_groups(config)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's: a worker is about to start
def pytest_configure_node(node: Any) -> None:
    parallel.tell_worker(node)


_TALLY_KEY = pytest.StashKey[tiers.Tally]()
_TALLY: tiers.Tally | None = None  # the hook below is given no config


def pytest_configure(config: pytest.Config) -> None:
    parallel.group_in_worker(config)
    global _TALLY
    if not hasattr(config, "workerinput"):  # the controller (or a plain run) sees every test's reports
        _TALLY = config.stash[_TALLY_KEY] = tiers.Tally()


@pytest.hookimpl(optionalhook=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _TALLY is not None:  # xdist's controller gets every worker's reports through this hook
        _TALLY.add(report.nodeid, report.keywords, report.duration)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    tally = config.stash.get(_TALLY_KEY, None)
    if tally is not None and any(tally.tests.values()):
        terminalreporter.write_line(tally.line())  # the figures README "Development" states (tests/tiers.py)


# The slow tier runs the suites natively and compares with cells of torch's CPU build (the health gate
# of `--backend cpu` refuses any other build), so it needs a CPU build of torch in this Python: say so
# once, before anything runs, instead of a hundred NO DATA failures. Read from metadata: no torch import.
TEST_TORCH_LINE: Final = (
    'python -m pip install "torch==2.13.0+cpu" --extra-index-url https://download.pytorch.org/whl/cpu'
)


def installed_torch() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def pytest_collection_finish(session: pytest.Session) -> None:
    if not any(item.get_closest_marker("slow") for item in session.items):
        return
    version = installed_torch()
    if version is None or version.partition("+")[2] != "cpu":
        found = f"torch {version}, not a +cpu build" if version else "no torch"
        raise pytest.UsageError(
            f"the slow tests need torch's CPU build in this Python and found {found}: {TEST_TORCH_LINE} "
            '(or run the fast tier: -m "not slow")'
        )


class FastTierViolation(AssertionError):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test without the slow mark may not start a subprocess, make a Docker client or import torch,
    in its own body or in any fixture it sets up (module-scoped ones included)."""
    if item.get_closest_marker("slow") is not None:
        yield
        return
    import subprocess

    try:
        import docker
    except ImportError:  # pragma: no cover - docker is a dependency
        docker = None
    name = item.nodeid

    def refuse(what: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise FastTierViolation(f"{name} is in the fast tier but {what}; mark it @pytest.mark.slow")

        return call

    saved = [(subprocess.Popen, "__init__", subprocess.Popen.__init__)]
    subprocess.Popen.__init__ = refuse("starts a subprocess")  # type: ignore[method-assign]
    if docker is not None:
        saved += [
            (docker, "from_env", docker.from_env),
            (docker.DockerClient, "__init__", docker.DockerClient.__init__),
        ]
        docker.from_env = refuse("makes a Docker client")
        docker.DockerClient.__init__ = refuse("makes a Docker client")  # type: ignore[method-assign]
    had_torch = "torch" in sys.modules
    try:
        yield
    finally:
        for owner, attr, value in saved:
            setattr(owner, attr, value)
    if not had_torch and "torch" in sys.modules:
        raise FastTierViolation(f"{name} is in the fast tier but imported torch; mark it @pytest.mark.slow")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from current output")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """compare(name, text): assert text equals tests/golden/<name>, or rewrite it with --update-golden."""
    update = request.config.getoption("--update-golden")

    def compare(name: str, text: str) -> None:
        path = REPO / "tests" / "golden" / name
        if update or not path.exists():
            if not update and in_ci():
                pytest.fail(f"golden file {path} is missing; run pytest --update-golden and commit it")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file (--update-golden)"

    return compare


@pytest.fixture
def artifacts_dir() -> Path:
    """Where tests save files for humans (screenshots); uploaded by CI."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def sample_suite(tmp_path: Path):
    """make(files) -> a suites dir with features.toml, pytest.ini and the real probe."""
    from tests.cellfactory import write_suite

    def make(files: dict[str, str], features: dict[str, dict[str, str]] | None = None, name: str = "suites") -> Path:
        return write_suite(tmp_path / name, files, features)

    return make


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
