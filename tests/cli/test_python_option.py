"""`--python` across the verbs (issue 41): a CPython key (3.15, 3.14t) or, for a native run, a path; every
bad value is one line before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--python", "3.14x"],
        ["build", "--backend", "cpu", "--python", "3.14x", "--dry-run"],
        ["wheelhouse", "--backend", "cpu", "--python", "3.14x", "-o", "wh"],
        ["plan", "--python", "3.14x"],
    ],
)
def test_a_typo_is_a_usage_error_naming_the_valid_keys(argv: list[str], capsys, tmp_path: Path, monkeypatch) -> None:
    if argv[0] == "plan":  # the plan's --python is a list (default, all, 3.13,3.14t): checked by the verb
        assert main(argv) == 2
        assert "'3.14x' is not a Python like 3.15 or 3.14t" in capsys.readouterr().err
        return
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:  # argparse's own usage error: exit 2
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "argument --python" in err and "'3.14x' is not a Python like 3.15 or 3.14t" in err and "3.15t" in err
    assert not (tmp_path / "results").exists() and not (tmp_path / "wh").exists()


def test_a_host_path_is_no_containers_python(capsys, tmp_path: Path) -> None:
    results = tmp_path / "results"
    assert main(["run", "--backend", "cpu", "--python", "/usr/bin/python3", "--results-dir", str(results)]) == 2
    err = capsys.readouterr().err
    assert "--python /usr/bin/python3 names an interpreter on this host; a container's Python is a version" in err
    assert not results.exists()


def test_a_native_python_that_is_not_on_path_is_one_line(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    results = tmp_path / "results"
    assert main(["run", "--native", "--python", "3.15t", "--results-dir", str(results)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("harness: error: no python3.15t on PATH: this host cannot run a Python 3.15t cell")
    assert not results.exists()


@pytest.mark.slow  # the plan's labels ask git for the checkout
def test_build_dry_run_names_the_python_and_its_base(capsys) -> None:
    assert main(["build", "--backend", "cu132", "--python", "3.15", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "  base image     python:3.15-slim-bookworm" in out and "  python         3.15 (system)" in out
    assert "EXPECT_PYTHON=3.15" in out
