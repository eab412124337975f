"""Common machinery of the compatibility suites.

* probes the backend once per session (``_support.probe``, shared with the standalone script);
* ``device`` / ``backend`` / ``compat_env`` fixtures: one test body for every backend;
* records ``feature``, ``backend`` and ``device`` properties on every test, and ``scope`` =
  ``measurement`` on tests marked ``measurement`` (figures only: the harness never counts them as passes);
* applies the known issues of ``expectations/*.toml`` that match the build and device that ran, as
  strict xfails limited to the exceptions each entry ``raises``;
* a soft per-test timeout (``COMPAT_TEST_TIMEOUT``, ``@pytest.mark.timeout(s)``);
* blocks network access in every test;
* isolates the Inductor cache per session;
* support claims (``[[features.<id>.claims]]`` in ``features.toml``): records ``claim`` on every test they
  cover on this device, lets ``_support.refusals`` fail a refusal there, watches the claimed ops run on the
  device (``_support.ondevice``) and, with ``--drill=MODE``, breaks them (``_support.drills``);
* evidence of device work (``_support.evidence``): the profiler runs over every claimed test's call and what ran
  (kernels, per claimed op, graph recordings and replays) is recorded as its ``evidence`` property; on an
  accelerator a claimed test that launched nothing fails;
* the backstop: on a device the claims cover, a claimed test may end passed, failed or xfailed (strict) or skip
  for a reason its claim allows (``allowed_skips``); any other skip, whatever raised it (``refused()``,
  ``need()``, ``pytest.importorskip``, a skip mark, a bare ``pytest.skip``), is turned into a failure naming the
  claim; an API that is present but broken on import (``_support.requires.BrokenAPI``) fails there and is an
  error elsewhere;
* fails the session at once when torch cannot see the device the harness planned the cell for
  (``COMPAT_EXPECT_DEVICE``);
* pins TF32 off: the float32 bounds assume full float32 matmuls and convolutions.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUITES_DIR = Path(__file__).resolve().parent
if str(SUITES_DIR) not in sys.path:  # pytest.ini has pythonpath = . ; this covers -c/--rootdir runs too
    sys.path.insert(0, str(SUITES_DIR))

from _support import claims as claims_mod  # noqa: E402
from _support import drills, evidence, expectations, ondevice, predict  # noqa: E402
from _support import env as compat_env_mod  # noqa: E402
from _support.requires import BROKEN_MARK  # noqa: E402

EXPECTATIONS_DIR = SUITES_DIR / "expectations"
DEFAULT_TIMEOUT_S = 300.0
NETWORK_ERROR = "network access is disabled in the suites"
MEASUREMENT = "measurement"  # marker and scope of tests that only record figures
# The device family the harness planned this cell for (cpu, cuda, rocm, xpu): harness/run/pytest_command.py.
EXPECT_DEVICE_ENV = "COMPAT_EXPECT_DEVICE"
EXPECT_DEVICE_EXIT = 3  # pytest's INTERNAL_ERROR: no test result of this session could be trusted


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        drills.OPTION,
        choices=drills.MODES,
        default=None,
        help="break the APIs the support claims name, as a backend regression would (suites/_support/drills.py)",
    )
    parser.addoption(
        predict.OPTION,
        default=None,
        metavar="FAMILY:MODEL:VARIANT:RELEASE",
        help="with --collect-only: what each test would do on that device (cuda:9.0:cu132:2.15; _support/predict.py)",
    )


# ---------------------------------------------------------------- session setup
def pytest_configure(config: pytest.Config) -> None:
    drills.ACTIVE[:] = [config.getoption(drills.OPTION)] if config.getoption(drills.OPTION, default=None) else []
    spec_text = config.getoption(predict.OPTION, default=None)
    if spec_text:
        if not config.getoption("collectonly"):
            raise pytest.UsageError(f"{predict.OPTION} judges what would run: use it with --collect-only")
        try:
            spec = predict.parse(spec_text)
        except predict.PredictError as e:
            raise pytest.UsageError(str(e)) from None
        compat_env_mod.override(predict.environment(spec, compat_env_mod.get()))
        claims_mod.device.cache_clear()
        config._compat_predict = (spec_text, spec, [])  # type: ignore[attr-defined]
    config.addinivalue_line("markers", "perf: performance test; records figures, asserts at most a floor")
    config.addinivalue_line("markers", "timeout(seconds): per-test soft timeout (default $COMPAT_TEST_TIMEOUT or 300)")
    config.addinivalue_line("markers", f"{MEASUREMENT}: records figures and asserts nothing about them on this device")
    config.addinivalue_line("markers", f"{BROKEN_MARK}(reason): an API the build has fails to import (requires.api)")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers > 1 and not os.environ.get("OMP_NUM_THREADS"):
        # xdist workers share the cores: don't oversubscribe them with intra-op threads
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))
    if workers > 1 and not os.environ.get("TORCHINDUCTOR_COMPILE_THREADS"):
        # nor with Inductor's pool of compile processes (each one imports torch)
        os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(max(1, (os.cpu_count() or 1) // workers))
    if not os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        # per process (each xdist worker is one): never share a compile cache between runs
        cache = tempfile.mkdtemp(prefix="compat-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        config._compat_inductor_cache = cache  # type: ignore[attr-defined]


def pytest_sessionstart(session: pytest.Session) -> None:
    """A GPU column whose torch sees no such device would report every device test as [hardware]: stop."""
    expected = os.environ.get(EXPECT_DEVICE_ENV, "").strip()
    if not expected or expected == "cpu":
        return
    e = compat_env_mod.get()
    if e.device_kind != expected:
        pytest.exit(
            f"{EXPECT_DEVICE_ENV}={expected}: the cell was planned for a {expected} device, but torch "
            f"{e.info['torch']['version']} sees {e.device_kind} ({e.device_label}; probe errors: "
            f"{e.info['errors'] or 'none'})",
            returncode=EXPECT_DEVICE_EXIT,
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    cache = getattr(config, "_compat_inductor_cache", None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


def pytest_report_header(config: pytest.Config) -> list[str]:
    e = compat_env_mod.get()
    t = e.info["torch"]
    rt = e.info["runtime"]
    return [
        f"compat: backend={e.backend} variant={e.variant} build={e.build} torch={t['version']} "
        f"device={e.device_label} ({e.device_kind})",
        f"compat: cuda={rt['cuda']} hip={rt['hip']} xpu={rt['xpu']} cusparselt={rt['cusparselt']}"
        + (f" probe-errors={e.info['errors']}" if e.info["errors"] else ""),
    ]


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def compat_env() -> compat_env_mod.Env:
    """The probed environment (backend id, build, device, capability, versions)."""
    return compat_env_mod.get()


@pytest.fixture(scope="session")
def backend(compat_env: compat_env_mod.Env) -> str:
    return compat_env.backend


@pytest.fixture(scope="session")
def device(compat_env: compat_env_mod.Env) -> Any:
    """The device every test body runs on: the accelerator if present, else the CPU."""
    import torch

    return torch.device(compat_env.device_type)


def feature_of(path: Path) -> str:
    """The feature id of a test file: its top-level folder under suites/."""
    try:
        return Path(path).resolve().relative_to(SUITES_DIR).parts[0]
    except (ValueError, IndexError):
        return "unknown"


def suite_node_id(item: pytest.Item) -> str:
    """``graphs/test_graph_api.py::test_x[...]`` whatever the rootdir of this run."""
    try:
        rel = Path(item.path).resolve().relative_to(SUITES_DIR).as_posix()
    except ValueError:
        return item.nodeid
    _, sep, rest = item.nodeid.partition("::")
    return f"{rel}{sep}{rest}"


def _base_properties(item: pytest.Item) -> list[tuple[str, str]]:
    e = compat_env_mod.get()
    return [("feature", feature_of(item.path)), ("backend", e.backend), ("device", e.device_label)]


@pytest.fixture(autouse=True)
def _compat_properties(request: pytest.FixtureRequest, record_property: Any) -> None:
    """record_property is autouse: feature/backend/device on every test (perf tests add perf.*)."""
    recorded = {k for k, _ in request.node.user_properties}
    for key, value in _base_properties(request.node):
        if key not in recorded:
            record_property(key, value)


@pytest.fixture(scope="session", autouse=True)
def _tf32_off() -> None:
    """Full float32 matmuls and convolutions: every float32 bound in the suites assumes them (TF32 keeps
    10 mantissa bits, about 1e-3 relative, which is far outside attention's 2e-5 float32 bound)."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


@pytest.fixture(autouse=True)
def _claims_and_drills(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The claims covering this test: refusals fail under them, their ops are watched and, under --drill, broken."""
    found = getattr(request.node, "_compat_claims", [])
    claims_mod.set_current(found)  # again: pytest_runtest_setup set them before the module fixtures
    if found:
        ops = {op for c in found for op in c.ops}
        device_type = compat_env_mod.get().device_type
        mode = request.config.getoption(drills.OPTION, default=None)
        if mode:
            drills.install(monkeypatch, mode, ops, device_type)
        ondevice.install(monkeypatch, ops, device_type)
        if "torch.compile" in ops:
            ondevice.compile_guard(monkeypatch, suite_node_id(request.node))
    yield
    claims_mod.set_current([])


@pytest.fixture(autouse=True)
def _broken_api(request: pytest.FixtureRequest) -> None:
    """A broken API (present, crashes on import) is an error where no claim covers the test (claimed: the call
    phase fails, pytest_runtest_call)."""
    broken = request.node.get_closest_marker(BROKEN_MARK)
    if broken is not None and not _claims_of(request.node):
        pytest.fail(f"{broken.args[0]}: the API is present and broken (an error, not a missing feature)", pytrace=False)


@pytest.fixture(autouse=True)
def _seed() -> None:
    import torch

    torch.manual_seed(0)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test runs offline: any non-AF_UNIX connection or name lookup raises."""

    def _allowed(sock: socket.socket) -> bool:
        return getattr(socket, "AF_UNIX", None) is not None and sock.family == socket.AF_UNIX

    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> Any:
        if _allowed(self):
            return real_connect(self, address)
        raise RuntimeError(f"{NETWORK_ERROR} (connect to {address!r})")

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if _allowed(self):
            return real_connect_ex(self, address)
        raise RuntimeError(f"{NETWORK_ERROR} (connect_ex to {address!r})")

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{NETWORK_ERROR} (getaddrinfo {host!r})")

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{NETWORK_ERROR} (create_connection to {address!r})")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    yield


# ---------------------------------------------------------------- soft timeout
class Timeout(Exception):
    """Raised in the test's thread when its time budget is spent."""


Timeout.__module__ = "builtins"  # so reports read "Timeout: test exceeded 300 s"


def _timeout_for(item: pytest.Item) -> float:
    mark = item.get_closest_marker("timeout")
    if mark is not None:
        value = mark.args[0] if mark.args else mark.kwargs.get("seconds")
        return float(value)
    raw = os.environ.get("COMPAT_TEST_TIMEOUT", "")
    try:
        return float(raw) if raw.strip() else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    # the claims covering this test, before any fixture runs (a module fixture starts a group's ranks)
    claims_mod.set_current(getattr(item, "_compat_claims", []))
    # tests skipped by a mark never run fixtures: give them their properties here
    recorded = {k for k, _ in item.user_properties}
    item.user_properties.extend(p for p in _base_properties(item) if p[0] not in recorded)
    seconds = _timeout_for(item)
    if seconds > 0 and _can_alarm():

        def _expired(signum: int, frame: Any) -> None:
            raise Timeout(f"test exceeded {seconds:g} s")

        item._compat_prev_handler = signal.signal(signal.SIGALRM, _expired)  # type: ignore[attr-defined]
        signal.setitimer(signal.ITIMER_REAL, seconds)
    yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    if hasattr(item, "_compat_prev_handler"):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, item._compat_prev_handler)
        del item._compat_prev_handler


# ---------------------------------------------------------------- evidence and the backstop
def _claims_of(item: pytest.Item) -> list[Any]:
    return list(getattr(item, "_compat_claims", []))


def where_it_ran() -> str:
    """How evidence names the device: ``sm_90`` (NVIDIA), the gfx arch (ROCm), the device name (XPU), ``cpu``."""
    e = compat_env_mod.get()
    if e.capability is not None:
        return f"sm_{e.capability[0]}{e.capability[1]}"
    if e.arch:
        return e.arch
    return e.device_label if e.accelerator else "cpu"


def _needs_device_work(found: list[Any]) -> bool:
    """A claim that names an op that computes (not only statistics, handles or build facts) needs kernels."""
    return any(
        ondevice.kind(op) in ("eager", "graph", "compile") and not ondevice.in_ranks(op) for c in found for op in c.ops
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    found = _claims_of(item)
    broken = item.get_closest_marker(BROKEN_MARK)
    if broken is not None and found:
        pytest.fail(f"{broken.args[0]}: broken on a device the claims cover ({found[0].label})", pytrace=False)
    if not found:
        return (yield)
    device_type = compat_env_mod.get().device_type
    recorder = evidence.begin(device_type)
    try:
        result = yield
    finally:
        seen = evidence.end(recorder)
        required = device_type != "cpu" and _needs_device_work(found)
        item.user_properties.append((evidence.PROPERTY, evidence.encode(seen, where_it_ran(), required)))
    if device_type != "cpu":
        silent = seen.silent_ops()
        if silent:
            raise AssertionError(
                f"no device work seen for {', '.join(silent)} on {where_it_ran()}: the call returned but launched no "
                f"kernel ({seen.copies} copies): a host fallback or a no-op"
            )
        if not seen.work and _needs_device_work(found):
            raise AssertionError(
                f"no device work seen on {where_it_ran()}: the test launched no kernel and replayed no graph "
                f"({seen.copies} copies) although {found[0].label} claims it"
            )
    return result


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        text = str(longrepr[2])
        return text[len("Skipped: ") :] if text.startswith("Skipped: ") else text
    return str(longrepr)


def backstop_verdict(found: list[Any], reason: str, fake: bool) -> str | None:
    """Why a skip of a test these claims cover is a failure (None: the skip stands). A claim's
    ``allowed_skips`` names the skips that say nothing against it (two ranks on one GPU). On a fake device
    (``COMPAT_FAKE_CLAIM``) a ``[hardware]`` skip stands: that device is not here to run the test."""
    if not found:
        return None
    if fake and reason.startswith("[hardware]"):
        return None
    if any(c.allows_skip(reason) for c in found):
        return None
    return (
        f"skipped on a device the claims cover ({'; '.join(c.label for c in found)}): {reason[:500]} -- a claimed "
        "test may pass, fail or be a known issue, never skip for a reason its claim does not name"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    report = yield
    if report.skipped and not hasattr(report, "wasxfail"):
        verdict = backstop_verdict(_claims_of(item), _skip_reason(report), claims_mod.device().fake)
        if verdict is not None:
            report.outcome = "failed"
            report.longrepr = verdict
    return report


# ---------------------------------------------------------------- expectations (known issues)
_EXPECTATIONS_ERROR: str | None = None  # set when an expectations file is malformed


class ExpectationsFile(pytest.File):
    """Validates an expectations file at collection time: a malformed one is a collection error."""

    def collect(self) -> list[pytest.Item]:
        try:
            expectations.parse(self.path)
        except expectations.ExpectationsError as e:
            raise self.CollectError(f"malformed expectations file: {e}") from None
        return []


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".toml" and file_path.resolve().parent == EXPECTATIONS_DIR:
        return ExpectationsFile.from_parent(parent, path=file_path)
    return None


def _deselect_other_backends(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests of another accelerator's API (XPUGraph on a CUDA build) say nothing about this
    backend: drop them there. CPU builds keep everything, each skipping with its reason."""
    build = compat_env_mod.get().build
    if build == "cpu":
        return
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("only_builds")
        (drop if marker is not None and build not in marker.args else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        found = getattr(config, "_compat_predict", None)
        if found is not None:
            found[2].extend(drop)


def _record_measurement_scope(items: list[pytest.Item]) -> None:
    """``scope`` = ``measurement`` on tests that only record figures, from collection on (like the
    harness plugin records ``host``), so the JUnit and the event log carry it."""
    for item in items:
        if item.get_closest_marker(MEASUREMENT) is None:
            continue
        if not any(key == "scope" for key, _ in item.user_properties):
            item.user_properties.append(("scope", MEASUREMENT))


def run_context() -> expectations.RunContext:
    """What ran, for matching known issues: the build variant and the device from the probe (never the
    harness's column label), the Python and torch releases."""
    e = compat_env_mod.get()
    devices = e.info.get("devices") or []
    name = str(devices[0].get("name") or "") if devices and e.accelerator else ""
    return expectations.RunContext(
        variant=e.variant, device=e.device_kind, device_name=name, python=e.python, torch=e.torch_version
    )


def _record_claims(items: list[pytest.Item]) -> None:
    """``claim`` on every test a support claim covers on this device (or on ``COMPAT_FAKE_CLAIM``'s)."""
    try:
        dev = claims_mod.device()
        claims_mod.load_unclaimed()  # a malformed [[features.<id>.unclaimed]] is a usage error, as a bad claim
        for item in items:
            found = claims_mod.claims_for(suite_node_id(item), dev)
            item._compat_claims = found  # type: ignore[attr-defined]
            if found:
                fake = f" (fake: {claims_mod.FAKE_CLAIM_ENV})" if dev.fake else ""
                item.user_properties.append(("claim", "; ".join(c.label for c in found) + fake))
    except claims_mod.ClaimsError as e:
        raise pytest.UsageError(f"suites/features.toml: {e}") from None


def _exception(name: str) -> type[BaseException]:
    """An exception class by name: a builtin (``KeyError``) or a dotted path (``torch._inductor.exc.InductorError``)."""
    import builtins
    import importlib

    module, _, attr = name.rpartition(".")
    found = getattr(importlib.import_module(module), attr, None) if module else getattr(builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise pytest.UsageError(f"expectations: raises = {name!r} is not an exception class")
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    global _EXPECTATIONS_ERROR
    _deselect_other_backends(config, items)
    _record_measurement_scope(items)
    _record_claims(items)
    try:
        known = expectations.applicable(expectations.load(EXPECTATIONS_DIR), run_context())
    except expectations.ExpectationsError as e:
        # When expectations/ is collected this is already a collection error; when only a subset
        # of the suites is collected, every test errors at setup with the same message instead.
        _EXPECTATIONS_ERROR = f"malformed expectations file: {e}"
        return
    for item in items:
        node = suite_node_id(item)
        for issue in expectations.match(known, node):
            raises = tuple(_exception(name) for name in issue.raises)
            item.add_marker(pytest.mark.xfail(strict=True, raises=raises, reason=issue.xfail_reason))


def pytest_collection_finish(session: pytest.Session) -> None:
    found = getattr(session.config, "_compat_predict", None)
    if found is None:
        return
    spec_text, spec, deselected = found
    dev = claims_mod.device()
    rows = [
        (
            feature_of(item.path),
            suite_node_id(item),
            *predict.verdict(item, deselected=dropped, unclaimed=claims_mod.unclaimed_why(suite_node_id(item), dev)),
        )
        for dropped, group in ((False, session.items), (True, deselected))
        for item in group
    ]
    rows.sort(key=lambda row: row[1])
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    text = predict.report(spec_text, spec, rows)
    if reporter is not None:
        reporter.write(text)
    else:
        sys.stdout.write(text)


@pytest.fixture(autouse=True)
def _expectations_valid() -> None:
    if _EXPECTATIONS_ERROR:
        pytest.fail(_EXPECTATIONS_ERROR, pytrace=False)
