"""The command that reruns a column (harness/merge/reproduce.py), from typed manifests: a container
cell by its image digest, a native one with its torch build from the backend's index (a cpu-only
column keeps its flag), an imported one has none; and from the committed cells' real manifests."""

from __future__ import annotations

import dataclasses
import shlex

import pytest

from harness.cell import ImageInfo, Manifest, RunRequest, read_manifest
from harness.merge.reproduce import column_command
from harness.probe import Probe
from harness.registry import load_registry
from tests.committed import CELLS

DIGEST = "sha256:" + "ab" * 32


def _manifest(**changes: object) -> Manifest:
    base = Manifest(
        cell_id="cu130-h100",
        run_id="r",
        backend="cu130",
        mode="native",
        environment=Probe.from_json({"torch": {"version": "2.14.1+cu130"}}),
    )
    return dataclasses.replace(base, **changes)


def test_a_container_cell_reruns_on_its_image_by_digest() -> None:
    image = ImageInfo(ref="ghcr.io/o/torch-compat:cu130", id=DIGEST, digest=f"ghcr.io/o/torch-compat@{DIGEST}")
    command = column_command(_manifest(mode="container", image=image))
    assert command == f"harness run --backend cu130 --image ghcr.io/o/torch-compat@{DIGEST} --cell-id cu130-h100"


def test_a_local_image_reruns_by_its_id_and_an_unpushed_one_by_its_tag() -> None:
    local = column_command(_manifest(mode="container", image=ImageInfo(ref="t:cu130", digest=DIGEST)))
    assert local is not None and f"--image {DIGEST} " in local
    tagged = column_command(_manifest(mode="container", image=ImageInfo(ref="t:cu130", digest="not-a-digest")))
    assert tagged is not None and "--image t:cu130 " in tagged


@pytest.mark.parametrize("image", [None, ImageInfo()], ids=["no-image", "empty-image"])
def test_a_container_cell_without_an_image_has_no_command(image: ImageInfo | None) -> None:
    assert column_command(_manifest(mode="container", image=image)) is None


def test_a_native_cell_installs_its_torch_from_the_backends_index() -> None:
    index = load_registry().get("cu130").wheel_index
    assert column_command(_manifest()) == (
        f"python3 -m pip install torch==2.14.1+cu130 --index-url {index}"
        " && harness run --native --backend cu130 --cell-id cu130-h100"
    )


def test_a_cpu_only_column_keeps_its_flag() -> None:
    command = column_command(_manifest(variant="cpu-only"))
    assert command is not None and command.endswith(
        "harness run --cpu-only --native --backend cu130 --cell-id cu130-h100"
    )


def test_without_a_torch_or_a_known_backend_only_the_run_is_given() -> None:
    assert column_command(_manifest(environment=None)) == "harness run --native --backend cu130 --cell-id cu130-h100"
    unknown = column_command(_manifest(backend="nosuch"))
    assert unknown == "harness run --native --backend nosuch --cell-id cu130-h100"


def test_pytest_args_are_quoted_for_the_shell() -> None:
    planned = RunRequest(pytest_args=("-k", "graphs and not slow", "--maxfail=1"))
    command = column_command(_manifest(planned=planned))
    assert command is not None
    run = shlex.split(command.split(" && ")[1])
    assert run[-2:] == ["--pytest-args", "-k 'graphs and not slow' --maxfail=1"]
    assert shlex.split(run[-1]) == list(planned.pytest_args)


@pytest.mark.parametrize("mode", ["import", None, "something-new"])
def test_an_imported_cell_has_no_command(mode: str | None) -> None:
    assert column_command(_manifest(mode=mode, run_url="https://github.com/pytorch/pytorch/actions/runs/1")) is None


def test_the_committed_cells_commands() -> None:
    commands = {d.name: column_command(read_manifest(d / "manifest.json")) for d in sorted(CELLS.iterdir())}
    assert commands["cpu-2.13.0"] == (
        "python3 -m pip install torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu"
        " && harness run --native --backend cpu --cell-id cpu-2.13.0"
    )
    assert "--cpu-only --native --backend cu130 --cell-id cu130-2.14.1-cpu-only" in commands["cu130-2.14.1-cpu-only"]


def test_suites_and_features_off_the_defaults_are_named_in_the_rerun() -> None:
    """A caller's own suites (toy/suites, toy/features.toml) are where the rerun looks too."""
    image = ImageInfo(ref="t:cpu", digest=f"127.0.0.1:5000/torch-compat/cpu@{DIGEST}")
    planned = RunRequest(suites="toy/suites", features="toy/features.toml", pytest_args=("-k", "fast"))
    command = column_command(_manifest(mode="container", image=image, planned=planned))
    assert command == (
        f"harness run --backend cu130 --image 127.0.0.1:5000/torch-compat/cpu@{DIGEST} --cell-id cu130-h100 "
        "--suites toy/suites --features toy/features.toml --pytest-args '-k fast'"
    )
    assert RunRequest.from_json(planned.to_json()) == planned
    assert "suites" not in RunRequest().to_json(), "the default suites are not written"


def test_a_nightly_or_candidate_cell_reinstalls_from_its_channels_index() -> None:
    nightly = _manifest(environment=Probe.from_json({"torch": {"version": "2.16.0.dev20261130+cu130"}}))
    assert column_command(nightly).startswith(  # type: ignore[union-attr]
        "python3 -m pip install torch==2.16.0.dev20261130+cu130 --index-url https://download.pytorch.org/whl/nightly/cu130"
    )
    candidate = _manifest(channel="test", environment=Probe.from_json({"torch": {"version": "2.16.0+cu130"}}))
    assert "--index-url https://download.pytorch.org/whl/test/cu130 " in column_command(candidate)  # type: ignore[operator]
