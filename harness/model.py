"""The matrix model: what the merge wing produces and every renderer, diff, gate and history reads.

Types only: frozen dataclasses and enums, each with its JSON form (`to_json`/`from_json`), and `trim`,
the one rule for cutting a result's long text (the merge caps what it stores, the page what it shows).
Reading, validating and writing matrix.json (schema: harness/schema/matrix.schema.json) is
harness/matrix_json.py's job.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from harness.cell import CellStatus
from harness.interpreters import NOT_RECORDED, Interpreter, PythonKey, python_key
from harness.outcomes import BAD, Outcome, Rollup, Scope, SkipClass
from harness.torch_build import parse_variant, parse_version

# The device families a feature can name in features.toml's `devices` (its builds' families).
DEVICE_FAMILIES: Final = ("cpu", "cuda", "rocm", "xpu", "mps")
_FAMILY_NAMES: Final = {"cpu": "CPU", "cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU", "mps": "MPS"}

# 1.3: not-in-release rows, features' devices and groups, composite columns; 1.5: a column's Python
# (`python`, `interpreter`), features' and groups' Pythons, a roll-up's `other_python`
SCHEMA_VERSION: Final = "1.5"
VERDICT_STATES: Final = (Rollup.SUPPORTED, Rollup.PARTIAL, Rollup.FAILING, Rollup.UNSUPPORTED)
UNASSIGNED: Final = "unassigned"  # the feature of a test no rule and no path assigns


def trim(text: str | None, cap: int) -> str | None:
    """Keep the head and most of the tail (where the error is) of a long text."""
    if text is None or len(text) <= cap:
        return text
    head = cap // 4
    tail = cap - head
    return (
        f"{text[:head]}\n... [{len(text) - cap} characters trimmed; full text in the cell's files] ...\n{text[-tail:]}"
    )


class ColumnState(StrEnum):
    OK = "ok"  # the run completed and every file was read
    PARTIAL_RUN = "partial-run"  # results exist, but the run ended abnormally or some input was unreadable
    NO_DATA = "no-data"  # no results at all
    NOT_SHIPPED = "not-shipped"  # upstream does not build this variant for this release: nothing could run


def _drop_empty(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None and v != [] and v != {} and v != ()}


class ProvenanceState(StrEnum):
    VERIFIED = "verified"  # a statement over the cell, signed by someone trust.toml allows for it
    UNVERIFIED = "unverified"  # no statement: only its manifest says where it came from
    INVALID = "invalid"  # a statement that fails: bad signature, a signer not allowed, content changed


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Who vouches for a column, as a merge with a trust file found it (docs/provenance.md)."""

    state: ProvenanceState
    by: str | None = None  # the trust.toml entry that vouches
    signer: str | None = None  # "key sha256:...", or the workflow: github.com/OWNER/REPO/.github/workflows/X.yml@REF
    run_url: str | None = None  # the workflow run that signed, or the run the statement names
    reason: str | None = None  # why it is unverified or invalid

    @property
    def verified(self) -> bool:
        return self.state is ProvenanceState.VERIFIED

    def describe(self) -> str:
        """'verified: AMD lab (key sha256:1a2b…)', 'unverified: no statement', 'invalid: <why>'."""
        if self.verified:
            return f"verified: {self.by}" + (f" ({self.signer})" if self.signer else "")
        return f"{self.state.value}: {self.reason or 'no statement'}"

    def to_json(self) -> dict[str, Any]:
        return _drop_empty(
            {
                "state": self.state.value,
                "by": self.by,
                "signer": self.signer,
                "run_url": self.run_url,
                "reason": self.reason,
            }
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        return cls(
            state=ProvenanceState(data["state"]),
            by=data.get("by"),
            signer=data.get("signer"),
            run_url=data.get("run_url"),
            reason=data.get("reason"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Feature:
    id: str
    title: str
    since: str | None = None
    claim: str | None = None
    source: str | None = None  # where the claim comes from: the release note or PR
    scope: Scope = Scope.BACKEND  # HOST: the feature does not depend on the backend; shown, never scored
    apis: tuple[str, ...] = ()  # the public APIs its tests exercise (features.toml), full dotted names
    devices: tuple[str, ...] = ()  # the device families whose builds have it; empty: every family
    groups: tuple[FeatureGroup, ...] = ()  # later claims about parts of it (their tests' own `since`)
    python: tuple[str, ...] = ()  # the CPythons (3.15, 3.14t) on which the feature exists; empty: every one

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "since": self.since,
            "claim": self.claim,
            "source": self.source,
            "apis": list(self.apis),
            "devices": list(self.devices),
            "groups": [g.to_json() for g in self.groups],
            "python": list(self.python),
        }
        if self.scope is not Scope.BACKEND:
            data["scope"] = self.scope.value
        return _drop_empty(data)

    def not_in(self, release: str | None, family: str | None, python: PythonKey | None = None) -> str | None:
        """Why a build of torch `release` (2.13) and device `family` (cuda), on CPython `python`, cannot have
        this feature ("arrived in 2.14", "XPU builds only", "Python 3.15, 3.15t only"), or None when it can or
        nothing says it cannot (a column whose Python was not recorded is never ruled out by it)."""
        if arrived_after(self.since, release):
            return f"arrived in {self.since}"
        if self.devices and family and family not in self.devices:
            return " and ".join(_FAMILY_NAMES.get(d, d) for d in self.devices) + " builds only"
        if not admits(self.python, python):
            return pythons_only(self.python)
        return None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Feature:
        return cls(
            id=data["id"],
            title=data.get("title") or data["id"],
            since=data.get("since"),
            claim=data.get("claim"),
            source=data.get("source"),
            scope=Scope(data.get("scope", Scope.BACKEND.value)),
            apis=tuple(data.get("apis") or ()),
            devices=tuple(data.get("devices") or ()),
            groups=tuple(FeatureGroup.from_json(g) for g in data.get("groups") or ()),
            python=tuple(data.get("python") or ()),
        )


def admits(pythons: Collection[str], python: PythonKey | None) -> bool:
    """A feature (or part) for `pythons` (empty: every one) exists on CPython `python` (None: not recorded,
    never ruled out)."""
    return not pythons or python is None or python.label in pythons


def pythons_only(pythons: Collection[str]) -> str:
    """'Python 3.15, 3.15t only'; 'free-threaded Python only' when every one is free-threaded."""
    keys = [k for p in pythons if (k := python_key(p)) is not None]
    if keys and all(k.free_threaded for k in keys):
        return "free-threaded Python only"
    return f"Python {', '.join(pythons)} only"


def arrived_after(since: str | None, release: str | None) -> bool:
    """A feature of `since` (2.14) is later than torch `release` (2.13): both known and numeric."""
    a, b = _release_key(since), _release_key(release)
    return a is not None and b is not None and a > b


def _release_key(text: str | None) -> tuple[int, ...] | None:
    parts = (text or "").split(".")[:2]
    return tuple(int(p) for p in parts) if len(parts) == 2 and all(p.isdigit() for p in parts) else None


@functools.cache
def _glob(pattern: str) -> re.Pattern[str]:
    """features.toml's group pattern: * and ? are wildcards, everything else literal (brackets too)."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureGroup:
    """A later claim about part of a feature: the tests whose id (relative to the suites) matches."""

    match: str
    since: str | None = None
    claim: str | None = None
    source: str | None = None
    python: tuple[str, ...] = ()  # the CPythons on which this part runs (3.15, 3.15t); empty: every one

    def matches(self, nodeid: str) -> bool:
        return _glob(self.match).fullmatch(nodeid) is not None

    def to_json(self) -> dict[str, Any]:
        return _drop_empty(
            {
                "match": self.match,
                "since": self.since,
                "claim": self.claim,
                "source": self.source,
                "python": list(self.python),
            }
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeatureGroup:
        return cls(
            match=data["match"],
            since=data.get("since"),
            claim=data.get("claim"),
            source=data.get("source"),
            python=tuple(data.get("python") or ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Where a column ran: the facts a reader needs to trust or reproduce it."""

    torch: str | None = None
    torch_git: str | None = None
    build: str | None = None
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    device: str | None = None
    device_count: int | None = None
    capability: str | None = None
    arch: str | None = None
    driver: str | None = None
    python: str | None = None
    platform: str | None = None
    cpu: str | None = None
    mode: str | None = None
    image: str | None = None
    image_digest: str | None = None
    suite_sha: str | None = None
    runner: str | None = None
    run_url: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    harness_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _ENV_FIELDS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Environment:
        return cls(**{k: v for k, v in data.items() if k in _ENV_FIELDS})

    def items(self) -> Iterator[tuple[str, Any]]:
        """(field, value) for every field that has a value, in declaration order."""
        for name in _ENV_FIELDS:
            value = getattr(self, name)
            if value not in (None, ""):
                yield name, value


_ENV_FIELDS: Final = tuple(Environment.__dataclass_fields__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    supported: int
    judged: int  # features with a verdict (supported, partial, failing, unsupported)
    features: int
    states: Mapping[Rollup, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "supported": self.supported,
            "judged": self.judged,
            "features": self.features,
            "states": {k.value: v for k, v in self.states.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Score:
        return cls(
            supported=data["supported"],
            judged=data["judged"],
            features=data["features"],
            states={Rollup(k): v for k, v in data["states"].items()},
        )


def _counts_json(counts: Mapping[Outcome, int]) -> dict[str, int]:
    return {k.value: v for k, v in counts.items() if v}


def _counts_from(data: Mapping[str, int]) -> dict[Outcome, int]:
    return {Outcome(k): v for k, v in data.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """One cell of the matrix's columns: a backend and torch build on one runner."""

    id: str
    backend: str
    display_name: str
    state: ColumnState
    cell_status: CellStatus | None
    run_id: str
    run_attempt: int = 1
    error: str | None = None
    exit: Mapping[str, Any] | None = None
    environment: Environment = field(default_factory=Environment)
    errors: tuple[str, ...] = ()
    counts: Mapping[Outcome, int] = field(default_factory=dict)
    score: Score | None = None
    source: str = ""
    mode: str | None = None  # how the results were made: native, container, import
    # A build run without its device (a CUDA build on a host with no GPU): kept apart from the
    # backend's real columns and never its verdict. None for a column on its own device.
    variant: str | None = None
    variant_reason: str | None = None
    reproduce: str | None = None  # the command that reruns this column
    release: str | None = None  # the torch release series (2.15); set where no torch version says it
    # The public callables of the device namespaces the torch that ran exposed (namespace -> names).
    device_api: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    channel: str | None = None  # release | test | nightly: where its torch came from (None: not said)
    # The runs the column is built from, base first, where more than one: a complete run and the
    # later partial runs (a selection of tests) overlaid on it.
    runs: tuple[RunInfo, ...] = ()
    partial: bool = False  # a partial run with no complete run of its cell id to build on
    provenance: Provenance | None = None  # who vouches for it: set by a merge given a trust file
    # The CPython the column is (3.15, 3.14t): the cell's recorded interpreter, or a placeholder's planned
    # Python; None: "Python not recorded" (a cell from before interpreters were), never a guess.
    python: str | None = None
    interpreter: Interpreter | None = None  # the cell's record of it (version, ABI, free-threading, GIL)

    @property
    def python_key(self) -> PythonKey | None:
        return python_key(self.python)

    @property
    def python_label(self) -> str:
        """'Python 3.15', 'Python 3.14t', or 'Python not recorded'."""
        key = self.python_key
        return key.display if key else NOT_RECORDED

    @property
    def composite(self) -> bool:
        """Built from a complete run and later partial runs of some of its tests."""
        return len(self.runs) > 1

    @property
    def family(self) -> str | None:
        """The device family of the column's build (cuda for cu132, also when it ran CPU-only)."""
        variant = parse_variant(self.backend)
        if variant:
            return variant.family
        build = self.environment.build
        return build if build in DEVICE_FAMILIES else None

    @property
    def has_data(self) -> bool:
        return self.state not in (ColumnState.NO_DATA, ColumnState.NOT_SHIPPED)

    @property
    def shipped(self) -> bool:
        return self.state is not ColumnState.NOT_SHIPPED

    @property
    def release_series(self) -> str | None:
        """The torch release this column belongs to (2.15 for 2.15.0+cu132)."""
        if self.release:
            return self.release
        version = parse_version(self.environment.torch)
        return version.minor if version else None

    @property
    def torch(self) -> str | None:
        return self.environment.torch

    @property
    def build_key(self) -> tuple[str, str]:
        """What a release-over-release view pairs on: the backend and its variant."""
        return (self.backend, self.variant or "")

    @property
    def ran_on_cpu(self) -> bool:
        """The tests ran on the CPU: a CPU build, or a device build without its device (cpu-only)."""
        return self.backend == "cpu" or self.variant is not None or self.environment.device == "cpu"

    @property
    def release_line(self) -> tuple[str, str, str]:
        """What the release view follows from one torch release to the next: where the tests ran.
        ("cpu", "", "") for the CPU build and every CPU-only column (PyPI's CUDA builds run on a host
        without a GPU), else the build family and the device, so the CUDA 13.0 build of 2.14 is
        followed by the CUDA 13.2 build of 2.15 on the same GPU. A column on another Python than its
        build's default image's (3.15 beside 3.11) follows a line of its own: one release's two Pythons
        are side by side, never a step from one to the other."""
        python = self.python_key
        from harness.registry import load_registry  # the default image's Python is a registry fact

        backend = load_registry().get(self.backend)
        other = python.label if python and backend and python != backend.base_python else ""
        if self.ran_on_cpu:
            return ("cpu", "", other)
        variant = parse_variant(self.backend)
        return (variant.family if variant else self.backend, self.environment.device or "", other)

    def device_api_names(self) -> frozenset[str]:
        """The device API as full dotted names (torch.xpu.temperature)."""
        return frozenset(f"{ns}.{name}" for ns, names in self.device_api.items() for name in names)

    @property
    def speaks_for_backend(self) -> bool:
        """A real column of its backend (not a build run without its device)."""
        return self.variant is None

    @property
    def heading(self) -> str:
        """'CUDA 13.0', or 'CUDA 13.0 build, CPU only' for a variant."""
        return (
            f"{self.display_name} build, {self.variant.replace('-', ' ').replace('cpu', 'CPU')}"
            if self.variant
            else self.display_name
        )

    @property
    def label(self) -> str:
        """The heading with the torch build, the Python (where the cell recorded it) and the device, for text
        that names a column outside the table's head: 'CUDA 13.0 build, CPU only · torch 2.14.1+cu130',
        'CPU · torch 2.15.0+cpu · Python 3.15'. Two CPU-only columns of two releases read apart."""
        parts = [self.heading]
        if self.state is ColumnState.NOT_SHIPPED:
            parts.append(f"torch {self.release_series} (not shipped)")
        elif self.torch and self.has_data:
            parts.append(f"torch {self.torch}")
        if self.python_key:  # named where recorded; the column's head says "Python not recorded" otherwise
            parts.append(self.python_key.display)
        device = self.environment.device
        if device and device != "cpu" and self.has_data:
            parts.append(device)
        return " · ".join(parts)

    @property
    def failures(self) -> int:
        return sum(self.counts.get(o, 0) for o in BAD)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "backend": self.backend,
            "display_name": self.display_name,
            "state": self.state.value,
            "cell_status": self.cell_status.value if self.cell_status else None,
            "run_id": self.run_id,
            "run_attempt": self.run_attempt,
            "error": self.error,
            "exit": dict(self.exit) if self.exit is not None else None,
            "environment": self.environment.to_json(),
            "errors": list(self.errors),
            "counts": _counts_json(self.counts),
            "score": self.score.to_json() if self.score else None,
            "source": self.source,
            **_drop_empty(
                {
                    "variant": self.variant,
                    "variant_reason": self.variant_reason,
                    "reproduce": self.reproduce,
                    "release": self.release,
                    "device_api": {ns: list(names) for ns, names in self.device_api.items()},
                    "channel": self.channel,
                    "runs": [r.to_json() for r in self.runs],
                    "partial": self.partial or None,
                    "provenance": self.provenance.to_json() if self.provenance else None,
                    "python": self.python,
                    "interpreter": self.interpreter.to_json() if self.interpreter else None,
                }
            ),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Column:
        env = data.get("environment") or {}
        status = data.get("cell_status")
        return cls(
            id=data["id"],
            backend=data["backend"],
            display_name=data["display_name"],
            state=ColumnState(data["state"]),
            cell_status=CellStatus(status) if status else None,
            run_id=data["run_id"],
            run_attempt=data.get("run_attempt", 1),
            error=data.get("error"),
            exit=data.get("exit"),
            environment=Environment.from_json(env),
            errors=tuple(data.get("errors") or ()),
            counts=_counts_from(data.get("counts") or {}),
            score=Score.from_json(data["score"]) if data.get("score") else None,
            source=data.get("source", ""),
            mode=env.get("mode"),
            variant=data.get("variant"),
            variant_reason=data.get("variant_reason"),
            reproduce=data.get("reproduce"),
            release=data.get("release"),
            device_api={ns: tuple(names) for ns, names in (data.get("device_api") or {}).items()},
            channel=data.get("channel"),
            runs=tuple(RunInfo.from_json(r) for r in data.get("runs") or ()),
            partial=bool(data.get("partial")),
            provenance=Provenance.from_json(data["provenance"]) if data.get("provenance") else None,
            python=data.get("python"),
            interpreter=Interpreter.from_json(data.get("interpreter")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """One run a composite column is built from: its id, start, and for a partial run what it selected."""

    run_id: str
    started_at: str | None = None
    selection: Mapping[str, Any] | None = None  # None: a complete run
    tests: int = 0  # the tests whose result the column takes from this run

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"run_id": self.run_id, "started_at": self.started_at, "tests": self.tests}
        if self.selection is not None:
            data["selection"] = dict(self.selection)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunInfo:
        return cls(
            run_id=data["run_id"],
            started_at=data.get("started_at"),
            selection=data.get("selection"),
            tests=data.get("tests", 0),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureCell:
    """The roll-up of one feature on one column."""

    state: Rollup
    counts: Mapping[Outcome, int] = field(default_factory=dict)
    skips: Mapping[SkipClass, int] = field(default_factory=dict)
    host_tests: int = 0  # host-scope tests: shown, judged only when nothing else ran
    measurements: int = 0  # measurement-scope tests: figures, not passes
    reason: str | None = None  # not-in-release: "arrived in 2.14", "ROCm builds only"
    early: int = 0  # not-in-release by its release, yet tests passed: an API present earlier than announced
    overlay: int = 0  # tests whose result came from a later partial run
    later: int = 0  # tests of a part of the feature (a group) that arrived after this release: shown, not judged
    # what ran for the feature's tests (their evidence): device, top kernels [[name, launches]], graph replays,
    # tests with evidence; None where none was recorded
    evidence: Mapping[str, Any] | None = None
    other_python: int = 0  # tests of a part of the feature (a group) for other Pythons than the column's: not judged

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"state": self.state.value, "counts": _counts_json(self.counts)}
        if self.skips:
            data["skips"] = {k.value: v for k, v in self.skips.items()}
        for name in ("host_tests", "measurements", "reason", "early", "overlay", "later", "other_python", "evidence"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeatureCell:
        return cls(
            state=Rollup(data["state"]),
            counts=_counts_from(data.get("counts") or {}),
            skips={SkipClass(k): v for k, v in (data.get("skips") or {}).items()},
            host_tests=data.get("host_tests", 0),
            measurements=data.get("measurements", 0),
            reason=data.get("reason"),
            early=data.get("early", 0),
            overlay=data.get("overlay", 0),
            later=data.get("later", 0),
            evidence=data.get("evidence"),
            other_python=data.get("other_python", 0),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TestResult:
    """One test on one column."""

    __test__ = False  # not a pytest test class

    outcome: Outcome
    skip_class: SkipClass | None = None
    link: str | None = None
    message: str | None = None
    trace: str | None = None
    output: str | None = None  # captured output next to a failure (JUnit system-out/err), capped
    duration: float | None = None
    attempts: int = 1
    properties: Mapping[str, Any] = field(default_factory=dict)
    scope: Scope = Scope.BACKEND
    strict: bool | None = None
    signal: str | None = None
    extra_messages: tuple[str, ...] = ()
    # Where the column's base run did not make this result: the later partial run that did, and when.
    run: str | None = None
    at: str | None = None

    @property
    def is_bad(self) -> bool:
        return self.outcome in BAD

    @property
    def evidence(self) -> Mapping[str, Any] | None:
        """What the profiler saw run for this test (the suites' `evidence` property), if it was recorded."""
        found = self.properties.get(EVIDENCE)
        return found if isinstance(found, Mapping) else None

    def figures(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(name, figure) for each recorded measurement (`perf.<name>` properties holding a value)."""
        for key, value in self.properties.items():
            if key.startswith("perf.") and isinstance(value, Mapping) and "value" in value:
                yield key[len("perf.") :], value

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"outcome": self.outcome.value}
        if self.skip_class is not None:
            data["skip_class"] = self.skip_class.value
        for name in ("link", "message", "trace", "output", "duration", "signal", "strict", "run", "at"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.attempts != 1:
            data["attempts"] = self.attempts
        if self.properties:
            data["properties"] = dict(self.properties)
        if self.scope is not Scope.BACKEND:
            data["scope"] = self.scope.value
        if self.extra_messages:
            data["extra_messages"] = list(self.extra_messages)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestResult:
        skip = data.get("skip_class")
        return cls(
            outcome=_OUTCOMES[data["outcome"]],
            skip_class=SkipClass(skip) if skip else None,
            link=data.get("link"),
            message=data.get("message"),
            trace=data.get("trace"),
            output=data.get("output"),
            duration=data.get("duration"),
            attempts=data.get("attempts", 1),
            properties=data.get("properties") or {},
            scope=Scope(data["scope"]) if "scope" in data else Scope.BACKEND,
            strict=data.get("strict"),
            signal=data.get("signal"),
            extra_messages=tuple(data.get("extra_messages") or ()),
            run=data.get("run"),
            at=data.get("at"),
        )


_OUTCOMES: Final = {o.value: o for o in Outcome}


@dataclass(frozen=True, slots=True, kw_only=True)
class TestRow:
    """One test across the columns it has results in (absent: not collected there)."""

    __test__ = False

    id: str
    feature: str
    results: Mapping[str, TestResult]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "feature": self.feature, "results": {c: r.to_json() for c, r in self.results.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestRow:
        return cls(
            id=data["id"],
            feature=data["feature"],
            results={c: TestResult.from_json(r) for c, r in data["results"].items()},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """An input that could not be read (it stays visible in the matrix)."""

    source: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "message": self.message}


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """Something the merge decided that a reader should know (a superseded or duplicate upload)."""

    cell: str
    source: str
    note: str

    def to_json(self) -> dict[str, str]:
        return {"cell": self.cell, "source": self.source, "note": self.note}


@dataclass(frozen=True, slots=True, kw_only=True)
class Alignment:
    aligned: bool
    suite_shas: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"aligned": self.aligned, "suite_shas": list(self.suite_shas)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Matrix:
    """Features x columns, the roll-up of each, every test's result per column."""

    schema_version: str
    generated_at: str
    harness_version: str
    features: tuple[Feature, ...]
    columns: tuple[Column, ...]
    cells: Mapping[str, Mapping[str, FeatureCell]]  # feature id -> column id -> roll-up
    # Every test's row: a tuple, or rows read back from disk as they are iterated (a spilled merge's,
    # harness/merge/store.py); either way iterable any number of times, with a length.
    tests: Collection[TestRow]
    alignment: Alignment
    input_errors: tuple[Problem, ...] = ()
    notes: tuple[Note, ...] = ()

    # -- lookups ---------------------------------------------------------------------------
    def cell(self, feature_id: str, column_id: str) -> FeatureCell | None:
        return self.cells.get(feature_id, {}).get(column_id)

    def column(self, column_id: str) -> Column | None:
        return next((c for c in self.columns if c.id == column_id), None)

    def feature(self, feature_id: str) -> Feature | None:
        return next((f for f in self.features if f.id == feature_id), None)

    def results(self, column_id: str) -> Iterator[tuple[TestRow, TestResult]]:
        """(test, result) for every test with a result on this column."""
        for row in self.tests:
            result = row.results.get(column_id)
            if result is not None:
                yield row, result

    # -- JSON ------------------------------------------------------------------------------
    def head_json(self) -> dict[str, Any]:
        """Everything but the test rows (matrix.json's head)."""
        return {
            "schema_version": self.schema_version,
            "generated_at": self.generated_at,
            "harness_version": self.harness_version,
            "features": [f.to_json() for f in self.features],
            "columns": [c.to_json() for c in self.columns],
            "cells": {fid: {cid: c.to_json() for cid, c in cols.items()} for fid, cols in self.cells.items()},
            "alignment": self.alignment.to_json(),
            "input_errors": [p.to_json() for p in self.input_errors],
            "notes": [n.to_json() for n in self.notes],
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.head_json(), "tests": [t.to_json() for t in self.tests]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], results: Any = None) -> Matrix:
        """The model from matrix.json's document (harness/matrix_json.py validates it first).
        `results`: how each test's result is made from its JSON (default TestResult.from_json)."""
        make = results or TestResult.from_json
        return cls(
            schema_version=data["schema_version"],
            generated_at=data["generated_at"],
            harness_version=data["harness_version"],
            features=tuple(Feature.from_json(f) for f in data["features"]),
            columns=tuple(Column.from_json(c) for c in data["columns"]),
            cells={
                fid: {cid: FeatureCell.from_json(c) for cid, c in cols.items()} for fid, cols in data["cells"].items()
            },
            tests=tuple(
                TestRow(id=t["id"], feature=t["feature"], results={c: make(r) for c, r in t["results"].items()})
                for t in data["tests"]
            ),
            alignment=Alignment(
                aligned=data["alignment"]["aligned"], suite_shas=tuple(data["alignment"]["suite_shas"])
            ),
            input_errors=tuple(Problem(source=p["source"], message=p["message"]) for p in data["input_errors"]),
            notes=tuple(
                Note(cell=str(n.get("cell", "")), source=str(n.get("source", "")), note=str(n.get("note", "")))
                for n in data["notes"]
            ),
        )


EVIDENCE: Final = "evidence"  # the suites' property: what the profiler saw run (suites/_support/evidence.py)


def short_kernel(name: str) -> str:
    """A kernel's readable core: ``void pytorch_flash::flash_fwd_kernel<...>(...)`` -> ``flash_fwd_kernel``;
    ``aten::_linalg_eigh`` stays as it is (a CPU op)."""
    if name.startswith("aten::"):
        return name
    core = name[5:] if name.startswith("void ") else name
    core = core.split("(", 1)[0].split("<", 1)[0]
    return core.rsplit("::", 1)[-1] or name[:40]


# Kernels every op launches (fills, copies, elementwise arithmetic, reductions, random numbers): they name no
# feature, so a summary names them only when nothing else ran
GENERIC_KERNEL: Final = re.compile(
    r"^(vectorized_elementwise_kernel|unrolled_elementwise_kernel|elementwise_kernel\w*|reduce_kernel|"
    r"index_elementwise_kernel|distribution_elementwise_grid_stride_kernel|CatArrayBatchedCopy\w*|copy_info_kernel|"
    r"triton_poi_fused_\w*|aten::(copy_|fill_|zero_|add|add_|mul|mul_|sub|div|sum|mean|abs|max|min|normal_|"
    r"uniform_|random_|randint|randn|rand|eq|ne|lt|gt|isfinite|all|any|clamp|where))$"
)


def distinctive(kernels: list[str]) -> list[str]:
    """The kernels that name what a feature ran (generic ones last), keeping their order otherwise."""
    return sorted(kernels, key=lambda name: GENERIC_KERNEL.match(name) is not None)


def evidence_text(evidence: Mapping[str, Any]) -> str:
    """One line: ``flash_fwd_kernel, fmha_cutlassF_f16 on sm_90 · 12 graph replays`` (a feature cell or a test)."""
    parts = []
    kernels = distinctive([short_kernel(str(k[0])) for k in evidence.get("kernels") or [] if k])
    if kernels:
        parts.append(f"{', '.join(dict.fromkeys(kernels[:3]))} on {evidence.get('device') or '?'}")
    if evidence.get("replayed"):
        parts.append(f"{evidence['replayed']} graph replays")
    return " · ".join(parts) or f"no device work seen on {evidence.get('device') or '?'}"
