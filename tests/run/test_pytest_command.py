"""The pytest command and its environment: workers per device, each pinned to its own, no secrets."""

from __future__ import annotations

from harness.probe import Probe
from harness.registry import get_backend
from harness.run.launcher import NativeLauncher
from harness.run.pytest_command import pytest_argv, resolve_workers, run_env

FOUR_DEVICES = Probe.from_json({"accelerator": {"available": True, "type": "cuda", "count": 4}})


def test_auto_workers_follow_the_device_count():
    assert resolve_workers("auto", get_backend("cu130"), FOUR_DEVICES) == 4
    assert resolve_workers("auto", get_backend("cu130"), Probe.from_json({"accelerator": {"count": 0}})) == 1
    assert resolve_workers("3", get_backend("cu130"), FOUR_DEVICES) == 3
    assert 1 <= resolve_workers("auto", get_backend("cpu"), None) <= 4


def test_pinning_env_comes_from_the_registry(tmp_path):
    launcher = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path)

    def env(backend: str, workers: int) -> dict[str, str]:
        return run_env(
            launcher,
            get_backend(backend),
            test_timeout=300,
            hard_timeout_grace=60,
            extra_env={},
            workers=workers,
            env_probe=FOUR_DEVICES,
        )

    rocm = env("rocm", 4)
    assert rocm["COMPAT_PIN_VAR"] == "HIP_VISIBLE_DEVICES" and rocm["COMPAT_PIN_DEVICES"] == "0,1,2,3"
    assert env("xpu", 4)["COMPAT_PIN_VAR"] == "ZE_AFFINITY_MASK"
    assert "COMPAT_PIN_VAR" not in env("cu130", 1)


def test_the_command_always_goes_through_xdist_with_the_plugin(tmp_path) -> None:
    launcher = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path / "cell")
    argv = pytest_argv(launcher, 1, ("-k", "linalg"), ("linalg/test_eigh.py::test_a",))
    assert argv[argv.index("-n") + 1] == "1", "one worker still runs through xdist: a crash costs one test"
    assert "compat_cell_plugin" in argv and "no:timeout" in argv and argv[-2:] == ["-k", "linalg"]
    assert argv[3] == f"{launcher.suites_path}/linalg/test_eigh.py::test_a"


def test_secrets_stay_out_of_the_suites_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    launcher = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path)
    env = run_env(
        launcher,
        get_backend("cpu"),
        test_timeout=10,
        hard_timeout_grace=5,
        extra_env={"API_KEY": "x", "MY_VAR": "kept"},
        workers=1,
        env_probe=None,
    )
    assert "GITHUB_TOKEN" not in env and "API_KEY" not in env and env["MY_VAR"] == "kept"
    assert env["COMPAT_TEST_TIMEOUT"] == "10" and env["COMPAT_HARD_TIMEOUT"] == "15"


def test_the_callers_pytest_settings_stay_out_of_a_cell(tmp_path, monkeypatch) -> None:
    """A shell's PYTEST_ADDOPTS (`-x`, `-k ...`) would change a native cell's verdict without showing in
    its recorded command; only the run's own extra environment (RunOptions.env) passes it on purpose."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x -k linalg")
    monkeypatch.setenv("PYTEST_PLUGINS", "someplugin")
    launcher = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path)

    def env(extra: dict[str, str]) -> dict[str, str]:
        return run_env(
            launcher, get_backend("cpu"), test_timeout=10, hard_timeout_grace=5, extra_env=extra, workers=1,
            env_probe=None,
        )  # fmt: skip

    assert "PYTEST_ADDOPTS" not in env({}) and "PYTEST_PLUGINS" not in env({})
    assert env({"PYTEST_ADDOPTS": "-p no:randomly"})["PYTEST_ADDOPTS"] == "-p no:randomly"


def test_the_suites_are_told_the_device_the_cell_was_planned_for(tmp_path) -> None:
    launcher = NativeLauncher(suites_dir=tmp_path, cell_dir=tmp_path)

    def expected(backend: str, cpu_only: bool = False) -> str:
        settings = {"test_timeout": 10, "hard_timeout_grace": 5, "extra_env": {}, "workers": 1, "env_probe": None}
        return run_env(launcher, get_backend(backend), cpu_only=cpu_only, **settings)["COMPAT_EXPECT_DEVICE"]

    assert [expected("cpu"), expected("cu130"), expected("rocm"), expected("xpu")] == ["cpu", "cuda", "rocm", "xpu"]
    assert expected("cu130", cpu_only=True) == "cpu", "a CPU-only cell of a CUDA build expects no GPU"
