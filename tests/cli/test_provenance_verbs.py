"""The issue's path, as a vendor types it, in-process: `harness attest CELL --key KEY.pem`, `harness trust
add-key KEY.pub --backend rocm --file trust.toml`, `harness merge CELLS... --trust trust.toml -o
matrix.json`, `harness gate matrix.json --require-verified`; then `harness submit` and `harness collect
--submissions`; and each bad input: one line, exit 4, nothing written outside the results folder, the
other cells merged."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from harness.cell import STATEMENT
from harness.cli import main
from harness.errors import EXIT_INPUT, EXIT_USAGE
from harness.matrix_json import load_matrix
from harness.model import ColumnState, ProvenanceState
from tests.provenance.conftest import CELLS, write_key_pair


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vendor's folder: two cells (cpu and a CUDA build run on the CPU), a key pair."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ACTIONS_ID_TOKEN_REQUEST_URL", raising=False)
    shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cells" / "cpu-2.13.0")
    shutil.copytree(CELLS / "cu130-2.14.1-cpu-only", tmp_path / "cells" / "cu130-2.14.1-cpu-only")
    write_key_pair(tmp_path, "acme-lab")
    return tmp_path


def _err_lines(capsys: pytest.CaptureFixture) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_a_vendors_signed_columns_are_verified_and_pass_the_gate(lab: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["attest", "cells/cpu-2.13.0", "cells/cu130-2.14.1-cpu-only", "--key", "acme-lab.pem"]) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("signed cells/cpu-2.13.0 (7 files, sha256 ")
        and "cells/cu130-2.14.1-cpu-only/provenance.json" in out
    )
    assert (
        main(["trust", "add-key", "acme-lab.pub", "--backend", "cpu", "--backend", "cuda", "--file", "trust.toml"]) == 0
    )
    assert "'acme-lab' (sha256:" in capsys.readouterr().out
    assert main(["merge", "cells", "--trust", "trust.toml", "-o", "matrix.json"]) == 0
    err = capsys.readouterr().err
    assert "cpu-2.13.0                       cpu    327 tests, 4 measured · verified: acme-lab (key sha256:" in err
    matrix = load_matrix(lab / "matrix.json")
    assert {c.id: c.provenance.state for c in matrix.columns} == {  # type: ignore[union-attr]
        "cpu-2.13.0": ProvenanceState.VERIFIED,
        "cu130-2.14.1-cpu-only": ProvenanceState.VERIFIED,
    }
    assert main(["gate", "matrix.json", "--require-verified"]) == 0
    assert capsys.readouterr().out.strip() == (
        "gate: PASS on cpu-2.13.0, cu130-2.14.1-cpu-only (every column verified)"
    )


def test_a_tampered_column_is_its_error_the_rest_merges_and_the_gate_fails(
    lab: Path, capsys: pytest.CaptureFixture
) -> None:
    main(["attest", "cells/cpu-2.13.0", "--key", "acme-lab.pem"])
    main(["trust", "add-key", "acme-lab.pub", "--backend", "cpu", "--file", "trust.toml"])
    junit = lab / "cells" / "cpu-2.13.0" / "junit.xml"
    junit.write_bytes(junit.read_bytes().replace(b"<testcase", b"<testcase x='1'", 1))
    capsys.readouterr()
    assert main(["merge", "cells", "--trust", "trust.toml", "-o", "matrix.json"]) == EXIT_INPUT
    err = _err_lines(capsys)
    assert "harness: error: cpu-2.13.0: provenance invalid: junit.xml changed since it was signed" in err
    assert err[-1] == ("harness: error: 1 input(s) refused (cpu-2.13.0); the other cells were merged")
    matrix = load_matrix(lab / "matrix.json")
    cpu, cuda = matrix.column("cpu-2.13.0"), matrix.column("cu130-2.14.1-cpu-only")
    assert cpu.state is ColumnState.NO_DATA and cpu.error == "provenance invalid: junit.xml changed since it was signed"
    assert cuda.state is ColumnState.OK and cuda.provenance.state is ProvenanceState.UNVERIFIED  # type: ignore[union-attr]
    assert not any(cpu.id in row.results for row in matrix.tests), "a tampered cell's results are left out"
    assert main(["gate", "matrix.json", "--require-verified"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "gate: FAIL cpu-2.13.0: invalid: junit.xml changed since it was signed",
        "gate: FAIL cu130-2.14.1-cpu-only: unverified: no statement",
    ]


def _archive(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return path


def _symlink_member() -> tarfile.TarInfo:
    info = tarfile.TarInfo("evil/manifest.json")
    info.type = tarfile.SYMTYPE
    info.linkname = "/etc/passwd"
    return info


BAD_INPUTS = {
    "a statement that is not JSON": ("statement", b"{not json", "provenance invalid: provenance.json: not JSON"),
    "a bundle of another format": (
        "statement",
        (CELLS.parent / "sigstore" / "pypi_attestations-0.0.19.tar.gz.provenance").read_bytes(),
        "neither a DSSE envelope (payloadType, payload, signatures) nor a Sigstore bundle (mediaType) "
        "but a PyPI attestation",
    ),
    "a statement larger than a sane bound": (
        "statement",
        b" " * (4 * 1024 * 1024 + 1),
        "provenance invalid: provenance.json is 4194305 bytes, more than a statement may be (4 MiB)",
    ),
    "a symlink in a submitted archive": (
        "archive",
        [_symlink_member()],
        "member 'evil/manifest.json' is a symbolic link (to '/etc/passwd'); a submission holds files only",
    ),
    "a path that escapes the archive": (
        "archive",
        [("evil/manifest.json", b"{}"), ("evil/../../escape.txt", b"gotcha")],
        "member 'evil/../../escape.txt' escapes the archive's folder; refused",
    ),
}


@pytest.mark.parametrize("kind", list(BAD_INPUTS))
def test_each_bad_input_is_one_line_exit_4_and_the_other_cells_merge(
    lab: Path, capsys: pytest.CaptureFixture, kind: str
) -> None:
    where, content, said = BAD_INPUTS[kind]
    main(["trust", "add-key", "acme-lab.pub", "--backend", "cpu", "--file", "trust.toml"])
    if where == "statement":
        (lab / "cells" / "cpu-2.13.0" / STATEMENT).write_bytes(content)  # type: ignore[arg-type]
    else:
        _archive(lab / "cells" / "evil.cell.tar.gz", content)  # type: ignore[arg-type]
    before = sorted(p.relative_to(lab) for p in lab.rglob("*"))
    capsys.readouterr()
    assert main(["merge", "cells", "--trust", "trust.toml", "-o", "out/matrix.json"]) == EXIT_INPUT
    errors = [line for line in _err_lines(capsys) if line.startswith("harness: error:")]
    assert len(errors) == 2 and said in errors[0], errors
    assert sorted(p.relative_to(lab) for p in lab.rglob("*") if "out" not in p.parts) == before, "nothing else written"
    assert not (lab / "escape.txt").exists() and not (lab.parent / "escape.txt").exists()
    columns = {c.id: c for c in load_matrix(lab / "out" / "matrix.json").columns}
    assert columns["cu130-2.14.1-cpu-only"].state is ColumnState.OK, "the other cells merged"


def test_a_trust_file_naming_an_unknown_backend_stops_the_merge_before_anything_is_written(
    lab: Path, capsys: pytest.CaptureFixture
) -> None:
    # typed on the command line: a usage error (one code per kind of mistake in every verb, issue 42)
    assert main(["trust", "add-key", "acme-lab.pub", "--backend", "rocn", "--file", "trust.toml"]) == EXIT_USAGE
    assert _err_lines(capsys) == ["harness: error: --backend 'rocn' is no backend or family (did you mean rocm?)"]
    assert not (lab / "trust.toml").exists()
    (lab / "trust.toml").write_text('version = 1\n[[identity]]\nname = "x"\nrepository = "a/b"\n'
                                    'workflow = ".github/workflows/c.yml"\nbackends = ["rocn"]\n')  # fmt: skip
    assert main(["merge", "cells", "--trust", "trust.toml", "-o", "matrix.json"]) == EXIT_INPUT
    assert "'rocn' is no backend or family" in capsys.readouterr().err
    assert not (lab / "matrix.json").exists()


def test_attest_refuses_what_it_cannot_sign_without_touching_the_cell(lab: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["attest", "cells/cpu-2.13.0"]) == EXIT_USAGE
    assert capsys.readouterr().err.startswith("harness: error: no --key, and no GitHub Actions OIDC identity here")
    (lab / "rsa.pem").write_text("-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n")
    assert main(["attest", "cells/cpu-2.13.0", "--key", "rsa.pem"]) == EXIT_INPUT
    assert not (lab / "cells" / "cpu-2.13.0" / STATEMENT).exists()


def test_gate_require_verified_needs_a_matrix_merged_with_a_trust_file(
    lab: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["merge", "cells", "-o", "matrix.json"]) == 0
    capsys.readouterr()
    assert main(["gate", "matrix.json", "--require-verified"]) == EXIT_USAGE
    assert "this matrix was merged without a trust file" in capsys.readouterr().err


def test_submit_then_collect_from_a_listed_folder(lab: Path, capsys: pytest.CaptureFixture) -> None:
    main(["attest", "cells/cpu-2.13.0", "--key", "acme-lab.pem"])
    main(["trust", "add-key", "acme-lab.pub", "--backend", "cpu", "--file", "trust.toml"])
    (lab / "drops").mkdir()
    capsys.readouterr()
    assert main(["submit", "cells/cpu-2.13.0", "-o", "drops"]) == 0
    assert capsys.readouterr().out.startswith("packed cells/cpu-2.13.0 into drops/cpu-2.13.0.cell.tar.gz (")
    assert main(["submit", "cells/cu130-2.14.1-cpu-only", "-o", "drops"]) == EXIT_INPUT, "an unsigned cell"
    _archive(lab / "drops" / "evil.cell.tar.gz", [("evil/manifest.json", b"{}"), ("evil/../../escape.txt", b"x")])
    (lab / "submissions.txt").write_text("# vendors\ndrops/\n")
    assert main(["collect", "--submissions", "submissions.txt", "--dest", "collected"]) == EXIT_INPUT
    captured = capsys.readouterr()
    assert "collect: took cpu-2.13.0 from " in captured.out
    assert "escapes the archive's folder" in captured.err
    assert sorted(p.name for p in (lab / "collected").iterdir()) == ["cpu-2.13.0"]
    assert main(["merge", "collected", "--trust", "trust.toml", "-o", "matrix.json"]) == 0
    assert load_matrix(lab / "matrix.json").column("cpu-2.13.0").provenance.verified  # type: ignore[union-attr]
    # the merge takes an archive as given, too, unpacked into a temp folder that goes with it
    assert main(["merge", "drops/cpu-2.13.0.cell.tar.gz", "--trust", "trust.toml", "-o", "direct.json"]) == 0
    assert load_matrix(lab / "direct.json").column("cpu-2.13.0").provenance.verified  # type: ignore[union-attr]


def test_trust_check_and_add_identity_say_who_vouches_for_what(lab: Path, capsys: pytest.CaptureFixture) -> None:
    main(["trust", "add-key", "acme-lab.pub", "--backend", "rocm", "--name", "AMD lab", "--file", "trust.toml"])
    assert main([
        "trust", "add-identity", "--repository", "torch-compat/torch-compat", "--workflow",
        ".github/workflows/compat-matrix.yml", "--ref", "refs/heads/main", "--backend", "cpu", "--backend", "cuda",
        "--name", "nightly", "--file", "trust.toml",
    ]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["trust", "check", "--file", "trust.toml"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "trust.toml: 1 key, 1 identity\n"
    out = captured.out.splitlines()
    assert out[0].startswith("key       'AMD lab' sha256:") and out[0].endswith(": rocm")
    assert out[1] == (
        "identity  'nightly' torch-compat/torch-compat/.github/workflows/compat-matrix.yml@refs/heads/main: cpu, cuda"
    )
    assert main(["trust", "add-key", "acme-lab.pub", "--file", "trust.toml"]) == EXIT_USAGE


def test_refresh_root_says_what_changed_and_writes_it_whole(
    lab: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.provenance import sigstore_bundle
    from tests.provenance.conftest import need_sigstore

    need_sigstore()
    pinned = lab / "pinned.json"
    shutil.copy(sigstore_bundle.TRUSTED_ROOT, pinned)
    monkeypatch.setattr(sigstore_bundle, "TRUSTED_ROOT", pinned)
    newer = json.loads(pinned.read_text())
    newer["tlogs"] = newer["tlogs"][1:]
    (lab / "newer.json").write_text(json.dumps(newer))
    assert main(["trust", "refresh-root", "--from", "newer.json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("trust: removed: transparency log https://rekor.sigstore.dev key ")
    assert out[-1].startswith(f"trust: wrote {pinned} (1 change(s))")
    assert json.loads(pinned.read_text()) == newer
    assert main(["trust", "refresh-root", "--from", "newer.json"]) == 0
    assert capsys.readouterr().out.startswith("trust: the pinned root is current")
    (lab / "bad.json").write_text('{"mediaType": "x"}')
    assert main(["trust", "refresh-root", "--from", "bad.json"]) == EXIT_INPUT
    assert json.loads(pinned.read_text()) == newer


def test_collect_unpacks_a_submission_a_runs_artifact_brought(lab: Path, capsys: pytest.CaptureFixture) -> None:
    """A vendor's workflow can upload its archive as an artifact: what `harness collect` downloads from a
    run is unpacked in place like a listed submission, and the archive removed (merged once)."""
    main(["attest", "cells/cpu-2.13.0", "--key", "acme-lab.pem"])
    artifact = lab / "collected" / "cell-cpu-2.13.0"
    artifact.mkdir(parents=True)
    assert main(["submit", "cells/cpu-2.13.0", "-o", str(artifact)]) == 0
    (lab / "none.txt").write_text("# no listed submission\n")
    capsys.readouterr()
    assert main(["collect", "--submissions", "none.txt", "--dest", "collected"]) == 0
    assert "collect: took cpu-2.13.0 from " in capsys.readouterr().out
    assert sorted(p.name for p in (lab / "collected").iterdir()) == ["cell-cpu-2.13.0", "cpu-2.13.0"]
    assert list(artifact.iterdir()) == [], "the archive is gone once unpacked"
    assert (lab / "collected" / "cpu-2.13.0" / STATEMENT).is_file()
