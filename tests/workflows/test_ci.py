"""ci.yml, unchanged, under act: the jobs that need no GitHub-only service, `lint` and `cpu-cell`.

Left out: `tests`, which runs `.ci/run` (this very test suite) in a privileged `python:3.11-bookworm`
job container that only a registry can provide.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.workflows.actrun import FakeGitHub, snapshot


@pytest.fixture(scope="module")
def ci(tmp_path_factory: pytest.TempPathFactory, act: str, build_env: dict[str, str]) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("act-ci")
    github = FakeGitHub(root)
    source = snapshot(root / "src")
    github.push(source)
    lint = github.run(source, "ci.yml", event="push", job="lint", runner_env=build_env)
    cell = github.run(source, "ci.yml", event="push", job="cpu-cell", runner_env=build_env)
    print(f"\nact: ci.yml lint took {lint.seconds:.0f} s, cpu-cell {cell.seconds:.0f} s")
    return SimpleNamespace(lint=lint, cell=cell)


def test_lint_passes_on_this_tree(ci) -> None:
    assert ci.lint.returncode == 0, ci.lint.digest()
    assert ci.lint.jobs() == {"lint": "success"}, ci.lint.digest()
    steps = dict(ci.lint.step_results("lint"))
    assert steps["ruff"] == steps["hadolint"] == steps["actionlint"] == "success", steps


def test_the_cpu_cell_runs_in_docker_and_keeps_the_cell_and_the_page(ci) -> None:
    run = ci.cell
    assert run.returncode == 0, run.digest()
    assert run.jobs() == {"cpu-cell": "success"}, run.digest()
    (cell,) = run.artifact("cell-cpu").iterdir()
    manifest = json.loads((cell / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["cell_id"] == "cpu" and manifest["mode"] == "container" and manifest["status"] == "completed"
    page = run.artifact("matrix-page")
    matrix = json.loads((page / "matrix.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["state"] != "no-data") for c in matrix["columns"]] == [("cpu", True)]
    assert (page / "index.html").stat().st_size > 10_000
    assert sorted(p.name for p in (page / "badges").iterdir()) == ["cpu.svg", "matrix.svg"]
    assert (page / "history" / "index.json").is_file()
