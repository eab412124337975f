"""Upstream read as data: what the package indexes serve, compared with the registry (backends.toml).

Two kinds of index are read:

- pip's own index (PyPI, or the mirror/proxy pip is configured with: `PIP_INDEX_URL`, `pip config`):
  the versions through `pip index versions torch`, and each version's files (wheel tags, upload
  times) through the same index's PEP 691 JSON page, fetched like pip fetches it (its proxy
  variables and its CA bundle, `cert`, apply). Final releases, their upload dates and the Python
  versions they have wheels for.
- PyTorch's channel indexes (https://download.pytorch.org/whl/, /whl/test/, /whl/nightly/): each
  channel's `torch` page lists every build's wheels with their local tags (+cu134), so one page per
  channel says which variants each version is built for. PEP 691 JSON where served, else the PEP 503
  HTML page. A channel that cannot be reached is said and left out; pip's index not answering means
  offline, said in one line.

Differences name their source (the page they were read from). `propose` turns the ones that are
plain facts (a release date, a newer patch release, Python versions, a final release of a release
that had only candidates, a new release) into an edited backends.toml text, validated before it is
written; what needs judgement (a new variant's status) is listed for a person.

`Recorded` replays responses saved by `Live(record=DIR)`, so the comparison runs offline and in the
tests on real recorded index responses.
"""

from __future__ import annotations

import html
import json
import os
import re
import ssl
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol
from urllib.parse import unquote, urlsplit

from harness.errors import InfrastructureError, RegistryError, UsageError
from harness.registry import INDEX_ROOT, Registry, parse_registry
from harness.torch_build import parse_variant, parse_version, version_sort_key

PYPI: Final = "https://pypi.org/simple"
PACKAGE: Final = "torch"
CHANNEL_PAGES: Final[Mapping[str, str]] = {
    "release": f"{INDEX_ROOT}/{PACKAGE}/",
    "test": f"{INDEX_ROOT}/test/{PACKAGE}/",
    "nightly": f"{INDEX_ROOT}/nightly/{PACKAGE}/",
}
PEP691: Final = "application/vnd.pypi.simple.v1+json"
ACCEPT: Final = f"{PEP691}, text/html;q=0.1"
TIMEOUT: Final = 30.0
# The platform the harness's images run: Linux x86_64 (manylinux). Other platforms' wheels are not read.
_PLATFORM_RE: Final = re.compile(r"manylinux.*_x86_64$")
_WHEEL_RE: Final = re.compile(r"^torch-(?P<version>[^-]+)-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$")
_ANCHOR_RE: Final = re.compile(r"<a\b[^>]*>([^<]+)</a>", re.IGNORECASE)


# -- reading indexes ---------------------------------------------------------------------------------
class Offline(Exception):
    """An index did not answer (no network, a proxy refusing, a host down)."""


class Source(Protocol):
    """Where index responses come from: the network through pip's settings, or a recording."""

    def versions(self, index: str) -> list[str]: ...

    def page(self, url: str) -> tuple[str, str]: ...  # (content type, body)


def pip_setting(name: str, env: Mapping[str, str] | None = None) -> str:
    """A pip setting as pip resolves it: PIP_<NAME>, else `pip config get global.<name>`, else ""."""
    env = os.environ if env is None else env
    variable = "PIP_" + name.upper().replace("-", "_")
    if env.get(variable):
        return env[variable]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", f"global.{name}"],
        capture_output=True,
        text=True,
        check=False,
        env={**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def pip_index_url(env: Mapping[str, str] | None = None) -> str:
    """The index pip installs from: PIP_INDEX_URL, else pip's configuration, else PyPI."""
    found = pip_setting("index-url", env)
    return found.rstrip("/") if found.startswith(("http://", "https://")) else PYPI


def _slug(url: str) -> Path:
    """https://pypi.org/simple/torch/ -> pypi.org/simple/torch (a recording's file path)."""
    parts = urlsplit(url)
    return Path(parts.netloc.replace(":", "_")) / parts.path.strip("/")


@dataclass
class Live:
    """The network, as pip sees it: `pip index versions` and the index's JSON pages (proxy variables
    apply as they do to pip). With `record`, every response is saved there for `Recorded`."""

    record: Path | None = None
    cert: str = field(default_factory=lambda: pip_setting("cert"))  # pip's CA bundle (a TLS proxy's)

    def versions(self, index: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", PACKAGE, "--index-url", index, "--pre"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no answer"])[-1]
            raise Offline(f"pip index versions {PACKAGE} --index-url {index}: {last}")
        self._save(Path("pip-index-versions") / f"{_slug(index)}.txt", done.stdout)
        return parse_pip_versions(done.stdout)

    def page(self, url: str) -> tuple[str, str]:
        request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "torch-compat-harness"})
        context = ssl.create_default_context(cafile=self.cert) if self.cert else None
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT, context=context) as response:
                kind = response.headers.get_content_type()
                body = response.read().decode("utf-8", "replace")
        except (urllib.error.URLError, OSError, TimeoutError) as err:
            raise Offline(f"{url}: {getattr(err, 'reason', err)}") from None
        self._save(Path("pages") / f"{_slug(url)}.{'json' if kind == PEP691 else 'html'}", body)
        return kind, body

    def _save(self, relative: Path, text: str) -> None:
        if self.record is None:
            return
        from harness.jsonio import write_atomic

        path = self.record / relative
        write_atomic(path, lambda handle: handle.write(text.encode("utf-8")))


@dataclass
class Recorded:
    """Responses saved earlier (`harness upstream --record DIR`), replayed: a response that was not
    saved is an index that did not answer."""

    folder: Path

    def versions(self, index: str) -> list[str]:
        path = self.folder / "pip-index-versions" / f"{_slug(index)}.txt"
        if not path.is_file():
            raise Offline(f"pip index versions {PACKAGE} --index-url {index}: not in the recording {self.folder}")
        return parse_pip_versions(path.read_text(encoding="utf-8"))

    def page(self, url: str) -> tuple[str, str]:
        base = self.folder / "pages" / _slug(url)
        for suffix, kind in ((".json", PEP691), (".html", "text/html")):
            path = base.with_name(base.name + suffix)
            if path.is_file():
                return kind, path.read_text(encoding="utf-8")
        raise Offline(f"{url}: not in the recording {self.folder}")


def parse_pip_versions(text: str) -> list[str]:
    """The versions of `pip index versions` ("Available versions: 2.15.0, 2.14.1, ...")."""
    for line in text.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.partition(":")[2].split(",") if v.strip()]
    return []


# -- wheels ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Wheel:
    """One torch wheel an index serves (Linux x86_64 only)."""

    version: str  # public version: 2.16.0.dev20261130
    variant: str  # from the local tag: cu134; "" for PyPI's untagged wheels
    python: str  # 3.11, 3.14t
    uploaded: str = ""  # YYYY-MM-DD, when the page says (PEP 700 upload-time)


def python_of(abi: str, py: str) -> str:
    """cp314t -> 3.14t; cp311 -> 3.11 (the ABI tag says free-threaded, the Python tag the version)."""
    match = re.fullmatch(r"cp(\d)(\d+)(t?)", abi) or re.fullmatch(r"cp(\d)(\d+)(t?)", py)
    return f"{match.group(1)}.{match.group(2)}{match.group(3)}" if match else ""


def parse_page(kind: str, body: str) -> list[Wheel]:
    """The Linux x86_64 torch wheels of a PEP 691 JSON or PEP 503 HTML page."""
    entries: list[tuple[str, str]] = []  # (filename, upload time)
    if kind == PEP691 or body.lstrip().startswith("{"):
        try:
            data = json.loads(body)
        except json.JSONDecodeError:
            return []
        for item in data.get("files", []) if isinstance(data, dict) else []:
            if isinstance(item, dict) and isinstance(item.get("filename"), str):
                entries.append((item["filename"], str(item.get("upload-time") or "")))
    else:
        entries = [(html.unescape(unquote(name)).strip(), "") for name in _ANCHOR_RE.findall(body)]
    wheels = []
    for filename, uploaded in entries:
        match = _WHEEL_RE.match(filename)
        if not match or not _PLATFORM_RE.search(match["platform"]):
            continue
        parsed = parse_version(unquote(match["version"]))
        python = python_of(match["abi"], match["py"])
        if parsed is None or not python:
            continue
        variant = parse_variant(parsed.local)
        wheels.append(Wheel(parsed.base, variant.id if variant else "", python, uploaded[:10]))
    return wheels


# -- the comparison ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Difference:
    """One fact on which the registry and an index disagree."""

    release: str  # 2.15
    what: str  # released | latest | python | new-release | channel | new-variant | missing-variant | nightly
    registry: str  # the registry's value ("" when it has none)
    index: str  # the index's value
    source: str  # the page or command it was read from
    writable: bool = True  # --write can propose it (else: a person decides)

    def line(self) -> str:
        have = self.registry or "(none)"
        return f"{self.release}: {self.what}: registry {have}, index {self.index} (source: {self.source})"


@dataclass
class Comparison:
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was left out of what was read
    read: list[str] = field(default_factory=list)  # the sources read
    gave: dict[str, str] = field(default_factory=dict)  # source read -> what it gave ("41 versions")
    unread: dict[str, str] = field(default_factory=dict)  # source not read -> why: the answer is unknown

    @property
    def complete(self) -> bool:
        """Every source answered: only then can "the registry matches the indexes" be said."""
        return not self.unread


def _minor(version: str) -> str:
    parsed = parse_version(version)
    return parsed.minor if parsed else ""


def _final(version: str) -> bool:
    parsed = parse_version(version)
    return parsed is not None and not parsed.pre and parsed.dev < 0 and not parsed.local


def _newest(versions: Iterable[str]) -> str:
    return max(versions, key=version_sort_key)


def _python_list(pythons: Iterable[str]) -> list[str]:
    """3.11 ... 3.15, then the free-threaded ones: the order backends.toml writes them."""
    key = lambda p: (p.endswith("t"), tuple(int(n) for n in p.rstrip("t").split(".")))  # noqa: E731
    return sorted(set(pythons), key=key)


def compare_pypi(registry: Registry, source: Source, index: str, out: Comparison) -> None:
    """Final releases on pip's index: new releases and patch releases, upload dates, Python versions.
    pip answers from its find-links and extra indexes too (and from them alone when the index refuses
    it, without a word): only the versions the index's own page serves are the index's."""
    answered = source.versions(index)
    page_url = f"{index.rstrip('/')}/{PACKAGE}/"
    where = f"pip index versions {PACKAGE} --index-url {index}"
    try:
        wheels = parse_page(*source.page(page_url))
    except Offline as err:
        out.unread[page_url] = f"{err}; pip's answer ({len(answered)} versions) cannot be told from its other sources"
        return
    served = {w.version for w in wheels}
    elsewhere = [v for v in answered if v not in served]
    if elsewhere:
        out.notes.append(
            f"pip listed {', '.join(elsewhere[:3])}{' ...' if len(elsewhere) > 3 else ''} that {page_url} does not "
            "serve (its find-links or another index answered): left out"
        )
    versions = [v for v in answered if _final(v) and v in served]
    out.read += [where, page_url]
    out.gave[where] = f"{len(versions)} final versions"
    out.gave[page_url] = f"{len(wheels)} wheels"
    by_version: dict[str, list[Wheel]] = defaultdict(list)
    for wheel in wheels:
        by_version[wheel.version].append(wheel)
    by_minor: dict[str, list[str]] = defaultdict(list)
    for version in versions:
        by_minor[_minor(version)].append(version)
    oldest = min(registry.releases, key=lambda r: version_sort_key(r))
    for minor, found in sorted(by_minor.items(), key=lambda kv: version_sort_key(kv[0])):
        if version_sort_key(minor) < version_sort_key(oldest):
            continue  # older than the registry's history: not its business
        newest = _newest(found)
        release = registry.releases.get(minor)
        first = by_version.get(f"{minor}.0", [])
        uploaded = min((w.uploaded for w in first if w.uploaded), default="")
        pythons = _python_list(w.python for w in by_version.get(newest, []))
        if release is None:
            out.differences.append(Difference(minor, "new-release", "", newest, where))
            if uploaded:
                out.differences.append(Difference(minor, "released", "", uploaded, page_url))
            if pythons:
                out.differences.append(Difference(minor, "python", "", ", ".join(pythons), page_url))
            continue
        if version_sort_key(newest) > version_sort_key(release.latest):
            out.differences.append(Difference(minor, "latest", release.latest, newest, where))
        if not release.final:
            out.differences.append(Difference(minor, "channel", "test", f"release ({newest} on {index})", where))
        if uploaded and uploaded != release.released:
            out.differences.append(Difference(minor, "released", release.released, uploaded, page_url))
        if pythons and pythons != list(release.python):
            out.differences.append(Difference(minor, "python", ", ".join(release.python), ", ".join(pythons), page_url))


def compare_channel(registry: Registry, source: Source, channel: str, out: Comparison) -> None:
    """One PyTorch channel: which variants each release (or its newest nightly) is built for."""
    url = CHANNEL_PAGES[channel]
    try:
        wheels = parse_page(*source.page(url))
    except Offline as err:
        out.unread[url] = f"the {channel} channel: {err}"
        return
    out.read.append(url)
    out.gave[url] = f"{len(wheels)} wheels"
    by_minor: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # minor -> version -> variants
    for wheel in wheels:
        if wheel.variant:
            by_minor[_minor(wheel.version)][wheel.version].add(wheel.variant)
    for minor, versions in sorted(by_minor.items(), key=lambda kv: version_sort_key(kv[0])):
        release = registry.releases.get(minor)
        if release is None and (
            channel == "release" or version_sort_key(minor) <= version_sort_key(registry.current_release)
        ):
            continue  # history, or a final release pip's index names (compare_pypi's business)
        if release is not None and channel == "test" and release.final:
            continue  # the candidates of a release that is out: history
        newest = _newest(versions)
        if release is None:
            what = "nightly" if channel == "nightly" else "new-release"
            out.differences.append(Difference(minor, what, "", f"{newest} ({channel} channel)", url, writable=False))
            continue
        if channel == "nightly" and release.final:
            continue  # nightlies of a release that is out: history
        served = versions[newest]
        for variant in sorted(served - set(release.builds), key=registry.variant_order):
            out.differences.append(
                Difference(minor, "new-variant", "not shipped", f"{variant} in {newest}", url, writable=False)
            )
        for variant in sorted(set(release.builds) - served, key=registry.variant_order):
            out.differences.append(
                Difference(minor, "missing-variant", variant, f"not in {newest}", url, writable=False)
            )


def compare(registry: Registry, source: Source, index: str, channels: Iterable[str] = CHANNEL_PAGES) -> Comparison:
    """Every difference between the registry and the indexes. Raises Offline when pip does not answer
    (nothing can be compared); a page that does not is in `unread` (the answer is then unknown)."""
    out = Comparison()
    compare_pypi(registry, source, index, out)
    for channel in channels:
        compare_channel(registry, source, channel, out)
    return out


# -- the proposal -------------------------------------------------------------------------------------
def _table_span(text: str, release: str) -> tuple[int, int]:
    """Where [releases."X.Y"] starts and ends in backends.toml's text."""
    head = re.search(rf'^\[releases\."{re.escape(release)}"\]\n', text, re.MULTILINE)
    if head is None:
        raise UsageError(f'backends.toml has no [releases."{release}"] table to edit')
    following = re.compile(r"^(\[|# -{10,}|# [A-Z])", re.MULTILINE).search(text, head.end())
    return head.start(), following.start() if following else len(text)


def _set_key(table: str, key: str, value: str, after: str = "latest") -> str:
    line = f"{key} = {value}\n"
    existing = re.search(rf"^{key} = .*\n", table, re.MULTILINE)
    if existing:
        return table[: existing.start()] + line + table[existing.end() :]
    anchor = re.search(rf"^{after} = .*\n", table, re.MULTILINE)
    at = anchor.end() if anchor else table.index("\n") + 1
    return table[:at] + line + table[at:]


def _drop_key(table: str, key: str) -> str:
    return re.sub(rf"^{key} = .*\n", "", table, flags=re.MULTILINE)


def _add_source(table: str, text: str) -> str:
    close = re.search(r"^sources = \[\n(?:.*\n)*?\]\n", table, re.MULTILINE)
    if close is None:
        return table
    end = close.end() - 2  # before "]\n"
    return table[:end] + f"  {json.dumps(text)},\n" + table[end:]


def _new_release(text: str, registry: Registry, diff: Difference, released: str) -> str:
    """A new release table after the newest one: its builds as the newest release's, to be checked."""
    newest = list(registry.releases.values())[-1]
    statuses = {s: [v for v, st in newest.builds.items() if st == s] for s in ("stable", "experimental", "legacy")}
    lines = [
        f'[releases."{diff.release}"]',
        f'latest = "{diff.index}"',
        f'released = "{released}"',
        *(f"{s} = {json.dumps(v)}" for s, v in statuses.items()),
        "sources = [",
        f"  {json.dumps(f'latest: {diff.source} (harness upstream)')},",
        "]",
        f'unverified = ["builds and statuses copied from {newest.id} by harness upstream: check RELEASE.md and '
        'the release channel"]',
        "",
    ]
    _, end = _table_span(text, newest.id)
    return text[:end] + "\n".join(lines) + "\n" + text[end:]


def propose(text: str, registry: Registry, differences: Iterable[Difference], today: str) -> tuple[str, list[str]]:
    """backends.toml's text with the writable differences applied, and the ones left to a person.
    The result is parsed and validated as the registry is: a proposal that would not load is refused."""
    diffs = list(differences)
    uploaded = {d.release: d.index for d in diffs if d.what == "released"}
    for diff in [d for d in diffs if d.writable and d.what == "new-release"]:
        text = _new_release(text, registry, diff, uploaded.get(diff.release, today))
    for diff in [
        d
        for d in diffs
        if (d.writable and d.what not in ("new-release", "released")) or (d.what == "released" and d.registry)
    ]:
        start, end = _table_span(text, diff.release)
        table = text[start:end]
        note = f"{diff.what}: {diff.source} (harness upstream, {today})"
        if diff.what == "latest":
            table = _set_key(table, "latest", json.dumps(diff.index))
        elif diff.what == "released":
            table = _set_key(table, "released", json.dumps(diff.index))
        elif diff.what == "python":
            table = _set_key(table, "python", json.dumps(diff.index.split(", ")), after="released")
        elif diff.what == "channel":
            table = _drop_key(_drop_key(table, "channel"), "planned")
            table = _set_key(table, "released", json.dumps(uploaded.get(diff.release, today)))
            if diff.release not in uploaded:
                note += "; released: the day it was seen, no upload date read"
        table = _add_source(table, note)
        text = text[:start] + table + text[end:]
    left = [d.line() for d in diffs if not d.writable]
    try:
        parse_registry(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, RegistryError) as err:
        raise InfrastructureError(f"the proposed registry does not load: {err}") from None
    return text, left


def offline_line(err: Offline) -> str:
    return f"offline: {err}; nothing compared (the registry is unchanged)"
