"""Known upstream issues, matched on what ran: ``expectations/*.toml``.

Every ``.toml`` file in ``expectations/`` holds ``[[known_issue]]`` entries (today one file,
``known_issues.toml``). An entry applies to a test when its node id matches and every condition it
states holds for the build and the device that actually ran (from the probe, never from the
harness's column label)::

    [[known_issue]]
    test = "linalg/test_eigh.py::test_eigh_repeated_calls_stable[complex64-batched]"  # * and ? wildcards
    link = "https://github.com/pytorch/pytorch/issues/192483"
    reason = "batched complex64 CUDA eigh returns a non-unitary Q from the 3rd call on"
    variants = ["cu*"]        # optional: fnmatch globs over the build variant (cpu, cu130, rocm7.14, xpu)
    device = "cuda"           # optional: what the tests ran on: cpu | cuda | rocm | xpu (or a list)
    device_name = ["*A770*"]  # optional: fnmatch globs over the device's name (the probe's devices[0])
    python = ">=3.15"         # optional: a bound on the Python version (>=, >, <=, <, ==; major.minor)
    since = "2.13"            # optional: the torch release the issue appeared in (numeric comparison)
    until = "2.15"            # optional: the first torch release without it (the entry stops applying there)
    raises = ["RuntimeError"] # required: the exception(s) the issue raises (builtins or dotted paths)

A CUDA wheel on a host without a GPU runs on ``cpu``: an entry with ``device = "cuda"`` does not apply
there. conftest applies every matching entry as a **strict** xfail with ``raises=`` the entry's exceptions
and a reason that starts with ``[known-issue <link>]``: any other error is a plain failure, and a pass where
the entry applies (the issue fixed, or the entry scoped too wide) fails as XPASS(strict) until the entry is
narrowed (``until``, ``device_name``, ``variants``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REQUIRED_KEYS = ("test", "link", "reason", "raises")
OPTIONAL_KEYS = ("variants", "device", "device_name", "python", "since", "until")
_EXCEPTION_NAME = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*")
ALLOWED_KEYS = set(REQUIRED_KEYS) | set(OPTIONAL_KEYS)
DEVICE_KINDS = ("cpu", "cuda", "rocm", "xpu")
_VARIANT_GLOB = re.compile(r"[a-z0-9.*?\[\]!-]+")
_PYTHON_BOUND = re.compile(r"(>=|<=|==|>|<)\s*(\d+)\.(\d+)")
_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?")
# Variant ids a glob is checked against: one that matches none of them is a typo ("cuda", "rocm").
_SAMPLE_VARIANTS = (
    ["cpu", "xpu"]
    + [f"cu{n}" for n in range(80, 200)]
    + [f"rocm{major}.{minor}" for major in range(5, 13) for minor in range(0, 21)]
)


class ExpectationsError(Exception):
    """A malformed expectations file; the message names the file and the entry."""


@dataclass(frozen=True)
class RunContext:
    """What ran: the build variant, the device kind and name, the Python and torch releases."""

    variant: str
    device: str
    device_name: str
    python: tuple[int, ...]
    torch: tuple[int, ...]


@dataclass(frozen=True)
class KnownIssue:
    test: str
    link: str
    reason: str
    variants: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    device_names: tuple[str, ...] = ()
    python: str | None = None
    since: tuple[int, ...] | None = None
    until: tuple[int, ...] | None = None
    raises: tuple[str, ...] = ()

    def matches(self, node_id: str) -> bool:
        return node_id == self.test or node_glob(self.test).fullmatch(node_id) is not None

    def applies_to(self, ctx: RunContext) -> bool:
        """Every condition the entry states holds for what ran (an absent condition always holds)."""
        if self.variants and not any(fnmatch.fnmatchcase(ctx.variant, g) for g in self.variants):
            return False
        if self.devices and ctx.device not in self.devices:
            return False
        if self.device_names and not any(fnmatch.fnmatchcase(ctx.device_name, g) for g in self.device_names):
            return False
        if self.python and not _python_holds(self.python, ctx.python):
            return False
        if self.until and tuple(ctx.torch[: len(self.until)]) >= self.until:
            return False
        return not (self.since and tuple(ctx.torch[: len(self.since)]) < self.since)

    @property
    def xfail_reason(self) -> str:
        return f"[known-issue {self.link}] {self.reason}"


@functools.cache
def node_glob(pattern: str) -> re.Pattern[str]:
    """A node-id pattern: ``*`` and ``?`` are wildcards, everything else literal, brackets included
    (``test_x[*]`` is every parametrization of test_x; fnmatch would read ``[*]`` as a character set)."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def _python_holds(bound: str, version: tuple[int, ...]) -> bool:
    m = _PYTHON_BOUND.fullmatch(bound.strip())
    if m is None:  # parse() rejects such a bound; a hand-built entry never matches
        return False
    op, want = m.group(1), (int(m.group(2)), int(m.group(3)))
    have = tuple(version[:2])
    return {
        ">=": have >= want,
        ">": have > want,
        "<=": have <= want,
        "<": have < want,
        "==": have == want,
    }[op]


def _strings(where: str, key: str, value: object, *, one_allowed: bool) -> tuple[str, ...]:
    """A non-empty list of non-empty strings (or, where allowed, one string)."""
    if one_allowed and isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        kind = "a non-empty string or list of strings" if one_allowed else "a non-empty list of strings"
        raise ExpectationsError(f"{where}: '{key}' must be {kind}, got {value!r}")
    return tuple(v.strip() for v in value)


def _check_glob(where: str, key: str, glob: str) -> None:
    if glob.count("[") != glob.count("]") or "[]" in glob:
        raise ExpectationsError(f"{where}: '{key}' has an unbalanced or empty [...] in {glob!r}")


def _variants(where: str, value: object) -> tuple[str, ...]:
    globs = _strings(where, "variants", value, one_allowed=False)
    for glob in globs:
        if not _VARIANT_GLOB.fullmatch(glob):
            raise ExpectationsError(
                f"{where}: 'variants' glob {glob!r} may use only lower-case letters, digits, '.', '-' and * ? [ ] !"
            )
        _check_glob(where, "variants", glob)
        if not any(fnmatch.fnmatchcase(v, glob) for v in _SAMPLE_VARIANTS):
            raise ExpectationsError(
                f"{where}: 'variants' glob {glob!r} matches no build variant (variants look like cpu, cu126, "
                "cu132, rocm7.2, rocm7.14, xpu)"
            )
    return globs


def _entry(where: str, entry: object) -> KnownIssue:
    if not isinstance(entry, dict):
        raise ExpectationsError(f"{where}: must be a table")
    if isinstance(entry.get("test"), str) and entry["test"].strip():
        where = f"{where} ({entry['test']})"
    unknown = set(entry) - ALLOWED_KEYS
    if unknown:
        raise ExpectationsError(
            f"{where}: unknown key(s) {sorted(unknown)}; allowed: {list(REQUIRED_KEYS) + list(OPTIONAL_KEYS)}"
        )
    for key in ("test", "link", "reason"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise ExpectationsError(f"{where}: '{key}' must be a non-empty string")
    link = entry["link"]
    if not link.startswith("https://"):
        raise ExpectationsError(f"{where}: 'link' must be an https:// URL, got {link!r}")
    if any(c in link for c in " ]"):
        raise ExpectationsError(f"{where}: 'link' must not contain spaces or ']'")
    if "::" not in entry["test"]:
        raise ExpectationsError(f"{where}: 'test' must be a node id like 'linalg/test_eigh.py::test_x[...]'")
    variants = _variants(where, entry["variants"]) if "variants" in entry else ()
    devices = _strings(where, "device", entry["device"], one_allowed=True) if "device" in entry else ()
    bad = [d for d in devices if d not in DEVICE_KINDS]
    if bad:
        raise ExpectationsError(f"{where}: 'device' {bad} is not one of {list(DEVICE_KINDS)}")
    names = _strings(where, "device_name", entry["device_name"], one_allowed=False) if "device_name" in entry else ()
    for glob in names:
        _check_glob(where, "device_name", glob)
    python = entry.get("python")
    if python is not None and not (isinstance(python, str) and _PYTHON_BOUND.fullmatch(python.strip())):
        raise ExpectationsError(f"{where}: 'python' must be a bound like '>=3.15', got {python!r}")
    since, until = entry.get("since"), entry.get("until")
    for key, value in (("since", since), ("until", until)):
        if value is not None and not (isinstance(value, str) and _RELEASE.fullmatch(value)):
            raise ExpectationsError(f"{where}: '{key}' must be a torch release like '2.13', got {value!r}")
    if "raises" not in entry:
        raise ExpectationsError(f"{where}: 'raises' is required: the exception(s) the issue raises")
    raises = _strings(where, "raises", entry["raises"], one_allowed=True)
    bad_names = [r for r in raises if not _EXCEPTION_NAME.fullmatch(r)]
    if bad_names:
        raise ExpectationsError(f"{where}: 'raises' {bad_names} are not exception names")
    return KnownIssue(
        test=entry["test"],
        link=link,
        reason=entry["reason"].strip(),
        variants=variants,
        devices=devices,
        device_names=names,
        python=python.strip() if python else None,
        since=tuple(int(p) for p in since.split(".")) if since else None,
        until=tuple(int(p) for p in until.split(".")) if until else None,
        raises=raises,
    )


def parse(path: Path) -> list[KnownIssue]:
    """Parse and validate one file; raise :class:`ExpectationsError` naming it (and the entry) on any problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ExpectationsError(f"{path}: cannot parse expectations file: {e}") from e
    extra = set(data) - {"known_issue"}
    if extra:
        raise ExpectationsError(f"{path}: unknown top-level key(s) {sorted(extra)}; only [[known_issue]] is allowed")
    entries = data.get("known_issue", [])
    if not isinstance(entries, list):
        raise ExpectationsError(f"{path}: 'known_issue' must be an array of tables ([[known_issue]])")
    return [_entry(f"{path}: [[known_issue]] #{i}", entry) for i, entry in enumerate(entries, 1)]


def load(directory: Path) -> list[KnownIssue]:
    """Every entry of every ``*.toml`` file in ``directory`` (sorted by name); none when it is absent."""
    if not directory.is_dir():
        return []
    return [issue for path in sorted(directory.glob("*.toml")) for issue in parse(path)]


def applicable(issues: Iterable[KnownIssue], ctx: RunContext) -> list[KnownIssue]:
    """The entries whose conditions hold for what ran."""
    return [k for k in issues if k.applies_to(ctx)]


def match(issues: Iterable[KnownIssue], node_id: str) -> list[KnownIssue]:
    return [k for k in issues if k.matches(node_id)]
