"""tests/parallel.py, the test run's speed tricks: the groups a test joins from what it uses, the
machine-wide build lock, each process's own TMPDIR; and a sample run by two workers against one process
(the plain path): the same outcomes, each shared fixture made once, each group on one worker."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import parallel
from tests.conftest import REPO

TESTS = parallel.TESTS


def _fixturedef(scope: str, where: Path) -> SimpleNamespace:
    def made() -> None: ...

    made.__code__ = made.__code__.replace(co_filename=str(where))
    return SimpleNamespace(scope=scope, func=made)


def _item(path: str, **fixtures: tuple[str, Path]) -> SimpleNamespace:
    """A collected test as group_of sees it: its file and its fixtures (name -> (scope, defined in))."""
    defs = {name: [_fixturedef(scope, where)] for name, (scope, where) in fixtures.items()}
    return SimpleNamespace(
        path=TESTS / path, fixturenames=list(fixtures), _fixtureinfo=SimpleNamespace(name2fixturedefs=defs)
    )


def test_a_test_joins_the_group_of_what_it_uses() -> None:
    conftest = TESTS / "conftest.py"
    faults = TESTS / "faults" / "conftest.py"
    builtin = Path(pytest.__file__)
    group = parallel.group_of
    assert group(_item("workflows/test_new.py")) == "act", "the workflows under act: one engine, one worker"
    assert group(_item("docker/test_new.py", docker_client=("session", TESTS / "docker" / "conftest.py"))) == "docker"
    assert group(_item("images/test_new.py", docker_client=("session", TESTS / "docker" / "conftest.py"))) == "docker"
    assert group(_item("faults/test_new.py", base_cell=("session", faults))) == "base_cell:faults/conftest.py"
    assert group(_item("suites/test_new.py", baseline=("module", TESTS / "suites" / "test_new.py"))) == (
        "module:suites/test_new.py"
    )
    both = _item("faults/test_new.py", hung=("module", TESTS / "faults" / "test_new.py"), base_cell=("session", faults))
    assert group(both) == "base_cell:faults/conftest.py", "the widest scope decides"
    free = _item("core/test_new.py", tmp_path=("function", builtin), tmp_path_factory=("session", builtin))
    assert group(free) is None, "pytest's own fixtures share nothing between tests"
    assert group(_item("core/test_new.py", private_tmp=("session", conftest))) is None, "each process makes its own"
    assert all("@" not in (group(i) or "") for i in (both, free)), "`@` is xdist's separator"


def test_the_groups_of_this_run_keep_the_engine_tests_apart(request: pytest.FixtureRequest) -> None:
    """In whatever this run collected: every test of tests/docker is in `docker`, of tests/workflows in
    `act`, and the tests of one module fixture share a group."""
    for item in request.session.items:
        marker = item.get_closest_marker("xdist_group")
        parts = Path(str(item.path)).resolve().relative_to(TESTS).parts
        if parts[0] in parallel.ENGINE_FOLDERS and len(parts) > 1:
            assert marker is not None and marker.args[0] == parallel.ENGINE_FOLDERS[parts[0]], item.nodeid
    mine = request.node.get_closest_marker("xdist_group")
    assert mine is None, "this test uses no shared fixture: any worker may run it"


def _hold(cache: str, name: str, out: str, start: float) -> None:
    parallel.CACHE = Path(cache)  # type: ignore[misc]
    with parallel.built_once(name):
        Path(out).write_text(f"{time.monotonic() - start}\n", encoding="utf-8")
        time.sleep(0.5)


def test_built_once_lets_one_process_build_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "CACHE", tmp_path)
    start = time.monotonic()
    fork = multiprocessing.get_context("fork")
    children = [fork.Process(target=_hold, args=(str(tmp_path), "image", str(tmp_path / f"{n}.txt"), start))
                for n in range(2)]  # fmt: skip
    for child in children:
        child.start()
    for child in children:
        child.join(30)
    entered = sorted(float((tmp_path / f"{n}.txt").read_text()) for n in range(2))
    assert entered[1] - entered[0] >= 0.45, f"the second entered while the first held the lock: {entered}"
    assert (tmp_path / "locks" / "image.lock").exists()


def test_each_process_has_its_own_temp_folder(private_tmp: Path) -> None:
    assert Path(tempfile.gettempdir()) == private_tmp and os.environ["TMPDIR"] == str(private_tmp)
    assert private_tmp.stat().st_mode & 0o7777 == 0o1777, "like /tmp: a command run as nobody writes there too"
    with parallel.private_tmpdir("inner") as inner:
        assert Path(tempfile.gettempdir()) == inner and inner.parent == private_tmp
        (inner / "left").write_text("x", encoding="utf-8")
    assert Path(tempfile.gettempdir()) == private_tmp and not inner.exists(), "put back, and removed"


@pytest.mark.parametrize(
    ("workers", "dist", "distload", "becomes"),
    [
        (2, "load", False, "loadgroup"),  # after pytest-xdist's hook (pytest 9.0 calls it first)
        (2, "no", False, "loadgroup"),  # before it (pytest 9.2)
        (0, "no", False, "no"),
        (None, "no", False, "no"),
        (2, "loadscope", False, "loadscope"),
        (2, "load", True, "load"),
    ],
)
def test_n_workers_hand_out_tests_by_group_unless_told_otherwise(
    workers: int | None, dist: str, distload: bool, becomes: str
) -> None:
    config = SimpleNamespace(option=SimpleNamespace(numprocesses=workers, dist=dist, distload=distload))
    parallel.dist_by_groups(config)  # type: ignore[arg-type]
    assert config.option.dist == becomes


# -- two workers against the plain path ------------------------------------------------------------
SAMPLE = {
    "conftest.py": """
        import os, pathlib, pytest
        from tests import parallel

        MADE = os.environ["SAMPLE_MADE"]

        def _made(what):
            with open(MADE, "a") as log:
                log.write(what + "\\n")

        # wired as tests/conftest.py wires it
        @pytest.hookimpl(tryfirst=True)
        def pytest_collection_modifyitems(items):
            parallel.assign_groups(items, root=pathlib.Path(__file__).resolve().parent)

        def pytest_cmdline_main(config):
            parallel.dist_by_groups(config)

        @pytest.hookimpl(optionalhook=True)
        def pytest_configure_node(node):
            parallel.tell_worker(node)

        def pytest_configure(config):
            parallel.group_in_worker(config)

        @pytest.fixture(scope="session")
        def shared_cell():
            _made("shared_cell")
            return "cell"
    """,
    "test_one.py": """
        import os, pytest

        @pytest.fixture(scope="module")
        def suites_run():
            from conftest import _made
            _made("suites_run")
            return 3

        @pytest.mark.parametrize("n", range(4))
        def test_uses_the_module_fixture(suites_run, n, record_property):
            record_property("worker", os.environ.get("PYTEST_XDIST_WORKER", "main"))
            assert suites_run == 3

        @pytest.mark.parametrize("n", range(6))
        def test_free(n):
            assert n < 5
    """,
    "test_two.py": """
        import os, pytest

        @pytest.mark.parametrize("n", range(4))
        def test_uses_the_session_fixture(shared_cell, n, record_property):
            record_property("worker", os.environ.get("PYTEST_XDIST_WORKER", "main"))
            assert shared_cell == "cell"
    """,
}


def _sample_run(root: Path, *options: str) -> dict[str, Any]:
    made = root / f"made{'-'.join(options)}.log"
    junit = root / f"junit{'-'.join(options)}.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly", f"--junitxml={junit}",
         *options],
        cwd=root, env={**os.environ, "SAMPLE_MADE": str(made), "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    from xml.etree import ElementTree

    outcomes, workers = {}, {}
    for case in ElementTree.parse(junit).iter("testcase"):
        name = case.get("name", "").split("@")[0]
        outcomes[name] = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if "worker" in props:
            workers.setdefault(case.get("classname", "").rsplit(".", 1)[-1], set()).add(props["worker"])
    scheduler = next((w for w in done.stdout.split() if w.endswith("Scheduling")), None)
    return {
        "code": done.returncode, "outcomes": outcomes, "made": sorted(made.read_text().split()), "workers": workers,
        "scheduler": scheduler,
    }  # fmt: skip


@pytest.mark.slow  # two real pytest runs, one of them with two workers
def test_two_workers_agree_with_one_process(tmp_path: Path) -> None:
    for name, body in SAMPLE.items():
        (tmp_path / name).write_text(textwrap.dedent(body), encoding="utf-8")
    plain = _sample_run(tmp_path, "-n", "0")
    two = _sample_run(tmp_path, "-n", "2")
    assert plain["code"] == two["code"] == 1, json.dumps([plain, two], default=sorted)
    assert two["outcomes"] == plain["outcomes"] and len(plain["outcomes"]) == 14
    assert two["made"] == plain["made"] == ["shared_cell", "suites_run"], "each shared fixture made once"
    assert all(len(w) == 1 for w in two["workers"].values()), f"a group ran on more than one worker: {two['workers']}"
    assert two["scheduler"] == "LoadGroupScheduling", "`-n 2` alone hands tests out by group"
