"""compat-matrix.yml, unchanged, end to end under act: plan -> the cpu cell in Docker -> merge with NO DATA
GPU columns -> the published site, the job summary and the history branch; then a second run, for two
torch versions, that appends to the history without rewriting it.

Run 1 is the nightly (no input). Run 2 is a dispatch with `torch: 2.13.0,2.14.1`: a cell per backend and
version; 2.13.0 is the local wheelhouse's torch and runs, 2.14.1 cannot be built offline, so its job says
why in the run's summary and its column is NO DATA. No self-hosted runner is online: the GPU cells are
planned, send nothing, and are NO DATA columns through `harness merge --expect`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.registry import load_registry
from tests.workflows.actrun import OWNER, REPOSITORY_URL, FakeGitHub, snapshot

GPU = [b.id for b in load_registry().values() if b.needs_device]
PAGE_URL = f"https://{OWNER}.github.io/{OWNER}/"
TWO_VERSIONS = "2.13.0,2.14.1"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, act: str, build_env: dict[str, str]) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("act-compat-matrix")
    github = FakeGitHub(root)
    source = snapshot(root / "src")
    commit = github.push(source)
    first = github.run(source, "compat-matrix.yml", runner_env=build_env)
    history_after_first = github.branch_log("matrix-history")
    second = github.run(source, "compat-matrix.yml", inputs={"torch": TWO_VERSIONS}, runner_env=build_env)
    print(f"\nact: run 1 took {first.seconds:.0f} s, run 2 {second.seconds:.0f} s")
    return SimpleNamespace(
        github=github, commit=commit, first=first, second=second, history_after_first=history_after_first
    )


def load(path: Path) -> Any:
    assert path.is_file(), f"{path} was not published"
    return json.loads(path.read_text(encoding="utf-8"))


def columns(matrix: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in matrix["columns"]}


def test_the_nightly_run_succeeds_job_by_job(runs) -> None:
    run = runs.first
    assert run.returncode == 0, run.digest()
    assert run.jobs() == {"plan": "success", "cell (cpu)": "success", "merge": "success", "deploy": "success"}, (
        run.digest()
    )
    merge_steps = dict(run.step_results("merge"))
    assert merge_steps["Merge and publish"] == "success" and merge_steps["Save the history"] == "success"


def test_the_plan_fans_out_one_cell_per_backend_and_only_the_hosted_one_sends_results(runs) -> None:
    run = runs.first
    plan = json.loads(run.output("plan", "matrix") or "{}")
    assert [c["cell_id"] for c in plan["include"]] == list(load_registry())
    assert sorted(p.name for p in (run.github / "artifacts").iterdir()) == ["cell-cpu", "github-pages", "matrix"]
    (cell,) = run.artifact("cell-cpu").iterdir()
    manifest = load(cell / "manifest.json")
    assert cell.name.startswith("cpu-") and manifest["cell_id"] == "cpu" and manifest["backend"] == "cpu"
    assert manifest["status"] == "completed", manifest.get("error")
    assert manifest["environment"]["torch"]["version"] == "2.13.0+cpu"
    assert manifest["mode"] == "container" and manifest["image"]["ref"].startswith("torch-compat/cpu:")
    assert manifest["suite_sha"] == runs.commit, "the cell ran other suites than the checked-out commit's"
    assert manifest["github"]["run_id"] == "1001" and manifest["github"]["job"] == "cell"


def test_the_job_summary_shows_the_matrix_with_no_data_gpu_columns_and_links_the_page(runs) -> None:
    summary = runs.first.summary("merge")
    assert summary.startswith("## PyTorch compatibility matrix"), summary[:300]
    header = summary.splitlines()[2]
    for column in ["cpu", *GPU]:
        assert f"`{column}`" in header, header
    rows = [line for line in summary.splitlines() if line.startswith("| **") and "(`" in line]
    assert len(rows) == len(load(runs.first.pages / "matrix.json")["features"])
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert "NO DATA" not in cells[2], f"the cpu column has no data: {row}"
        assert all(c == "❔ NO DATA" for c in cells[3:]), f"a GPU column is not NO DATA: {row}"
    assert summary.count("no results were uploaded for this planned cell") == len(GPU)
    assert summary.rstrip().endswith(f"Full matrix: {PAGE_URL}")


def test_the_published_site_has_the_page_the_json_the_badges_and_the_history(runs) -> None:
    site = runs.first.pages
    matrix = load(site / "matrix.json")
    cols = columns(matrix)
    assert list(cols) == ["cpu", *GPU]
    assert cols["cpu"]["state"] != "no-data" and cols["cpu"]["backend"] == "cpu"
    assert sum(cols["cpu"]["counts"].values()) > 50
    for gpu in GPU:
        assert cols[gpu]["state"] == "no-data" and cols[gpu]["backend"] == gpu
    assert {f["id"] for f in matrix["features"]} == set(matrix["cells"])
    assert all("cpu" in per_column for per_column in matrix["cells"].values())

    page = (site / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))
    assert [c["id"] for c in data["columns"]] == ["cpu", *GPU]
    assert len(data["tests"]) == len(matrix["tests"])
    assert sorted(p.name for p in (site / "badges").iterdir()) == sorted(f"{c}.svg" for c in ["cpu", *GPU, "matrix"])
    for gpu in GPU:
        assert "no data" in (site / "badges" / f"{gpu}.svg").read_text(encoding="utf-8")
    assert "features" in (site / "badges" / "cpu.svg").read_text(encoding="utf-8")
    history = sorted(p.name for p in (site / "history").iterdir())
    assert history[-1] == "index.json" and len(history) == 2 and history[0].endswith("-gh1001-1.json"), history
    assert not (site / "history" / ".git").exists(), "the history worktree's .git went into the Pages artifact"


def test_the_history_branch_got_one_commit_with_this_run(runs) -> None:
    (commit,) = runs.history_after_first
    files = runs.github.files_at(commit)
    assert sorted(files) == sorted(p.name for p in (runs.first.pages / "history").iterdir())
    entry = json.loads(next(v for k, v in files.items() if k.endswith("-gh1001-1.json")))
    assert entry["run"] == "gh1001-1" and [c["id"] for c in entry["columns"]] == ["cpu", *GPU]


def test_a_second_run_for_two_torch_versions_makes_a_cell_per_backend_and_version(runs) -> None:
    run = runs.second
    # one failed leg marks the run failed, as on GitHub; everything else went through
    assert run.returncode == 1, run.digest()
    jobs = run.jobs()
    assert jobs["plan"] == jobs["merge"] == jobs["deploy"] == jobs["cell (cpu-2.13.0)"] == "success", run.digest()
    assert jobs["cell (cpu-2.14.1)"] == "failure", "torch 2.14.1 is not in the offline wheelhouse: its build fails"
    expected = [f"{b}-{v}" for b in load_registry() for v in TWO_VERSIONS.split(",")]
    plan = json.loads(run.output("plan", "matrix") or "{}")
    assert [(c["cell_id"], c["torch"]) for c in plan["include"]] == [(i, i.rsplit("-", 1)[1]) for i in expected]
    assert sorted(p.name for p in (run.github / "artifacts").iterdir()) == ["cell-cpu-2.13.0", "github-pages", "matrix"]

    cols = columns(load(run.pages / "matrix.json"))
    assert list(cols) == expected
    assert cols["cpu-2.13.0"]["state"] != "no-data" and cols["cpu-2.13.0"]["environment"]["torch"] == "2.13.0+cpu"
    assert all(cols[i]["state"] == "no-data" for i in expected if i != "cpu-2.13.0")
    # the failed build says why, in one line, in the run's summary
    why = run.summary("cell")
    assert why.startswith("**cell cpu-2.14.1 has no image, so no results:** harness: error: "), why
    assert "torch==2.14.1" in why, why
    assert why.count("\n") == 2, why


def test_the_second_run_appends_to_the_history_without_rewriting_it(runs) -> None:
    log = runs.github.branch_log("matrix-history")
    assert len(log) == 2 and log[1] == runs.history_after_first[0], "the history branch was rewritten"
    before, after = runs.github.files_at(log[1]), runs.github.files_at(log[0])
    added = sorted(set(after) - set(before))
    assert len(added) == 1 and added[0].endswith("-gh1002-1.json"), added
    for name, content in before.items():
        if name != "index.json":  # the index is derived from the files and rewritten each run
            assert after[name] == content, f"history file {name} was rewritten"
    index = json.loads(after["index.json"])
    assert json.dumps(index).count("gh100") >= 2, index
    site_history = sorted(p.name for p in (runs.second.pages / "history").iterdir())
    assert site_history == sorted(after), "the published history/ is not the branch's"
    page = (runs.second.pages / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))
    # the trend pairs columns by id: run 1's `cpu`, run 2's `cpu-2.13.0` (a dispatch of several versions)
    assert [len(data["trend"].get(c, [])) for c in ("cpu", "cpu-2.13.0")] == [1, 1], data["trend"].keys()


def test_the_runs_pushed_only_the_history_branch(runs) -> None:
    assert runs.github.branch_log("main") == [runs.commit]
    refs = runs.github.files_at("matrix-history")
    assert all(name.endswith(".json") for name in refs)
    assert REPOSITORY_URL.endswith(f"{OWNER}/{OWNER}")
