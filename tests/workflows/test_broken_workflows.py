"""A broken change to the reusable matrix.yml fails under act, with a message that says where.

Each test applies one plausible mistake to a temporary copy of the workflow (actionlint accepts
both: it cannot know what a `run` step writes to $GITHUB_OUTPUT, nor which names were uploaded)
and runs compat-matrix.yml as test_compat_matrix.py does. The suites are cut to one feature to keep
it short.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.workflows.actrun import ActRun, FakeGitHub, snapshot

WORKFLOW = Path(".github/workflows/matrix.yml")
VARIABLES = {"HARNESS_DEADLINE": "20s", "HARNESS_REGISTRY": "none"}


def broken_run(root: Path, build_env: dict[str, str], old: str, new: str) -> ActRun:
    def edit(tree: Path) -> None:
        path = tree / WORKFLOW
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} is not in {WORKFLOW} once; update this test"
        path.write_text(text.replace(old, new), encoding="utf-8")
        for feature in (tree / "suites").iterdir():  # one feature is enough to make a cell
            if feature.is_dir() and feature.name not in ("hub", "_support", "expectations"):
                shutil.rmtree(feature)

    github = FakeGitHub(root)
    try:
        source = snapshot(root / "src", edit)
        github.push(source)
        actionlint = shutil.which("actionlint")
        if actionlint:
            linted = subprocess.run([actionlint, str(source / WORKFLOW)], capture_output=True, text=True, check=False)
            assert linted.returncode == 0, f"actionlint already catches this one: {linted.stdout}"
        run = github.run(
            source, "compat-matrix.yml", inputs={"torch": "2.13.0"}, runner_env=build_env, variables=VARIABLES
        )
    finally:
        github.close()
    print(f"\nact: the broken run took {run.seconds:.0f} s; what its author sees:\n{run.digest()}")
    assert github.branch_log("matrix-history") == [], "a broken run must not add to the history"
    assert not run.pages.exists(), "a broken run must not deploy a page"
    return run


def test_a_renamed_cell_artifact_fails_the_merge_instead_of_publishing_an_empty_matrix(
    tmp_path: Path, act: str, build_env: dict[str, str]
) -> None:
    run = broken_run(tmp_path, build_env, "name: cell-${{ matrix.cell_id }}", "name: cells-${{ matrix.cell_id }}")
    assert run.returncode != 0
    assert run.jobs()["cell (cpu)"] == "success" and run.jobs()["merge"] == "failure", run.digest()
    assert (run.github / "artifacts" / "cells-cpu").is_dir()
    digest = run.digest()
    assert "::error::no cell was downloaded" in digest, digest
    collected = [str(e.get("msg", "")) for e in run.events if "collect: cpu:" in str(e.get("msg", ""))]
    assert collected and "its job ended (success) without uploading cell-cpu" in collected[0], collected
    assert "deploy" not in run.jobs() or run.jobs()["deploy"] != "success"


def test_a_wrong_output_name_fails_the_run_before_any_cell(tmp_path: Path, act: str, build_env: dict[str, str]) -> None:
    run = broken_run(
        tmp_path, build_env, "matrix: ${{ steps.plan.outputs.matrix }}", "matrix: ${{ steps.plan.outputs.cells }}"
    )
    assert run.returncode != 0
    jobs = run.jobs()
    assert jobs["plan"] == "success", run.digest()
    assert not any(job.startswith("cell") for job in jobs), "a cell ran without a plan"
    assert "::error::the plan job gave no matrix (needs.plan.outputs.matrix is empty)" in run.digest()
    assert not (run.github / "artifacts").exists() or not any((run.github / "artifacts").iterdir())
    assert jobs.get("deploy") != "success", run.digest()
