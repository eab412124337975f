"""The cells to run, derived from the registry only; printed as a GitHub Actions matrix.

One cell per torch version and build variant that upstream ships for that version's release
(harness/backends.toml [releases]): a pair upstream does not build gets no cell, so it can never
read NO DATA as if a runner had failed. With no version the plan takes the current release's
newest patch release. With a single version a cell's id is the variant id, so a column keeps its
id from run to run (the nightly's `cu132` column stays `cu132` across a torch upgrade, and
`harness diff` pairs it with the baseline's column to show what the upgrade changed). With several
versions in one plan the ids must differ, so each carries its version: `cu130-2.13.0`, `cu130-2.14.1`.

Each cell names its channel and the wheel index it installs from: `release` (/whl/<variant>), `test`
(release candidates, /whl/test/<variant>) or `nightly` (/whl/nightly/<variant>). A `.devYYYYMMDD`
version is a nightly, an `rcN` (or any version of a release the registry lists on the test channel)
a candidate; `--channel` says so explicitly. A nightly cell always carries its version, so each
night is a column of its own (`cu130-2.16.0.dev20261130`) and the history across nightlies can
name the first bad one. A release the registry does not list is refused unless the channel is
nightly or test (then the newest listed release's builds are planned, and a note says so).

Pythons are a dimension too (`--python`): `default` (one cell per build, on its image's own interpreter:
nobody's CI doubles by surprise), `all` (one cell per CPython the release ships wheels for, free-threaded
included) or a list (`3.13,3.14t`: the ones each release ships; another is "not shipped", a note and no
cell, as a build is). A cell planned for a Python names it (`python`) and carries its tag in its id
(`cu132-cp315`), unless it is the Python of the build's default image (harness/interpreters.py).

The plan is read back typed (`read_plan`): `harness merge --expect` and `harness collect --plan` get
`PlannedCell`s, never dicts, and `harness collect` passes the plan on with each missing cell's reason.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Final

from harness.cell import is_cell_id
from harness.errors import InputError, UsageError
from harness.interpreters import PythonKey, id_tag, parse_python, python_key
from harness.registry import CHANNELS, FAMILIES, Backend, Registry, Release, load_registry
from harness.text_table import aligned
from harness.torch_build import parse_version

IMAGE_REPOSITORY: Final = "torch-compat"
# A public PEP 440 release of torch: 2.14.1, 2.15.0rc1, 2.16.0.dev20261201. No local tag: each
# backend's wheel index adds its own (+cpu, +cu130), so one version fits every backend.
_PUBLIC_VERSION_RE: Final = re.compile(r"^[0-9]+(\.[0-9]+){1,3}((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$")
# The labels of GitHub's own runner images (ubuntu-24.04, ubuntu-24.04-arm, windows-2025, macos-15, ...).
_GITHUB_HOSTED_RE: Final = re.compile(r"^(ubuntu|windows|macos)-(latest|[0-9][A-Za-z0-9._-]*)$")


@dataclass(frozen=True)
class PlannedCell:
    """One cell of the plan. Only `cell_id` is needed to read one back: a plan written by hand (or by
    another tool) may name just the cells it expects."""

    cell_id: str
    backend: str = ""
    display_name: str = ""
    image: str = ""
    runner_labels: tuple[str, ...] = ()
    self_hosted: bool = False
    accelerator: str = ""
    torch: str = ""
    release: str = ""  # the release series (2.15), or "" when the registry does not list it
    status: str = ""  # stable | experimental | legacy, as upstream ships the build for that release
    channel: str = ""  # release | test | nightly: where its torch comes from ("": a hand-written plan did not say)
    index: str = ""  # the wheel index of that channel
    missing: str = ""  # why nothing arrived, as `harness collect` found it ("" in a plan from `harness plan`)
    python: str = ""  # the CPython it is planned for (3.15, 3.14t); "": its image's own interpreter

    @property
    def python_key(self) -> PythonKey | None:
        return python_key(self.python)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["runner_labels"] = list(self.runner_labels)
        if not self.missing:
            del data["missing"]
        if not self.python:  # the image's own interpreter: a plan without Pythons reads as it always did
            del data["python"]
        return data

    @classmethod
    def from_json(cls, data: Any) -> PlannedCell:
        """One plan entry; a field of the wrong type is a ValueError naming it (keys it does not know
        are left out: a newer plan still reads)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("cell_id"), str) or not data["cell_id"]:
            raise ValueError("a plan entry is an object with a cell_id")
        values: dict[str, Any] = {}
        for spec in fields(cls):
            if spec.name not in data or data[spec.name] is None:
                continue
            value = data[spec.name]
            if spec.name == "runner_labels":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ValueError(f"cell {data['cell_id']!r}: runner_labels is not a list of labels")
                value = tuple(value)
            elif spec.name == "self_hosted":
                if not isinstance(value, bool):
                    raise ValueError(f"cell {data['cell_id']!r}: self_hosted is not true or false")
            elif not isinstance(value, str):
                raise ValueError(f"cell {data['cell_id']!r}: {spec.name} is not a string")
            values[spec.name] = value
        channel = values.get("channel", "")
        if channel and channel not in CHANNELS:
            raise ValueError(f"cell {data['cell_id']!r}: channel {channel!r} is not one of {', '.join(CHANNELS)}")
        python = values.get("python", "")
        if python and python_key(python) is None:
            raise ValueError(f"cell {data['cell_id']!r}: python {python!r} is not a Python like 3.15 or 3.14t")
        return cls(**values)


def read_plan(path: Path) -> tuple[PlannedCell, ...]:
    """The planned cells of a plan file: `{"include": [...]}` (`harness plan --format github`) or a list."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(
            f"{path}: not a readable plan ({err})", hint="write it with `harness plan --format json`"
        ) from None
    entries = data.get("include") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise InputError(f'{path}: a plan is a list of cells with a cell_id (or {{"include": [...]}})')
    try:
        return tuple(PlannedCell.from_json(entry) for entry in entries)
    except ValueError as err:
        raise InputError(f'{path}: {err} (a plan is a list of cells with a cell_id, or {{"include": [...]}})') from None


def plan_json(cells: Iterable[PlannedCell], *, indent: int | None = None) -> str:
    """The plan as `harness plan --format github` writes it (on one line unless `indent`)."""
    separators = (",", ":") if indent is None else None
    return json.dumps({"include": [c.to_json() for c in cells]}, indent=indent, separators=separators)


def is_self_hosted(labels: Sequence[str]) -> bool:
    """Whether `runs-on: labels` lands on a runner of our own: labelled self-hosted, or named anything but
    a GitHub image (an actions-runner-controller scale set is addressed by its name alone)."""
    return "self-hosted" in labels or not all(_GITHUB_HOSTED_RE.match(label) for label in labels)


def image_for(backend_id: str, torch: str = "", python: str = "") -> str:
    """`torch-compat/<backend>`, tagged with the torch version when one is pinned (and the Python's tag
    when one is planned: `:torch-2.15.0-cp315`)."""
    name = f"{IMAGE_REPOSITORY}/{backend_id}"
    tag = "-".join(p for p in (f"torch-{torch}" if torch else "", python) if p)
    return f"{name}:{tag}" if tag else name


def parse_torch_versions(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """`"2.13.0,2.14.1"` (or several such strings) -> ("2.13.0", "2.14.1"), in order, without repeats."""
    texts = [values] if isinstance(values, str) else list(values or ())
    versions = [part.strip() for text in texts for part in text.split(",") if part.strip()]
    for version in versions:
        parsed = parse_version(version)
        if parsed is not None and parsed.local:
            raise UsageError(
                f"--torch {version!r} carries a local tag",
                hint=f"give the release ({parsed.base}); each backend's index adds its own +tag",
            )
        if parsed is None or len(parsed.release) < 2 or not _PUBLIC_VERSION_RE.match(version):
            raise UsageError(f"--torch {version!r} is not a version like 2.15.0 (a list: 2.13.0,2.14.1,2.15.0)")
    return tuple(dict.fromkeys(versions))


def cell_id_for(backend_id: str, torch: str, several_versions: bool, python: str | None = None) -> str:
    """The backend id; `<backend>-<version>` when the plan holds several versions (or the version is a
    nightly, named by its date); `-<python tag>` after it for a Python other than the default image's."""
    cell_id = f"{backend_id}-{torch}" if several_versions or ".dev" in torch else backend_id
    cell_id = f"{cell_id}-{python}" if python else cell_id
    if not is_cell_id(cell_id):
        raise UsageError(f"cell id {cell_id!r} is not a valid cell id (letters, digits, '.', '_', '-'; <= 128)")
    return cell_id


DEFAULT_PYTHON: Final = "default"  # one cell per build, on its image's own interpreter
ALL_PYTHONS: Final = "all"  # one cell per CPython the release ships


def parse_pythons(values: str | Iterable[str] | None) -> str | tuple[PythonKey, ...]:
    """`--python`: "default", "all", or the keys of a list (`3.13,3.14t`, repeatable), in order, without
    repeats. A key that is no Python (3.14x) is a usage error naming the valid keys; one the registry
    knows no release of (3.9) is a Python still: the plan says "not shipped"."""
    texts = [values] if isinstance(values, str) else list(values or ())
    parts = [part.strip() for text in texts for part in text.split(",") if part.strip()]
    words = {DEFAULT_PYTHON, ALL_PYTHONS} & set(parts)
    if words:
        if len(parts) > 1:
            raise UsageError(f"--python {','.join(parts)!r}: {words.pop()} stands alone (or list Pythons: 3.13,3.14t)")
        return parts[0]
    if not parts:
        return DEFAULT_PYTHON
    valid = [DEFAULT_PYTHON, ALL_PYTHONS, *(k.label for k in load_registry().pythons)]
    return tuple(dict.fromkeys(parse_python(p, valid=valid) for p in parts))


def _pythons_for(
    asked: str | tuple[PythonKey, ...], release: Release, backend: Backend, version: str, notes: list[str]
) -> list[PythonKey | None]:
    """The Pythons of one build's cells: None (its image's own) by default, else those the release ships."""
    if asked == DEFAULT_PYTHON:
        return [None]
    if asked == ALL_PYTHONS:
        return list(release.pythons) or [None]
    shipped: list[PythonKey | None] = []
    for key in asked:  # type: ignore[union-attr]
        if release.ships_python(key) is False:
            note = f"Python {key} is not shipped for torch {release.id}: no {backend.id} cell for {version}"
            if note not in notes:
                notes.append(note)
            continue
        shipped.append(key)
    return shipped


@dataclass(frozen=True)
class Plan:
    """The cells, and what a reader should know about how they were chosen."""

    cells: tuple[PlannedCell, ...]
    notes: tuple[str, ...] = ()


def _minor(version: str) -> str:
    parsed = parse_version(version)
    return parsed.minor if parsed else version


def channel_for(registry: Registry, version: str, asked: str | None) -> str:
    """The channel of one version: what the version implies, or the asked one when they agree."""
    implied = registry.channel_of(version)
    if asked is None:
        return implied
    if asked not in CHANNELS:
        raise UsageError(f"--channel {asked!r} is not a channel", hint=f"one of {', '.join(CHANNELS)}")
    if (asked == "nightly") != (implied == "nightly"):
        raise UsageError(
            f"--torch {version} is not a {asked} version"
            if asked == "nightly"
            else f"--torch {version} is a nightly: its channel is nightly, not {asked}",
            hint="a nightly's version ends in .devYYYYMMDD, e.g. 2.16.0.dev20261130",
        )
    if asked == "release" and parse_version(version).pre:  # type: ignore[union-attr]
        raise UsageError(f"--torch {version} is a release candidate: its channel is test, not release")
    return asked


def _release_for(registry: Registry, version: str, channel: str, notes: list[str]) -> Release:
    release = registry.release_of(version)
    if release is not None:
        if channel == "release" and not release.final:
            notes.append(
                f"the registry lists torch {release.id} on the test channel (planned {release.planned}): "
                "planned from the release channel as asked"
            )
        return release
    if channel == "release":
        known = ", ".join(registry.releases)
        raise UsageError(
            f"torch {version} is of a release the registry does not know (it lists {known})",
            hint=f'add [releases."{_minor(version)}"] to harness/backends.toml (harness upstream --write proposes it), '
            "or pass --channel nightly or --channel test for a release still in the making",
        )
    newest = list(registry.releases.values())[-1]
    notes.append(
        f"torch {version} is of a release the registry does not list: planned with the builds of "
        f'{newest.id} (add [releases."{_minor(version)}"] to harness/backends.toml)'
    )
    return newest


def _default_versions(registry: Registry, channel: str | None) -> tuple[str, ...]:
    """No --torch: the current release's newest; with --channel test, the release in candidates."""
    if channel == "nightly":
        raise UsageError(
            "a nightly plan names its nightly: --torch <release>.devYYYYMMDD", hint="e.g. --torch 2.16.0.dev20261130"
        )
    if channel == "test":
        candidates = [r for r in registry.releases.values() if not r.final]
        if not candidates:
            raise UsageError("no release is on the test channel in the registry", hint="give --torch VERSION")
        return (candidates[-1].latest,)
    return (registry.current.latest,)


def make_plan(
    backends: Sequence[str] | None = None,
    torch: str | Iterable[str] | None = None,
    channel: str | None = None,
    python: str | Iterable[str] | None = None,
) -> Plan:
    """Cells for the selected variants or families (all that each release ships, when none are named)
    x torch versions (the current release's newest patch release when none are given) x Pythons
    (`parse_pythons`: by default one per build), each from its channel's index (implied by the
    version, or `channel`)."""
    registry = load_registry()
    pythons = parse_pythons(python)
    versions = parse_torch_versions(torch) or _default_versions(registry, channel)
    several = len(versions) > 1
    notes: list[str] = []
    cells: list[PlannedCell] = []
    for version in versions:
        chan = channel_for(registry, version, channel)
        release = _release_for(registry, version, chan, notes)
        chosen = registry.select(backends, release)
        for selector in backends or ():
            backend = None if selector in FAMILIES else registry.get(selector)
            if backend is not None and not release.ships(backend.id):
                notes.append(f"{backend.id} is not shipped for torch {release.id}: no cell for {version}")
        for backend in chosen:
            for key in _pythons_for(pythons, release, backend, version, notes):
                tag = id_tag(key, backend.base_python)
                cells.append(
                    PlannedCell(
                        cell_id=cell_id_for(backend.id, version, several, tag),
                        backend=backend.id,
                        display_name=backend.display_name,
                        image=image_for(backend.id, version, key.tag if key else ""),
                        runner_labels=backend.runner_labels,
                        self_hosted=is_self_hosted(backend.runner_labels),
                        accelerator=backend.accelerator,
                        torch=version,
                        release=release.id if registry.release_of(version) else "",
                        status=release.status(backend.id) or "",
                        channel=chan,
                        index=backend.index(chan),
                        python=key.label if key else "",
                    )
                )
    # Variants first, then versions: a backend's builds sit side by side, oldest release first.
    cells.sort(key=lambda c: registry.variant_order(c.backend))
    if not cells:
        raise UsageError(
            "the plan is empty: no selected build (or Python) is shipped for these torch versions"
            + (f" ({notes[-1]})" if notes else ""),
            hint="see `harness backends` for which builds and Pythons each release ships",
        )
    return Plan(tuple(cells), tuple(notes))


def plan_cells(
    backends: Sequence[str] | None = None,
    torch: str | Iterable[str] | None = None,
    channel: str | None = None,
    python: str | Iterable[str] | None = None,
) -> list[PlannedCell]:
    """make_plan's cells."""
    return list(make_plan(backends, torch, channel, python).cells)


def parse_runner_labels(text: str) -> dict[str, tuple[str, ...]]:
    """The --runner-labels JSON: an object of backend or family -> a list of labels (or one label)."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as err:
        raise UsageError(f"--runner-labels is not JSON ({err})", hint='e.g. {"cuda": ["gpu-a100"]}') from None
    if not isinstance(data, dict):
        raise UsageError("--runner-labels must be a JSON object of backend -> labels")
    out: dict[str, tuple[str, ...]] = {}
    registry = load_registry()
    for key, labels in data.items():
        if key not in FAMILIES and registry.get(key) is None:
            raise UsageError(f"--runner-labels names {key!r}, which is no backend or family")
        labels = [labels] if isinstance(labels, str) else labels
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x for x in labels):
            raise UsageError(f"--runner-labels {key}: give a label or a non-empty list of labels")
        out[key] = tuple(labels)
    return out


def relabel(cells: Sequence[PlannedCell], labels: Mapping[str, tuple[str, ...]]) -> list[PlannedCell]:
    """Each cell on the labels given for its variant, else for its family, else the registry's."""
    registry = load_registry()
    out = []
    for cell in cells:
        backend = registry.get(cell.backend)
        chosen = labels.get(cell.backend) or (labels.get(backend.build) if backend else None)
        if chosen:
            cell = dataclasses.replace(cell, runner_labels=chosen, self_hosted=is_self_hosted(chosen))
        out.append(cell)
    return out


def github_matrix(cells: Sequence[PlannedCell]) -> str:
    """`{"include": [...]}` on one line, ready for `matrix=<this>` in $GITHUB_OUTPUT."""
    return plan_json(cells)


def table(cells: Sequence[PlannedCell]) -> str:
    headers = ("cell", "backend", "torch", "python", "status", "channel", "image", "runner labels", "self-hosted")
    rows = [
        (
            c.cell_id,
            c.display_name,
            c.torch or "(image default)",
            c.python or "(image default)",
            c.status or "?",
            c.channel,
            c.image,
            ",".join(c.runner_labels),
            "yes" if c.self_hosted else "no",
        )
        for c in cells
    ]
    return "\n".join(aligned([headers, *rows])) + "\n"
