"""The registry: PyTorch's release matrix as one validated source (families, variants, releases)."""

from __future__ import annotations

import copy
import tomllib

import pytest

from harness.errors import RegistryError
from harness.probe import Probe
from harness.registry import REGISTRY_PATH, backend_for_probe, get_backend, load_registry, parse_registry


def _doc() -> dict:
    return tomllib.loads(REGISTRY_PATH.read_text())


def test_listed_variants_in_family_order():
    assert list(load_registry()) == [
        "cpu", "cu126", "cu128", "cu129", "cu130", "cu132", "cu134", "rocm7.1", "rocm7.2", "rocm7.14", "rocm10.0", "xpu"
    ]  # fmt: skip


def test_variant_facts_come_from_family_and_variant():
    cu132 = get_backend("cu132")
    assert cu132.wheel_index == "https://download.pytorch.org/whl/cu132"
    assert (cu132.local_tag, cu132.runtime_version, cu132.build, cu132.gpus) == ("cu132", "13.2", "cuda", "all")
    assert cu132.display_name == "CUDA 13.2" and "sm_75" in cu132.archs and cu132.min_driver.startswith("580")
    rocm714 = get_backend("rocm7.14")
    assert rocm714.runtime_source == "wheels" and rocm714.layer == "" and "/dev/kfd" in rocm714.devices
    assert "render" in rocm714.group_add and "seccomp=unconfined" in rocm714.security_opt
    rocm72 = get_backend("rocm7.2")
    assert rocm72.layer == "rocm" and rocm72.health_check == ("rocminfo",)
    assert rocm714.health_check == ("rocminfo",)  # from the rocm-sdk-core wheel, in the venv
    assert get_backend("xpu").visible_devices_env == "ZE_AFFINITY_MASK"
    assert not get_backend("cpu").needs_device


def test_an_unlisted_variant_is_recognised_from_its_name():
    registry = load_registry()
    cu136 = registry.backend("cu136")
    assert not cu136.listed and cu136.build == "cuda" and cu136.runtime_version == "13.6"
    assert cu136.display_name == "CUDA 13.6" and cu136.wheel_index.endswith("/whl/cu136") and cu136.gpus == "all"
    rocm = registry.backend("rocm10.1")
    assert rocm.build == "rocm" and rocm.runtime_version == "10.1" and "/dev/kfd" in rocm.devices


def test_rocm_variants_order_by_version_parts_not_text():
    registry = load_registry()
    assert sorted(["rocm10.0", "rocm7.14", "rocm7.2"], key=registry.variant_order) == [
        "rocm7.2",
        "rocm7.14",
        "rocm10.0",
    ]


def test_families_name_their_current_default():
    assert get_backend("cuda").id == "cu132"  # PyPI's default build of the current release
    assert get_backend("rocm").id == "rocm7.14"
    assert load_registry().backend("rocm").id == "rocm7.2"  # cells written before variants


def test_unknown_backend_says_what_is_accepted():
    with pytest.raises(RegistryError, match=r"unknown backend 'tpu'.*cu132.*family: cpu, cuda, rocm, xpu"):
        get_backend("tpu")


def test_releases_say_what_upstream_ships():
    registry = load_registry()
    assert registry.current.id == "2.15" and registry.current.pypi_default == "cu132"
    assert registry.ships("2.15.0", "cu132") and not registry.ships("2.15.0", "cu126")
    assert registry.ships("2.13.0+cpu", "rocm7.2") and not registry.ships("2.13.0", "rocm7.14")
    assert registry.ships("2.17.0.dev20270301", "cpu") is None  # a release the file does not list
    assert registry.ships("2.16.0.dev20261201", "cu134") and not registry.ships("2.15.0", "cu134")
    assert registry.releases["2.13"].status("cu132") == "experimental"
    assert all(r.sources for r in registry.releases.values()), "every release says where its facts come from"


def test_missing_family_field_is_named():
    doc = _doc()
    del doc["families"]["cuda"]["gpus"]
    with pytest.raises(RegistryError, match=r"family 'cuda': missing fields \['gpus'\]"):
        parse_registry(doc)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["families"]["cpu"].update(devices="/dev/dri"), "devices must be a list"),
        (lambda d: d["variants"].update(tpu={"family": "cpu"}), "variant 'tpu': not a variant name"),
        (lambda d: d["variants"]["cu132"].update(family="rocm"), "family must be 'cuda'"),
        (lambda d: d["variants"]["cu132"].update(runtime="13.0"), "runtime must be '13.2'"),
        (lambda d: d["variants"]["cu132"].update(colour="green"), r"unknown fields \['colour'\]"),
        (lambda d: d["releases"]["2.15"].update(stable=["cu999"]), "not a listed variant"),
        (lambda d: d["releases"]["2.15"].update(legacy=["cu132"]), "both stable and legacy"),
        (lambda d: d["releases"]["2.15"].update(pypi_default="cu126"), "pypi_default must be one of"),
        (lambda d: d["releases"]["2.15"].update(latest="2.14.1"), "latest must be a 2.15.x version"),
        (lambda d: d["releases"].update({"2.15.0": d["releases"]["2.15"]}), "release series like"),
        (lambda d: d.update(current="2.99"), "not a listed final release"),
        (lambda d: d.update(schema=1), "schema must be 2"),
    ],
)
def test_malformed_registry_is_refused_with_the_table_named(edit, message):
    doc = copy.deepcopy(_doc())
    edit(doc)
    with pytest.raises(RegistryError, match=message):
        parse_registry(doc)


@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        ({"torch": {"version": "2.13.0+cpu"}, "build": "cpu"}, "cpu"),
        ({"torch": {"version": "2.13.0+cu126"}, "build": "cuda", "runtime": {"cuda": "12.6"}}, "cu126"),
        ({"torch": {"version": "2.13.0"}, "build": "cuda", "runtime": {"cuda": "13.0"}}, "cu130"),
        ({"torch": {"version": "2.15.0+cu132"}, "build": "cuda", "runtime": {"cuda": "13.2"}}, "cu132"),
        ({"torch": {"version": "2.13.0+rocm7.2"}, "build": "rocm", "runtime": {"hip": "7.2.26015"}}, "rocm7.2"),
        ({"torch": {"version": "2.14.1+rocm7.14"}, "build": "rocm", "runtime": {"hip": "7.14.1"}}, "rocm7.14"),
        ({"torch": {"version": "2.13.0+xpu"}, "build": "xpu"}, "xpu"),
        ({"torch": {"version": "2.16.0+cu999"}, "build": "cuda", "runtime": {"cuda": "99.9"}}, "cu999"),
        ({"torch": {"version": None}, "errors": ["import torch: ModuleNotFoundError"]}, None),
    ],
)
def test_any_build_gets_a_backend(probe, expected):
    found = backend_for_probe(Probe.from_json(probe))
    assert (found.id if found else None) == expected


def test_channels_name_each_variants_index():
    cu130 = get_backend("cu130")
    assert cu130.index() == "https://download.pytorch.org/whl/cu130"
    assert cu130.index("test") == "https://download.pytorch.org/whl/test/cu130"
    assert cu130.index("nightly") == "https://download.pytorch.org/whl/nightly/cu130"
    with pytest.raises(RegistryError, match="unknown channel 'beta'"):
        cu130.index("beta")


@pytest.mark.parametrize(
    ("version", "channel"),
    [
        ("2.16.0.dev20261130", "nightly"),  # a .devYYYYMMDD is a nightly
        ("2.16.0rc2", "test"),
        ("2.16.0", "test"),  # 2.16 has only release candidates so far: they carry the final number
        ("2.15.0", "release"),
        ("2.15.0+cu132", "release"),
    ],
)
def test_a_version_says_its_channel(version: str, channel: str):
    assert load_registry().channel_of(version) == channel


def test_2_16_is_on_the_test_channel_with_its_plan_and_sources():
    registry = load_registry()
    r216 = registry.releases["2.16"]
    assert (r216.channel, r216.planned, r216.released, r216.final) == ("test", "2026-12-22", "", False)
    assert r216.status("cu134") == "experimental" and r216.ships("rocm10.0") and not r216.ships("cu126")
    assert any("196028" in s for s in r216.sources) and r216.unverified
    assert registry.current.id == "2.15"  # the newest final release stays the default
    assert registry.default_torch("cu134") == "2.15.0"  # never a candidate by default


def test_every_final_release_has_its_date_pythons_and_cuda_floor():
    registry = load_registry()
    assert registry.releases["2.15"].released == "2026-10-28"
    assert all(r.released for r in registry.final_releases)
    r215, r214 = registry.releases["2.15"], registry.releases["2.14"]
    assert r215.ships_python("3.15t") and not r215.ships_python("3.10")
    assert r214.ships_python("3.10") and r214.ships_python("3.14t") and not r214.ships_python("3.15")
    assert "3.15" in r214.no_compile_python and not r215.no_compile_python
    assert r214.archs_of(get_backend("cu126"))[0] == "sm_50"
    assert all(r215.archs_of(registry.backend(v))[0] == "sm_75" for v in r215.builds if v.startswith("cu"))
    rocm10 = get_backend("rocm10.0")
    assert rocm10.runtime_source == "index" and "gfx906" not in rocm10.archs and "gfx942" in rocm10.archs


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["releases"]["2.15"].pop("released"), "a final release needs its released date"),
        (lambda d: d["releases"]["2.16"].update(released="2026-12-22"), "test channel has a planned date"),
        (lambda d: d["releases"]["2.15"].update(channel="beta"), "channel must be 'release' or 'test'"),
        (lambda d: d["releases"]["2.15"].update(python=["3.15free"]), "python versions are written 3.11"),
        (lambda d: d["releases"]["2.15"].update(cuda_min_arch={"cu126": "sm_75"}), "cuda_min_arch maps CUDA"),
        (lambda d: d.update(current="2.16"), "not a listed final release"),
        (lambda d: d["variants"]["cu130"].update(runtime_index="https://x"), "runtime_index goes with"),
    ],
)
def test_release_facts_are_validated(edit, message):
    doc = copy.deepcopy(_doc())
    edit(doc)
    with pytest.raises(RegistryError, match=message):
        parse_registry(doc)
