"""Build once, pull by digest (harness/images/push.py): a registry name is checked before any engine is
asked; against a real engine and a real registry (tests/registry.py) an image is pushed once, found
there by its tag the next time (neither built nor pushed again), and pulled by its digest after this
engine's copy of that name is gone."""

from __future__ import annotations

import io
import secrets
import tarfile
from typing import Any

import pytest

from harness.errors import UsageError
from harness.images import recipes
from harness.images.image_build import ImageResult
from harness.images.push import check_registry, publish_image, remote_digest, remote_name
from tests.docker.conftest import docker_client  # noqa: F401 (fixture)
from tests.registry import local_registry  # noqa: F401 (fixture)


@pytest.mark.parametrize("name", ["ghcr.io/torch-compat", "127.0.0.1:5000", "registry.example.org:443/team/x"])
def test_a_registry_is_a_host_with_a_namespace(name: str) -> None:
    assert check_registry(name + "/") == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("https://ghcr.io/o", "without a scheme"),
        ("ghcr", "is not a registry"),
        ("ghcr.io/Owner", "is not a registry"),  # GHCR names are lower case
        ("ghcr.io/o:tag", "is not a registry"),
    ],
)
def test_a_wrong_registry_is_one_line(name: str, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        check_registry(name)


def test_the_registry_name_keeps_the_local_tag() -> None:
    assert remote_name("ghcr.io/o", "torch-compat/cu130:1a2b3c4d5e6f") == (
        "ghcr.io/o/torch-compat/cu130",
        "1a2b3c4d5e6f",
    )


@pytest.fixture
def tiny_image(docker_client: Any) -> Any:  # noqa: F811
    """A one-file image from scratch, this test's own (removed afterwards)."""
    tag = f"torch-compat-test/push:{secrets.token_hex(4)}"
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in (("Dockerfile", b"FROM scratch\nCOPY hello.txt /hello.txt\n"), ("hello.txt", tag.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    image, _ = docker_client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True)
    yield image, tag
    docker_client.images.remove(tag, force=True)


def test_an_image_is_pushed_once_and_pulled_by_its_digest(docker_client, local_registry, tiny_image) -> None:  # noqa: F811
    image, tag = tiny_image
    spec = recipes.build_spec("cpu", env={})
    calls: list[str] = []

    def ensure(*_: Any, **__: Any) -> ImageResult:
        calls.append("ensure")
        return ImageResult(ref=tag, id=image.id, reused=False)

    lines: list[str] = []
    first = publish_image(spec, docker_client, local_registry.host, progress=lines.append, ensure=ensure)
    repository, remote_tag = remote_name(local_registry.host, recipes.plan_build(spec).tag)
    assert first.pushed and first.built and first.ref.startswith(f"{repository}@sha256:")
    assert remote_digest(docker_client, f"{repository}:{remote_tag}") == first.ref.rsplit("@", 1)[1]
    assert not [t for t in docker_client.images.get(tag).tags if t.startswith(local_registry.host)], (
        "the registry's name must not stay on this engine"
    )
    uploads = len(local_registry.requests("PUT"))
    again = publish_image(spec, docker_client, local_registry.host, progress=lines.append, ensure=ensure)
    assert (again.ref, again.pushed, again.built) == (first.ref, False, False) and calls == ["ensure"]
    assert len(local_registry.requests("PUT")) == uploads, "an unchanged image is not pushed again"
    assert "is in the registry already" in lines[-1]
    pulled = docker_client.images.pull(first.ref)
    try:
        assert pulled.id == image.id
        assert local_registry.requests("GET", f"torch-compat/cpu/manifests/{first.ref.rsplit('@', 1)[1]}")
    finally:
        docker_client.images.remove(first.ref)
    assert remote_digest(docker_client, f"{repository}:nosuchtag") is None
