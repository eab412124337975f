"""What `harness run` is told, checked before anything is written (harness/run/option_checks.py):
each value that cannot work is one UsageError line, raised by RunOptions itself, so no cell ever
exists for a typo (issue 42: `--workers abc` left a `running` cell that hid the good run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import EXIT_USAGE, HarnessError, UsageError
from harness.run import option_checks
from harness.run.execute import RunOptions
from tests.cellfactory import write_suite

SOURCE = """
import pytest
from helpers import test_shared

@pytest.mark.parametrize("x", [1, 2])
def test_ok(x):
    pass

def test_other():
    pass

class TestGroup:
    def test_method(self):
        pass

class TestInherited(Base):
    pass

test_alias = test_other
"""


@pytest.fixture
def suites(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suites", {"alpha/test_a.py": SOURCE, "beta/test_b.py": "def test_b():\n    pass\n"})


@pytest.mark.parametrize(
    ("workers", "line"),
    [("abc", "--workers must be a number or 'auto', not 'abc'"), ("0", "--workers must be at least 1, not 0"),
     ("-3", "--workers must be at least 1, not -3"), ("nan", "--workers must be a number or 'auto', not 'nan'")],
)  # fmt: skip
def test_workers(workers: str, line: str) -> None:
    with pytest.raises(UsageError) as caught:
        option_checks.check_workers(workers)
    assert str(caught.value) == line and caught.value.exit_code == EXIT_USAGE
    assert option_checks.check_workers("auto") == "auto" and option_checks.check_workers("4") == "4"


@pytest.mark.parametrize("value", [-1.0, 0.0, float("nan"), float("inf")])
def test_time_limits_are_positive_and_finite(value: float) -> None:
    with pytest.raises(UsageError, match=r"^--test-timeout must be a positive number of seconds, not "):
        option_checks.check_seconds("--test-timeout", value)
    assert option_checks.check_seconds("--cell-timeout", 0.5) == 0.5


def test_pytest_args_that_do_not_split_and_expressions_pytest_refuses() -> None:
    with pytest.raises(UsageError, match=r"""^--pytest-args '"unclosed': no closing quotation"""):
        option_checks.split_pytest_args('"unclosed')
    assert option_checks.split_pytest_args("-x --maxfail 2") == ("-x", "--maxfail", "2")
    with pytest.raises(UsageError, match=r"^-k 'and and': not a pytest expression: 'and' at column 1"):
        option_checks.check_expressions(("-k", "and and"))
    with pytest.raises(UsageError, match=r"^-m 'gpu and': not a pytest expression"):
        option_checks.check_expressions(("-mgpu and",))
    option_checks.check_expressions(("-k", "amp and not cuda", "-m", "slow"))


@pytest.mark.parametrize(
    ("test", "line"),
    [
        ("alpha/test_a.py::test_nope", "alpha/test_a.py has no test test_nope"),
        ("alpha/test_a.py::test_otehr", "has no test test_otehr (did you mean alpha/test_a.py::test_other?)"),
        ("alpha/test_b.py::test_ok", "no such file in the suites"),
        ("alpha/test_z.py", "(did you mean alpha/test_a.py?)"),
        ("alpha/test_a.py::TestGroup::test_methd", "TestGroup has no test test_methd (did you mean "),
        ("../etc/passwd", "no such file in the suites"),
    ],
)
def test_a_test_id_names_a_file_and_a_test_defined_in_it(suites: Path, test: str, line: str) -> None:
    with pytest.raises(UsageError) as caught:
        option_checks.check_tests(suites, [test])
    assert str(caught.value).startswith(f"--test {test}: ") and line in str(caught.value)


def test_what_only_pytest_can_decide_is_left_to_it(suites: Path) -> None:
    """A parameter, an inherited method, an imported or assigned test, a folder, a file that does not
    parse: pytest decides (a run that selects nothing then ends `not-started`)."""
    option_checks.check_tests(
        suites,
        [
            "alpha/test_a.py::test_ok[9]",
            "alpha/test_a.py::TestInherited::test_from_base",
            "alpha/test_a.py::test_shared",
            "alpha/test_a.py::test_alias",
            "alpha",
            "/beta/test_b.py::test_b",
        ],
    )
    (suites / "alpha" / "test_broken.py").write_text("def test_(:\n")
    option_checks.check_tests(suites, ["alpha/test_broken.py::test_x"])


def test_a_channel_that_contradicts_the_installed_torch() -> None:
    with pytest.raises(UsageError, match=r"^--channel nightly: the installed torch 2.13.0\+cpu comes from the release"):
        option_checks.check_channel("nightly", "2.13.0+cpu")
    with pytest.raises(UsageError, match="comes from the nightly channel"):
        option_checks.check_channel("release", "2.16.0.dev20261130+cpu")
    with pytest.raises(UsageError, match="comes from the test channel"):
        option_checks.check_channel("release", "2.16.0rc2+cpu")
    option_checks.check_channel("test", "2.15.0+cpu")  # a final version is on the test channel too
    option_checks.check_channel("nightly", "2.16.0.dev20261130+cpu")
    option_checks.check_channel(None, "2.13.0+cpu")


def test_run_options_refuse_before_anything_is_written(suites: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    for bad in (
        {"workers": "abc"},
        {"test_timeout": -1.0},
        {"cell_timeout": 0.0},
        {"cell_id": "a/b"},
        {"tests": ("alpha/test_a.py::test_nope",)},
        {"pytest_args": ("-k", "and and")},
        {"features_file": tmp_path / "missing.toml"},
    ):
        with pytest.raises(HarnessError) as caught:
            RunOptions(suites_dir=suites, results_dir=results, **bad)  # type: ignore[arg-type]
        assert caught.value.exit_code in (2, 4), bad
    assert not results.exists(), "no cell, no results dir"
    RunOptions(suites_dir=suites, results_dir=results, workers="2", tests=("alpha/test_a.py::test_ok[1]",))
