"""The scripted newcomer (issue 42): the real CLI driven through a new user's mistakes, in order, on a
copy of the committed cells, ending with every good column intact.

A newcomer follows the README: merges the runs in results/, publishes the site, then types what new
users type: a word for a number, a negative timeout, a cell id with a slash, a shell string that does
not close, a -k expression pytest cannot read, a test that does not exist, a folder name with a
typo, a matrix without results published over a site with some, an unknown run to forget, a TOML
file that is not TOML, `--debug` after the verb. Each mistake must be one line with the code
harness/errors.py gives its kind, and must cost nothing: at the end the matrix, the site and the
history hold every column they held, with every result.

Both run the CLI in this process (harness.cli.main: its parser, its error table, its exit codes: what
`harness` runs). The mistakes that need torch (a parameter's typo that only pytest can find, a
channel that contradicts the installed build) are the slow test's: one small native run (pytest
collects the suites and selects nothing) and one probe.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.errors import EXIT_FAILED, EXIT_INFRASTRUCTURE, EXIT_INPUT, EXIT_OK, EXIT_USAGE
from tests.committed import CELLS, SAMPLES, partial_rerun_cell
from tests.publishing_cells import REGRESSED

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"
RECORDED = REPO / "tests" / "data" / "upstream" / "2026-12-02"
WHEELS = REPO / "tests" / "data" / "api-wheels"
JUNIT = REPO / "tests" / "dialects" / "pytest" / "junit-xunit2.xml"
TEST_ID = "amp/test_autocast.py::test_autocast_op_dtype_and_value[matmul-float16]"


def _good(results: Path, site: Path) -> dict[str, Any]:
    """What must survive: every column with its run, counts and per-test results, in the results
    dir's matrix and in the published site's, and the site's history entries."""

    def columns(path: Path) -> dict[str, Any]:
        from harness.matrix_json import load_matrix

        matrix = load_matrix(path)
        return {
            c.id: (c.run_id, dict(c.counts), {row.id: r.outcome for row, r in matrix.results(c.id)})
            for c in matrix.columns
        }

    history = sorted(p.name for p in (site / "history").glob("*.json") if p.name != "index.json")
    return {"results": columns(results / "matrix.json"), "site": columns(site / "matrix.json"), "history": history}


@pytest.fixture
def newcomer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh folder with a copy of the committed cells as results/ (one column each), merged
    and published as the README says."""
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_STEP_SUMMARY", "HARNESS_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    for cell in CELLS.iterdir():
        shutil.copytree(cell, tmp_path / "results" / cell.name)
    return tmp_path


def _says(capsys: pytest.CaptureFixture[str], argv: list[str], code: int, *fragments: str) -> str:
    """Run the CLI; the exit code is `code` and, for an error, stderr holds one error line with
    `fragments` and no traceback (unless --debug asked for one)."""
    try:
        got = main(argv)
    except SystemExit as stop:  # argparse's usage error
        got = int(stop.code or 0)
    err = capsys.readouterr().err
    assert got == code, f"{argv}: exit {got}, not {code}\n{err}"
    if code == EXIT_OK:
        return err
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1, f"{argv}:\n{err}"
    assert "--debug" in argv or "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], f"{argv}: {lines[0]!r} lacks {fragment!r}"
    return lines[0]


def test_a_newcomers_mistakes_never_cost_a_good_column(newcomer: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, site = Path("results"), Path("site")
    _says(capsys, ["merge", "results"], EXIT_OK)  # the default output: results/matrix.json
    assert (results / "matrix.json").is_file() and not Path("matrix.json").exists(), "never a tracked file"
    _says(capsys, ["publish", "site"], EXIT_OK)  # its default matrix: results/matrix.json
    good = _good(results, site)
    columns = len([c for c in CELLS.iterdir() if (c / "manifest.json").is_file()])
    assert len(good["results"]) == columns and good["results"] == good["site"] and len(good["history"]) == 1
    runs = _runs(results)

    run = ["run", "--native", "--suites", str(SUITES), "--no-progress", "--quiet"]
    # Every run option checked before a cell exists: no run dir, no `running` manifest left behind.
    _says(capsys, [*run, "--workers", "abc"], EXIT_USAGE, "--workers must be a number or 'auto', not 'abc'")
    _says(capsys, [*run, "--workers", "0"], EXIT_USAGE, "--workers must be at least 1")
    _says(capsys, [*run, "--workers", "-3"], EXIT_USAGE, "--workers must be at least 1")
    _says(capsys, [*run, "--test-timeout", "-1"], EXIT_USAGE, "--test-timeout must be a positive number")
    _says(capsys, [*run, "--cell-timeout", "0"], EXIT_USAGE, "--cell-timeout must be a positive number")
    _says(capsys, [*run, "--cell-id", "cpu/2.13"], EXIT_USAGE, "--cell-id: invalid cell id 'cpu/2.13'")
    _says(capsys, [*run, "--pytest-args", '"unclosed'], EXIT_USAGE, "no closing quotation")
    _says(capsys, [*run, "-k", "and and"], EXIT_USAGE, "-k 'and and': not a pytest expression")
    _says(
        capsys,
        [*run, "--test", "amp/test_autocast.py::test_autocast_op_dtype_and_valeu"],
        EXIT_USAGE,
        "(did you mean amp/test_autocast.py::test_autocast_op_dtype_and_value?)",
    )
    _says(capsys, [*run, "--features", "suites/features.tmol"], EXIT_INPUT, "no such features file")
    assert _runs(results) == runs, "not one new run dir"

    # A folder name with a typo: nothing read, nothing written over the good matrix.
    _says(capsys, ["merge", "reslts", "-o", "results/matrix.json"], EXIT_INPUT, "no cell could be read from reslts")
    _says(capsys, ["publish", "site", "--matrix", "reslts/matrix.json"], EXIT_INPUT, "no such matrix file")
    # A matrix without results (only a run that never got its device) over a site with results: refused.
    _says(capsys, ["merge", str(SAMPLES / "publishing-nodata"), "-o", "nodata.json"], EXIT_OK)
    _says(capsys, ["publish", "site", "--matrix", "nodata.json"], EXIT_FAILED, "has no column with results")

    # The runs themselves: forgetting what is not there, pruning, an import with a bad id or map.
    _says(capsys, ["cells", "forget", "cpu-2.31.0"], EXIT_USAGE, "no run or cell 'cpu-2.31.0'")
    older = results / "cpu-2.13.0-older"
    shutil.copytree(CELLS / "cpu-2.13.0", older)  # an older run of the same cell: the one prune may drop
    manifest = json.loads((older / "manifest.json").read_text())
    manifest.update(run_id="r-older", started_at="2026-11-01T00:00:00Z")
    (older / "manifest.json").write_text(json.dumps(manifest))
    assert "dropped 1 run(s)" in (out := _prune(capsys)) and "merged again" in out
    _says(capsys, ["import", str(JUNIT), "--backend", "cpu", "--cell-id", "ci/run"], EXIT_USAGE, "--cell-id")
    Path("map.toml").write_text("[[rule]\nmatch = 'x'\n")
    _says(
        capsys,
        ["import", str(JUNIT), "--backend", "cpu", "--cell-id", "ci", "--feature-map", "map.toml"],
        EXIT_INPUT,
        "map.toml: invalid TOML",
    )
    _says(capsys, ["merge", "results", "--features", "map.toml"], EXIT_INPUT, "map.toml: invalid TOML")
    # Silent successes that are not: an index not read is "could not check", never "matches".
    shutil.copytree(RECORDED, "recorded")
    shutil.rmtree("recorded/pages/download.pytorch.org")
    _says(capsys, ["upstream", "--responses", "recorded"], EXIT_INFRASTRUCTURE, "could not check 3 source(s)")
    assert "matches" not in capsys.readouterr().out
    # A namespace no wheel has: never "no public name was added or removed".
    old, new = WHEELS / "torch-2.14.1-py3-none-any.whl", WHEELS / "torch-2.15.0-py3-none-any.whl"
    names = ["api-diff", str(old), str(new), "--namespace", "torch.cuda.tunabel", "--suites", str(SUITES)]
    _says(
        capsys,
        names,
        EXIT_USAGE,
        "--namespace torch.cuda.tunabel: no public module",
        "(did you mean torch.cuda.tunable?)",
    )
    # --debug where a user puts it: after the verb.
    assert main(["gate", "nope.json", "--debug"]) == EXIT_INPUT
    debug = capsys.readouterr().err
    assert "Traceback" in debug and "unrecognized" not in debug and "no such matrix file" in debug
    assert _runs(results) == runs, "the older run pruned, nothing else gone or added"

    assert _good(results, site) == good, "every good column intact: matrix, site and history"

    # What the newcomer meant: a rerun of some tests into cpu-2.13.0, published; then forgotten. Each
    # publication is recorded, and `harness history` says what the page shows.
    later = partial_rerun_cell(newcomer)
    shutil.move(later, results / "cpu-2.13.0-rerun")
    for step in ([], ["cells", "forget", "r-partial"]):
        if step:
            _says(capsys, step, EXIT_OK)
        _says(capsys, ["merge", "results"], EXIT_OK)
        _says(capsys, ["publish", "site"], EXIT_OK)
        assert main(["history", REGRESSED, "--format", "json"]) == EXIT_OK
        told = {c["column"]: c["points"][-1]["outcome"] for c in json.loads(capsys.readouterr().out)["columns"]}
        from harness.matrix_json import load_matrix

        shown = {row.id: r for row, r in load_matrix(site / "matrix.json").results("cpu-2.13.0")}
        assert told["cpu-2.13.0"] == (shown[REGRESSED].outcome.value if REGRESSED in shown else "no result")
    assert len(_good(results, site)["history"]) == 3, "the rerun and the forget: a publication each"
    assert _good(results, site)["results"] == good["results"], "forgotten: the column is its complete run again"


def _runs(results: Path) -> list[str]:
    return sorted(p.name for p in results.iterdir() if p.is_dir() and not p.name.startswith("."))


def _prune(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["cells", "prune", "--keep", "0"]) == EXIT_OK
    return capsys.readouterr().out


@pytest.mark.slow  # one small native run of the real suites (pytest selects nothing) and a probe of torch
def test_a_newcomers_mistakes_that_need_torch_never_cost_a_good_column(
    newcomer: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, site = Path("results"), Path("site")
    _says(capsys, ["merge", "results"], EXIT_OK)
    _says(capsys, ["publish", "site"], EXIT_OK)
    good = _good(results, site)
    run = ["run", "--native", "--backend", "cpu", "--suites", str(SUITES), "--no-progress", "--quiet"]
    # A parameter's typo only pytest can find: it selects nothing. The run ends `not-started` (exit 2,
    # the closest id named) and is never laid over the column it was meant to update.
    typo = TEST_ID.replace("float16", "flaot16")
    _says(
        capsys,
        [*run, "--cell-id", "cpu-2.13.0", "--test", typo, "--workers", "1"],
        EXIT_USAGE,
        f"--test {typo}: no test ran (pytest selected no test (exit 5)",
        f"(did you mean {TEST_ID}?)",
    )
    (left,) = [p for p in results.iterdir() if p.is_dir() and p.name not in good["results"]]
    assert json.loads((left / "manifest.json").read_text())["status"] == "not-started"
    assert main(["cells"]) == EXIT_OK
    listed = capsys.readouterr().out
    columns = len([c for c in CELLS.iterdir() if (c / "manifest.json").is_file()])
    assert "ran nothing" in listed and listed.count("in use") == columns
    _says(capsys, ["merge", "results"], EXIT_OK)
    # A channel that contradicts the installed build: refused after the probe, before any cell.
    runs = _runs(results)
    _says(capsys, [*run, "--channel", "nightly"], EXIT_USAGE, "--channel nightly: the installed torch")
    assert _runs(results) == runs
    assert _good(results, site) == good, "every good column intact"
