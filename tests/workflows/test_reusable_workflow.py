"""The reusable workflow (matrix.yml) called by another repository's workflow, on that repository's toy
suite (tests/workflows/fixtures/toy-matrix.yml and toy/): three nightly runs, each a new commit of the
toy suite, as a user's repository would see them.

- run 1: everything passes. The build job builds the cpu image once and pushes it to a real registry
  on this host (tests/registry.py); the cell job pulls it by its digest. The cu130 cell is planned, no
  runner picks it up, NO DATA at the deadline; after the run, the cu130 cell arrives late (its artifact
  lands in run 1, as a runner that came back would upload it);
- run 2: `test_regress` and `test_flaky` break, `test_known` breaks too but is marked a known issue
  (xfail with a link): the gate fails on the two regressions and not the known issue; the late cu130
  cell is published now;
- run 3: `test_flaky` passes again, `test_regress_later` breaks; the repository variable
  HARNESS_GATE=warn turns the gate's failure into a warning.

Runs 2 and 3 build and push nothing: the registry holds the image's tag. The column's rerun command
pulls the image by its digest on a second, empty Docker engine and runs the cell there. Then a test's
history over the three runs, from the history branch in the terminal (`harness history`) and on the
published page in Chromium: first bad, last good, fixed, flips within one build.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.matrix_json import load_matrix
from tests.conftest import REPO, in_ci
from tests.registry import Registry, local_registry, second_engine  # noqa: F401 (fixture)
from tests.workflows.actrun import ActRun, FakeGitHub, git, snapshot

FIXTURES = Path(__file__).with_name("fixtures")
CELLS = REPO / "tests" / "data" / "cells"
TOY = "alpha/test_toy.py::"
VARIABLES = {"HARNESS_DEADLINE": "20s"}

RUN_2 = """import pytest


def test_ok():
    pass


def test_regress():
    assert 1 == 2, "broke in run 2"


def test_regress_later():
    pass


def test_flaky():
    assert False, "flaked in run 2"


@pytest.mark.xfail(reason="[known-issue https://github.com/pytorch/pytorch/issues/4242] tracked upstream")
def test_known():
    assert False, "known to fail"
"""
RUN_3 = RUN_2.replace('assert False, "flaked in run 2"', "pass").replace(
    "def test_regress_later():\n    pass", 'def test_regress_later():\n    assert False, "broke in run 3"'
)


def _toy_repository(tree: Path, test_file: str | None) -> None:
    """The caller's repository: its workflow calling matrix.yml, its suites and features file."""
    shutil.copy(FIXTURES / "toy-matrix.yml", tree / ".github" / "workflows" / "toy-matrix.yml")
    shutil.copytree(FIXTURES / "toy", tree / "toy")
    probe = tree / "toy" / "suites" / "_support"
    probe.mkdir()
    shutil.copy(REPO / "suites" / "_support" / "probe.py", probe / "probe.py")
    if test_file is not None:
        (tree / "toy" / "suites" / "alpha" / "test_toy.py").write_text(test_file, encoding="utf-8")


def _late_cell(store: Path) -> None:
    """The cu130 cell of run 1, arriving after run 1 was published (a real cell, restated as `cu130`)."""
    artifact = store / "artifacts" / "cell-cu130"
    cell = artifact / "cu130-20261201T031500Z"
    shutil.copytree(CELLS / "cu130-2.14.1-cpu-only", cell)
    manifest = json.loads((cell / "manifest.json").read_text())
    manifest.update(cell_id="cu130", run_id=f"{manifest['run_id']}-late")
    (cell / "manifest.json").write_text(json.dumps(manifest))
    (artifact / "job-cu130.txt").write_text("status: success\nreason:\n")


@pytest.fixture(scope="module")
def toy(
    tmp_path_factory: pytest.TempPathFactory,
    act: str,
    build_env: dict[str, str],
    local_registry: Registry,  # noqa: F811
    docker_client: object,
) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("act-toy")
    github = FakeGitHub(root)
    runs: list[ActRun] = []
    shared = {**VARIABLES, "HARNESS_REGISTRY": local_registry.host}
    puts: list[int] = []
    try:
        for number, (test_file, variables) in enumerate(
            [(None, shared), (RUN_2, shared), (RUN_3, {**shared, "HARNESS_GATE": "warn"})], start=1
        ):
            source = snapshot(root / f"src-{number}", lambda tree, f=test_file: _toy_repository(tree, f))
            github.push(source)
            runs.append(github.run(source, "toy-matrix.yml", runner_env=build_env, variables=variables))
            puts.append(len(local_registry.requests("PUT")))
            if number == 1:
                _late_cell(github.run_stores / str(github.run_id(1)))
        history = root / "history-checkout"
        git("clone", "-q", "--branch", "matrix-history", str(github.origin), str(history), cwd=root)
        print("\nact: toy runs " + ", ".join(f"{r.seconds:.0f} s" for r in runs))
        yield SimpleNamespace(github=github, runs=runs, history=history, registry=local_registry, puts=puts, root=root)
    finally:
        github.close()
        # the cell jobs pulled the image under the registry's name: that name is this test's (the
        # content is the shared local cpu image, which stays)
        for image in docker_client.images.list():  # type: ignore[attr-defined]
            for name in [*image.tags, *image.attrs.get("RepoDigests", [])]:
                if name.startswith(local_registry.host + "/"):
                    docker_client.images.remove(name)  # type: ignore[attr-defined]


GATE_STEP = "Gate on new regressions against the last published matrix"


def _gate_lines(run: ActRun) -> list[str]:
    return [
        line.strip()
        for e in run.events
        if e.get("jobID") == "merge" and e.get("step") == GATE_STEP
        for line in str(e.get("msg", "")).splitlines()
        if line.startswith(("gate: ", "harness: error:"))
    ]


def test_the_caller_runs_the_reusable_workflow_on_its_own_suite(toy) -> None:
    first = toy.runs[0]
    assert first.returncode == 0, first.digest()
    assert first.jobs() == {
        "plan": "success", "build (cpu)": "success", "cell (cpu)": "success", "merge": "success",
        "deploy": "success",
    }, first.digest()  # fmt: skip
    assert dict(first.step_results("merge"))["Gate on new regressions against the last published matrix"] == "success"
    matrix = load_matrix(first.pages / "matrix.json").to_json()  # split: the index and its parts
    assert [f["id"] for f in matrix["features"]] == ["alpha"] and matrix["features"][0]["title"] == "Toy feature"
    assert sorted(t["id"] for t in matrix["tests"]) == sorted(
        TOY + n for n in ("test_ok", "test_regress", "test_regress_later", "test_flaky", "test_known")
    )
    cu130 = next(c for c in matrix["columns"] if c["id"] == "cu130")
    assert cu130["state"] == "no-data" and cu130["error"] == "no results: no runner picked it up within 20 s"


def test_a_regression_fails_the_gate_and_a_known_issue_does_not(toy) -> None:
    second = toy.runs[1]
    steps = dict(second.step_results("merge"))
    assert steps["Publish"] == steps["Save the history"] == steps["Upload the site for Pages"] == "success"
    assert steps[GATE_STEP] == "failure" and second.jobs()["merge"] == "failure", second.digest()
    assert second.jobs()["deploy"] == "success", "a failing gate must not keep the page from deploying"
    lines = _gate_lines(second)
    fails = sorted(line for line in lines if line.startswith("gate: FAIL"))
    assert fails == [
        f"gate: FAIL cpu: new regression {TOY}test_flaky (passed -> failed)",
        f"gate: FAIL cpu: new regression {TOY}test_regress (passed -> failed)",
    ], lines
    assert "harness: error: gate failed on cpu (2 reason(s))" in lines
    # the late cu130 cell: NO DATA in run 1, so nothing of it is judged; published now
    assert "gate: not judged: cu130: NO DATA in the baseline, so nothing of them can be new" in lines
    diff = json.loads((second.pages / "diff.json").read_text())
    (cpu,) = [c for c in diff["columns"] if c["id"] == "cpu"]
    assert {c["test"] for c in cpu["changes"]["newly_failing"]} == {TOY + "test_regress", TOY + "test_flaky"}
    assert [c["after"] for c in cpu["changes"]["changed"]] == ["xfailed"], "the known issue is no regression"


def test_a_cell_that_arrived_late_is_in_the_next_publication(toy) -> None:
    matrix = json.loads((toy.runs[1].pages / "matrix.json").read_text())
    cu130 = next(c for c in matrix["columns"] if c["id"] == "cu130")
    assert cu130["state"] != "no-data" and cu130["environment"]["torch"] == "2.14.1+cu130"
    collect = [str(e.get("msg", "")) for e in toy.runs[1].events if "arrived late in run 1001" in str(e.get("msg"))]
    assert collect, "the collector did not say where the late cell came from"


def test_a_repository_variable_turns_the_gate_into_a_warning(toy) -> None:
    third = toy.runs[2]
    assert dict(third.step_results("merge"))[GATE_STEP] == "success" and third.jobs()["merge"] == "success"
    lines = _gate_lines(third)
    assert f"gate: FAIL cpu: new regression {TOY}test_regress_later (passed -> failed)" in lines
    warnings = [e for e in third.events if e.get("jobID") == "merge" and e.get("command") == "warning"]
    assert warnings, "no ::warning:: for the regression the gate let through"


def test_history_in_the_terminal_shows_first_bad_last_good_and_flips(toy) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "history", TOY + "test_flaky", "--history", str(toy.history)],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("cpu  ✔✘✔  (oldest → newest; latest: passed)"), lines
    assert lines[2].startswith("  was broken: first bad  run gh1002-1, torch 2.13.0+cpu, ")
    assert lines[3].startswith("           last good  run gh1001-1, torch 2.13.0+cpu, ")
    assert lines[4].startswith("           fixed in   run gh1003-1, torch 2.13.0+cpu, ")
    assert "flaky across runs: 2 flip(s) between good and bad within torch 2.13.0+cpu" in done.stdout
    regress = subprocess.run(
        [sys.executable, "-m", "harness", "history", TOY + "test_regress", "--history", str(toy.history)],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
    )  # fmt: skip
    assert "  broken: first bad  run gh1002-1" in regress.stdout and "changed once: 1 flip(s)" in regress.stdout


def test_the_page_shows_a_tests_history(toy, artifacts_dir: Path) -> None:
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        if in_ci():
            pytest.fail("headless Chromium (/usr/bin/chromium) is required in CI")
        pytest.skip("no /usr/bin/chromium on this host")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{toy.github.api.pages_url}index.html#open=alpha&test={TOY}test_flaky&col=cpu")
        timeline = page.locator("#detail .timeline[data-col='cpu']")
        timeline.wait_for(timeout=30_000)
        assert timeline.locator(".tl-run").evaluate_all("els => els.map(e => e.dataset.code)") == ["p", "f", "p"]
        assert timeline.locator(".tl-first-bad").inner_text().startswith("run gh1002-1, torch 2.13.0+cpu")
        assert timeline.locator(".tl-last-good").inner_text().startswith("run gh1001-1, torch 2.13.0+cpu")
        assert timeline.locator(".tl-flips").inner_text() == "2 flip(s) between good and bad within torch 2.13.0+cpu"
        page.screenshot(path=str(artifacts_dir / "toy-matrix-history.png"))
        browser.close()
    assert errors == []


def _pushed_ref(run: ActRun) -> str:
    refs = [str(e.get("msg", "")).split("image of cell cpu: ", 1)[1].strip() for e in run.events
            if e.get("jobID") == "build" and "image of cell cpu: " in str(e.get("msg", ""))]  # fmt: skip
    assert refs, run.digest()
    return refs[-1]


def test_the_image_is_built_once_pushed_by_digest_and_pulled_by_the_cell(toy) -> None:
    first, second, third = toy.runs
    ref = _pushed_ref(first)
    repository, _, digest = ref.partition("@")
    assert repository == f"{toy.registry.host}/torch-compat/cpu" and digest.startswith("sha256:")
    assert toy.registry.requests("PUT", "torch-compat/cpu/manifests/"), "run 1 pushed the image"
    cell = next(p for p in first.artifact("cell-cpu").iterdir() if p.is_dir())
    manifest = json.loads((cell / "manifest.json").read_text())
    assert manifest["image"]["ref"] == ref and manifest["image"]["digest"] == ref, "the cell ran the pushed bytes"
    assert toy.registry.requests("GET", f"torch-compat/cpu/manifests/{digest}"), "the cell pulled it by digest"
    for later in (second, third):
        assert _pushed_ref(later) == ref, "an unchanged image keeps its digest"
        said = [str(e.get("msg", "")) for e in later.events if e.get("jobID") == "build"]
        assert any("is in the registry already" in m and "not built, not pushed" in m for m in said), later.digest()
    assert toy.puts[0] > 0 and toy.puts[1] == toy.puts[2] == toy.puts[0], "a later run pushed something"


def test_the_columns_rerun_command_pulls_the_image_on_another_engine_and_runs(toy) -> None:
    matrix = json.loads((toy.runs[2].pages / "matrix.json").read_text())
    cpu = next(c for c in matrix["columns"] if c["id"] == "cpu")
    ref = _pushed_ref(toy.runs[0])
    command = cpu["reproduce"]
    assert command == (
        f"harness run --backend cpu --image {ref} --cell-id cpu --suites toy/suites --features toy/features.toml"
    )
    checkout = toy.root / "src-3"
    with second_engine(Path(f"/tmp/tc-engine-{os.getpid()}")) as host:
        argv = shlex.split(command)
        done = subprocess.run(
            [sys.executable, "-m", "harness", *argv[1:], "--no-progress", "--quiet"],
            cwd=checkout, env={**os.environ, "PYTHONPATH": str(REPO), "DOCKER_HOST": host},
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        images = subprocess.run(
            ["docker", "-H", host, "images", "--digests", "--format", "{{.Repository}}@{{.Digest}}"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout.split()  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]  # run 3's toy suite has failing tests: exit 1, results kept
    assert "tests failed" in done.stderr or "failed" in done.stderr
    assert images == [ref], "the empty engine pulled the image by its digest, and nothing else"
    (cell,) = [p for p in (checkout / "results").iterdir() if p.is_dir()]
    manifest = json.loads((cell / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["image"]["digest"] == ref


def test_each_run_appends_to_the_history_branch_and_rewrites_nothing(toy) -> None:
    log = toy.github.branch_log("matrix-history")
    assert len(log) == 3, "one commit per published run"
    for older, newer, run in zip(log[2:0:-1], log[1::-1], ("gh1002-1", "gh1003-1"), strict=True):
        before, after = toy.github.files_at(older), toy.github.files_at(newer)
        added = sorted(set(after) - set(before))
        assert [n for n in added if not n.startswith("tests/ids-")] == [
            next(n for n in added if n.endswith(f"-{run}.json") and "/" not in n),
            next(n for n in added if n.endswith(f"-{run}.json") and n.startswith("tests/")),
        ], added
        for name, content in before.items():
            if name != "index.json":  # derived from the files, rewritten each run
                assert after[name] == content, f"history file {name} was rewritten"
    index = json.loads(toy.github.files_at(log[0])["index.json"])
    assert [r["run"] for r in index["runs"]] == ["gh1001-1", "gh1002-1", "gh1003-1"]
    trend = json.loads(
        (toy.runs[2].pages / "index.html").read_text().split('id="data">', 1)[1].split("</script>", 1)[0]
    )["trend"]
    assert len(trend["cpu"]) == 3, "the page's trend holds the three runs"
