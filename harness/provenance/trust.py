"""trust.toml: who may vouch for which columns, kept in the matrix's repository and reviewed like code.

    version = 1

    [[key]]                                   # a runner without OIDC signs with an ed25519 key
    name = "AMD ROCm lab"                     # who vouches, as every output names it
    backends = ["rocm"]                       # families or build variants; and/or
    columns = ["mi300-*"]                     # cell id patterns (* and ?)
    fingerprint = "sha256:..."                # of the key below (checked)
    public_key = \"\"\"-----BEGIN PUBLIC KEY----- ... \"\"\"

    [[identity]]                              # a GitHub Actions workflow signs keyless (Sigstore)
    name = "torch-compat nightly"
    repository = "torch-compat/torch-compat"  # the repository whose workflow ran
    workflow = ".github/workflows/compat-matrix.yml"  # that workflow (the caller of a reusable one)
    ref = "refs/heads/main"                   # optional: a ref or a pattern (refs/tags/v*)
    backends = ["cpu", "cuda"]

Loaded once (`load_trust`) into frozen dataclasses: the shape is checked against
harness/schema/trust-toml.schema.json, then each entry's meaning (a known backend, a readable ed25519 key
whose fingerprint is the one stated, a pattern of cell id characters); anything wrong is one
InputError line naming the entry. `add_key` appends a [[key]] entry and writes the file whole
(harness/outputs.py), keeping what the file said before, comments included.
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

import fastjsonschema

from harness import outputs
from harness.errors import InputError, UsageError, did_you_mean
from harness.provenance.keys import PublicKey, public_key_from_pem
from harness.registry import FAMILIES, LEGACY_IDS, load_registry
from harness.regular_file import read_regular
from harness.torch_build import parse_variant

SCHEMA: Final = Path(__file__).resolve().parents[1] / "schema" / "trust-toml.schema.json"
GITHUB: Final = "https://github.com"
GITHUB_ISSUER: Final = "https://token.actions.githubusercontent.com"
MAX_TRUST_FILE: Final = 1 << 20  # a trust file of a thousand entries is a tenth of this
_PATTERN_RE: Final = re.compile(r"^[A-Za-z0-9._*?-]{1,128}$")
NEW_FILE: Final = (
    "# Who may vouch for which columns of this matrix (docs/provenance.md). Reviewed like code.\nversion = 1\n"
)


@dataclass(frozen=True, kw_only=True)
class Scope:
    """What an entry may vouch for: backends (families or build variants) and cell id patterns."""

    backends: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    def allows(self, backend: str, cell_id: str) -> bool:
        backend = LEGACY_IDS.get(backend, backend)
        variant = parse_variant(backend)
        names = {backend, *((variant.id, variant.family) if variant else ())}
        return bool(names & set(self.backends)) or any(fnmatch.fnmatchcase(cell_id, p) for p in self.columns)

    def describe(self) -> str:
        parts = [*self.backends, *(f"columns {p}" for p in self.columns)]
        return ", ".join(parts)


@dataclass(frozen=True, kw_only=True)
class TrustedKey:
    name: str
    key: PublicKey
    scope: Scope

    @property
    def fingerprint(self) -> str:
        return self.key.fingerprint


@dataclass(frozen=True, kw_only=True)
class TrustedIdentity:
    """A GitHub Actions workflow, as Fulcio certifies it: the repository whose workflow ran, that
    workflow's file (the top-level one, the caller of a reusable workflow), a ref, the OIDC issuer."""

    name: str
    repository: str
    workflow: str
    ref: str | None
    issuer: str
    scope: Scope

    @property
    def workflow_uri(self) -> str:
        """The Build Config URI without its ref: https://github.com/OWNER/REPO/.github/workflows/X.yml"""
        return f"{GITHUB}/{self.repository}/{self.workflow}"

    def describe(self) -> str:
        return f"{self.repository}/{self.workflow}" + (f"@{self.ref}" if self.ref else "")


@dataclass(frozen=True, kw_only=True)
class Trust:
    path: str
    keys: tuple[TrustedKey, ...] = ()
    identities: tuple[TrustedIdentity, ...] = ()

    def key(self, fingerprint: str) -> TrustedKey | None:
        return next((k for k in self.keys if k.fingerprint == fingerprint), None)


@cache
def _validator() -> Any:
    return fastjsonschema.compile(json.loads(SCHEMA.read_text(encoding="utf-8")))


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _known_backend(name: str) -> bool:
    return name in FAMILIES or name in LEGACY_IDS or parse_variant(name) is not None


def check_backend_arguments(names: Sequence[str]) -> None:
    """`--backend` values as typed: a name that is no family or build variant is a usage error (exit 2), before
    the trust file is read or written."""
    for name in names:
        if not _known_backend(name):
            known = [*FAMILIES, *(b.id for b in load_registry().values())]
            raise UsageError(f"--backend {name!r} is no backend or family{did_you_mean(name, known)}")


def _scope(entry: Mapping[str, Any], where: str) -> Scope:
    scope = Scope(backends=_strings(entry.get("backends")), columns=_strings(entry.get("columns")))
    if not scope.backends and not scope.columns:
        raise InputError(f"{where}: says nothing it may vouch for: give backends = [...] or columns = [...]")
    registry = load_registry()
    for name in scope.backends:
        if not _known_backend(name):
            known = [*FAMILIES, *(b.id for b in registry.values())]
            raise InputError(
                f"{where}: backends: {name!r} is no backend or family{did_you_mean(name, known)}",
                hint=f"families: {', '.join(FAMILIES)}; build variants as `harness backends` lists them",
            )
    for pattern in scope.columns:
        if not _PATTERN_RE.match(pattern):
            raise InputError(f"{where}: columns: {pattern!r} is not a pattern of cell id characters and * or ?")
    return scope


def _key(entry: Mapping[str, Any], where: str) -> TrustedKey:
    key = public_key_from_pem(str(entry["public_key"]).encode("utf-8"), f"{where}: public_key")
    stated = entry.get("fingerprint")
    if stated is not None and stated != key.fingerprint:
        raise InputError(f"{where}: fingerprint {stated} is not its public key's ({key.fingerprint})")
    return TrustedKey(name=str(entry["name"]), key=key, scope=_scope(entry, where))


def _identity(entry: Mapping[str, Any], where: str) -> TrustedIdentity:
    ref = entry.get("ref")
    return TrustedIdentity(
        name=str(entry["name"]),
        repository=str(entry["repository"]),
        workflow=str(entry["workflow"]),
        ref=str(ref) if ref is not None else None,
        issuer=str(entry.get("issuer") or GITHUB_ISSUER),
        scope=_scope(entry, where),
    )


def parse_trust(text: str, where: str) -> Trust:
    """A trust file's text as a Trust; one InputError line naming the entry for anything wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{where}: not valid TOML ({err})") from None
    try:
        _validator()(data)
    except fastjsonschema.JsonSchemaValueException as err:
        raise InputError(f"{where}: {err.message.removeprefix('data.').removeprefix('data ')}") from None
    keys = tuple(_key(e, f"{where}: key {e['name']!r}") for e in data.get("key", ()))
    identities = tuple(_identity(e, f"{where}: identity {e['name']!r}") for e in data.get("identity", ()))
    names = [k.name for k in keys] + [i.name for i in identities]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"{where}: the name {repeated[0]!r} is given to two entries: each who vouches is named once")
    prints = [k.fingerprint for k in keys]
    twice = next((k for k in keys if prints.count(k.fingerprint) > 1), None)
    if twice is not None:
        raise InputError(f"{where}: key {twice.name!r}: its key {twice.fingerprint} is listed twice")
    return Trust(path=where, keys=keys, identities=identities)


def _read(path: Path) -> str:
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        hint = "make one with: harness trust add-key KEY.pub --backend B --file trust.toml"
        raise InputError(f"{path}: no trust file here", hint=hint) from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    if len(raw) > MAX_TRUST_FILE:
        raise InputError(f"{path}: {len(raw)} bytes is more than a trust file holds (at most {MAX_TRUST_FILE})")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None


def load_trust(path: Path) -> Trust:
    return parse_trust(_read(path), str(path))


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _lines(fields: Sequence[tuple[str, str | Sequence[str] | None]]) -> list[str]:
    out = []
    for name, value in fields:
        if value is None or (not isinstance(value, str) and not value):
            continue
        text = _toml_string(value) if isinstance(value, str) else f"[{', '.join(map(_toml_string, value))}]"
        out.append(f"{name} = {text}")
    return out


def key_entry(name: str, key: PublicKey, backends: Sequence[str], columns: Sequence[str]) -> str:
    lines = ["", "[[key]]", *_lines([("name", name), ("backends", backends), ("columns", columns)])]
    lines += [f'fingerprint = "{key.fingerprint}"', f'public_key = """\n{key.pem.rstrip()}\n"""', ""]
    return "\n".join(lines)


def identity_entry(
    name: str, repository: str, workflow: str, ref: str | None, backends: Sequence[str], columns: Sequence[str]
) -> str:
    fields = [("name", name), ("repository", repository), ("workflow", workflow), ("ref", ref)]
    return "\n".join(["", "[[identity]]", *_lines([*fields, ("backends", backends), ("columns", columns)]), ""])


def _append(path: Path, entry: str, refuse: Callable[[Trust], str | None]) -> Trust:
    """Append `entry` to the trust file (made when absent) and write it whole. The new text is checked
    as a whole before anything is written: a bad entry leaves the file as it was."""
    with outputs.locked(path.parent, what=str(path)):
        outputs.sweep(path.parent)  # a killed edit's temp file
        before = _read(path) if path.exists() else NEW_FILE
        problem = refuse(parse_trust(before, str(path)))
        if problem:
            raise UsageError(f"{path}: {problem}")
        text = (before if before.endswith("\n") else before + "\n") + entry
        trust = parse_trust(text, str(path))
        outputs.write_file(path, text)
    return trust


def _one_line_name(name: str) -> None:
    if not name.strip() or "\n" in name or "\r" in name:
        raise UsageError("--name must be one line naming who vouches (a lab, a team, a vendor)")


def add_key(path: Path, key: PublicKey, *, name: str, backends: Sequence[str], columns: Sequence[str]) -> Trust:
    """Trust `key` for `backends` and `columns` (cell id patterns) in the file at `path`."""
    _one_line_name(name)

    def refuse(current: Trust) -> str | None:
        holder = current.key(key.fingerprint)
        return f"this key ({key.fingerprint}) is there already, as {holder.name!r}" if holder else None

    return _append(path, key_entry(name, key, backends, columns), refuse)


def add_identity(
    path: Path,
    *,
    name: str,
    repository: str,
    workflow: str,
    ref: str | None,
    backends: Sequence[str],
    columns: Sequence[str],
) -> Trust:
    """Trust a GitHub Actions workflow (keyless statements) for `backends` and `columns`."""
    _one_line_name(name)

    def refuse(current: Trust) -> str | None:
        same = [i for i in current.identities if (i.repository, i.workflow, i.ref) == (repository, workflow, ref)]
        return f"this workflow is there already, as {same[0].name!r}" if same else None

    return _append(path, identity_entry(name, repository, workflow, ref, backends, columns), refuse)
