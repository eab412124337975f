"""The backend registry: one validated source of truth."""

from __future__ import annotations

import tomllib

import pytest

from harness.errors import RegistryError
from harness.registry import BACKEND_IDS, REGISTRY_PATH, backend_for_probe, get_backend, load_registry, parse_registry


def test_registry_has_the_five_backends_in_order():
    assert list(load_registry()) == ["cpu", "cu126", "cu130", "rocm", "xpu"] == list(BACKEND_IDS)


def test_backend_facts():
    cu126 = get_backend("cu126")
    assert cu126.wheel_index == "https://download.pytorch.org/whl/cu126"
    assert cu126.local_tag == "cu126" and cu126.runtime_version == "12.6" and cu126.gpus == "all"
    rocm = get_backend("rocm")
    assert rocm.index_token == "rocm7.2" and "/dev/kfd" in rocm.devices and "seccomp=unconfined" in rocm.security_opt
    assert get_backend("xpu").visible_devices_env == "ZE_AFFINITY_MASK"
    assert not get_backend("cpu").needs_device


def test_unknown_backend_says_which_exist():
    with pytest.raises(RegistryError, match="choose one of: cpu, cu126, cu130, rocm, xpu"):
        get_backend("tpu")


def _doc():
    return tomllib.loads(REGISTRY_PATH.read_text())


def test_missing_field_is_named():
    doc = _doc()
    del doc["backends"]["cu130"]["wheel_index"]
    with pytest.raises(RegistryError, match=r"cu130.*missing fields \['wheel_index'\]"):
        parse_registry(doc)


def test_wrong_types_and_unknown_ids_are_refused():
    doc = _doc()
    doc["backends"]["cpu"]["devices"] = "/dev/dri"
    with pytest.raises(RegistryError, match="devices must be a list"):
        parse_registry(doc)
    doc = _doc()
    doc["backends"]["tpu"] = doc["backends"]["cpu"]
    with pytest.raises(RegistryError, match="unknown backend id 'tpu'"):
        parse_registry(doc)


@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        ({"torch": {"local_tag": "cpu"}, "build": "cpu"}, "cpu"),
        ({"torch": {"local_tag": "cu126"}, "build": "cuda", "runtime": {"cuda": "12.6"}}, "cu126"),
        ({"torch": {"local_tag": None}, "build": "cuda", "runtime": {"cuda": "13.0"}}, "cu130"),
        ({"torch": {"local_tag": "rocm7.2"}, "build": "rocm", "runtime": {"hip": "7.2.1"}}, "rocm"),
        ({"torch": {"local_tag": "xpu"}, "build": "xpu"}, "xpu"),
        ({"torch": {"local_tag": "cu999"}, "build": "cuda", "runtime": {"cuda": "99.9"}}, None),
    ],
)
def test_backend_for_probe(probe, expected):
    assert backend_for_probe(probe) == expected
