"""compat-matrix.yml and the pull request workflows, unchanged, end to end under act, through the reusable
matrix.yml: plan -> the cpu cells in Docker -> the collector (the cells as they arrive, the GPU cells
NO DATA at the deadline) -> merge -> the published site, the job summary and the history branch; then
a pull request: pr-matrix.yml compares its CPU column with the published matrix and pr-comment.yml
(workflow_run) posts the comment, then updates it in place after a second push.

The nightly is a dispatch for two torch versions, `torch: 2.13.0,2.14.1`: a cell per build and
version. 2.13.0 is the local wheelhouse's torch and runs; 2.14.1 cannot be built offline, so its job
says why in the run's summary and its column is NO DATA with that reason. No self-hosted runner is
online: the GPU cells are planned, never picked up, and published as NO DATA ("no runner picked it up
within 20 s", the repository variable HARNESS_DEADLINE). The cells build their own images here
(`HARNESS_REGISTRY=none`); build once and pull by digest is test_reusable_workflow.py's, with a real
registry, as are three runs of history. GitHub's API (jobs, artifacts, comments) and Pages are the
stand-in of github_standin.py, which records every request.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.matrix_json import load_matrix
from harness.plan import make_plan
from harness.publish.render.prcomment import MARKER
from tests.workflows.actrun import OWNER, REPOSITORY_URL, TOKEN, FakeGitHub, snapshot

TWO_VERSIONS = "2.13.0,2.14.1"
# The cells build their own images here (registry none): the registry path is test_reusable_workflow.py's.
VARIABLES = {"HARNESS_DEADLINE": "20s", "HARNESS_TORCH": "2.13.0", "HARNESS_REGISTRY": "none"}
PR = 7
BROKEN_TEST = "linalg/test_pr_change.py::test_broken_by_this_pull_request"


def _planned(torch: str) -> list[str]:
    return [c.cell_id for c in make_plan(None, [torch]).cells]


GPU = [c for c in _planned("2.13.0") if c != "cpu"]


def _pull_request(dest: Path, failing: bool) -> Path:
    def edit(tree: Path) -> None:
        if failing:
            (tree / "suites" / "linalg" / "test_pr_change.py").write_text(
                "def test_broken_by_this_pull_request():\n    assert 1 + 1 == 3, 'this pull request broke it'\n"
            )

    return snapshot(dest, edit)


def _pr_payload(head: str) -> dict[str, Any]:
    return {
        "number": PR,
        "pull_request": {"number": PR, "head": {"sha": head, "ref": "feature"}, "base": {"ref": "main"}},
    }


def _comment_payload(run_id: int, head: str) -> dict[str, Any]:
    return {"workflow_run": {"id": run_id, "event": "pull_request", "head_sha": head, "conclusion": "success"}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, act: str, build_env: dict[str, str]) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("act-compat-matrix")
    github = FakeGitHub(root)
    try:
        source = snapshot(root / "src")
        commit = github.push(source)
        first = github.run(
            source, "compat-matrix.yml", inputs={"torch": TWO_VERSIONS}, runner_env=build_env, variables=VARIABLES
        )
        history_after_first = github.branch_log("matrix-history")
        # A pull request: a first push adds a failing test, a second push takes it out again.
        pushes = []
        for number, failing in ((1, True), (2, False)):
            head_tree = _pull_request(root / f"pr-{number}", failing)
            head = github.push_ref(head_tree, f"refs/pull/{PR}/head")
            if number == 1:
                github.api.open_pull_request(PR, head)
            github.api.pulls[PR].head_sha = head
            matrix = github.run(
                head_tree, "pr-matrix.yml", event="pull_request", payload=_pr_payload(head),
                runner_env=build_env, variables=VARIABLES,
            )  # fmt: skip
            matrix_run_id = github.run_id(github.runs)
            calls_before = len(github.api.calls)
            comment = github.run(
                source, "pr-comment.yml", event="workflow_run", payload=_comment_payload(matrix_run_id, head),
                runner_env=build_env,
            )  # fmt: skip
            pushes.append(
                SimpleNamespace(head=head, matrix=matrix, comment=comment, calls=github.api.calls[calls_before:])
            )
        print(
            f"\nact: the nightly {first.seconds:.0f} s; pull request: "
            + ", ".join(f"matrix {p.matrix.seconds:.0f} s + comment {p.comment.seconds:.0f} s" for p in pushes)
        )
        yield SimpleNamespace(
            github=github, commit=commit, first=first, history_after_first=history_after_first, pushes=pushes
        )
    finally:
        github.close()


def load(path: Path) -> Any:
    assert path.is_file(), f"{path} was not published"
    return json.loads(path.read_text(encoding="utf-8"))


def columns(matrix: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in matrix["columns"]}


def page_data(site: Path) -> dict[str, Any]:
    page = (site / "index.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))


CPU = "cpu-2.13.0"


def test_the_nightly_run_succeeds_job_by_job(runs) -> None:
    run = runs.first
    # one failed leg (the build of torch 2.14.1) marks the run failed, as on GitHub; everything else went through
    assert run.returncode == 1, run.digest()
    jobs = run.jobs()
    assert jobs == {
        "plan": "success", f"cell ({CPU})": "success", "cell (cpu-2.14.1)": "failure", "merge": "success",
        "deploy": "success",
    }, run.digest()  # fmt: skip
    merge_steps = dict(run.step_results("merge"))
    assert merge_steps["Collect the cells as they arrive"] == merge_steps["Publish"] == "success"
    assert merge_steps["Save the history"] == "success"
    assert merge_steps["Gate on new regressions against the last published matrix"] == "success"


def test_the_collector_waited_for_the_cpu_cells_and_gave_up_on_the_gpu_ones_at_the_deadline(runs) -> None:
    run = runs.first
    plan = json.loads(run.output("plan", "matrix") or "{}")
    assert [c["cell_id"] for c in plan["include"]] == _planned(TWO_VERSIONS)
    assert [(c["cell_id"], c["torch"]) for c in plan["include"] if c["backend"] == "cpu"] == [
        (CPU, "2.13.0"), ("cpu-2.14.1", "2.14.1"),
    ]  # fmt: skip
    assert sorted(p.name for p in (run.github / "artifacts").iterdir()) == [
        f"cell-{CPU}", "cell-cpu-2.14.1", "github-pages", "matrix",
    ]  # fmt: skip
    cell = next(p for p in run.artifact(f"cell-{CPU}").iterdir() if p.is_dir())
    manifest = load(cell / "manifest.json")
    assert cell.name.startswith(f"{CPU}-") and manifest["cell_id"] == CPU and manifest["backend"] == "cpu"
    assert manifest["status"] == "completed", manifest.get("error")
    assert manifest["environment"]["torch"]["version"] == "2.13.0+cpu"
    assert manifest["mode"] == "container" and manifest["image"]["ref"].startswith("torch-compat/cpu:")
    assert manifest["suite_sha"] == runs.commit, "the cell ran other suites than the checked-out commit's"
    assert manifest["github"]["run_id"] == "1001" and manifest["github"]["job"] == "cell"
    assert (run.artifact(f"cell-{CPU}") / f"job-{CPU}.txt").read_text().startswith("status: success")
    assert not any(p.is_dir() for p in run.artifact("cell-cpu-2.14.1").iterdir()), "a failed build has no cell"
    # the collector asked GitHub's API (the stand-in) for the run's jobs and artifacts, with the run's token
    listed = runs.github.api.api_calls("GET", "/actions/runs/1001/")
    assert {c.path.rsplit("/", 1)[-1] for c in listed} == {"jobs", "artifacts"}
    assert {c.authorization for c in listed} == {f"Bearer {TOKEN}"}
    assert runs.github.api.blob_with_token == [], "the token went along to the artifact's blob storage"


def test_the_job_summary_shows_the_matrix_with_no_data_gpu_columns_and_links_the_page(runs) -> None:
    summary = runs.first.summary("merge")
    assert summary.startswith("## PyTorch compatibility matrix"), summary[:300]
    header = summary.splitlines()[2]
    planned = _planned(TWO_VERSIONS)
    for column in planned:
        assert f"`{column}`" in header, header
    rows = [line for line in summary.splitlines() if line.startswith("| **") and "(`" in line]
    assert len(rows) == len(load(runs.first.pages / "matrix.json")["features"])
    gpu = len([c for c in planned if not c.startswith("cpu-")])
    assert summary.count("no runner picked it up within 20 s") == gpu
    assert summary.rstrip().endswith(f"Full matrix: {runs.github.api.pages_url}")
    # the failed build says why, in one line, in the run's summary
    why = runs.first.summary("cell")
    assert why.startswith("**cell cpu-2.14.1 has no image, so no results:** harness: error: "), why
    assert "torch==2.14.1" in why and why.count("\n") == 2, why


def test_the_published_site_has_the_page_the_json_the_badges_and_the_history(runs) -> None:
    site = runs.first.pages
    assert load(site / "matrix.json")["parts"], "published split: the index names its parts"
    matrix = load_matrix(site / "matrix.json").to_json()  # the index and its parts, checked
    cols = columns(matrix)
    shipped = [i for i, c in cols.items() if c["state"] != "not-shipped"]
    assert sorted(shipped) == sorted(_planned(TWO_VERSIONS)), (
        "a build a release does not ship is a `not shipped` column"
    )
    assert cols[CPU]["state"] != "no-data" and cols[CPU]["environment"]["torch"] == "2.13.0+cpu"
    assert sum(cols[CPU]["counts"].values()) > 50
    assert cols["cpu-2.14.1"]["error"].startswith("no results: its job ended (failure) without a cell: harness: error:")
    for gpu in (c for c in shipped if not c.startswith("cpu-")):
        assert (
            cols[gpu]["state"] == "no-data" and cols[gpu]["error"] == "no results: no runner picked it up within 20 s"
        )
    assert {f["id"] for f in matrix["features"]} == set(matrix["cells"])
    assert (site / "matrix.json").is_file() and not (site / "diff.json").exists(), "nothing to diff against yet"
    data = page_data(site)
    assert [c["id"] for c in data["columns"]] == list(cols)
    assert data["test_count"] == len(matrix["tests"]) and data["parts"], "a small site keeps its tests in the page"
    badges = sorted(p.name for p in (site / "badges").iterdir())
    assert badges == sorted(f"{c}.svg" for c in [*shipped, "matrix"])
    assert "no data" in (site / "badges" / "cpu-2.14.1.svg").read_text(encoding="utf-8")
    assert "features" in (site / "badges" / f"{CPU}.svg").read_text(encoding="utf-8")
    history = sorted(p.name for p in (site / "history").iterdir())
    assert history[-2:] == ["index.json", "tests"] and len(history) == 3 and history[0].endswith("-gh1001-1.json")
    assert not (site / "history" / ".git").exists(), "the history worktree's .git went into the Pages artifact"


def test_the_history_branch_got_one_commit_with_this_run(runs) -> None:
    (commit,) = runs.history_after_first
    files = runs.github.files_at(commit)
    site = runs.first.pages / "history"
    assert sorted(files) == sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    entry = json.loads(next(v for k, v in files.items() if k.endswith("-gh1001-1.json") and "/" not in k))
    assert entry["run"] == "gh1001-1" and CPU in [c["id"] for c in entry["columns"]]
    results = json.loads(files[entry["results"]])
    assert list(results["columns"]) == [CPU], "per-test results are kept for the columns with data"


def test_the_runs_pushed_only_the_history_branch(runs) -> None:
    assert runs.github.branch_log("main") == [runs.commit]
    assert all(name.endswith(".json") for name in runs.github.files_at("matrix-history"))
    assert REPOSITORY_URL.endswith(f"{OWNER}/{OWNER}")


def test_a_pull_request_is_compared_with_the_published_matrix(runs) -> None:
    push = runs.pushes[0]
    run = push.matrix
    jobs = run.jobs()
    assert jobs["plan"] == jobs["cell (cpu)"] == "success", run.digest()
    assert "deploy" not in jobs or jobs["deploy"] == "skipped", "a pull request publishes nothing"
    steps = dict(run.step_results("merge"))
    assert steps["Upload the comment for pr-comment.yml"] == "success"
    assert steps["Gate on new regressions against the last published matrix"] == "failure", (
        "the pull request's new failing test is a regression against the published matrix"
    )
    comment = (run.artifact("pr-comment") / "comment.md").read_text(encoding="utf-8")
    assert (run.artifact("pr-comment") / "pr.txt").read_text().strip() == str(PR)
    assert (run.artifact("pr-comment") / "head.txt").read_text().strip() == push.head
    assert comment.startswith(MARKER + "\n## PyTorch compatibility matrix: this pull request")
    assert f"- `{BROKEN_TEST}` (absent → failed): AssertionError: this pull request broke it" in comment
    rows = [line for line in comment.splitlines() if line.startswith("| ") and " | `" in line]
    assert "| this pull request (torch 2.13.0+cpu) |" in rows[0]
    for gpu in GPU:  # the GPU columns are the published run's, and say so
        assert any(f"`{gpu}-2.13.0`" in r and "_the published run_" in r for r in rows), (gpu, rows)
    assert run.summary("merge") == comment, "the job summary carries the same text"


def test_the_comment_is_posted_from_workflow_run_then_updated_in_place(runs) -> None:
    first, second = runs.pushes
    for push in (first, second):
        assert push.comment.returncode == 0 and push.comment.jobs() == {"comment": "success"}, push.comment.digest()
    shape = [(c.method, c.path.split(f"/repos/{OWNER}/{OWNER}/")[-1]) for c in first.calls if "/repos/" in c.path]
    assert shape == [("GET", f"pulls/{PR}"), ("GET", f"issues/{PR}/comments"), ("POST", f"issues/{PR}/comments")]
    (ours,) = runs.github.api.pulls[PR].comments
    update = [(c.method, c.path.rsplit("/", 2)[-2:]) for c in second.calls if "/repos/" in c.path]
    assert update[-1] == ("PATCH", ["comments", str(ours["id"])]) and not any(m == "POST" for m, _ in update)
    assert ours["body"] == (second.matrix.artifact("pr-comment") / "comment.md").read_text(encoding="utf-8")
    assert "No new regressions." in ours["body"] and BROKEN_TEST not in ours["body"]
    assert {c.authorization for c in first.calls + second.calls if "/repos/" in c.path} == {f"Bearer {TOKEN}"}
    assert runs.github.api.unexpected == [], runs.github.api.unexpected
    # it posted what the pull request's run left, on the default branch's harness, never the pull request's code
    checkouts = [str(e["msg"]) for e in second.comment.events if str(e.get("msg", "")).startswith("checked out ")]
    assert checkouts and all(f"@{runs.commit[:7]} " in line for line in checkouts), checkouts
