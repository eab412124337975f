from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.errors import RegistryError, UsageError
from harness.plan import github_matrix, plan_cells
from harness.registry import load_registry


def test_github_matrix_matches_golden(golden, capsys) -> None:
    assert main(["plan", "--format", "github"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "the matrix must be one line for $GITHUB_OUTPUT"
    golden("plan-github.json", out)


def test_every_registry_backend_is_planned_with_its_labels() -> None:
    registry = load_registry()
    include = json.loads(github_matrix(plan_cells()))["include"]
    assert [cell["backend"] for cell in include] == list(registry)
    for cell in include:
        backend = registry[cell["backend"]]
        assert cell["cell_id"] == backend.id
        assert cell["runner_labels"] == list(backend.runner_labels)
        assert cell["display_name"] == backend.display_name
        assert cell["self_hosted"] == ("self-hosted" in backend.runner_labels)
        assert cell["image"] == f"torch-compat/{backend.id}"
    gpu = [c for c in include if registry[c["backend"]].needs_device]
    assert gpu and all(c["self_hosted"] for c in gpu), "GPU cells must run on self-hosted runners"


def test_select_backends_and_pin_torch(capsys) -> None:
    assert main(["plan", "--format", "github", "--backend", "cpu", "--backend", "rocm", "--torch", "2.13.0"]) == 0
    include = json.loads(capsys.readouterr().out)["include"]
    assert [c["cell_id"] for c in include] == ["cpu", "rocm"]
    assert {c["image"] for c in include} == {"torch-compat/cpu:torch-2.13.0", "torch-compat/rocm:torch-2.13.0"}
    assert {c["torch"] for c in include} == {"2.13.0"}


def test_table_lists_every_backend(capsys) -> None:
    assert main(["plan"]) == 0
    out = capsys.readouterr().out
    for backend in load_registry().values():
        assert backend.display_name in out and ",".join(backend.runner_labels) in out


def test_bad_inputs_are_refused(capsys) -> None:
    with pytest.raises(UsageError):
        plan_cells(torch="latest; rm -rf /")
    with pytest.raises(RegistryError):
        plan_cells(["nope"])
    assert main(["plan", "--torch", "$(boom)"]) == 2
    assert "not a version" in capsys.readouterr().err
