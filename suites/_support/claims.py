"""Where upstream claims a feature works: ``[[features.<id>.claims]]`` in ``features.toml``, as data.

A claim names a backend family (``cpu``, ``cuda``, ``rocm``, ``xpu``), optionally the devices of that family
it covers (``min_capability`` for NVIDIA, ``archs`` for ROCm gfx targets, ``xpu_devices`` for Intel device
names, ``machines`` for the host's CPU architecture), the release it dates from, its source, the APIs it
names (``ops``, what the drills break) and, optionally, the tests it covers (``tests``, node-id globs; default:
every test of the feature).

On a device a claim covers, a refusal is a failure (:func:`_support.refusals.refused`), every test of the
claim records the ``claim`` property, and ``--drill`` breaks the claim's ``ops``. ``COMPAT_FAKE_CLAIM=
<family>:<arch>`` (``cuda:9.0``, ``rocm:gfx942``, ``xpu:Intel(R) Arc(TM) B580``) makes the session judge claims
as if it ran on that device, so the GPU branches' skip logic runs on a CPU host; the tests themselves still
run on the real device. Only the standard library and the probe are read here.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import platform
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

FEATURES_TOML = Path(__file__).resolve().parent.parent / "features.toml"
FAKE_CLAIM_ENV = "COMPAT_FAKE_CLAIM"
FAMILIES = ("cpu", "cuda", "rocm", "xpu", "mps")
REQUIRED = ("family", "since", "source", "ops")
UNCLAIMED_KEYS = ("tests", "why")  # [[features.<id>.unclaimed]]: both required, nothing else
OPTIONAL = (
    "tests", "min_capability", "max_capability", "archs", "xpu_devices", "variants", "note", "allowed_skips", "until",
    "machines",
)  # fmt: skip


class ClaimsError(Exception):
    """A malformed claims table: the message names the feature and the claim."""


@dataclass(frozen=True)
class Claim:
    feature: str
    families: tuple[str, ...]
    since: str
    source: str
    ops: tuple[str, ...]
    tests: tuple[str, ...] = ()
    until: str | None = None  # the first release the claim no longer holds on (an API form it replaced)
    min_capability: tuple[int, int] | None = None
    max_capability: tuple[int, int] | None = None
    archs: tuple[str, ...] = ()
    xpu_devices: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    machines: tuple[str, ...] = ()  # the host's platform.machine() values the claim holds on (x86 kernels: x86_64)
    allowed_skips: tuple[str, ...] = ()  # regular expressions: the skips that say nothing against the claim
    pythons: tuple[str, ...] = ()  # the feature row's `python` keys ("3.14t"): the claim holds on those alone
    # The row's groups as (match, python keys), in file order: a test's first matching group with `python`
    # keys bounds the claim for that test the same way (its tests are not judged on another Python).
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def allows_skip(self, reason: str) -> bool:
        return any(re.search(pattern, reason) for pattern in self.allowed_skips)

    def covers_test(self, node_id: str) -> bool:
        from _support.expectations import node_glob  # lazily: this module loads without the suites on sys.path

        if not self.tests:
            return node_id.startswith(f"{self.feature}/")
        return any(node_glob(t).fullmatch(node_id) for t in self.tests)

    def group_pythons(self, node_id: str) -> tuple[str, ...]:
        """The `python` keys of the test's first matching group (empty: no group, or one on any Python)."""
        from _support.expectations import node_glob

        return next((keys for match, keys in self.groups if node_glob(match).fullmatch(node_id)), ())

    def holds_on_python(self, node_id: str, python: str) -> bool:
        """False when the test's group names other Pythons than this one (an unrecorded Python: True)."""
        keys = self.group_pythons(node_id)
        return not (keys and python and python not in keys)

    def covers_device(self, device: Device) -> bool:
        if device.family not in self.families:
            return False
        if device.torch and device.torch[:2] < _capability(self.since):  # a claim from a later release
            return False
        if self.until and device.torch and device.torch[:2] >= _capability(self.until):  # replaced since
            return False
        if self.min_capability and (device.capability is None or device.capability < self.min_capability):
            return False
        if self.max_capability and (device.capability is None or device.capability > self.max_capability):
            return False
        if self.variants and not any(fnmatch.fnmatchcase(device.variant, v) for v in self.variants):
            return False
        if self.pythons and device.python and device.python not in self.pythons:
            return False  # a row of other interpreters (free-threaded builds): not in this release here
        if self.archs and not any(device.arch and device.arch.startswith(a) for a in self.archs):
            return False
        if self.machines and device.machine and device.machine not in self.machines:
            return False  # another CPU architecture (an aarch64 host has no x86 kernels)
        return not (self.xpu_devices and not any(fnmatch.fnmatchcase(device.name, g) for g in self.xpu_devices))

    @property
    def label(self) -> str:
        where = "/".join(self.families)
        if self.min_capability:
            where += f" sm_{self.min_capability[0]}{self.min_capability[1]}"
            where += f"-sm_{self.max_capability[0]}{self.max_capability[1]}" if self.max_capability else "+"
        if self.variants:
            where += " (" + "/".join(self.variants) + " builds)"
        if self.archs:
            where += " " + "/".join(self.archs)
        if self.xpu_devices:
            where += " " + "/".join(self.xpu_devices)
        if self.machines:
            where += " " + "/".join(self.machines)
        span = f"since {self.since}" + (f" until {self.until}" if self.until else "")
        return f"{where} {span} ({self.source})"


@dataclass(frozen=True)
class Device:
    """What claims are judged against: the family that runs (or the fake one) and its model."""

    family: str
    capability: tuple[int, int] | None
    arch: str | None
    name: str
    variant: str = ""
    torch: tuple[int, ...] = ()
    fake: bool = False
    python: str = ""  # the running interpreter's key: "3.11", "3.14t" (free-threaded)
    machine: str = ""  # the host's platform.machine() ("x86_64", "aarch64"); "" (a prediction): any


def _capability(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def _claim(feature: str, i: int, raw: object) -> Claim:
    where = f"features.toml: [[features.{feature}.claims]] #{i}"
    if not isinstance(raw, dict):
        raise ClaimsError(f"{where}: must be a table")
    unknown = set(raw) - set(REQUIRED) - set(OPTIONAL)
    missing = [k for k in REQUIRED if k not in raw]
    if unknown or missing:
        raise ClaimsError(f"{where}: unknown keys {sorted(unknown)}, missing keys {missing}")
    families = [raw["family"]] if isinstance(raw["family"], str) else raw["family"]
    if not isinstance(families, list) or not families or any(f not in FAMILIES for f in families):
        raise ClaimsError(f"{where}: family {raw['family']!r} must be one of {FAMILIES} or a list of them")
    if not isinstance(raw["since"], str) or not re.fullmatch(r"\d+\.\d+", raw["since"]):
        raise ClaimsError(f"{where}: since must be a release like '2.12'")
    until = raw.get("until")
    if until is not None and not (
        isinstance(until, str) and re.fullmatch(r"\d+\.\d+", until) and _capability(until) > _capability(raw["since"])
    ):
        raise ClaimsError(f"{where}: until must be a release like '2.15', later than since")
    if not str(raw["source"]).startswith("https://"):
        raise ClaimsError(f"{where}: source must be an https:// URL")
    lists = {
        k: raw.get(k, []) for k in ("ops", "tests", "archs", "xpu_devices", "variants", "allowed_skips", "machines")
    }
    for key, value in lists.items():
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ClaimsError(f"{where}: {key} must be a list of strings")
    if not lists["ops"]:
        raise ClaimsError(f"{where}: ops must name at least one API")
    for pattern in lists["allowed_skips"]:
        if not pattern.startswith(r"^\[hardware\]"):
            raise ClaimsError(
                f"{where}: allowed_skips {pattern!r} must start with ^\\[hardware\\]: only what this "
                "host lacks may excuse a claimed test, never an unsupported or missing dependency"
            )
        try:
            re.compile(pattern)
        except re.error as e:
            raise ClaimsError(f"{where}: allowed_skips {pattern!r} is not a regular expression: {e}") from None
    cap, top = raw.get("min_capability"), raw.get("max_capability")
    for key, value in (("min_capability", cap), ("max_capability", top)):
        if value is not None and not (isinstance(value, str) and re.fullmatch(r"\d+\.\d+", value)):
            raise ClaimsError(f"{where}: {key} must be a string like '8.0'")
    return Claim(
        feature=feature,
        families=tuple(families),
        since=str(raw["since"]),
        source=raw["source"],
        ops=tuple(lists["ops"]),
        tests=tuple(lists["tests"]),
        until=until,
        min_capability=_capability(cap) if cap else None,
        max_capability=_capability(top) if top else None,
        archs=tuple(lists["archs"]),
        xpu_devices=tuple(lists["xpu_devices"]),
        variants=tuple(lists["variants"]),
        machines=tuple(lists["machines"]),
        allowed_skips=tuple(lists["allowed_skips"]),
    )


@dataclass(frozen=True)
class Unclaimed:
    """``[[features.<id>.unclaimed]]``: tests no claim covers where upstream claims the feature, and why."""

    feature: str
    tests: tuple[str, ...]
    why: str

    def matches(self, node_id: str) -> bool:
        from _support.expectations import node_glob  # lazily, as Claim.covers_test

        return any(node_glob(t).fullmatch(node_id) for t in self.tests)


def _unclaimed(feature: str, i: int, raw: object) -> Unclaimed:
    where = f"features.toml: [[features.{feature}.unclaimed]] #{i}"
    if not isinstance(raw, dict):
        raise ClaimsError(f"{where}: must be a table")
    unknown = set(raw) - set(UNCLAIMED_KEYS)
    missing = [k for k in UNCLAIMED_KEYS if k not in raw]
    if unknown or missing:
        raise ClaimsError(f"{where}: unknown keys {sorted(unknown)}, missing keys {missing}")
    tests = raw["tests"]
    if not isinstance(tests, list) or not tests or not all(isinstance(t, str) and t for t in tests):
        raise ClaimsError(f"{where}: tests must be a non-empty list of node-id globs")
    outside = [t for t in tests if not t.startswith(f"{feature}/") or "::" not in t]
    if outside:
        raise ClaimsError(f"{where}: tests {outside} are not node-id globs of suites/{feature}/ (file::test)")
    if not isinstance(raw["why"], str) or not raw["why"].strip():
        raise ClaimsError(f"{where}: why must say, in one sentence, why no claim covers these tests")
    return Unclaimed(feature, tuple(tests), raw["why"].strip())


def parse(data: dict) -> tuple[tuple[Claim, ...], tuple[Unclaimed, ...]]:
    """The claims and the declared unclaimed tests of a parsed features table (``{"<id>": row}``)."""
    claims = tuple(
        dataclasses.replace(
            _claim(feature, i, raw),
            pythons=tuple(row.get("python", ())),
            groups=tuple((g["match"], tuple(g.get("python", ()))) for g in row.get("groups", [])),
        )
        for feature, row in data.items()
        for i, raw in enumerate(row.get("claims", []), 1)
    )
    unclaimed = tuple(
        _unclaimed(feature, i, raw)
        for feature, row in data.items()
        for i, raw in enumerate(row.get("unclaimed", []), 1)
    )
    return claims, unclaimed


@functools.cache
def _parsed(path: Path) -> tuple[tuple[Claim, ...], tuple[Unclaimed, ...]]:
    return parse(tomllib.loads(path.read_text(encoding="utf-8")).get("features", {}))


def load(path: Path = FEATURES_TOML) -> tuple[Claim, ...]:
    """Every claim of every feature, in file order (a row's `python` keys bound its claims)."""
    return _parsed(path)[0]


def load_unclaimed(path: Path = FEATURES_TOML) -> tuple[Unclaimed, ...]:
    """Every ``[[features.<id>.unclaimed]]`` entry, in file order."""
    return _parsed(path)[1]


def python_key() -> str:
    """This interpreter as a row's `python` key: "3.11", "3.14t" on a free-threaded build."""
    import sys
    import sysconfig

    free = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") == 1 else ""
    return f"{sys.version_info.major}.{sys.version_info.minor}{free}"


def parse_fake(text: str) -> Device:
    """``cuda:9.0`` / ``rocm:gfx942`` / ``xpu:<device name>`` / ``cpu``, optionally ``@<variant>``
    (``rocm:gfx942@rocm7.14``; default: the variant that runs)."""
    text, _, variant = text.partition("@")
    family, _, model = text.strip().partition(":")
    if family not in FAMILIES:
        raise ClaimsError(f"{FAKE_CLAIM_ENV}={text!r}: family must be one of {FAMILIES}")
    cap = _capability(model) if family == "cuda" and model else None
    from _support import env as _env

    arch, name = (model if family == "rocm" else None), (model if family == "xpu" else "")
    e = _env.get()
    return Device(
        family,
        cap,
        arch,
        name,
        variant=variant.strip() or e.variant,
        torch=e.torch_version,
        fake=True,
        python=python_key(),
    )


@functools.cache
def device() -> Device:
    """The device claims are judged against: ``COMPAT_FAKE_CLAIM`` if set, else what the probe found."""
    fake = os.environ.get(FAKE_CLAIM_ENV, "").strip()
    if fake:
        return parse_fake(fake)
    from _support import env as _env

    e = _env.get()
    devices = e.info.get("devices") or []
    name = str(devices[0].get("name") or "") if devices and e.accelerator else ""
    return Device(
        e.device_kind,
        e.capability,
        e.arch,
        name,
        variant=e.variant,
        torch=e.torch_version,
        python=python_key(),
        machine=platform.machine(),
    )


def claims_for(node_id: str, dev: Device | None = None) -> list[Claim]:
    """The claims that cover this test on this device (empty: nothing claims it works here)."""
    dev = dev or device()
    return [
        c for c in load() if c.covers_test(node_id) and c.covers_device(dev) and c.holds_on_python(node_id, dev.python)
    ]


def claimed_ops(node_ids: list[str], dev: Device | None = None) -> set[str]:
    """The APIs the claims covering these tests on this device name: what the drills break."""
    return {op for node in node_ids for c in claims_for(node, dev) for op in c.ops}


_CURRENT: list[Claim] = []


def current() -> list[Claim]:
    """The claims covering the test that runs now (conftest sets them before each test)."""
    return list(_CURRENT)


def set_current(found: list[Claim]) -> None:
    _CURRENT[:] = found


def feature_claimed(feature: str, dev: Device | None = None) -> bool:
    dev = dev or device()
    return any(c.feature == feature and c.covers_device(dev) for c in load())


NOT_DECLARED = "NOT DECLARED in [[features.{feature}.unclaimed]]"


def unclaimed_why(node_id: str, dev: Device | None = None) -> str:
    """Why no claim covers this test on this device: no claim of its feature covers the device, or the ``why`` of
    the first ``[[features.<id>.unclaimed]]`` entry matching it (``NOT_DECLARED`` when none does: the contract in
    tests/suites/test_unclaimed_contract.py fails then)."""
    dev = dev or device()
    feature = node_id.partition("/")[0]
    if not feature_claimed(feature, dev):
        return f"upstream claims no part of {feature} on this device"
    here = [c for c in load() if c.covers_test(node_id) and c.covers_device(dev)]
    other_python = [c for c in here if not c.holds_on_python(node_id, dev.python)]
    if other_python:  # its group is judged on other interpreters: shown here, never judged
        keys = other_python[0].group_pythons(node_id)
        return f"its group is judged on Python {'/'.join(keys)} only; this is Python {dev.python}"
    found = next((u for u in load_unclaimed() if u.feature == feature and u.matches(node_id)), None)
    return found.why if found else NOT_DECLARED.format(feature=feature)
