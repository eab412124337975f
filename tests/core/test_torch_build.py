"""harness/torch_build.py: the one rule for "which build is this torch, and is it the backend's?", as
the image verifier, the health gate and the native default use it; and the one torch version parser."""

from __future__ import annotations

import pytest

from harness.probe import Probe
from harness.registry import backend_for_probe, load_registry
from harness.torch_build import TorchFacts, mismatches, parse_variant, parse_version, version_sort_key

# What each wheel reports (torch.__version__ / torch.version.*), as read from real wheels.
FACTS = {
    "cpu": TorchFacts(version="2.13.0+cpu", build="cpu"),
    "cu126": TorchFacts(version="2.13.0+cu126", build="cuda", cuda="12.6"),
    "cu130": TorchFacts(version="2.14.1+cu130", build="cuda", cuda="13.0"),
    "cu132": TorchFacts(version="2.15.0+cu132", build="cuda", cuda="13.2"),
    "rocm7.2": TorchFacts(version="2.13.0+rocm7.2", build="rocm", hip="7.2.26015"),
    "rocm7.14": TorchFacts(version="2.14.1+rocm7.14", build="rocm", hip="7.14.60001"),
    "xpu": TorchFacts(version="2.13.0+xpu", build="xpu", xpu="20250301"),
}


@pytest.mark.parametrize("backend_id", sorted(FACTS))
def test_each_build_matches_only_its_own_backend(backend_id: str) -> None:
    for other in load_registry().values():
        problems = mismatches(FACTS[backend_id], other.expected())
        assert (problems == []) == (other.id == backend_id), (other.id, problems)
    assert FACTS[backend_id].variant == backend_id


def test_the_h200_host_torch_is_cu130() -> None:
    """A GPU host with torch 2.11+cu130 installed natively is the cu130 backend (any version)."""
    probe = {"torch": {"version": "2.11.0+cu130", "local_tag": "cu130"}, "build": "cuda", "runtime": {"cuda": "13.0"}}
    assert backend_for_probe(Probe.from_json(probe)).id == "cu130"
    assert mismatches(Probe.from_json(probe).facts, load_registry().backend("cu130").expected()) == []
    assert mismatches(Probe.from_json(probe).facts, load_registry().backend("cu130").expected("2.13.0")) == [
        "torch 2.11.0+cu130 installed, 2.13.0 was asked for"
    ]


def test_a_build_without_a_local_tag_is_judged_by_kind_and_runtime() -> None:
    """A source build or a vendor's wheel has no +tag: CUDA 13.0 is cu130, never cu126."""
    untagged = TorchFacts(version="2.13.0", build="cuda", cuda="13.0")
    assert untagged.variant == "cu130"
    assert mismatches(untagged, load_registry().backend("cu130").expected()) == []
    assert mismatches(untagged, load_registry().backend("cu126").expected()) == [
        "torch.version.cuda is 13.0, backend cu126 needs 12.6.x"
    ]


def test_runtime_is_compared_by_version_parts() -> None:
    cu = load_registry().backend("cu130").expected()
    assert mismatches(TorchFacts(version="2.13.0+cu130", build="cuda", cuda="13.0.2"), cu) == []
    assert mismatches(TorchFacts(version="2.13.0+cu130", build="cuda", cuda="13.01"), cu)
    rocm = load_registry().backend("rocm7.14").expected()
    assert mismatches(TorchFacts(version="2.14.1+rocm7.14", build="rocm", hip="7.14.1"), rocm) == []
    assert mismatches(TorchFacts(version="2.14.1+rocm7.1", build="rocm", hip="7.1.4"), rocm)


def test_facts_from_the_suites_probe() -> None:
    probe = {
        "torch": {"version": "2.13.0+rocm7.2", "local_tag": "rocm7.2"},
        "build": "rocm",
        "runtime": {"hip": "7.2.1"},
    }
    facts = Probe.from_json(probe).facts
    assert facts.build == "rocm" and facts.runtime == "7.2.1" and facts.local_tag == "rocm7.2"
    assert backend_for_probe(Probe.from_json(probe)).id == "rocm7.2"


@pytest.mark.parametrize(
    ("token", "family", "runtime"),
    [("cpu", "cpu", ""), ("xpu", "xpu", ""), ("cu126", "cuda", "12.6"), ("cu132", "cuda", "13.2"),
     ("cu134", "cuda", "13.4"), ("rocm7.2", "rocm", "7.2"), ("rocm7.14", "rocm", "7.14"), ("rocm10.0", "rocm", "10.0")],
)  # fmt: skip
def test_variant_names_parse(token: str, family: str, runtime: str) -> None:
    variant = parse_variant(token)
    assert variant is not None and (variant.id, variant.family, variant.runtime) == (token, family, runtime)


@pytest.mark.parametrize("token", ["", "rocm", "cuda", "cu1", "cu13.2", "rocm7", "tpu", "cpu1"])
def test_non_variants_do_not_parse(token: str) -> None:
    assert parse_variant(token) is None


def test_a_local_tag_of_another_family_does_not_name_the_variant() -> None:
    """A vendor's tag (+git1234) or a mismatched one falls back to what torch.version says."""
    assert TorchFacts(version="2.15.0+git1234", build="cuda", cuda="13.2").variant == "cu132"
    assert TorchFacts(version="2.15.0+cpu", build="cuda", cuda="13.2").variant == "cu132"
    assert TorchFacts(version="", build="cpu").variant is None


def test_one_version_parser() -> None:
    version = parse_version("2.15.0+cu132")
    assert version is not None and version.release == (2, 15, 0) and version.local == "cu132"
    assert version.base == "2.15.0" and version.minor == "2.15" and str(version) == "2.15.0+cu132"
    assert parse_version("2.16.0.dev20261130+cpu").minor == "2.16"
    assert parse_version("2.15.0rc1").pre == "rc1"
    assert parse_version("not a version") is None and parse_version(None) is None
    ordered = ["2.13.0+cpu", "2.14.1", "2.16.0.dev1", "2.16.0a1", "2.16.0rc1", "2.16.0", "2.16.0.post1"]
    assert sorted(reversed(ordered), key=version_sort_key) == ordered
    # structurally, never as text: 2.9 < 2.10
    assert sorted(["2.10.0", "2.9.1"], key=version_sort_key) == ["2.9.1", "2.10.0"]
