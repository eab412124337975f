"""Command-line options shared by `harness build` and container runs of `harness run`: how the
image is built (each option defaults from a HARNESS_* variable) and how its containers run."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.images import recipes
from harness.interpreters import python_key
from harness.registry import CHANNELS, Backend

CHANNEL_HELP = (
    "torch's channel: release (/whl/<variant>), test (release candidates, /whl/test/<variant>) or nightly "
    "(/whl/nightly/<variant>); default: what --torch says (.devYYYYMMDD: nightly; rcN or a release the registry "
    "lists on the test channel: test)"
)


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("image build (container mode)")
    group.add_argument("--base-image", help=f"base image (default: the registry's; env {recipes.ENV_BASE_IMAGE})")
    group.add_argument(
        "--image-python",
        dest="image_python",
        help=f"interpreter package in the image (default python3; env {recipes.ENV_PYTHON})",
    )
    group.add_argument(
        "--python-source",
        choices=recipes.PYTHON_SOURCES,
        help="where the image's Python comes from: system (the base image or its distribution's packages: Debian "
        "forky's python3.13-3.15, an official python:3.X image) or uv (a managed CPython, free-threaded included; "
        f"needs the network); default: uv for a free-threaded Python, else system (env {recipes.ENV_PYTHON_SOURCE})",
    )
    group.add_argument(
        "--torch", help=f"torch version or requirement (default {recipes.DEFAULT_TORCH}; env {recipes.ENV_TORCH})"
    )
    group.add_argument("--channel", choices=CHANNELS, help=CHANNEL_HELP)
    group.add_argument(
        "--index-url", help=f"torch wheel index (default: the registry's, of the channel; env {recipes.ENV_INDEX_URL})"
    )
    group.add_argument(
        "--package-index-url", help=f"index for pytest and friends (default PyPI; env {recipes.ENV_PACKAGE_INDEX_URL})"
    )
    group.add_argument(
        "--wheelhouse",
        type=Path,
        help=f"install every wheel from this folder, with no index (env {recipes.ENV_WHEELHOUSE}); "
        "`harness wheelhouse` makes one",
    )
    group.add_argument(
        "--ca-bundle", type=Path, help=f"extra CA certificates (PEM) for a TLS proxy (env {recipes.ENV_CA_BUNDLE})"
    )
    group.add_argument(
        "--build-network", help=f"network mode of build steps, e.g. host or none (env {recipes.ENV_BUILD_NETWORK})"
    )
    group.add_argument("--rebuild", action="store_true", help="build even when an image with the same inputs exists")
    group.add_argument("--build-log", action="store_true", help="print every line of the build, not only its steps")


def spec_from_args(args: argparse.Namespace, backend: Backend) -> recipes.BuildSpec:
    """The build spec of the options; `--python` (a key such as 3.15, never a path here) is the image's CPython."""
    return recipes.build_spec(
        backend,
        base_image=args.base_image,
        python=args.image_python,
        interpreter=python_key(getattr(args, "python", None)),
        python_source=args.python_source,
        torch=args.torch,
        index_url=args.index_url,
        package_index_url=args.package_index_url,
        wheelhouse=args.wheelhouse,
        ca_bundle=args.ca_bundle,
        network=args.build_network,
        channel=args.channel,
    )


def add_container_arguments(parser: argparse.ArgumentParser) -> None:
    """`harness run` options for container mode (--image is defined by run itself)."""
    add_build_arguments(parser)
    group = parser.add_argument_group("container run")
    group.add_argument("--memory", help="memory limit of the test container, e.g. 16g (default: none)")
    group.add_argument(
        "--cdi", action="store_true", help="pass the GPUs by CDI device names (registry cdi_devices) instead"
    )
