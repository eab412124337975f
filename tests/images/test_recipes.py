"""harness/images/recipes.py without an engine: build inputs from the registry, the content-hash tag, the
build context, and the refusals (credentials, bad wheelhouse, bad CA bundle)."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.images import recipes
from harness.registry import host_libraries, load_registry

CA = Path(__file__).parents[1] / "docker" / "data" / "test-proxy-ca.crt"


@pytest.fixture(autouse=True)
def _a_github_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The labels' source and revision as in a GitHub run, so no test here asks git (a subprocess)."""
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    monkeypatch.setenv("GITHUB_SHA", "e" * 40)


@pytest.fixture
def wheelhouse(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    (folder / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"not really a wheel")
    (folder / "pytest-9.0.0-py3-none-any.whl").write_bytes(b"nor this")
    return folder


@pytest.mark.parametrize("backend_id", list(load_registry()))
def test_spec_defaults_come_from_the_registry(backend_id: str) -> None:
    backend = load_registry()[backend_id]
    spec = recipes.build_spec(backend_id, env={})
    assert spec.index_url == backend.wheel_index
    assert spec.base_image == backend.base_image
    args = recipes.common_buildargs(spec)
    assert args["TORCH_INDEX_URL"] == backend.wheel_index
    assert args["EXPECT_LOCAL_TAG"] == backend.local_tag
    assert args["EXPECT_BUILD"] == backend.build
    assert args["EXPECT_RUNTIME"] == backend.runtime_version
    assert args["TORCH_SPEC"] == f"torch=={load_registry().default_torch(backend_id)}"


def test_cu126_pins_its_own_index_not_pypi() -> None:
    args = recipes.common_buildargs(recipes.build_spec("cu126", torch="2.13.0", env={}))
    assert args["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cu126"
    assert args["TORCH_VERSION"] == "2.13.0+cu126"


def test_a_variant_defaults_to_the_newest_release_that_ships_it() -> None:
    registry = load_registry()
    assert recipes.build_spec("cu132", env={}).torch == f"torch=={registry.current.latest}"
    assert recipes.build_spec("cu126", env={}).torch == "torch==2.14.1"  # 2.15 does not ship CUDA 12.6


def test_a_pinned_release_that_does_not_ship_the_variant_is_refused() -> None:
    with pytest.raises(UsageError, match=r"torch 2.15 is not shipped as cu126.*--torch 2.14.1"):
        recipes.build_spec("cu126", torch="2.15.0", env={})
    assert recipes.build_spec("cu134", torch="2.17.0", env={})  # a release the registry does not list: let through


def test_the_channel_picks_the_index_and_a_nightly_is_named_by_its_date() -> None:
    nightly = recipes.build_spec("cu134", torch="2.16.0.dev20261130", env={})
    assert nightly.index_url == "https://download.pytorch.org/whl/nightly/cu134"  # the version implies it
    assert recipes.common_buildargs(nightly)["TORCH_VERSION"] == "2.16.0.dev20261130+cu134"
    candidate = recipes.build_spec("cu130", channel="test", env={})
    assert (candidate.torch, candidate.index_url) == ("torch==2.16.0", "https://download.pytorch.org/whl/test/cu130")
    assert recipes.build_spec("cu130", torch="2.15.0", env={}).index_url == "https://download.pytorch.org/whl/cu130"
    with pytest.raises(UsageError, match="a nightly image names its nightly"):
        recipes.build_spec("cu130", channel="nightly", env={})
    # an explicit index (a mirror) still wins over the channel's
    mirror = recipes.build_spec("cu130", channel="test", index_url="https://mirror.example/test/cu130", env={})
    assert mirror.index_url == "https://mirror.example/test/cu130"


def test_environment_variables_override_the_registry(wheelhouse: Path) -> None:
    env = {
        "HARNESS_BASE_IMAGE": "registry.example/base:1",
        "HARNESS_TORCH": "2.12.1",
        "HARNESS_WHEELHOUSE": str(wheelhouse),
        "HARNESS_CA_BUNDLE": str(CA),
        "HARNESS_PACKAGE_INDEX_URL": "https://pypi.mirror.example/simple",
    }
    spec = recipes.build_spec("cpu", env=env)
    assert spec.base_image == "registry.example/base:1"
    assert spec.requirement == "torch==2.12.1" and spec.exact_version == "2.12.1"
    assert spec.wheelhouse == wheelhouse.resolve() and spec.ca_bundle == CA.resolve()
    assert spec.package_index_url == "https://pypi.mirror.example/simple"
    assert recipes.common_buildargs(spec)["PACKAGE_INDEX_URL"] == ""  # a wheelhouse build uses no index
    no_wheels = recipes.build_spec("cpu", env={k: v for k, v in env.items() if k != "HARNESS_WHEELHOUSE"})
    assert recipes.common_buildargs(no_wheels)["PACKAGE_INDEX_URL"] == "https://pypi.mirror.example/simple"
    explicit = recipes.build_spec("cpu", base_image="other:2", torch="torch>=2.13", env=env)
    assert explicit.base_image == "other:2"
    assert explicit.requirement == "torch>=2.13" and explicit.exact_version == ""


def test_a_wheelhouse_build_installs_the_torch_the_wheelhouse_holds(wheelhouse: Path) -> None:
    """Without --torch, not the registry's default (2.15.0): a wheelhouse made for 2.13.0 cannot
    install it. --torch / HARNESS_TORCH still decide when given."""
    assert recipes.build_spec("cu130", wheelhouse=wheelhouse, env={}).requirement == "torch==2.13.0"
    assert recipes.build_spec("cu130", env={"HARNESS_WHEELHOUSE": str(wheelhouse)}).exact_version == "2.13.0"
    assert recipes.build_spec("cu130", wheelhouse=wheelhouse, torch="2.14.1", env={}).exact_version == "2.14.1"
    (wheelhouse / "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"a second torch")
    default = load_registry().default_torch("cu130")
    assert recipes.build_spec("cu130", wheelhouse=wheelhouse, env={}).exact_version == default  # two: the default


@pytest.mark.parametrize("field", ["index_url", "package_index_url"])
def test_index_urls_with_credentials_are_refused(field: str) -> None:
    with pytest.raises(UsageError) as info:
        recipes.build_spec("cpu", env={}, **{field: "https://bob:hunter2@artifactory.example/simple"})
    assert "hunter2" not in str(info.value)
    assert "credentials" in str(info.value) and "wheelhouse" in str(info.value)


def test_bad_wheelhouse_and_ca_bundle_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a directory"):
        recipes.build_spec("cpu", wheelhouse=tmp_path / "absent", env={})
    with pytest.raises(UsageError, match="holds no"):
        recipes.build_spec("cpu", wheelhouse=tmp_path, env={})
    not_pem = tmp_path / "ca.crt"
    not_pem.write_text("hello")
    with pytest.raises(UsageError, match="no PEM certificate"):
        recipes.build_spec("cpu", ca_bundle=not_pem, env={})


def test_tag_is_a_hash_of_the_inputs(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = recipes.build_spec("cpu", wheelhouse=wheelhouse, env={})
    plan = recipes.plan_build(spec)
    assert plan.tag == f"torch-compat/cpu:{plan.inputs_hash[:12]}"
    assert recipes.plan_build(spec).tag == plan.tag  # stable
    # A new commit changes the revision label, not the image.
    monkeypatch.setenv("GITHUB_SHA", "0" * 40)
    assert recipes.plan_build(spec).tag == plan.tag
    # Any real input changes it: a wheel, an argument, the registry entry.
    (wheelhouse / "pytest-9.0.0-py3-none-any.whl").write_bytes(b"a different wheel")
    changed_wheel = recipes.plan_build(spec).tag
    assert changed_wheel != plan.tag
    assert recipes.plan_build(dataclasses.replace(spec, torch="2.12.1")).tag not in (plan.tag, changed_wheel)
    other_backend = dataclasses.replace(spec.backend, shm_size="16g")
    assert recipes.plan_build(dataclasses.replace(spec, backend=other_backend)).tag != changed_wheel


def test_proxies_are_passed_but_not_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = recipes.build_spec("cpu", env={})
    before = recipes.plan_build(spec).tag
    monkeypatch.setenv("HTTPS_PROXY", "http://u:p@proxy.example:3128")
    assert recipes.plan_build(spec).tag == before
    assert recipes.proxy_buildargs()["HTTPS_PROXY"] == "http://u:p@proxy.example:3128"
    assert recipes.proxy_buildargs({"no_proxy": "localhost"}) == {"no_proxy": "localhost"}


@pytest.mark.parametrize(
    ("backend_id", "layer"),
    [("cpu", None), ("cu132", None), ("rocm7.2", "Dockerfile.rocm"), ("rocm7.14", None), ("xpu", "Dockerfile.xpu")],
)
def test_rocm_and_xpu_get_their_own_layer(backend_id: str, layer: str | None) -> None:
    plan = recipes.plan_build(recipes.build_spec(backend_id, env={}))
    assert plan.steps[0].dockerfile == "Dockerfile"
    if layer is None:
        assert len(plan.steps) == 1
        return
    assert [s.dockerfile for s in plan.steps] == ["Dockerfile", layer]
    assert plan.steps[0].tag == f"{plan.tag}-common"
    assert plan.steps[1].buildargs["COMPAT_IMAGE"] == plan.steps[0].tag
    if backend_id == "rocm7.2":
        assert plan.steps[1].buildargs["ROCM_VERSION"] == load_registry()["rocm7.2"].runtime_version


@pytest.mark.parametrize(
    ("backend_id", "tools"),
    [("cpu", "python3"), ("cu130", ""), ("cu132", ""), ("rocm7.2", ""), ("rocm7.14", "rocminfo"), ("xpu", "")],
)
def test_the_image_must_bring_its_health_check_unless_the_host_or_a_layer_does(backend_id: str, tools: str) -> None:
    """rocm7.14 has no apt layer: its rocminfo must come from the rocm-sdk-core wheel, or the image is
    refused at build time. CUDA's nvidia-smi is injected at run time; rocm7.2's and xpu's tools come
    with their layer, after the shared recipe's verification."""
    assert recipes.common_buildargs(recipes.build_spec(backend_id, env={}))["EXPECT_TOOLS"] == tools


def test_the_verifier_names_a_missing_tool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from harness.images import verify_torch

    monkeypatch.setenv("PATH", str(tmp_path))
    (problem,) = verify_torch.missing_tools(["rocminfo"])
    assert problem == f"rocminfo is not on the image's PATH ({tmp_path}); the health check runs it on the GPU host"
    tool = tmp_path / "rocminfo"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert verify_torch.missing_tools(["rocminfo"]) == []


def test_context_holds_only_what_the_build_needs(tmp_path: Path, wheelhouse: Path) -> None:
    """Never the repository and never the wheelhouse (it is mounted into the install container)."""
    spec = recipes.build_spec("rocm7.2", torch="2.13.0", wheelhouse=wheelhouse, ca_bundle=CA, env={})
    context = recipes.assemble_context(recipes.plan_build(spec), tmp_path / "ctx")
    names = sorted(str(p.relative_to(context)) for p in context.rglob("*") if p.is_file())
    assert names == [
        "Dockerfile",
        "Dockerfile.rocm",
        "ca-certificates/extra-ca.crt",
        "host-libraries.json",
        "install-python.sh",
        "install-venv.sh",
        "library_check.py",
        "torch_build.py",
        "verify_torch.py",
    ]
    assert all((context / n).stat().st_mode & 0o044 == 0o044 for n in names)  # readable by the image's user
    host = json.loads((context / "host-libraries.json").read_text())
    assert host == {lib.pattern: lib.reason for lib in host_libraries()} and "libcuda.so*" in host
    bare = recipes.assemble_context(recipes.plan_build(recipes.build_spec("cpu", env={})), tmp_path / "bare")
    assert (bare / "ca-certificates").is_dir() and not any((bare / "ca-certificates").iterdir())  # COPY needs it


def test_labels_say_where_torch_came_from(wheelhouse: Path) -> None:
    """An index build names its index; a wheelhouse build names the wheelhouse's hash and its torch
    wheel, and no index (the index label used to name the cu130 index for a wheelhouse build)."""
    from_index = recipes.common_buildargs(recipes.build_spec("cu130", env={}))
    assert from_index["TORCH_SOURCE"] == "index https://download.pytorch.org/whl/cu130"
    assert from_index["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cu130"
    spec = recipes.build_spec("cu130", wheelhouse=wheelhouse, env={})
    from_wheels = recipes.common_buildargs(spec)
    digest = recipes.wheelhouse_digest(wheelhouse)
    assert from_wheels["TORCH_SOURCE"] == (
        f"wheelhouse sha256:{digest[:16]} (torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl)"
    )
    assert from_wheels["TORCH_INDEX_URL"] == "" and from_wheels["PACKAGE_INDEX_URL"] == ""
    plan = recipes.plan_build(spec)
    assert plan.steps[0].buildargs["VENV_IMAGE"] == plan.venv_tag == f"{plan.tag}-venv"
    assert "VENV_IMAGE" not in recipes.plan_build(recipes.build_spec("cu130", env={})).steps[0].buildargs


def test_index_credentials_never_reach_a_label() -> None:
    assert recipes.torch_source(recipes.build_spec("cpu", env={})) == "index https://download.pytorch.org/whl/cpu"


def test_source_url_is_stored_without_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://x-access-token:ghs_abc@github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)
    labels = recipes.source_labels()
    assert labels == {"SOURCE_URL": "https://github.com/org/repo", "REVISION": "f" * 40}


# -- what the verifier of a rocm7.14 image checks: the pip-packaged ROCm runtime -----------------
# torch's ROCm 7.14 build bundles no ROCm library: it requires `rocm[libraries,device-all]`, the
# `rocm` meta package (an sdist pip builds) pulls the runtime wheels in through those extras, and
# their libraries live in `_rocm_sdk_*` packages in site-packages (no /opt/rocm). Metadata as
# setuptools writes it for TheRock's templates (build_tools/packaging/python/templates/rocm/setup.py).
ROCM_DISTS = {
    "torch": ("2.15.0+rocm7.14", ["rocm[libraries,device-all]==7.14.0; platform_system == 'Linux'", "filelock"]),
    "rocm": (
        "7.14.0",
        [
            "rocm-sdk-core==7.14.0",
            'rocm-sdk-libraries==7.14.0; extra == "libraries"',
            'rocm-sdk-device-gfx942==7.14.0; extra == "device-all"',
            'rocm-sdk-device-gfx1100==7.14.0; extra == "device-all" or extra == "device-gfx1100"',
            'rocm-sdk-devel==7.14.0; extra == "devel"',
        ],
    ),
    "rocm-sdk-core": ("7.14.0", []),
    "rocm-sdk-libraries": ("7.14.0", ["rocm-sdk-core==7.14.0"]),
    "rocm-sdk-device-gfx942": ("7.14.0", []),
    "rocm-sdk-device-gfx1100": ("7.14.0", []),
    "rocm-sdk-devel": ("7.14.0", []),  # installed, but nobody asked for the devel extra
}
ROCM_LIBRARIES = {
    "rocm-sdk-core": [
        "_rocm_sdk_core/lib/libamdhip64.so.7",
        "_rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_numa.so.1",
    ],
    "rocm-sdk-libraries": ["_rocm_sdk_libraries/lib/libhipblas.so.3", "_rocm_sdk_libraries/lib/libMIOpen.so.1"],
    "rocm-sdk-devel": ["_rocm_sdk_devel/lib/libdevel_only.so"],
}


def _fake_rocm_site(root: Path) -> Path:
    """An installed ROCm 7.14 torch as pip leaves it: dist-infos with METADATA and RECORD, and real
    shared libraries (compiled here) in the `_rocm_sdk_*` packages."""
    from tests.images.test_library_check import _compile, _record_row

    built = _compile(root / "built.so")
    site = root / "site-packages"
    site.mkdir()
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    for name, (version, requires) in ROCM_DISTS.items():
        rows = []
        for relpath in ROCM_LIBRARIES.get(name, []):
            target = site / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(built.read_bytes())
            rows.append(_record_row(site, target))
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        extras = sorted({e for r in requires for e in re.findall(r'extra == "([^"]+)"', r)})
        meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        meta += [f"Provides-Extra: {e}" for e in extras] + [f"Requires-Dist: {r}" for r in requires]
        (info / "METADATA").write_text("\n".join(meta) + "\n")
        (info / "RECORD").write_text("\n".join([*rows, f"{info.name}/RECORD,,"]) + "\n")
    return site


@pytest.mark.slow  # compiles libraries and loads them in a fresh interpreter
def test_the_rocm_714_runtime_wheels_are_in_the_closure_through_the_extras(tmp_path: Path) -> None:
    site = _fake_rocm_site(tmp_path)
    code = (
        "import json; from harness.images import library_check as lc; "
        "dists = lc.dependency_closure('torch'); r = lc.check(); "
        "print(json.dumps({'dists': [d.metadata['Name'] for d in dists], "
        "'libs': sorted(lib.relpath for lib in lc.bundled_libraries(dists)), "
        "'loaded': r.loaded, 'libraries': r.libraries, 'problems': r.problems}))"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],  # -S: only the fake site-packages, not this host's
        env={"PYTHONPATH": f"{site}:{repo}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["dists"] == [
        "rocm",
        "rocm-sdk-core",
        "rocm-sdk-device-gfx1100",
        "rocm-sdk-device-gfx942",
        "rocm-sdk-libraries",
        "torch",
    ]  # not rocm-sdk-devel: nobody asked for its extra (and filelock is not installed there)
    assert found["libs"] == sorted(ROCM_LIBRARIES["rocm-sdk-core"] + ROCM_LIBRARIES["rocm-sdk-libraries"])
    assert found["problems"] == [] and found["loaded"] == found["libraries"] == 4


# -- the plans of what this project cannot build here (rocm7.14, rocm7.2, xpu), and cu130's ---------
def test_the_rocm_714_plan_is_the_shared_recipe_alone_with_its_runtime_from_the_wheels() -> None:
    """No AMD apt layer and no /opt/rocm: torch and the `rocm[libraries,device-all]` wheels from the
    rocm7.14 index into /opt/venv, rocminfo from rocm-sdk-core checked on PATH at build time."""
    registry = load_registry()
    spec = recipes.build_spec("rocm7.14", env={})
    plan = recipes.plan_build(spec)
    assert [step.dockerfile for step in plan.steps] == ["Dockerfile"] and "Dockerfile.rocm" not in plan.files
    args = plan.steps[0].buildargs
    assert args["BASE_IMAGE"] == "ubuntu:24.04" == registry["rocm7.14"].base_image
    assert args["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/rocm7.14"
    assert args["TORCH_SPEC"] == f"torch=={registry.default_torch('rocm7.14')}"
    assert (args["EXPECT_BUILD"], args["EXPECT_LOCAL_TAG"], args["EXPECT_RUNTIME"]) == ("rocm", "rocm7.14", "7.14")
    assert args["TORCH_VERSION"] == f"{spec.exact_version}+rocm7.14" and args["EXPECT_TOOLS"] == "rocminfo"
    assert "ROCM_VERSION" not in args
    (command,) = recipes.plan_commands(plan)
    assert command.startswith(f"docker build -f Dockerfile -t {plan.tag} ") and command.endswith(" '<context>'")
    assert recipes.plan_build(recipes.build_spec("rocm7.2", env={})).tag != recipes.plan_build(spec).tag


def test_the_rendered_plan_names_every_tag_input(wheelhouse: Path) -> None:
    plan = recipes.plan_build(recipes.build_spec("rocm7.14", env={}))
    text = "\n".join(recipes.render_plan(plan))
    assert text.startswith(f"image {plan.tag} (nothing built: --dry-run)\n")
    for name in [*plan.files, *plan.generated]:
        assert f"file {name} sha256:" in text
    assert "EXPECT_TOOLS=rocminfo" in text and "REVISION=" not in text.split("steps:")[0]  # labels do not hash
    facts = recipes.plan_facts(plan)
    assert facts["inputs"]["hash"] == plan.inputs_hash and facts["dockerfiles"] == ["Dockerfile"]
    # a wheelhouse build: the system stage, the install container (no network, the wheels read-only), the image
    offline = recipes.plan_build(recipes.build_spec("cu132", wheelhouse=wheelhouse, network="none", env={}))
    commands = recipes.plan_commands(offline)
    assert [c.split()[:2] + c.split()[2:3] for c in commands] == [
        ["docker", "build", "--network"],
        ["docker", "run", "--name"],
        ["docker", "commit", "'<install>'"],
        ["docker", "build", "--network"],
        ["docker", "rmi", offline.venv_tag],
    ]
    assert "--target system" in commands[0] and f"-v {wheelhouse}:/mnt:ro" in commands[1]
    assert "--network none" in commands[1] and f"VENV_IMAGE={offline.venv_tag}" in commands[3]


@pytest.mark.slow  # runs the harness CLI in a subprocess
@pytest.mark.parametrize("backend_id", ["rocm7.14", "rocm7.2", "xpu"])
def test_harness_build_dry_run_needs_no_engine(backend_id: str) -> None:
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "harness", "build", "--backend", backend_id, "--dry-run"],
        cwd=repo,
        env={"PATH": "/usr/bin:/bin", "DOCKER_HOST": "unix:///nonexistent/docker.sock", "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    plan = recipes.plan_build(recipes.build_spec(backend_id, env={}))
    assert done.stdout.splitlines()[0] == f"image {plan.tag} (nothing built: --dry-run)"
    assert len([line for line in done.stdout.splitlines() if line.startswith("    ") and ". docker " in line]) == len(
        plan.steps
    )


def test_the_cu130_plan_pins_its_build_as_the_real_build_test_would() -> None:
    """What the opt-in real cu130 build (tests/docker/test_cuda_image.py) checks, without Docker: PyPI's
    2.13.0 wheelhouse makes a +cu130 image with CUDA 13.0 expected, no layer, no tool of its own."""
    spec = recipes.build_spec("cu130", torch="2.13.0", index_url="https://pypi.org/simple", env={})
    plan = recipes.plan_build(spec)
    args = plan.steps[0].buildargs
    assert [step.dockerfile for step in plan.steps] == ["Dockerfile"]
    assert (args["EXPECT_LOCAL_TAG"], args["EXPECT_RUNTIME"], args["EXPECT_VERSION"]) == ("cu130", "13.0", "2.13.0")
    assert args["TORCH_VERSION"] == "2.13.0+cu130" and args["EXPECT_TOOLS"] == ""
    assert args["TORCH_INDEX_URL"] == "https://pypi.org/simple"
    cu132 = recipes.plan_build(recipes.build_spec("cu132", torch="2.15.0", index_url="https://pypi.org/simple", env={}))
    assert cu132.steps[0].buildargs["EXPECT_RUNTIME"] == "13.2" and cu132.tag != plan.tag


def test_an_image_pulled_by_digest_is_described_by_that_digest() -> None:
    from types import SimpleNamespace

    from harness.images.recipes import describe_image

    pulled = "127.0.0.1:5000/torch-compat/cpu@sha256:" + "cd" * 32
    image = SimpleNamespace(
        id="sha256:" + "ef" * 32, attrs={"RepoDigests": ["ghcr.io/o/x@sha256:" + "ab" * 32, pulled]}
    )
    assert describe_image(image, pulled)["digest"] == pulled
    assert describe_image(image, "torch-compat/cpu:abc")["digest"].startswith("ghcr.io/o/x@"), "else the first"
    assert describe_image(SimpleNamespace(id="sha256:1", attrs={}), "t")["digest"] == "sha256:1"


# -- images per interpreter (issue 41) -------------------------------------------------------------------
def test_the_python_is_an_input_of_the_tag_and_the_verifier() -> None:
    default = recipes.plan_build(recipes.build_spec("cpu", env={}))
    py315 = recipes.plan_build(recipes.build_spec("cpu", interpreter="3.15", env={}))
    assert default.tag != py315.tag
    args = py315.steps[0].buildargs
    assert (args["PYTHON"], args["PYTHON_SOURCE"], args["PYTHON_VERSION"], args["EXPECT_PYTHON"]) == (
        "python3.15", "system", "3.15", "3.15"
    )  # fmt: skip
    assert py315.spec.base_image == "python:3.15-slim-bookworm", "bookworm has no 3.15: the official image"
    assert default.steps[0].buildargs["EXPECT_PYTHON"] == "" and default.spec.base_image == "debian:bookworm-slim"


def test_a_base_named_for_the_python_or_given_keeps_it_and_free_threaded_comes_from_uv() -> None:
    local = recipes.build_spec("cu132", interpreter="3.15", base_image="torch-compat/local-base:forky", env={})
    assert (local.base_image, local.python, local.python_source) == (
        "torch-compat/local-base:forky",
        "python3.15",
        "system",
    )
    same = recipes.build_spec("cpu", interpreter="3.11", env={})
    assert same.base_image == "debian:bookworm-slim", "bookworm's own Python needs no other base"
    free = recipes.build_spec("cpu", interpreter="3.14t", env={})
    assert (free.base_image, free.python, free.python_source) == ("debian:bookworm-slim", "python3.14t", "uv")
    rocm = recipes.build_spec("rocm7.14", interpreter="3.13", env={})
    assert (rocm.base_image, rocm.python_source) == ("ubuntu:24.04", "uv"), "Ubuntu's layers keep Ubuntu"
    env = recipes.build_spec("cpu", env={"HARNESS_PYTHON_VERSION": "3.13", "HARNESS_PYTHON_SOURCE": "uv"})
    assert (str(env.interpreter), env.python_source) == ("3.13", "uv")


def test_a_typo_in_the_python_or_its_source_is_one_line() -> None:
    with pytest.raises(UsageError, match=r"'3\.14x' is not a Python like 3\.15.*valid keys: 3\.10"):
        recipes.build_spec("cpu", interpreter="3.14x", env={})
    with pytest.raises(UsageError, match="--python-source 'conda' is not one of system, uv"):
        recipes.build_spec("cpu", interpreter="3.13", python_source="conda", env={})


def test_a_wheelhouse_of_another_abi_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    (tmp_path / "torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    with pytest.raises(UsageError) as err:
        recipes.build_spec("cu132", interpreter="3.15", wheelhouse=tmp_path, torch="2.15.0", env={})
    assert str(err.value) == (
        f"wheelhouse {tmp_path.resolve()} holds torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl: a wheel for "
        "another ABI than the image's Python 3.15 (cp315) (make it for that Python: harness wheelhouse --backend "
        "cu132 --python 3.15 -o DIR)"
    )
    (tmp_path / "torch-2.15.0-cp315-cp315-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert recipes.build_spec("cu132", interpreter="3.15", wheelhouse=tmp_path, torch="2.15.0", env={}).interpreter
