"""The API a release adds and removes, per namespace, and which added names the suites test: on small
wheels built here, and on the recorded slim wheels of PyPI's 2.14.1 and 2.15.0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.api_changes import ApiDiff, WheelApi, diff_apis, load_api_diff
from harness.errors import InputError, UsageError
from harness.images.wheel_api import read_wheel_api
from harness.run.suite_apis import exercised_apis
from tests.images.test_wheel_api import API_WHEELS, make_wheel

SUITES = Path(__file__).resolve().parents[2] / "suites"


def _api(version: str, modules: dict[str, tuple[str, ...]]) -> WheelApi:
    return WheelApi(package="torch", version=version, modules=modules)


OLD = _api(
    "2.14.1", {"torch.nn.functional": ("linear", "scaled_mm"), "torch.mps": ("synchronize",), "torch.gone": ("x",)}
)
NEW = _api(
    "2.15.0+cu132",
    {
        "torch.nn.functional": ("linear", "scaled_addmm", "scaled_addmm_", "scaled_mm"),
        "torch.mps": ("Stream", "synchronize"),
        "torch.mps.streams": ("Stream",),
        "torch.foreach": ("floor",),
    },
)


def test_added_and_removed_per_namespace() -> None:
    diff = diff_apis(OLD, NEW, exercised={"torch.nn.functional.scaled_addmm", "torch.mps.Stream", "torch.floor"})
    by = {n.namespace: n for n in diff.namespaces}
    assert list(by) == ["torch.foreach", "torch.gone", "torch.mps", "torch.mps.streams", "torch.nn.functional"]
    assert by["torch.nn.functional"].added == ("scaled_addmm", "scaled_addmm_")
    assert by["torch.nn.functional"].tested == ("scaled_addmm",)
    assert (by["torch.gone"].status, by["torch.gone"].removed) == ("gone", ("x",))
    assert (by["torch.foreach"].status, by["torch.foreach"].tested) == ("new", ()), "torch.floor is another API"
    assert by["torch.mps.streams"].tested == ("Stream",), "the re-export torch.mps added and a suite names"
    assert (diff.added, diff.tested, diff.removed) == (5, 3, 1)
    assert diff.summary() == "2.15.0+cu132: 5 new public APIs, 3 tested, 1 gone"


def test_namespace_filter_takes_the_module_and_those_under_it() -> None:
    diff = diff_apis(OLD, NEW, exercised=set(), namespaces=("torch.mps",))
    assert [n.namespace for n in diff.namespaces] == ["torch.mps", "torch.mps.streams"]


def test_an_unknown_namespace_is_a_usage_error_never_an_empty_diff() -> None:
    """Issue 42: `--namespace torch.cuda.tunabel` said "No public name was added or removed"."""
    with pytest.raises(UsageError, match=r"--namespace torch\.mp: no public module .* \(did you mean torch\.mps\?\)"):
        diff_apis(OLD, NEW, exercised=set(), namespaces=("torch.mp",))
    assert diff_apis(OLD, NEW, exercised=set(), namespaces=("torch.gone",)).namespaces, "a module only the old had"


def test_is_for_ignores_local_tags() -> None:
    diff = diff_apis(OLD, NEW, exercised=set())
    assert diff.is_for("2.14.1+cu130", "2.15.0+cu132") and diff.is_for("2.14.1", "2.15.0")
    assert not diff.is_for("2.13.0", "2.15.0")


def test_json_round_trip_and_loading(tmp_path: Path) -> None:
    diff = diff_apis(OLD, NEW, exercised={"torch.mps.Stream"})
    path = tmp_path / "api.json"
    path.write_text(json.dumps(diff.to_json()), encoding="utf-8")
    assert load_api_diff(path) == diff
    assert json.loads(path.read_text())["added"] == 5


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such API diff file"),
        ("{", "not an API diff"),
        ('{"format": "torch-compat/matrix"}', "not an API diff"),
        ('{"format": "torch-compat/api-diff", "format_version": 99}', "format_version 99"),
        ('{"format": "torch-compat/api-diff", "format_version": 1, "package": "torch"}', "malformed"),
    ],
)
def test_bad_api_diff_files_are_input_errors(tmp_path: Path, content: str | None, says: str) -> None:
    path = tmp_path / "api.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=says):
        load_api_diff(path)


def test_markdown_lists_each_namespace() -> None:
    text = diff_apis(OLD, NEW, exercised={"torch.nn.functional.scaled_addmm"}).to_markdown()
    assert text.startswith("# Public API of torch 2.15.0+cu132 against 2.14.1\n")
    assert "## torch.foreach (new module)" in text and "## torch.gone (module removed)" in text
    assert "- added (2): `scaled_addmm` (tested), `scaled_addmm_`" in text
    assert "- removed (1): `x`" in text
    same = diff_apis(OLD, OLD, exercised=set())
    assert same.namespaces == () and "No public name was added or removed." in same.to_markdown()


def test_small_wheels_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    old = make_wheel(tmp_path / "a", {"torch/__init__.py": "__all__ = ['add']\n", "torch/linalg.py": "def svd(): ..."})
    new = make_wheel(
        tmp_path / "b",
        {"torch/__init__.py": "__all__ = ['add', 'sub']\n", "torch/linalg.py": "def svd(): ...\ndef eigh(): ..."},
        version="2.16.0.dev20261130",
    )
    diff = diff_apis(read_wheel_api(old), read_wheel_api(new), exercised={"torch.linalg.eigh"})
    assert [(n.namespace, n.added, n.tested) for n in diff.namespaces] == [
        ("torch", ("sub",), ()),
        ("torch.linalg", ("eigh",), ("eigh",)),
    ]


# ---------------------------------------------------------------- the recorded 2.14.1 -> 2.15.0 wheels
@pytest.fixture(scope="module")
def release_diff() -> ApiDiff:
    old, new = (read_wheel_api(API_WHEELS / f"torch-{v}-py3-none-any.whl") for v in ("2.14.1", "2.15.0"))
    return diff_apis(old, new, exercised_apis(SUITES))


def test_recorded_2_15_additions(release_diff: ApiDiff) -> None:
    """What issue 27 lists for 2.15, read from the wheels: scaled_addmm(_), a public torch.optim.functional,
    torch.compiler.precompile's capture/load, the fsspec checkpoint filesystem, MPS streams."""
    added = {n.namespace: set(n.added) for n in release_diff.namespaces}
    assert {"scaled_addmm", "scaled_addmm_"} <= added["torch.nn.functional"]
    assert "functional" in added["torch.optim"] and {"adam", "sgd", "adamw"} <= added["torch.optim.functional"]
    assert {"capture", "load"} <= added["torch.compiler.precompile"]
    assert {"FsspecReader", "FsspecWriter"} <= added["torch.distributed.checkpoint"]
    assert {"Stream", "stream", "set_stream"} <= added["torch.mps"]
    status = {n.namespace: n.status for n in release_diff.namespaces}
    assert status["torch.optim.functional"] == status["torch.compiler.precompile"] == "new"
    assert (release_diff.old_version, release_diff.new_version) == ("2.14.1", "2.15.0")
    assert release_diff.added > 100


def test_recorded_2_15_additions_the_suites_test(release_diff: ApiDiff) -> None:
    tested = {f"{n.namespace}.{name}" for n in release_diff.namespaces for name in n.tested}
    for api in (
        "torch.nn.functional.scaled_addmm",
        "torch.optim.functional",
        "torch.compiler.precompile.capture",
        "torch.compiler.precompile.load",
        "torch.mps.Stream",
    ):
        assert api in tested, f"{api} is new in 2.15 and the suites should exercise it"
    assert release_diff.tested <= release_diff.added
