"""The environment probe as a type (harness/probe.py): a full probe from a real cell is read field
by field; partial and hostile objects are read leniently (a malformed value is None, never an
exception); the raw object is kept and written back unchanged; `facts` gives the build's facts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.probe import Device, Probe
from tests.committed import CELLS


def _environment(cell: str) -> dict[str, Any]:
    return json.loads((CELLS / cell / "manifest.json").read_text(encoding="utf-8"))["environment"]


def test_a_full_probe_from_a_real_cell() -> None:
    raw = _environment("cu130-2.14.1-cpu-only")
    probe = Probe.from_json(raw)
    assert probe.torch_version == "2.14.1+cu130" and probe.has_torch
    assert probe.torch_git == raw["torch"]["git_version"]
    assert (probe.build, probe.backend, probe.cuda, probe.hip) == ("cuda", "cu130", "13.0", None)
    assert probe.cudnn == "92400", "numbers the probe prints as numbers are kept as text"
    assert probe.accelerator_available is False and probe.accelerator_type == "cuda" and probe.accelerator_count == 0
    assert probe.devices == () and probe.device is None
    assert probe.cpu_model == raw["cpu"]["model"] and probe.cpu_cores == raw["cpu"]["cores"]
    assert probe.python == raw["python"] and probe.platform == raw["platform"]
    assert probe.errors == ()


def test_the_raw_object_is_kept_and_written_back_unchanged() -> None:
    raw = {**_environment("cpu-2.13.0"), "a_key_a_later_probe_adds": {"nested": [1, 2]}}
    probe = Probe.from_json(raw)
    assert probe.to_json() == raw
    assert Probe.from_json(probe.to_json()) == probe
    assert Probe.from_json(json.loads(json.dumps(raw))).raw == raw


def test_raw_does_not_take_part_in_equality() -> None:
    assert Probe.from_json({"python": "3.11", "x": 1}) == Probe.from_json({"python": "3.11", "y": 2})


def test_facts_of_a_real_probe() -> None:
    facts = Probe.from_json(_environment("cu130-2.14.1-cpu-only")).facts
    assert (facts.version, facts.build, facts.cuda, facts.variant) == ("2.14.1+cu130", "cuda", "13.0", "cu130")
    assert Probe.from_json(_environment("cpu-2.13.0")).facts.variant == "cpu"


@pytest.mark.parametrize("data", [{}, None, [], "text", 3])
def test_an_empty_or_non_object_probe_is_all_unknown(data: object) -> None:
    probe = Probe.from_json(data)
    assert probe == Probe()
    assert not probe.has_torch and probe.device is None and probe.accelerator_count == 0
    assert probe.to_json() == (data if isinstance(data, dict) else {})
    assert probe.facts.version == ""


def test_a_partial_probe() -> None:
    """A probe that could not import torch: its errors say why, the rest is unknown."""
    probe = Probe.from_json(
        {
            "python": "3.12.1",
            "torch": None,
            "errors": ["import torch: No module named 'torch'", "devices: no accelerator"],
        }
    )
    assert probe.python == "3.12.1" and probe.torch_version is None and not probe.has_torch
    assert probe.import_errors() == ["import torch: No module named 'torch'"]
    assert probe.accelerator_errors() == ["devices: no accelerator"]


def test_the_version_is_built_from_its_parts() -> None:
    assert Probe.from_json({"torch": {"base_version": "2.15.0", "local_tag": "rocm7.2"}}).torch_version == (
        "2.15.0+rocm7.2"
    )
    assert Probe.from_json({"torch": {"version": "2.15.0+cu132", "local_tag": "cu132"}}).torch_version == (
        "2.15.0+cu132"
    ), "a local tag is not added twice"
    assert Probe.from_json({"torch": {"version": "", "base_version": "2.15.0"}}).torch_version == "2.15.0"


def test_a_hostile_probe_is_read_leniently() -> None:
    probe = Probe.from_json(
        {
            "torch": {"version": True, "git_version": ["x"]},
            "python": {"a": 1},
            "build": 7,
            "runtime": {"cuda": False, "hip": 6.2},
            "accelerator": {"available": "true", "type": None, "count": True},
            "devices": [{"index": "0", "name": "GPU", "capability": 9.0, "total_memory": 1.5}, "gpu1", None],
            "cpu": {"model": "", "cores": "16"},
            "errors": ["real error", 5, None, {"x": 1}],
            "device_api": {"cuda": ["synchronize", 3], "xpu": "not a list", "mps": []},
            "driver": 550,
        }
    )
    assert probe.torch_version is None and probe.torch_git is None and probe.python is None
    assert probe.build == "7" and probe.driver == "550", "numbers are facts written as numbers"
    assert probe.cuda is None and probe.hip == "6.2"
    assert probe.accelerator_available is False, "only a JSON true says available"
    assert probe.accelerator_type is None and probe.accelerator_count == 0
    assert probe.devices == (Device(name="GPU", capability="9.0"), Device(), Device())
    assert probe.cpu_model is None and probe.cpu_cores is None
    assert probe.errors == ("real error",)
    assert dict(probe.device_api) == {"cuda": ("synchronize",), "mps": ()}


def test_hostile_sections_are_ignored_whole() -> None:
    probe = Probe.from_json({"torch": "2.13.0", "runtime": [1], "accelerator": "yes", "cpu": 4, "devices": "gpu0"})
    assert probe == Probe()


@pytest.mark.parametrize("raw", [{"torch": "2.13.0"}, {"runtime": [1]}], ids=["torch-text", "runtime-list"])
def test_facts_of_a_hostile_probe_do_not_raise(raw: dict[str, Any]) -> None:
    facts = Probe.from_json(raw).facts
    assert facts.version == ""


@pytest.mark.parametrize("errors", [5, True, "import torch: failed"], ids=["number", "bool", "text"])
def test_errors_that_are_not_a_list_are_read_leniently(errors: object) -> None:
    probe = Probe.from_json({"errors": errors})
    assert probe.errors in ((), (errors,))
