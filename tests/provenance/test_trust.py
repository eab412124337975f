"""trust.toml: loaded once into frozen entries, checked against its schema and for meaning; each bad
entry is one line naming it; add-key appends an entry and keeps what the file said."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.errors import InputError, UsageError
from harness.provenance.keys import load_public_key
from harness.provenance.trust import add_identity, add_key, load_trust, parse_trust
from tests.provenance.conftest import write_key_pair

IDENTITY = """
[[identity]]
name = "nightly"
repository = "torch-compat/torch-compat"
workflow = ".github/workflows/compat-matrix.yml"
ref = "refs/heads/main"
backends = ["cpu", "cuda"]
"""


def _key_entry(tmp_path: Path, **extra: str) -> str:
    pem = write_key_pair(tmp_path)[1].read_text()
    fields = {"name": '"lab"', "backends": '["rocm"]', **extra}
    return "\n[[key]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items()) + f'public_key = """\n{pem}"""\n'


def test_a_trust_file_loads_into_frozen_entries_with_what_each_may_vouch_for(tmp_path: Path) -> None:
    text = "version = 1\n" + _key_entry(tmp_path, columns='["mi300-*"]') + IDENTITY
    trust = parse_trust(text, "trust.toml")
    (key,) = trust.keys
    (identity,) = trust.identities
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.name = "x"  # type: ignore[misc]
    assert key.scope.allows("rocm7.14", "lab-box") and key.scope.allows("rocm", "x"), "a family takes its variants"
    assert key.scope.allows("cu130", "mi300-cpu-only") and not key.scope.allows("cu130", "h100")
    assert identity.issuer == "https://token.actions.githubusercontent.com"
    assert identity.scope.allows("cu132", "any") and not identity.scope.allows("xpu", "any")
    assert identity.describe() == "torch-compat/torch-compat/.github/workflows/compat-matrix.yml@refs/heads/main"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("version = 1\n[[key]]\nname = 'x'\n", "trust.toml: key[0] must contain ['public_key'] properties"),
        ("version = 2\n", "trust.toml: version must be same as const definition: 1"),
        ("version = 1\nkeys = []\n", "trust.toml: must not contain {'keys'} properties"),
        ("version = 1\n[[identity]\n", "trust.toml: not valid TOML"),
        (
            "version = 1\n" + IDENTITY.replace('["cpu", "cuda"]', '["cpu", "rocn"]'),
            "trust.toml: identity 'nightly': backends: 'rocn' is no backend or family (did you mean rocm?)",
        ),
        (
            "version = 1\n" + IDENTITY.replace('backends = ["cpu", "cuda"]\n', ""),
            "trust.toml: identity 'nightly': says nothing it may vouch for",
        ),
        (
            "version = 1\n" + IDENTITY.replace('backends = ["cpu", "cuda"]', 'columns = ["a/b"]'),
            "is not a pattern of cell id characters",
        ),
        (
            "version = 1\n" + IDENTITY.replace(".github/workflows/compat-matrix.yml", "compat-matrix.yml"),
            "identity[0].workflow must match pattern",
        ),
        ("version = 1\n" + IDENTITY + IDENTITY, "the name 'nightly' is given to two entries"),
    ],
)
def test_a_bad_entry_is_one_line_naming_it(text: str, said: str) -> None:
    with pytest.raises(InputError) as err:
        parse_trust(text, "trust.toml")
    assert said in str(err.value) and "\n" not in str(err.value)


def test_a_key_entry_is_checked_for_meaning(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not its public key's"):
        parse_trust("version = 1\n" + _key_entry(tmp_path, fingerprint=f'"sha256:{"0" * 64}"'), "t")
    private = write_key_pair(tmp_path, "p")[0].read_text()
    text = f'version = 1\n[[key]]\nname = "x"\nbackends = ["cpu"]\npublic_key = """\n{private}"""\n'
    with pytest.raises(InputError, match="PUBLIC KEY"):  # the schema asks for a public key block
        parse_trust(text, "t")


def test_add_key_appends_an_entry_keeping_the_file_and_refuses_a_second_copy(tmp_path: Path) -> None:
    path = tmp_path / "trust.toml"
    path.write_text("# reviewed by the release team\nversion = 1\n" + IDENTITY)
    key = load_public_key(write_key_pair(tmp_path)[1])
    trust = add_key(path, key, name="AMD lab", backends=["rocm"], columns=[])
    text = path.read_text()
    assert text.startswith("# reviewed by the release team\nversion = 1\n" + IDENTITY)
    assert trust == load_trust(path) and [k.name for k in trust.keys] == ["AMD lab"]
    assert f'fingerprint = "{key.fingerprint}"' in text
    with pytest.raises(UsageError, match="is there already, as 'AMD lab'"):
        add_key(path, key, name="again", backends=["rocm"], columns=[])
    assert path.read_text() == text, "a refused entry leaves the file as it was"
    with pytest.raises(InputError, match="'rocn' is no backend or family"):
        add_key(path, load_public_key(write_key_pair(tmp_path, "b")[1]), name="B", backends=["rocn"], columns=[])
    assert path.read_text() == text
    with pytest.raises(UsageError, match="--name must be one line"):
        add_key(path, key, name="a\nb", backends=["rocm"], columns=[])


def test_add_identity_makes_the_file_when_absent(tmp_path: Path) -> None:
    path = tmp_path / "trust.toml"
    trust = add_identity(
        path,
        name="Intel XPU CI",
        repository="intel/xpu-compat",
        workflow=".github/workflows/cells.yml",
        ref=None,
        backends=["xpu"],
        columns=[],
    )
    assert path.read_text().startswith("# Who may vouch for which columns")
    (identity,) = trust.identities
    assert (
        identity.ref is None
        and identity.workflow_uri == "https://github.com/intel/xpu-compat/.github/workflows/cells.yml"
    )
    with pytest.raises(UsageError, match="this workflow is there already"):
        add_identity(path, name="again", repository="intel/xpu-compat", workflow=".github/workflows/cells.yml",
                     ref=None, backends=["xpu"], columns=[])  # fmt: skip


def test_a_missing_or_huge_trust_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no trust file here"):
        load_trust(tmp_path / "absent.toml")
    big = tmp_path / "big.toml"
    big.write_text("#" * (2 << 20))
    with pytest.raises(InputError, match="more than a trust file holds"):
        load_trust(big)
