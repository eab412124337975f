from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import InputError, RegistryError, UsageError
from harness.plan import (
    PlannedCell,
    cell_id_for,
    github_matrix,
    is_self_hosted,
    make_plan,
    parse_runner_labels,
    plan_cells,
    plan_json,
    read_plan,
    relabel,
)
from harness.registry import load_registry


def test_github_matrix_matches_golden(golden, capsys) -> None:
    assert main(["plan", "--format", "github"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "the matrix must be one line for $GITHUB_OUTPUT"
    golden("plan-github.json", out)


def test_the_default_plan_is_every_build_of_the_current_release() -> None:
    registry = load_registry()
    include = json.loads(github_matrix(plan_cells()))["include"]
    current = registry.current
    assert [cell["backend"] for cell in include] == [b.id for b in registry.select(None, current)]
    assert {cell["torch"] for cell in include} == {current.latest}
    for cell in include:
        backend = registry[cell["backend"]]
        assert cell["cell_id"] == backend.id
        assert cell["runner_labels"] == list(backend.runner_labels)
        assert cell["display_name"] == backend.display_name
        assert cell["self_hosted"] == is_self_hosted(backend.runner_labels)
        assert cell["image"] == f"torch-compat/{backend.id}:torch-{current.latest}"
        assert cell["release"] == current.id and cell["status"] == current.status(backend.id)
    gpu = [c for c in include if registry[c["backend"]].needs_device]
    assert gpu and all(c["self_hosted"] for c in gpu), "GPU cells must run on self-hosted runners"


def test_select_backends_and_pin_torch(capsys) -> None:
    assert main(["plan", "--format", "github", "--backend", "cpu", "--backend", "rocm7.2", "--torch", "2.13.0"]) == 0
    include = json.loads(capsys.readouterr().out)["include"]
    assert [c["cell_id"] for c in include] == ["cpu", "rocm7.2"], "one version keeps the backend id as the cell id"
    assert {c["image"] for c in include} == {"torch-compat/cpu:torch-2.13.0", "torch-compat/rocm7.2:torch-2.13.0"}
    assert {c["torch"] for c in include} == {"2.13.0"}


def test_several_torch_versions_make_a_cell_per_backend_and_version(golden, capsys) -> None:
    args = ["plan", "--format", "github", "--backend", "cpu", "--backend", "cu130", "--torch", "2.13.0,2.14.1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    golden("plan-github-torch-versions.json", out)
    include = json.loads(out)["include"]
    assert [(c["cell_id"], c["backend"], c["torch"], c["image"]) for c in include] == [
        ("cpu-2.13.0", "cpu", "2.13.0", "torch-compat/cpu:torch-2.13.0"),
        ("cpu-2.14.1", "cpu", "2.14.1", "torch-compat/cpu:torch-2.14.1"),
        ("cu130-2.13.0", "cu130", "2.13.0", "torch-compat/cu130:torch-2.13.0"),
        ("cu130-2.14.1", "cu130", "2.14.1", "torch-compat/cu130:torch-2.14.1"),
    ]
    cell_id = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    assert all(cell_id.match(c["cell_id"]) for c in include)
    # the same list given as repeated options, with a repeat and blanks, plans the same cells
    assert main([*args[:-1], "2.13.0", "--torch", " 2.14.1 ,2.13.0,"]) == 0
    assert json.loads(capsys.readouterr().out)["include"] == include


def test_three_releases_plan_only_what_upstream_ships(golden, capsys) -> None:
    """The issue's command: cu132 for 2.15.0, no cu126 for 2.15.0, no rocm7.14 for 2.13.0."""
    assert main(["plan", "--torch", "2.13.0,2.14.1,2.15.0", "--format", "github"]) == 0
    out = capsys.readouterr().out
    golden("plan-github-releases.json", out)
    pairs = {(c["backend"], c["torch"]) for c in json.loads(out)["include"]}
    registry = load_registry()
    assert ("cu132", "2.15.0") in pairs and ("cu126", "2.15.0") not in pairs and ("rocm7.14", "2.13.0") not in pairs
    expected = {
        (b.id, v) for v in ("2.13.0", "2.14.1", "2.15.0") for b in registry.select(None, registry.release_of(v))
    }
    assert pairs == expected


def test_a_family_selects_every_build_its_release_ships() -> None:
    cells = plan_cells(["cuda"], "2.13.0,2.15.0")
    assert [(c.backend, c.torch, c.status) for c in cells] == [
        ("cu126", "2.13.0", "legacy"),
        ("cu129", "2.13.0", "legacy"),
        ("cu130", "2.13.0", "stable"),
        ("cu130", "2.15.0", "stable"),
        ("cu132", "2.13.0", "experimental"),
        ("cu132", "2.15.0", "stable"),
    ]


def test_a_named_build_a_release_does_not_ship_is_left_out_and_said(capsys) -> None:
    assert main(["plan", "--backend", "cu126", "--torch", "2.14.1,2.15.0"]) == 0
    captured = capsys.readouterr()
    assert "cu126-2.14.1" in captured.out and "cu126-2.15.0" not in captured.out
    assert "cu126 is not shipped for torch 2.15" in captured.err
    assert main(["plan", "--backend", "cu126", "--torch", "2.15.0"]) == 2
    assert "the plan is empty" in capsys.readouterr().err


def test_a_nightly_of_a_release_the_registry_does_not_list_takes_the_newest_builds(capsys) -> None:
    assert main(["plan", "--torch", "2.17.0.dev20270301", "--backend", "cpu"]) == 0
    captured = capsys.readouterr()
    assert "cpu-2.17.0.dev20270301" in captured.out and "nightly" in captured.out
    assert "does not list" in captured.err and '[releases."2.17"]' in captured.err


def test_a_release_the_registry_does_not_know_is_refused_unless_the_channel_says_otherwise(capsys) -> None:
    assert main(["plan", "--torch", "9.9.9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "torch 9.9.9 is of a release the registry does not know" in err
    assert "--channel nightly or --channel test" in err
    assert main(["plan", "--torch", "9.9.9", "--channel", "test", "--backend", "cpu"]) == 0
    captured = capsys.readouterr()
    assert "https://download.pytorch.org/whl/test/cpu" in json.dumps(
        [c.to_json() for c in plan_cells(["cpu"], "9.9.9", "test")]
    )
    assert "does not list" in captured.err


def test_a_nightly_version_plans_nightly_indexes_named_by_date(capsys) -> None:
    assert main(["plan", "--torch", "2.16.0.dev20261130", "--format", "github"]) == 0
    cells = json.loads(capsys.readouterr().out)["include"]
    assert {c["channel"] for c in cells} == {"nightly"}
    assert all(c["index"] == f"https://download.pytorch.org/whl/nightly/{c['backend']}" for c in cells)
    assert all(c["cell_id"] == f"{c['backend']}-2.16.0.dev20261130" for c in cells)
    assert {"cu134", "rocm10.0"} <= {c["backend"] for c in cells} and {c["release"] for c in cells} == {"2.16"}


def test_the_test_channel_plans_release_candidates_from_the_test_indexes(capsys) -> None:
    assert main(["plan", "--channel", "test", "--format", "github"]) == 0
    cells = json.loads(capsys.readouterr().out)["include"]
    assert {(c["torch"], c["channel"]) for c in cells} == {("2.16.0", "test")}
    assert all(c["index"] == f"https://download.pytorch.org/whl/test/{c['backend']}" for c in cells)
    assert [c.channel for c in plan_cells(["cpu"], "2.16.0rc1")] == ["test"]
    # the release channel stays the default of a final release
    assert [c.index for c in plan_cells(["cu130"], "2.15.0")] == ["https://download.pytorch.org/whl/cu130"]


@pytest.mark.parametrize(
    ("torch", "channel", "message"),
    [
        ("2.15.0", "nightly", "is not a nightly version"),
        ("2.16.0.dev20261130", "test", "is a nightly: its channel is nightly, not test"),
        ("2.16.0rc1", "release", "is a release candidate"),
        ("", "nightly", "a nightly plan names its nightly"),
    ],
)
def test_a_channel_that_contradicts_the_version_is_refused(torch: str, channel: str, message: str, capsys) -> None:
    assert main(["plan", "--channel", channel, *(["--torch", torch] if torch else [])]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_table_shows_the_torch_version_of_each_cell(capsys) -> None:
    assert main(["plan", "--backend", "cpu", "--torch", "2.13.0,2.14.1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["cell", "backend", "torch"]
    rows = [line.split()[:3] for line in lines[1:]]
    assert rows == [["cpu-2.13.0", "CPU", "2.13.0"], ["cpu-2.14.1", "CPU", "2.14.1"]]


@pytest.mark.parametrize(
    ("labels", "self_hosted"),
    [
        (["ubuntu-24.04"], False),
        (["ubuntu-latest"], False),
        (["ubuntu-24.04-arm"], False),
        (["windows-2025"], False),
        (["macos-15"], False),
        (["self-hosted", "linux", "x64", "gpu-nvidia"], True),
        (["torch-compat-cuda"], True),  # an actions-runner-controller scale set: its name is its only label
        (["ubuntu-24.04", "gpu"], True),
        (["ubuntu"], True),
    ],
)
def test_a_cell_is_self_hosted_unless_it_runs_on_a_github_image(labels: list[str], self_hosted: bool) -> None:
    assert is_self_hosted(labels) is self_hosted


def test_table_lists_every_backend_with_its_status(capsys) -> None:
    assert main(["plan"]) == 0
    out = capsys.readouterr().out
    registry = load_registry()
    for backend in registry.select(None, registry.current):
        assert backend.display_name in out and ",".join(backend.runner_labels) in out
    assert "stable" in out and "experimental" in out


@pytest.mark.parametrize(
    ("torch", "message"),
    [
        ("latest; rm -rf /", "not a version"),
        ("$(boom)", "not a version"),
        ("2.13.0,nightly", "'nightly' is not a version"),
        ("2.13.0+cu130", "carries a local tag"),
        ("2", "not a version"),
    ],
)
def test_bad_torch_versions_are_refused_in_one_line(torch: str, message: str, capsys) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        plan_cells(torch=torch)
    assert main(["plan", "--torch", torch]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("harness: error: ")


@pytest.mark.parametrize("backend", ["cu130\n", "cu130/x", ""])
def test_a_cell_id_the_rule_refuses_is_never_planned(backend: str) -> None:
    """The plan asks cell.is_cell_id, the one rule: a trailing newline is refused as the manifest refuses it."""
    with pytest.raises(UsageError, match="is not a valid cell id"):
        cell_id_for(backend, "2.15.0", False)
    assert cell_id_for("cu130", "2.15.0", True) == "cu130-2.15.0"


def test_unknown_backends_are_refused() -> None:
    with pytest.raises(RegistryError):
        plan_cells(["nope"])


def test_the_plan_reads_back_as_the_cells_it_was_written_from(tmp_path: Path, capsys) -> None:
    """`harness plan` writes it, merge and collect read it: the same typed cells, every field."""
    cells = make_plan(None, "2.13.0,2.14.1").cells
    path = tmp_path / "plan.json"
    path.write_text(github_matrix(cells))
    assert read_plan(path) == cells
    assert main(["plan", "--format", "json", "--torch", "2.13.0,2.14.1"]) == 0
    path.write_text(capsys.readouterr().out)
    assert read_plan(path) == cells, "a plain list (--format json) reads the same"
    collected = dataclasses.replace(cells[0], missing="no runner picked it up within 3 h")
    path.write_text(plan_json([collected, *cells[1:]], indent=1))
    assert read_plan(path) == (collected, *cells[1:])
    assert "missing" not in json.loads(github_matrix(cells))["include"][0], "a plan says nothing of what is missing"


def test_a_plan_written_by_hand_needs_only_cell_ids(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"include": [{"cell_id": "cpu"}, {"cell_id": "cu130", "backend": "cu130", "x": 1}]}))
    assert read_plan(path) == (PlannedCell("cpu"), PlannedCell("cu130", backend="cu130"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not a readable plan"),
        ('{"include": 3}', "a plan is a list of cells"),
        ('[{"backend": "cpu"}]', "a plan entry is an object with a cell_id"),
        ('[{"cell_id": ""}]', "a plan entry is an object with a cell_id"),
        ('["cpu"]', "a plan entry is an object with a cell_id"),
        ('[{"cell_id": "cpu", "runner_labels": "gpu"}]', "cell 'cpu': runner_labels is not a list of labels"),
        ('[{"cell_id": "cpu", "self_hosted": "yes"}]', "cell 'cpu': self_hosted is not true or false"),
        ('[{"cell_id": "cpu", "torch": 2.13}]', "cell 'cpu': torch is not a string"),
        ('[{"cell_id": "cpu", "channel": "beta"}]', "cell 'cpu': channel 'beta' is not one of release, test, nightly"),
    ],
)
def test_a_bad_plan_is_one_input_error_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as raised:
        read_plan(path)
    assert str(path) in str(raised.value)


def test_runner_labels_given_for_a_variant_or_its_family_replace_the_registrys() -> None:
    labels = parse_runner_labels('{"cuda": ["gpu-a100"], "cu132": "h200", "cpu": ["ubuntu-24.04-arm"]}')
    assert labels == {"cuda": ("gpu-a100",), "cu132": ("h200",), "cpu": ("ubuntu-24.04-arm",)}
    cells = {c.backend: c for c in relabel(make_plan(["cpu", "cuda", "xpu"]).cells, labels)}
    assert (cells["cu132"].runner_labels, cells["cu132"].self_hosted) == (("h200",), True), "the variant's own wins"
    cuda = [c for c in cells.values() if c.backend.startswith("cu") and c.backend != "cu132"]
    assert cuda and all(c.runner_labels == ("gpu-a100",) for c in cuda), "the family's for the others"
    assert (cells["cpu"].runner_labels, cells["cpu"].self_hosted) == (("ubuntu-24.04-arm",), False)
    xpu = load_registry()["xpu"]
    assert cells["xpu"].runner_labels == xpu.runner_labels, "not named: the registry's"
    assert parse_runner_labels("  ") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "--runner-labels is not JSON"),
        ('["gpu"]', "--runner-labels must be a JSON object"),
        ('{"nvidia": ["gpu"]}', "--runner-labels names 'nvidia', which is no backend or family"),
        ('{"cuda": []}', "--runner-labels cuda: give a label or a non-empty list of labels"),
    ],
)
def test_bad_runner_labels_are_refused(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_runner_labels(text)


# -- Pythons: a dimension of the plan -----------------------------------------------------------------
def test_by_default_one_python_per_build_and_ids_unchanged() -> None:
    cells = plan_cells(["cpu"], "2.15.0")
    assert [(c.cell_id, c.python) for c in cells] == [("cpu", "")]
    assert "python" not in cells[0].to_json(), "a plan without Pythons reads as it always did"


def test_all_plans_every_python_the_release_ships_free_threaded_included() -> None:
    release = load_registry().releases["2.15"]
    cells = plan_cells(["cu132"], "2.15.0", python="all")
    assert [c.python for c in cells] == list(release.python)
    assert [c.cell_id for c in cells] == [
        "cu132", "cu132-cp312", "cu132-cp313", "cu132-cp314", "cu132-cp315", "cu132-cp314t", "cu132-cp315t"
    ], "the default image's Python (bookworm's 3.11) keeps the id it had"  # fmt: skip
    assert cells[4].image == "torch-compat/cu132:torch-2.15.0-cp315"


def test_a_list_plans_what_each_release_ships_and_says_not_shipped_for_the_rest() -> None:
    plan = make_plan(["cpu"], "2.14.1,2.15.0", python="3.15,3.14t")
    assert [(c.cell_id, c.python) for c in plan.cells] == [
        ("cpu-2.14.1-cp314t", "3.14t"), ("cpu-2.15.0-cp315", "3.15"), ("cpu-2.15.0-cp314t", "3.14t")
    ]  # fmt: skip
    assert plan.notes == ("Python 3.15 is not shipped for torch 2.14: no cpu cell for 2.14.1",)


def test_a_python_no_release_ships_is_not_shipped_and_an_empty_plan_says_why(capsys) -> None:
    assert main(["plan", "--backend", "cpu", "--python", "3.9"]) == 2
    err = capsys.readouterr().err
    assert "the plan is empty" in err and "Python 3.9 is not shipped for torch 2.15" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("bad", ["3.14x", "3.15,py3", "all,3.15", "3"])
def test_a_typo_in_python_is_a_usage_error_naming_the_valid_keys(bad: str, capsys) -> None:
    assert main(["plan", "--python", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "harness" in err
    assert "valid keys: default, all, 3.10, 3.11" in err or "stands alone" in err


def test_a_planned_python_reads_back_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(plan_json(plan_cells(["cpu"], "2.15.0", python="3.15")), encoding="utf-8")
    (cell,) = read_plan(path)
    assert (cell.cell_id, cell.python, str(cell.python_key)) == ("cpu-cp315", "3.15", "3.15")
    path.write_text(json.dumps([{"cell_id": "x", "python": "3.15x"}]), encoding="utf-8")
    with pytest.raises(InputError, match=r"python '3\.15x' is not a Python"):
        read_plan(path)


def test_the_table_shows_each_cells_python(capsys) -> None:
    assert main(["plan", "--backend", "cpu", "--python", "3.13,3.14t"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "python" in lines[0]
    assert lines[1].split()[:2] == ["cpu-cp313", "CPU"] and " 3.13 " in lines[1]
    assert lines[2].startswith("cpu-cp314t") and " 3.14t " in lines[2]
