"""The CLI as users meet it: verbs, one-line errors, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import EXIT_CODES, EXIT_INPUT, EXIT_USAGE, did_you_mean
from tests.cellfactory import REPO

SAMPLE = {"alpha/test_a.py": "def test_ok():\n    pass\n"}


def harness(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
        check=False,
    )


def assert_one_line_error(done: subprocess.CompletedProcess, code: int, *fragments: str) -> None:
    assert done.returncode == code, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_backends_table_lists_the_registry():
    done = harness("backends")
    assert done.returncode == 0
    for token in (
        "cpu",
        "cu126",
        "cu130",
        "cu132",
        "rocm7.2",
        "rocm7.14",
        "xpu",
        "https://download.pytorch.org/whl/rocm7.14",
        "--device /dev/kfd",
    ):
        assert token in done.stdout
    release = next(line for line in done.stdout.splitlines() if line.startswith("2.15 (current)"))
    header = next(line for line in done.stdout.splitlines() if line.startswith("RELEASE "))
    assert "cu132" in header and "stable" in release
    as_json = json.loads(harness("backends", "--format", "json").stdout)
    assert as_json["variants"]["cu132"]["wheel_index"].endswith("/cu132")
    assert (
        as_json["releases"]["2.15"]["pypi_default"] == "cu132" and "cu126" not in as_json["releases"]["2.15"]["builds"]
    )
    # 2.16 is listed, on the test channel, with its planned date and the nightlies' cu134
    r216 = next(line for line in done.stdout.splitlines() if line.startswith("2.16 "))
    assert "test" in r216.split() and "planned 2026-12-22" in r216 and "experimental" in r216
    assert release.split()[3:6] == ["release", "2026-10-28", "3.11-3.15+3.14t,3.15t"]
    assert as_json["releases"]["2.16"]["channel"] == "test" and as_json["releases"]["2.16"]["builds"]["cu134"]


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_help_lists_every_verb():
    done = harness("--help")
    for verb in ("run", "merge", "report", "backends"):
        assert verb in done.stdout


def test_every_verb_has_its_place_in_the_help_order():
    """A new verb is placed in cli.VERB_ORDER (the help reads as the loop), not left sorted at the end."""
    from harness import cli

    listed = [verb for verb, _ in cli.verbs()]
    assert sorted(listed) == sorted(cli.VERB_ORDER), set(listed) ^ set(cli.VERB_ORDER)


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_missing_matrix_is_one_line_exit_4(tmp_path):
    assert_one_line_error(harness("report", str(tmp_path / "nope.json")), 4, "no such matrix file")


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_missing_suites_dir_is_a_usage_error(tmp_path):
    assert_one_line_error(harness("run", "--suites", str(tmp_path / "none"), "--native"), 2, "suites directory")


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_debug_shows_the_traceback(tmp_path):
    done = harness("--debug", "report", str(tmp_path / "nope.json"))
    assert done.returncode == EXIT_INPUT and "Traceback" in done.stderr


@pytest.mark.parametrize("debug", [["--debug"], []])
def test_debug_keeps_the_documented_exit_code(tmp_path, capsys, debug):
    assert main([*debug, "report", str(tmp_path / "nope.json")]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("harness: error:") and "no such matrix file" in err
    assert ("Traceback" in err) == bool(debug)


@pytest.mark.parametrize("where", [0, 1, 2, 3])
def test_debug_is_taken_anywhere_on_the_line(tmp_path, capsys, where):
    """Issue 42: `harness gate nope.json --debug` was "unrecognized arguments" (the docs say anywhere)."""
    argv = ["gate", str(tmp_path / "nope.json"), "--any-failure"]
    argv.insert(where, "--debug")
    assert main(argv) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "Traceback" in err and err.splitlines()[-1].startswith("harness: error:") and "unrecognized" not in err


def _usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main(list(argv))
    assert stop.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line, no usage block
    return err.strip()


BACKEND_ERROR = "error: argument --backend: unknown backend"
UNRECOGNIZED = "harness run: error: unrecognized arguments: --bakend cpu (did you mean --backend?)"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["run", "--backend", "cdua"], f"harness run: {BACKEND_ERROR} 'cdua' (did you mean cuda?)"),
        (["run", "--bakend", "cpu"], UNRECOGNIZED),
        (["--bakend", "cpu"], UNRECOGNIZED),
        (["plan", "--backend", "rcom"], f"harness plan: {BACKEND_ERROR} 'rcom' (did you mean rocm?)"),
        (["report", "--format", "jsn", "m.json"], "harness report: error: argument --format: invalid choice: 'jsn'"),
        (["mrge", "x"], "harness: error: argument COMMAND: invalid choice: 'mrge'"),
    ],
)
def test_usage_errors_are_one_line_naming_the_verb_and_the_near_miss(capsys, argv, line):
    err = _usage_error(capsys, *argv)
    verb = line.split(":")[0]
    assert err.startswith(line) and err.endswith(f"; see {verb} --help"), err


def test_a_near_miss_among_choices_is_named_and_a_far_one_is_not(capsys):
    assert "(did you mean json?)" in _usage_error(capsys, "report", "--format", "jsn", "m.json")
    assert "(did you mean merge?)" in _usage_error(capsys, "mrge", "x")
    assert "(did you mean render?)" in _usage_error(capsys, "comment", "rendr", "m.json")  # by its metavar
    far = _usage_error(capsys, "run", "--backend", "zzz")
    assert "did you mean" not in far and "a build variant such as" in far  # the registry's list instead


def test_did_you_mean_picks_the_closest_or_nothing():
    assert did_you_mean("--bakend", ["--backend", "--native"]) == " (did you mean --backend?)"
    assert did_you_mean("qqqq", ["--backend", "--native"]) == ""


def test_a_bad_feature_map_exits_with_the_code_the_table_gives_it(tmp_path, capsys):
    """The table (README, docs/cli.md, generated from errors.py) says which code a bad feature map gets."""
    documented = [code for code, meaning in EXIT_CODES if "feature map" in meaning]
    bad = tmp_path / "map.toml"
    bad.write_text('[[rule]]\nmatch = "[z-a]*"\nfeature = "b"\n')
    junit = REPO / "tests" / "dialects" / "pytest" / "junit-xunit2.xml"
    argv = ["import", str(junit), "--feature-map", str(bad), "--backend", "cpu", "--cell-id", "c"]
    code = main([*argv, "--results-dir", str(tmp_path / "results")])
    assert documented == [code] == [EXIT_INPUT], capsys.readouterr().err


def test_backend_without_its_device_is_infrastructure_error_and_no_data(sample_suite, tmp_path):
    suites = sample_suite(SAMPLE)
    done = harness(
        "run",
        "--backend",
        "cu130",
        "--native",
        "--suites",
        str(suites),
        "--results-dir",
        str(tmp_path / "results"),
        "--no-progress",
    )
    assert_one_line_error(done, 3, "NO DATA", "cu130")
    matrix = json.loads((tmp_path / "results" / "matrix.json").read_text())
    assert matrix["columns"][0]["state"] == "no-data"
    assert "❔ NO DATA" in done.stdout


REAL_PROBE_215 = REPO / "tests" / "data" / "probes" / "torch-2.15.0+cu132-no-gpu.json"


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_plain_harness_on_a_cuda_build_without_a_gpu_says_it_runs_cpu_only(sample_suite, tmp_path):
    """PyPI's torch 2.15.0 (the CUDA 13.2 build) on a laptop: `harness` alone makes a cpu-only column of
    that build and says so before the tests start. The probe is the real one's output on that wheel."""
    suites = sample_suite(SAMPLE)
    (suites / "_support" / "probe.py").write_text(
        f"import sys\nsys.stdout.write(open({str(REAL_PROBE_215)!r}).read())\n", encoding="utf-8"
    )
    host = tmp_path / "host"  # doctor reads a host without a GPU (no /sys, no /proc of one)
    host.mkdir()
    done = harness(
        "--suites", str(suites), "--results-dir", str(tmp_path / "results"), env={"HARNESS_DOCTOR_ROOT": str(host)}
    )
    assert done.returncode == 0, done.stderr
    (column,) = json.loads((tmp_path / "results" / "matrix.json").read_text())["columns"]
    assert (column["backend"], column["state"]) == ("cu132", "ok")
    *_, publish, lighter = done.stderr.splitlines()  # it ends with what to run next, not with file paths
    assert publish.startswith(f"next: harness publish site --matrix {tmp_path / 'results' / 'matrix.json'}")
    assert lighter.startswith("next: ") and "--index-url https://download.pytorch.org/whl/cpu" in lighter
    assert column["id"].startswith("cu132-2.15.0-cpu-only-")
    notice = [line for line in done.stderr.splitlines() if "on the CPU" in line]
    assert notice == [
        "harness: torch 2.15.0+cu132 is the CUDA 13.2 build and this host has no such device: its suites run "
        f"on the CPU as column {column['id']} (--require-device refuses instead)"
    ]
    quiet = harness("--suites", str(suites), "--results-dir", str(tmp_path / "quiet"), "--no-progress")
    assert quiet.returncode == 0 and "on the CPU" not in quiet.stderr


def test_run_merge_report_round_trip(sample_suite, tmp_path):
    suites = sample_suite(SAMPLE)
    results = tmp_path / "results"
    done = harness(
        "run",
        "--native",
        "--suites",
        str(suites),
        "--results-dir",
        str(results),
        "--cell-id",
        "cpu-cli",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    assert "| **Alpha feature** (`alpha`) | 2.11 | ✅ supported" in done.stdout
    assert "matrix: " in done.stderr and "cell: " in done.stderr
    bogus = tmp_path / "bogus"
    bogus.mkdir()
    merged = harness("merge", str(results), str(bogus), "-o", str(tmp_path / "m.json"))
    assert merged.returncode == 0
    assert "harness: warning:" in merged.stderr and "no manifest.json" in merged.stderr
    strict = harness("merge", str(results), str(bogus), "-o", str(tmp_path / "m.json"), "--strict")
    assert strict.returncode == 4
    report = harness("report", str(tmp_path / "m.json"), "--format", "json")
    assert json.loads(report.stdout)["columns"][0]["id"] == "cpu-cli"
    md = harness("report", str(tmp_path / "m.json"), "--format", "md", "-o", str(tmp_path / "s.md"))
    assert md.returncode == 0 and (tmp_path / "s.md").read_text().startswith("## PyTorch compatibility matrix")


@pytest.mark.slow  # runs the harness CLI in a subprocess
@pytest.mark.parametrize("verb", ["run", "merge", "report", "backends"])
def test_each_verb_has_help(verb):
    assert harness(verb, "--help").returncode == 0


def test_planned_cells_without_results_are_no_data_columns(sample_suite, tmp_path):
    from harness.matrix_json import validate_matrix
    from harness.merge.combine import MISSING_CELL_ERROR
    from tests.cellfactory import run_sample_cell

    cell = run_sample_cell(sample_suite(SAMPLE), tmp_path / "results", cell_id="cpu").cell_dir
    plan = tmp_path / "plan.json"
    plan.write_text(harness("plan", "--format", "github").stdout)
    out = tmp_path / "m.json"
    done = harness("merge", str(tmp_path / "results"), "--expect", str(plan), "-o", str(out))
    assert done.returncode == 0, done.stderr
    matrix = json.loads(out.read_text())
    validate_matrix(matrix)
    columns = {c["id"]: c for c in matrix["columns"]}
    planned = [c["cell_id"] for c in json.loads(plan.read_text())["include"]]
    assert list(columns) == planned and planned[0] == "cpu", "the current release's builds, cpu first"
    assert columns["cpu"]["state"] == "ok" and columns["cpu"]["source"] == str(cell)
    for cid in planned[1:]:
        assert columns[cid]["state"] == "no-data" and columns[cid]["error"] == MISSING_CELL_ERROR
        assert columns[cid]["score"] is None
    bad_plan = tmp_path / "bad.json"
    bad_plan.write_text('{"include": [{"backend": "cpu"}]}')
    assert_one_line_error(harness("merge", str(cell), "--expect", str(bad_plan)), 4, "cell_id")


def test_the_workstation_loop_keeps_every_cell_in_results(sample_suite, tmp_path):
    """`tox -e cpu` then `tox -e cu130` (here: two builds' cell ids): results/matrix.json holds
    both columns, says which it holds, and a rerun of one build replaces only its column."""
    suites = sample_suite(SAMPLE)
    results = tmp_path / "results"
    common = ("run", "--native", "--suites", str(suites), "--results-dir", str(results), "--no-progress", "--quiet")
    for cell_id in ("cpu-2.13.0-box", "cpu-2.14.1-box", "cpu-2.13.0-box"):
        done = harness(*common, "--cell-id", cell_id, "--workers", "1")
        assert done.returncode == 0, done.stderr
    assert "(2 column(s): cpu-2.13.0-box, cpu-2.14.1-box)" in done.stderr
    matrix = json.loads((results / "matrix.json").read_text())
    assert [c["id"] for c in matrix["columns"]] == ["cpu-2.13.0-box", "cpu-2.14.1-box"]
    runs = sorted(p for p in results.iterdir() if p.is_dir() and p.name.startswith("cpu-2.13.0-box"))
    assert len(runs) == 2 and matrix["columns"][0]["source"] == str(runs[-1]), "the newest run of a cell id wins"
    assert any("superseded" in n["note"] for n in matrix["notes"])


def test_test_option_runs_one_test(sample_suite, tmp_path):
    suites = sample_suite({"alpha/test_a.py": "def test_ok():\n    pass\n\ndef test_other():\n    pass\n"})
    results = tmp_path / "results"
    done = harness("run", "--native", "--suites", str(suites), "--results-dir", str(results), "--no-progress",
                   "--quiet", "--test", "alpha/test_a.py::test_other")  # fmt: skip
    assert done.returncode == 0, done.stderr
    matrix = json.loads((results / "matrix.json").read_text())
    assert [t["id"] for t in matrix["tests"]] == ["alpha/test_a.py::test_other"]


def test_the_main_job_ends_with_the_next_command() -> None:
    from harness.commands.run import next_steps

    assert next_steps(Path("results")) == [
        "next: harness publish site   (the page, badges and history of this matrix, in site/)"
    ]
    steps = next_steps(Path("/tmp/my results"), "python3 -m pip install torch --index-url X   (why)")
    assert steps[0].startswith("next: harness publish site --matrix '/tmp/my results/matrix.json'")
    assert steps[1] == "next: python3 -m pip install torch --index-url X   (why)"


OUTPUT_OPTIONS = ("output", "results_dir", "dest")  # the options a verb writes into by default


def test_defaults_never_write_into_tracked_files() -> None:
    """Issue 42: `harness merge`'s default `-o matrix.json` (and import's hint) wrote over a tracked
    matrix.json at the repository's root; `badges/` was not ignored. Every default a verb writes into
    lies in a folder .gitignore names, and no such file is tracked."""
    from harness.cli import build_parser

    ignored = {line.strip().strip("/") for line in (REPO / ".gitignore").read_text().splitlines() if line.endswith("/")}
    parser = build_parser()
    found = []
    for verb, sub in next(a for a in parser._actions if a.dest == "verb").choices.items():
        for action in sub._actions:
            if action.dest in OUTPUT_OPTIONS and isinstance(action.default, Path):
                found.append((verb, action.default))
                assert action.default.parts[0] in ignored, f"{verb} writes into {action.default} by default"
    assert ("merge", Path("results/matrix.json")) in found and ("badge", Path("badges")) in found
    assert not (REPO / "matrix.json").exists(), "the stray matrix.json at the root is gone"


def test_a_failing_run_names_its_failures_even_when_quiet() -> None:
    """Issue 42: `--quiet` ended a failing run with "see the list above" and no list above."""
    from harness.commands.run import failing_line

    summary = Path("results/summary.md")
    assert failing_line(1, ["a.py::t"], summary) == (
        "1 test(s) failed, errored, timed out or crashed: a.py::t; see results/summary.md"
    )
    many = failing_line(5, ["a", "b", "c", "d", "e"], summary)
    assert ": a, b, c and 2 more; see results/summary.md" in many and "list above" not in many
    assert failing_line(1, [], summary).endswith("crashed; see results/summary.md")
