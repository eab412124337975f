"""The probe's build variant and the matching of known issues to what ran, without torch (fast tier).

The probe's pure functions (``derive_backend``, ``normalize_backend``, ``rocm_version``,
``public_callables``) and ``expectations.py`` import only the standard library: they are checked here
directly, on the real ``known_issues.toml`` and on malformed files written to a tmp dir.
"""

from __future__ import annotations

import textwrap
import types
from pathlib import Path

import pytest

from tests.suites.support_modules import SUITES, load

FAST = True  # no torch, no suite run: stays in the fast tier (tests/suites/conftest.py)

probe = load("probe")
expectations = load("expectations")
KNOWN = expectations.load(SUITES / "expectations")


@pytest.mark.parametrize(
    ("tag", "build", "cuda", "hip", "variant"),
    [
        ("cpu", "cpu", None, None, "cpu"),
        ("xpu", "xpu", None, None, "xpu"),
        ("cu126", "cuda", "12.6", None, "cu126"),
        ("cu130", "cuda", "13.0", None, "cu130"),
        ("cu132", "cuda", "13.2", None, "cu132"),
        ("cu134", "cuda", "13.4", None, "cu134"),
        (None, "cuda", "13.2", None, "cu132"),
        (None, "cuda", "12.8", None, "cu128"),
        ("rocm7.2", "rocm", None, "7.2.53211", "rocm7.2"),
        ("rocm7.2.1", "rocm", None, "7.2.53211", "rocm7.2"),
        ("rocm7.14", "rocm", None, "7.14.0", "rocm7.14"),
        ("rocm10.0", "rocm", None, "10.0.0", "rocm10.0"),
        (None, "rocm", None, "7.2.53211-abc", "rocm7.2"),
        (None, "rocm", None, "7.14.1", "rocm7.14"),
        (None, "cpu", None, None, "cpu"),
        (None, "xpu", None, None, "xpu"),
    ],
)
def test_derive_backend_is_the_build_variant(tag, build, cuda, hip, variant) -> None:
    assert probe.derive_backend(tag, build, cuda, hip) == variant


def test_rocm_releases_compare_as_numbers() -> None:
    assert probe.rocm_version("rocm7.14") > probe.rocm_version("rocm7.2")
    assert probe.rocm_version("rocm10.0") > probe.rocm_version("rocm7.14")
    assert sorted(["rocm7.2", "rocm10.0", "rocm7.14"], key=probe.rocm_version) == ["rocm7.2", "rocm7.14", "rocm10.0"]
    assert probe.rocm_version("cu130") is None and probe.rocm_version(None) is None


@pytest.mark.parametrize(
    ("label", "backend"), [("rocm", "rocm7.2"), ("ROCm7.14", "rocm7.14"), ("cu130", "cu130"), ("xpu", "xpu")]
)
def test_compat_backend_labels(label: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(probe.BACKEND_ENV, label)
    assert probe.backend_id({"variant": "cpu"}) == backend
    monkeypatch.delenv(probe.BACKEND_ENV)
    assert probe.backend_id({"variant": "cu132"}) == "cu132"


def test_public_callables_are_the_namespace_own() -> None:
    ns = types.ModuleType("torch.fake")

    def own() -> None: ...

    own.__module__ = "torch.fake"

    class Own:
        pass

    Own.__module__ = "torch.fake"
    ns.own, ns.Own, ns._private, ns.value = own, Own, own, 3
    ns.Any, ns.path = __import__("typing").Any, Path  # imported names are not the namespace's API
    ns.sub = types.ModuleType("torch.fake.sub")
    assert probe.public_callables(ns) == ["Own", "own"]


# ---------------------------------------------------------------- matching what ran
def _ctx(variant: str, device: str, *, name: str = "", python=(3, 11), torch=(2, 13, 0)):
    return expectations.RunContext(variant=variant, device=device, device_name=name, python=python, torch=torch)


def _links(ctx, test: str) -> set[str]:
    return {k.link.rsplit("/", 1)[-1] for k in expectations.match(expectations.applicable(KNOWN, ctx), test)}


EIGH = "linalg/test_eigh.py::test_eigh_repeated_calls_stable[complex64-batched]"
FLOAT4 = "export/test_export_mx.py::test_float4_e2m1fn_x2_dtype_roundtrip"
COMPILE = "compile/test_compile_modules.py::test_codegen_path"


def test_cuda_issue_applies_only_where_a_gpu_ran() -> None:
    assert _links(_ctx("cu130", "cpu"), EIGH) == set(), "a cu130 wheel without a GPU ran on the CPU"
    assert _links(_ctx("cu130", "cuda"), EIGH) == {"192483"}
    assert _links(_ctx("cu132", "cuda", torch=(2, 15, 0)), EIGH) == {"192483"}
    assert _links(_ctx("cpu", "cpu"), EIGH) == set()


def test_host_side_issue_applies_everywhere() -> None:
    for variant, device in (("cpu", "cpu"), ("cu130", "cpu"), ("cu130", "cuda"), ("rocm7.14", "rocm"), ("xpu", "xpu")):
        assert _links(_ctx(variant, device), FLOAT4) == {"176621"}, (variant, device)


def test_rocm_cpu_compile_regression_matches_build_device_and_release() -> None:
    assert _links(_ctx("rocm7.2", "cpu"), COMPILE) == {"189194"}
    assert _links(_ctx("rocm7.14", "cpu", torch=(2, 14, 1)), COMPILE) == {"189194"}
    assert _links(_ctx("rocm7.2", "cpu", torch=(2, 12, 1)), COMPILE) == set(), "2.12.1 compiled fine"
    assert _links(_ctx("rocm7.2", "rocm"), COMPILE) == set(), "a ROCm GPU ran: not the CPU path"
    assert _links(_ctx("cu130", "cpu"), COMPILE) == set()


def test_python_315_compile_issue() -> None:
    assert _links(_ctx("cpu", "cpu", python=(3, 15)), COMPILE) == {"184352"}
    # 2.15.0 moved the guard to Python 3.16: the entry ends there (until = "2.15"), a strict xfail would XPASS
    assert _links(_ctx("cu132", "cuda", python=(3, 15, 0), torch=(2, 15, 0)), COMPILE) == set()
    assert _links(_ctx("cpu", "cpu", python=(3, 14)), COMPILE) == set()
    flex = "attention/test_flex_attention.py::test_flex_forward_matches_reference[eager-float32]"
    assert _links(_ctx("cpu", "cpu", python=(3, 15)), flex) == {"184352"}


def test_xpu_telemetry_issue_by_device_name() -> None:
    reading = "xpu_telemetry/test_xpu_telemetry.py::test_telemetry_reading[temperature]"
    assert _links(_ctx("xpu", "xpu", name="Intel(R) Arc(TM) A770 Graphics"), reading) == {"185198"}
    assert _links(_ctx("xpu", "xpu", name="Intel(R) Data Center GPU Max 1100"), reading) == {"185198"}
    assert _links(_ctx("xpu", "xpu", name="Intel(R) Arc(TM) B580 Graphics"), reading) == set()
    assert _links(_ctx("xpu", "cpu"), reading) == set()


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "known_issues.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


GOOD = """\
    [[known_issue]]
    test = "linalg/test_eigh.py::test_x"
    link = "https://github.com/pytorch/pytorch/issues/1"
    reason = "r"
    raises = "RuntimeError"
    {extra}
"""


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ('variant = ["cu130"]', "unknown key(s) ['variant']"),
        ('variants = ["cuda"]', "matches no build variant"),
        ('variants = ["rocm"]', "matches no build variant"),
        ('variants = ["CU130"]', "may use only lower-case"),
        ('variants = ["cu13[0"]', "unbalanced"),
        ("variants = []", "non-empty list of strings"),
        ('variants = "cu130"', "non-empty list of strings"),
        ('device = "gpu"', "is not one of"),
        ('device = ["cpu", "mps"]', "is not one of"),
        ('python = "3.15"', "bound like '>=3.15'"),
        ('python = ">=3"', "bound like '>=3.15'"),
        ('since = "2.13.x"', "torch release like '2.13'"),
        ("since = 2.13", "torch release like '2.13'"),
        ('device_name = ["*A7[70"]', "unbalanced"),
        ('until = "2.15.x"', "torch release like '2.13'"),
    ],
)
def test_malformed_entries_name_file_and_entry(tmp_path: Path, extra: str, says: str) -> None:
    path = _write(tmp_path, GOOD.format(extra=extra))
    with pytest.raises(expectations.ExpectationsError) as err:
        expectations.parse(path)
    message = str(err.value)
    assert str(path) in message and "[[known_issue]] #1 (linalg/test_eigh.py::test_x)" in message, message
    assert says in message, message


def test_an_entry_names_what_it_raises(tmp_path: Path) -> None:
    """Strict known issues: an entry without ``raises`` would catch any failure of its test."""
    path = _write(tmp_path, GOOD.format(extra="").replace('raises = "RuntimeError"', ""))
    with pytest.raises(expectations.ExpectationsError, match="'raises' is required"):
        expectations.parse(path)
    assert all(issue.raises for issue in expectations.load(SUITES / "expectations"))
    bad = _write(tmp_path, GOOD.format(extra="").replace('"RuntimeError"', '["not an exception!"]'))
    with pytest.raises(expectations.ExpectationsError, match="are not exception names"):
        expectations.parse(bad)


def test_until_ends_an_entry_at_the_release_that_fixed_it(tmp_path: Path) -> None:
    (issue,) = expectations.parse(_write(tmp_path, GOOD.format(extra='python = ">=3.15"\n    until = "2.15"')))
    assert issue.applies_to(_ctx("cpu", "cpu", python=(3, 15), torch=(2, 14, 1)))
    assert not issue.applies_to(_ctx("cpu", "cpu", python=(3, 15), torch=(2, 15, 0)))
    compile_issue = "compile/test_compile_modules.py::test_codegen_path"
    assert "184352" in _links(_ctx("cpu", "cpu", python=(3, 15), torch=(2, 14, 1)), compile_issue)
    assert "184352" not in _links(_ctx("cpu", "cpu", python=(3, 15), torch=(2, 15, 0)), compile_issue)


def test_non_https_link_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.format(extra="").replace("https://", "http://"))
    with pytest.raises(expectations.ExpectationsError, match="must be an https:// URL"):
        expectations.parse(path)


def test_every_condition_must_hold(tmp_path: Path) -> None:
    extra = 'variants = ["cu13*"]\n    device = "cuda"\n    python = "<3.14"\n    since = "2.14"'
    (issue,) = expectations.parse(_write(tmp_path, GOOD.format(extra=extra)))
    assert issue.applies_to(_ctx("cu132", "cuda", python=(3, 13), torch=(2, 15, 0)))
    assert not issue.applies_to(_ctx("cu126", "cuda", python=(3, 13), torch=(2, 15, 0)))
    assert not issue.applies_to(_ctx("cu132", "cpu", python=(3, 13), torch=(2, 15, 0)))
    assert not issue.applies_to(_ctx("cu132", "cuda", python=(3, 14), torch=(2, 15, 0)))
    assert not issue.applies_to(_ctx("cu132", "cuda", python=(3, 13), torch=(2, 13, 0)))
    assert issue.applies_to(_ctx("cu130", "cuda", python=(3, 13), torch=(2, 14)))


def test_node_patterns_take_brackets_literally() -> None:
    issue = expectations.KnownIssue("compile/test_a.py::test_x[*]", "https://x", "r")
    assert issue.matches("compile/test_a.py::test_x[mlp-float32]")
    assert not issue.matches("compile/test_a.py::test_xy")
    assert expectations.KnownIssue("compile/test_*.py::*", "https://x", "r").matches("compile/test_b.py::t[1]")
    assert not expectations.KnownIssue("compile/test_?.py::t", "https://x", "r").matches("compile/test_ab.py::t")


def test_rocm_release_glob_pitfall_is_documented() -> None:
    text = (SUITES / "expectations" / "known_issues.toml").read_text(encoding="utf-8")
    assert "rocm7.1*" in text, "the header warns that rocm7.1* also matches rocm7.14"
    assert expectations.KnownIssue("a::b", "https://x", "r", variants=("rocm7.1",)).applies_to(_ctx("rocm7.1", "cpu"))
    assert not expectations.KnownIssue("a::b", "https://x", "r", variants=("rocm7.1",)).applies_to(
        _ctx("rocm7.14", "cpu")
    )
