"""harness/torch_build.py: the one rule for "is this torch the backend's build?", as the image
verifier, the health gate and the native default use it."""

from __future__ import annotations

import pytest

from harness.registry import backend_for_probe, load_registry
from harness.torch_build import TorchFacts, mismatches

# What each wheel reports (torch.__version__ / torch.version.*), as read from real wheels.
FACTS = {
    "cpu": TorchFacts(version="2.13.0+cpu", build="cpu"),
    "cu126": TorchFacts(version="2.13.0+cu126", build="cuda", cuda="12.6"),
    "cu130": TorchFacts(version="2.13.0+cu130", build="cuda", cuda="13.0"),
    "rocm": TorchFacts(version="2.13.0+rocm7.2", build="rocm", hip="7.2.26015"),
    "xpu": TorchFacts(version="2.13.0+xpu", build="xpu", xpu="20250301"),
}


@pytest.mark.parametrize("backend_id", sorted(FACTS))
def test_each_build_matches_only_its_own_backend(backend_id: str) -> None:
    for other in load_registry().values():
        problems = mismatches(FACTS[backend_id], other.expected())
        assert (problems == []) == (other.id == backend_id), (other.id, problems)


def test_the_h200_host_torch_is_cu130() -> None:
    """A GPU host with torch 2.11+cu130 installed natively is the cu130 backend (any version)."""
    probe = {"torch": {"version": "2.11.0+cu130", "local_tag": "cu130"}, "build": "cuda", "runtime": {"cuda": "13.0"}}
    assert backend_for_probe(probe) == "cu130"
    assert mismatches(TorchFacts.from_probe(probe), load_registry()["cu130"].expected()) == []
    assert mismatches(TorchFacts.from_probe(probe), load_registry()["cu130"].expected("2.13.0")) == [
        "torch 2.11.0+cu130 installed, 2.13.0 was asked for"
    ]


def test_a_build_without_a_local_tag_is_judged_by_kind_and_runtime() -> None:
    """A source build or a vendor's wheel has no +tag: CUDA 13.0 is cu130, never cu126."""
    untagged = TorchFacts(version="2.13.0", build="cuda", cuda="13.0")
    assert mismatches(untagged, load_registry()["cu130"].expected()) == []
    assert mismatches(untagged, load_registry()["cu126"].expected()) == [
        "torch.version.cuda is 13.0, backend cu126 needs 12.6.x"
    ]


def test_runtime_is_compared_by_version_parts() -> None:
    cu = load_registry()["cu130"].expected()
    assert mismatches(TorchFacts(version="2.13.0+cu130", build="cuda", cuda="13.0.2"), cu) == []
    assert mismatches(TorchFacts(version="2.13.0+cu130", build="cuda", cuda="13.01"), cu)


def test_facts_from_the_suites_probe() -> None:
    probe = {
        "torch": {"version": "2.13.0+rocm7.2", "local_tag": "rocm7.2"},
        "build": "rocm",
        "runtime": {"hip": "7.2.1"},
    }
    facts = TorchFacts.from_probe(probe)
    assert facts.build == "rocm" and facts.runtime == "7.2.1" and facts.local_tag == "rocm7.2"
    assert backend_for_probe(probe) == "rocm"
