"""A submission through an OCI registry: references read strictly; a real registry (Debian's
docker-registry) takes the push and gives back the same bytes, checked against their digest."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from harness.errors import InputError, UsageError
from harness.provenance.oci_registry import LAYER_TYPE, Reference, parse_reference, pull_archive, push_archive
from harness.provenance.submission import pack, unpack
from harness.provenance.verify import verify_cell
from tests.provenance.conftest import Signed
from tests.registry import Registry, local_registry  # noqa: F401 (fixture)


def test_a_reference_is_read_strictly() -> None:
    ref = parse_reference("oci://ghcr.io/amd/compat-cells:mi300x")
    assert ref == Reference("ghcr.io", "amd/compat-cells", "mi300x") and ref.base.startswith("https://ghcr.io/v2/")
    local = parse_reference("oci://127.0.0.1:5000/cells@sha256:" + "a" * 64)
    assert local.base == "http://127.0.0.1:5000/v2/cells" and local.version == "sha256:" + "a" * 64
    for bad in ("ghcr.io/x:y", "oci://ghcr.io/Upper:x", "oci://nohost/x:y", "oci://ghcr.io/x:-bad"):
        with pytest.raises(UsageError):
            parse_reference(bad)


def test_a_submission_goes_through_a_real_registry_unchanged(
    signed: Signed,
    tmp_path: Path,
    local_registry: Registry,  # noqa: F811
) -> None:
    archive = pack(signed.cell, tmp_path / "cpu-2.13.0.cell.tar.gz")
    ref = parse_reference(f"oci://{local_registry.host}/vendor/cells:cpu")
    pushed = push_archive(archive, ref)
    assert pushed.digest and pushed.digest.startswith("sha256:")
    pulled = pull_archive(ref, tmp_path / "pulled")
    assert pulled.name == archive.name and pulled.read_bytes() == archive.read_bytes()
    assert pull_archive(pushed, tmp_path / "by-digest").read_bytes() == archive.read_bytes()
    assert verify_cell(unpack(pulled, tmp_path / "results"), signed.trust).verified
    # the manifest names the layer's own media type (what the pull looks for)
    with urllib.request.urlopen(
        urllib.request.Request(
            f"{ref.base}/manifests/cpu", headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}
        )
    ) as answer:
        assert json.load(answer)["layers"][0]["mediaType"] == LAYER_TYPE
    with pytest.raises(InputError, match="HTTP 404"):
        pull_archive(parse_reference(f"oci://{local_registry.host}/vendor/cells:absent"), tmp_path / "none")
    assert not (tmp_path / "none").exists() or not list((tmp_path / "none").iterdir())
