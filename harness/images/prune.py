"""Keep the harness's own images within a disk budget on a long-lived (self-hosted) runner.

Every image `harness build` makes carries the label `torch-compat.backend` and a tag in the
`torch-compat/` repository. Those are the candidates, and nothing else: an image that is also
tagged elsewhere (someone adopted it) and an image a container uses (running or stopped) are
kept. The rest are ordered by last use, newest first: the later of their creation and their
last tagging (a rebuild or re-tag marks use). The newest that fit in the budget are kept, the
first that does not fit and every older one are removed. Sizes are the engine's image sizes,
which count shared base layers once per image, so the budget errs on the side of keeping less.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, Literal

from harness.errors import UsageError

if TYPE_CHECKING:
    import docker

HARNESS_LABEL: Final = "torch-compat.backend"
HARNESS_REPOSITORY: Final = "torch-compat/"  # images.IMAGE_REPO + "/": where `harness build` tags
ENV_BUDGET: Final = "HARNESS_IMAGE_BUDGET"
_UNITS: Final = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_SIZE_RE: Final = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?)b?\s*$", re.IGNORECASE)

Action = Literal["keep", "remove"]


@dataclass(frozen=True)
class HarnessImage:
    id: str
    tags: tuple[str, ...]  # the torch-compat/ tags; empty for a dangling image
    size: int
    last_used: datetime
    backend: str
    in_use_by: tuple[str, ...] = ()  # container names
    foreign_tags: tuple[str, ...] = ()  # tags outside torch-compat/: the image is not only ours

    @property
    def name(self) -> str:
        return ", ".join(self.tags) if self.tags else f"<none> ({self.id.removeprefix('sha256:')[:12]})"


@dataclass(frozen=True)
class Decision:
    image: HarnessImage
    action: Action
    reason: str


@dataclass
class PruneReport:
    budget: int
    dry_run: bool
    decisions: list[Decision]
    removed: list[HarnessImage] = field(default_factory=list)
    failed: list[tuple[HarnessImage, str]] = field(default_factory=list)
    storage_before: int | None = None  # the engine's layer storage, bytes
    storage_after: int | None = None


def parse_size(text: str) -> int:
    """`50GB`, `50G`, `1.5 GiB`, `800MB`, `0` -> bytes (kB/MB/GB decimal like `docker images`, KiB/MiB/GiB binary)."""
    match = _SIZE_RE.match(str(text))
    if not match:
        raise UsageError(f"size {text!r} is not a size like 50GB, 800MB or 1.5TiB")
    number, unit, binary = match.groups()
    unit = unit.lower()
    if binary and not unit:
        raise UsageError(f"size {text!r} is not a size like 50GB, 800MB or 1.5TiB")
    scale = 1024 ** ("kmgt".index(unit) + 1) if binary else _UNITS[unit]
    return int(float(number) * scale)


def human_size(size: int) -> str:
    """Decimal units, as `docker images` prints them."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _timestamp(text: str | None) -> datetime:
    """Docker's RFC 3339 times carry nanoseconds; Python reads microseconds."""
    if not text:
        return datetime.min.replace(tzinfo=UTC)
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$", text)
    if not match:
        return datetime.min.replace(tzinfo=UTC)
    whole, fraction, zone = match.groups()
    stamp = whole + (fraction or ".0")[:7]
    parsed = datetime.fromisoformat(stamp + ("+00:00" if zone in (None, "Z") else zone))
    return parsed.astimezone(UTC)


def _containers_by_image(client: docker.DockerClient) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {}
    for container in client.api.containers(all=True):
        names = [str(n).lstrip("/") for n in container.get("Names") or []]
        users.setdefault(str(container.get("ImageID", "")), []).append(names[0] if names else container["Id"][:12])
    return users


def harness_images(client: docker.DockerClient, labels: Sequence[str] = ()) -> list[HarnessImage]:
    """The harness's images on this engine (optionally only those carrying every `labels` KEY[=VALUE])."""
    users = _containers_by_image(client)
    found = []
    for summary in client.api.images(filters={"label": [HARNESS_LABEL, *labels]}):
        image_id = str(summary["Id"])
        tags = [t for t in summary.get("RepoTags") or [] if t and t != "<none>:<none>"]
        ours = tuple(sorted(t for t in tags if t.startswith(HARNESS_REPOSITORY)))
        foreign = tuple(sorted(t for t in tags if not t.startswith(HARNESS_REPOSITORY)))
        if tags and not ours:
            continue  # labelled like ours but never tagged as ours: someone else's copy
        attrs = client.api.inspect_image(image_id)
        last_used = max(_timestamp(attrs.get("Created")), _timestamp((attrs.get("Metadata") or {}).get("LastTagTime")))
        found.append(
            HarnessImage(
                id=image_id,
                tags=ours,
                size=int(attrs.get("Size") or summary.get("Size") or 0),
                last_used=last_used,
                backend=str(((attrs.get("Config") or {}).get("Labels") or {}).get(HARNESS_LABEL, "")),
                in_use_by=tuple(users.get(image_id, ())),
                foreign_tags=foreign,
            )
        )
    return found


def plan_prune(images: Iterable[HarnessImage], budget: int) -> list[Decision]:
    """Newest first: keep what is in use or tagged elsewhere, then the newest that fit; remove the rest."""
    ordered = sorted(images, key=lambda i: (i.last_used, i.id), reverse=True)
    decisions: list[Decision] = []
    used = sum(i.size for i in ordered if i.in_use_by or i.foreign_tags)
    over = used > budget
    for image in ordered:
        if image.in_use_by:
            decisions.append(Decision(image, "keep", f"in use by container {', '.join(image.in_use_by)}"))
        elif image.foreign_tags:
            decisions.append(Decision(image, "keep", f"also tagged {', '.join(image.foreign_tags)}"))
        elif not over and used + image.size <= budget:
            used += image.size
            decisions.append(Decision(image, "keep", "within the budget"))
        else:
            over = True  # from here on everything older goes, so the newest images are the ones kept
            decisions.append(Decision(image, "remove", "over the budget"))
    return decisions


def _layer_storage(client: docker.DockerClient) -> int | None:
    try:
        return int(client.df().get("LayersSize") or 0)
    except Exception:  # an engine that cannot say (old API, permissions) still gets pruned
        return None


def remove_image(client: docker.DockerClient, image: HarnessImage) -> str:
    """Remove each of our tags (the last removal deletes the image); never forced. Returns '' or why not."""
    import docker.errors

    try:
        for ref in image.tags or (image.id,):
            client.api.remove_image(ref, force=False, noprune=False)
    except docker.errors.ImageNotFound:
        return ""  # gone already (another prune, a user)
    except docker.errors.APIError as err:
        return str(err.explanation or err).splitlines()[0]
    return ""


def prune(
    client: docker.DockerClient,
    budget: int,
    *,
    dry_run: bool = False,
    labels: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> PruneReport:
    decisions = plan_prune(harness_images(client, labels), budget)
    report = PruneReport(budget=budget, dry_run=dry_run, decisions=decisions)
    doomed = [d.image for d in decisions if d.action == "remove"]
    if dry_run or not doomed:
        return report
    report.storage_before = _layer_storage(client)
    for image in doomed:
        why = remove_image(client, image)
        if why:
            report.failed.append((image, why))
        else:
            report.removed.append(image)
        if progress:
            progress(f"{'could not remove' if why else 'removed'} {image.name}{': ' + why if why else ''}")
    report.storage_after = _layer_storage(client)
    return report


def describe(report: PruneReport) -> list[str]:
    """What a user reads: every candidate with its fate and why, then what was freed."""
    total = sum(d.image.size for d in report.decisions)
    lines = [
        f"{len(report.decisions)} image(s) of the harness, {human_size(total)}; budget {human_size(report.budget)}"
        + (" (dry run: nothing is removed)" if report.dry_run else "")
    ]
    width = max((len(d.image.name) for d in report.decisions), default=0)
    failed = {image.id: why for image, why in report.failed}
    for d in report.decisions:
        action = d.action
        if d.action == "remove":
            action = "would remove" if report.dry_run else ("KEPT" if d.image.id in failed else "removed")
        reason = failed.get(d.image.id, d.reason)
        stamp = d.image.last_used.strftime("%Y-%m-%d %H:%M")
        lines.append(f"  {action:<12} {d.image.name:<{width}}  {human_size(d.image.size):>10}  {stamp}  {reason}")
    doomed = [d.image for d in report.decisions if d.action == "remove"]
    if report.dry_run:
        lines.append(f"would remove {len(doomed)} image(s), {human_size(sum(i.size for i in doomed))} by their sizes")
    elif not doomed:
        lines.append("nothing to remove")
    else:
        removed = human_size(sum(i.size for i in report.removed))
        freed = f"{len(report.removed)} image(s) removed, {removed} by their sizes"
        lines.append(freed + (f"; {len(report.failed)} could not be removed" if report.failed else ""))
        if report.storage_before is not None and report.storage_after is not None:
            delta = report.storage_before - report.storage_after
            lines.append(
                f"engine layer storage {human_size(report.storage_before)} -> {human_size(report.storage_after)}"
                f" ({human_size(max(delta, 0))} freed)"
            )
    return lines
