"""What a newer wheel's public API adds and removes against an older one, per namespace, and which of
the added names the suites exercise; as JSON (the file the release view reads) and as Markdown.

A namespace is a public module (`torch.nn.functional`). An added name counts as tested when the suites
name it (harness/run/suite_apis.py) under its own namespace, or under an enclosing namespace that added the
same name: `torch.mps.Stream` in a suite tests the `Stream` that `torch.mps.streams` defines and
`torch.mps` re-exports (but `torch.floor` does not test a new `torch.foreach.floor`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.errors import InputError, UsageError, did_you_mean

FORMAT: Final = "torch-compat/api-diff"
FORMAT_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class WheelApi:
    """What one wheel exposes: its version and, per public module, the sorted public names."""

    package: str
    version: str
    modules: dict[str, tuple[str, ...]]
    sources: tuple[str, ...] = ()  # the wheel's files the names were read from (tools/slim_wheel.py keeps these)

    def names(self) -> set[str]:
        """Every public API as a dotted path (`torch.nn.functional.scaled_mm`)."""
        return {f"{module}.{name}" for module, names in self.modules.items() for name in names}


@dataclass(frozen=True, slots=True)
class NamespaceChange:
    namespace: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    tested: tuple[str, ...]  # of `added`
    status: str  # "changed", "new" (the module is new) or "gone"

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "status": self.status,
            "added": list(self.added),
            "removed": list(self.removed),
            "tested": list(self.tested),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NamespaceChange:
        return cls(
            namespace=str(data["namespace"]),
            added=tuple(str(n) for n in data["added"]),
            removed=tuple(str(n) for n in data["removed"]),
            tested=tuple(str(n) for n in data["tested"]),
            status=str(data["status"]),
        )


@dataclass(frozen=True, slots=True)
class ApiDiff:
    package: str
    old_version: str
    new_version: str
    namespaces: tuple[NamespaceChange, ...]

    @property
    def added(self) -> int:
        return sum(len(n.added) for n in self.namespaces)

    @property
    def removed(self) -> int:
        return sum(len(n.removed) for n in self.namespaces)

    @property
    def tested(self) -> int:
        return sum(len(n.tested) for n in self.namespaces)

    def summary(self) -> str:
        """'2.15.0: 152 new public APIs, 9 tested, 2 gone'."""
        text = f"{self.new_version}: {self.added} new public API{'s' if self.added != 1 else ''}, {self.tested} tested"
        return text + (f", {self.removed} gone" if self.removed else "")

    def is_for(self, old_version: str, new_version: str) -> bool:
        """Whether this diff is between these two torch versions (local tags such as +cu130 ignored)."""
        return (_base(old_version), _base(new_version)) == (_base(self.old_version), _base(self.new_version))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "package": self.package,
            "old": self.old_version,
            "new": self.new_version,
            "added": self.added,
            "removed": self.removed,
            "tested": self.tested,
            "namespaces": [n.to_json() for n in self.namespaces],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ApiDiff:
        return cls(
            package=str(data["package"]),
            old_version=str(data["old"]),
            new_version=str(data["new"]),
            namespaces=tuple(NamespaceChange.from_json(n) for n in data["namespaces"]),
        )

    def to_markdown(self) -> str:
        lines = [
            f"# Public API of {self.package} {self.new_version} against {self.old_version}",
            "",
            f"{self.summary()} (tested: named by the suites or their features.toml).",
            "",
        ]
        if not self.namespaces:
            lines.append("No public name was added or removed.")
        for change in self.namespaces:
            note = {"new": " (new module)", "gone": " (module removed)"}.get(change.status, "")
            lines.append(f"## {change.namespace}{note}")
            lines.append("")
            tested = set(change.tested)
            if change.added:
                marked = [f"`{n}`" + (" (tested)" if n in tested else "") for n in change.added]
                lines.append(f"- added ({len(change.added)}): " + ", ".join(marked))
            if change.removed:
                lines.append(f"- removed ({len(change.removed)}): " + ", ".join(f"`{n}`" for n in change.removed))
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"


def _base(version: str) -> str:
    return version.partition("+")[0]


def _is_tested(namespace: str, name: str, exercised: set[str], added: dict[str, set[str]]) -> bool:
    """Named by the suites in its namespace, or in an enclosing one that added the same name in this
    release (a re-export of the same new API: `torch.mps.Stream` for `torch.mps.streams.Stream`)."""
    if f"{namespace}.{name}" in exercised:
        return True
    parts = namespace.split(".")
    enclosing = (".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1))
    return any(name in added.get(outer, ()) and f"{outer}.{name}" in exercised for outer in enclosing)


def check_namespaces(namespaces: Iterable[str], modules: Collection[str], where: str) -> None:
    """Each --namespace names a module of `modules` or a package above some: a typo must never read
    as "no public name was added or removed"."""
    for namespace in namespaces:
        if not any(module == namespace or module.startswith(f"{namespace}.") for module in modules):
            near = did_you_mean(namespace, sorted(modules))
            raise UsageError(f"--namespace {namespace}: no public module of that name in {where}{near}")


def diff_apis(old: WheelApi, new: WheelApi, exercised: set[str], namespaces: tuple[str, ...] = ()) -> ApiDiff:
    """Per namespace (every public module of either wheel, or those under `namespaces`), what `new`
    added and removed, and which added names `exercised` (dotted paths the suites use) covers."""

    def wanted(module: str) -> bool:
        return not namespaces or any(module == n or module.startswith(f"{n}.") for n in namespaces)

    modules = sorted(set(old.modules) | set(new.modules))
    check_namespaces(namespaces, modules, f"torch {old.version} or {new.version}")
    added_in = {m: set(new.modules.get(m, ())) - set(old.modules.get(m, ())) for m in modules}
    changes = []
    for module in modules:
        if not wanted(module):
            continue
        before, after = set(old.modules.get(module, ())), set(new.modules.get(module, ()))
        if before == after and (module in old.modules) == (module in new.modules):
            continue
        added = tuple(sorted(added_in[module]))
        status = "new" if module not in old.modules else "gone" if module not in new.modules else "changed"
        changes.append(
            NamespaceChange(
                namespace=module,
                added=added,
                removed=tuple(sorted(before - after)),
                tested=tuple(n for n in added if _is_tested(module, n, exercised, added_in)),
                status=status,
            )
        )
    return ApiDiff(package=new.package, old_version=old.version, new_version=new.version, namespaces=tuple(changes))


def load_api_diff(path: Path) -> ApiDiff:
    """An `harness api-diff --format json` file; InputError for anything else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such API diff file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"{path}: not an API diff ({err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{path}: not an API diff (want the JSON of `harness api-diff --format json`)")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{path}: API diff format_version {data.get('format_version')!r}, want {FORMAT_VERSION}")
    try:
        return ApiDiff.from_json(data)
    except (KeyError, TypeError) as err:
        raise InputError(f"{path}: malformed API diff ({err!r})") from err
