"""The cell contract's core (harness/cell.py): the manifest as a type survives a round trip of every
committed real manifest; a bad identity is refused in one line that names the file; a cell dir is
built aside and renamed into place (a failure leaves nothing, two in one second are both kept);
default cell ids and the environment's redaction."""

from __future__ import annotations

import ast
import json
import re
import stat
import time
from pathlib import Path

import pytest

from harness import cell
from harness.cell import (
    CELL_FORMATS,
    CellDir,
    CellStatus,
    FeatureGroup,
    FeatureInfo,
    ImportedFile,
    ImportInfo,
    Manifest,
    building_cell,
    default_cell_id,
    read_manifest,
    redact_env,
    valid_cell_id,
)
from harness.errors import EXIT_INPUT, InputError
from tests.committed import all_cell_dirs

MANIFESTS = [d / "manifest.json" for d in all_cell_dirs()]


def _raw(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# -- the manifest as a type ----------------------------------------------------------------------
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.parent.name)
def test_committed_manifests_round_trip_unchanged(path: Path) -> None:
    """Every key a real run wrote comes back as written, nothing added (these cells are today's format)."""
    raw = _raw(path)
    manifest = Manifest.from_json(raw)
    out = manifest.to_json()
    assert {k: out[k] for k in raw} == raw
    assert set(out) == set(raw) and out["cell_format"] == 2
    again = Manifest.from_json(out)
    assert again == manifest and again.to_json() == out


def test_committed_manifest_fields_are_typed() -> None:
    manifest = read_manifest(next(p for p in MANIFESTS if p.parent.name == "cu130-2.14.1-cpu-only"))
    assert manifest.cell_id == "cu130-2.14.1-cpu-only" and manifest.backend == "cu130"
    assert manifest.status is CellStatus.COMPLETED and manifest.completed and manifest.own_suites
    assert manifest.torch == "2.14.1+cu130" and manifest.variant == "cpu-only"
    assert manifest.planned is not None and isinstance(manifest.planned.pytest_args, tuple)
    assert manifest.features["linalg"].title


def test_written_manifest_reads_back_equal(tmp_path: Path) -> None:
    manifest = read_manifest(MANIFESTS[0])
    cell_dir = CellDir(tmp_path)
    cell_dir.write_manifest(manifest)
    assert cell_dir.read_manifest() == manifest
    assert stat.S_IMODE(cell_dir.manifest.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"], "no temp file left behind"


def test_lenient_parts_of_a_manifest_never_raise() -> None:
    """Only the identity is validated; everything else that is malformed is left empty."""
    manifest = Manifest.from_json(
        {
            "cell_id": "c",
            "backend": "cpu",
            "run_id": "r",
            "status": "exploded",
            "run_attempt": True,
            "runner": ["not", "a", "map"],
            "environment": "nope",
            "image": 3,
            "planned": {"workers": [1], "test_timeout": "60", "pytest_args": "-x"},
            "features": {"a": {"title": 7}, "b": "no"},
            "exit": {"code": True, "signal": "", "meaning": None, "container": "c1"},
        }
    )
    assert manifest.status is None and manifest.run_attempt == 1
    assert manifest.runner == cell.RunnerInfo() and manifest.environment is None and manifest.image is None
    assert manifest.planned == cell.RunRequest(workers="auto", test_timeout=None, pytest_args=())
    assert dict(manifest.features) == {"a": cell.FeatureInfo()}
    assert manifest.exit == cell.ExitInfo(code=None, signal=None, meaning="unknown", details={"container": "c1"})


@pytest.mark.parametrize(
    ("key", "value"),
    [("manifest_version", "1.0"), ("manifest_version", [1]), ("status", ["completed"]), ("status", {})],
    ids=["version-text", "version-list", "status-list", "status-object"],
)
def test_malformed_fields_are_lenient_or_an_input_error(tmp_path: Path, key: str, value: object) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({**_raw(MANIFESTS[0]), key: value}), encoding="utf-8")
    try:
        manifest = read_manifest(path)
    except InputError as err:
        assert str(err).startswith(str(path))
    else:
        assert manifest.manifest_version == cell.MANIFEST_VERSION and manifest.status in (None, CellStatus.COMPLETED)


# -- identity errors name the file ---------------------------------------------------------------
def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "cell" / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _identity(**changes: object) -> dict:
    data = {"cell_id": "cpu-host", "backend": "cpu", "run_id": "20261201T000000Z-abcdef"}
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (_identity(cell_id=None), "manifest lacks 'cell_id'"),
        (_identity(backend=""), "manifest lacks 'backend'"),
        (_identity(run_id=5), "manifest lacks 'run_id'"),
        (_identity(cell_id="cpu-host\n"), "invalid cell id 'cpu-host\\n'"),
        (_identity(cell_id="../escape"), "invalid cell id '../escape'"),
        (_identity(cell_format=5), "cell format 5 is not one this harness reads ((1, 2, 3, 4))"),
        (_identity(cell_format="2"), "cell format '2' is not one"),
        (["a", "list"], "manifest must be a JSON object"),
    ],
    ids=[
        "no-cell-id",
        "empty-backend",
        "run-id-not-text",
        "trailing-newline",
        "path",
        "format-5",
        "format-str",
        "list",
    ],
)
def test_identity_errors_name_the_file(tmp_path: Path, data: object, fragment: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        read_manifest(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert fragment in message
    assert caught.value.exit_code == EXIT_INPUT
    assert "\n" not in message.replace("\\n", ""), "one line"


def test_unknown_cell_format_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="merge it with the harness version that wrote it, or a newer one"):
        read_manifest(_write(tmp_path, _identity(cell_format=max(CELL_FORMATS) + 1)))


def test_unreadable_manifests_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no manifest\.json \(not a cell dir written by `harness run`\)") as caught:
        read_manifest(tmp_path / "empty" / "manifest.json")
    assert str(caught.value).startswith(str(tmp_path / "empty"))
    path = _write(tmp_path, {})
    path.write_text('{"cell_id": "x",\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"not valid JSON \(.* at line 2\)") as caught:
        read_manifest(path)
    assert str(caught.value).startswith(str(path))


@pytest.mark.parametrize("good", ["a", "cu130-2.14.1-cpu-only", "A_b.c-9", "x" * 128])
def test_valid_cell_ids(good: str) -> None:
    assert valid_cell_id(good) == good


@pytest.mark.parametrize("bad", ["", "-leading", ".hidden", "x" * 129, "a b", "a/b", "a\n", "\na", "é", None, 7])
def test_invalid_cell_ids(bad: object) -> None:
    with pytest.raises(InputError, match="invalid cell id") as caught:
        valid_cell_id(bad)  # type: ignore[arg-type]
    assert "letters, digits" in str(caught.value)


HARNESS = Path(cell.__file__).parent
# What the id rule's regular expression says, however it is written: its second character class with its
# length bound (`[A-Za-z0-9._-]{0,127}`), which no other name of the harness shares.
_ID_RULE = re.compile(r"\[A-Za-z0-9\._\\?-\]\{0,127\}")


def id_rule_copies(source: str) -> list[int]:
    """The lines of `source` holding a string with the cell id's pattern."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ID_RULE.search(node.value)
    ]


def test_the_cell_id_rule_is_written_once() -> None:
    """cell.is_cell_id is the rule (plan.py once had its own `^...$` copy, whose `.match` took a trailing
    newline): no other module spells its pattern."""
    copies = {
        path.relative_to(HARNESS).as_posix(): lines
        for path in sorted(HARNESS.rglob("*.py"))
        if path.name != "cell.py" or path.parent != HARNESS
        if (lines := id_rule_copies(path.read_text(encoding="utf-8")))
    }
    assert not copies, f"the cell id rule written again (call harness.cell.is_cell_id): {copies}"
    assert id_rule_copies((HARNESS / "cell.py").read_text(encoding="utf-8")), "the check sees the rule at home"
    assert id_rule_copies('_CELL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")\n') == [1]


# -- building a cell dir ----------------------------------------------------------------------
def test_a_built_cell_is_renamed_into_place(tmp_path: Path) -> None:
    results = tmp_path / "results"
    with building_cell(results, "cpu-host") as built:
        assert built.path.parent == results and built.path.name.startswith(".cpu-host.")
        (built.path / "output.log").write_text("hello", encoding="utf-8")
    (final,) = results.iterdir()
    assert built.path == final
    assert final.name.startswith("cpu-host-") and len(final.name) == len("cpu-host-20261201T000000Z")
    assert (final / "output.log").read_text(encoding="utf-8") == "hello"
    assert stat.S_IMODE(final.stat().st_mode) == 0o755


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_a_failure_inside_leaves_nothing_in_the_results_dir(tmp_path: Path, error: BaseException) -> None:
    results = tmp_path / "results"
    with pytest.raises(type(error)), building_cell(results, "cpu-host") as built:
        (built.path / "manifest.json").write_text("{}", encoding="utf-8")
        raise error
    assert list(results.iterdir()) == []


def test_an_invalid_cell_id_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="invalid cell id"), building_cell(tmp_path / "results", "bad id"):
        pass
    assert not (tmp_path / "results").exists()


def test_cells_of_one_id_in_the_same_second_are_all_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = time.gmtime(1_796_083_200)  # 2026-12-01T00:00:00Z
    monkeypatch.setattr(cell.time, "gmtime", lambda *_: frozen)
    results = tmp_path / "results"
    made = []
    for n in range(3):
        with building_cell(results, "cpu-host") as built:
            (built.path / "n").write_text(str(n), encoding="utf-8")
        made.append(built.path.name)
    assert made == ["cpu-host-20261201T000000Z", "cpu-host-20261201T000000Z-2", "cpu-host-20261201T000000Z-3"]
    assert [(results / name / "n").read_text(encoding="utf-8") for name in made] == ["0", "1", "2"]
    assert sorted(p.name for p in results.iterdir()) == sorted(made), "nothing hidden left behind"


# -- default cell ids, redaction ---------------------------------------------------------------
def test_default_cell_id_names_backend_build_variant_and_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cell.socket, "gethostname", lambda: "runner 7_x.example")
    assert default_cell_id("cu130") == "cu130-runner-7-x.example"
    assert default_cell_id("cu130", "2.14.0+cu130", "cpu-only") == "cu130-2.14.0-cu130-cpu-only-runner-7-x.example"
    assert default_cell_id("cpu", "2.16.0.dev20261130") == "cpu-2.16.0.dev20261130-runner-7-x.example"


@pytest.mark.parametrize("host", ["", "h" * 300, "?!*", "ünïcödé"])
def test_default_cell_id_is_always_a_valid_id(monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    monkeypatch.setattr(cell.socket, "gethostname", lambda: host)
    cell_id = default_cell_id("rocm7.2", "2.15.0+rocm7.2" + "9" * 200, "cpu-only")
    assert valid_cell_id(cell_id) == cell_id and len(cell_id) <= 128
    if not host:
        assert default_cell_id("cpu").endswith("-host")


def test_redact_env_drops_credentials_and_keeps_the_rest() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "CUDA_VISIBLE_DEVICES": "0",
        "COMPAT_TEST_TIMEOUT": "300",
        "GITHUB_TOKEN": "x",
        "github_token": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "DB_PASSWORD": "x",
        "MY_PASSWD": "x",
        "OPENAI_API_KEY": "x",
        "HF_APIKEY": "x",
        "SSH_PRIVATE_KEY": "x",
        "NPM_AUTH": "x",
        "GOOGLE_APPLICATION_CREDENTIALS": "x",
        "GPG_PASSPHRASE": "x",
    }
    assert redact_env(env) == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "CUDA_VISIBLE_DEVICES": "0",
        "COMPAT_TEST_TIMEOUT": "300",
    }
    assert redact_env({}) == {}


def test_an_unreadable_manifest_names_its_path_once(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").mkdir()
    with pytest.raises(InputError) as error:
        cell.read_manifest(tmp_path / "manifest.json")
    message = str(error.value)
    assert message.startswith(f"{tmp_path / 'manifest.json'}: cannot read: ") and "directory" in message
    assert message.count(str(tmp_path / "manifest.json")) == 1, "the path once"


def test_a_manifest_records_its_channel_and_ignores_a_made_up_one() -> None:
    from harness.cell import Manifest

    base = {"cell_id": "cu130-2.16.0.dev20261130", "backend": "cu130", "run_id": "r1"}
    assert Manifest.from_json({**base, "channel": "nightly"}).to_json()["channel"] == "nightly"
    assert Manifest.from_json({**base, "channel": "beta"}).channel is None
    assert "channel" not in Manifest.from_json(base).to_json()


def test_imported_files_read_back_typed_and_entries_without_a_file_are_left_out() -> None:
    data = {
        "files": [
            {"source": "/ci/report.xml", "file": "junit/report.xml.gz", "sha256": "ab" * 32},
            {"source": "/ci/lost.xml"},  # names nothing in the cell: nothing to read back
            "junit/other.xml.gz",
            {"file": "junit/bare.xml.gz", "sha256": 7},
        ],
        "feature_map": "feature-map.toml",
    }
    info = ImportInfo.from_json(data)
    assert info == ImportInfo(
        files=(
            ImportedFile(source="/ci/report.xml", file="junit/report.xml.gz", sha256="ab" * 32),
            ImportedFile(source="", file="junit/bare.xml.gz", sha256=""),  # a number is no sha256
        ),
        feature_map="feature-map.toml",
    )
    assert ImportInfo.from_json(info.to_json()) == info
    assert ImportInfo.from_json({"files": "x"}) == ImportInfo() and ImportInfo.from_json([]) is None


def test_a_newer_statement_of_a_feature_wins_field_by_field() -> None:
    """How the merge lays the cells' copies of a feature over each other (newest last), then the
    features file over them all: what the newer one leaves unsaid, the older keeps."""
    older = FeatureInfo(title="Linear algebra", since="2.9", apis=("torch.linalg.svd",), devices=("cuda",))
    newer = FeatureInfo(since="2.13", claim="batched svd", groups=(FeatureGroup(match="*batched*", since="2.14"),))
    assert newer.stated_over(older) == FeatureInfo(
        title="Linear algebra",
        since="2.13",
        claim="batched svd",
        apis=("torch.linalg.svd",),
        devices=("cuda",),
        groups=(FeatureGroup(match="*batched*", since="2.14"),),
    )
    assert FeatureInfo().stated_over(older) == older and older.stated_over(FeatureInfo()) == older


def test_the_canonical_content_is_every_file_but_the_statement_in_byte_order(tmp_path: Path) -> None:
    import os

    (tmp_path / "junit").mkdir()
    for name in ("manifest.json", "Z.log", "junit/002-b.xml.gz", "junit/001-a.xml.gz", "é.txt", "a b.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / cell.STATEMENT).write_text("{}")
    (tmp_path / ".harness-lock").write_text("")
    (tmp_path / ".harness-tmp-1-ab-manifest.json").write_text("half")
    assert cell.canonical_files(tmp_path) == [
        "Z.log", "a b.txt", "junit/001-a.xml.gz", "junit/002-b.xml.gz", "manifest.json", "é.txt",
    ]  # fmt: skip
    os.symlink("/etc/hostname", tmp_path / "junit" / "003-link.xml")
    with pytest.raises(InputError, match=r"^junit/003-link\.xml is a symbolic link: a cell holds files only$"):
        cell.canonical_files(tmp_path)
    (tmp_path / "junit" / "003-link.xml").unlink()
    os.mkfifo(tmp_path / "events.jsonl")
    with pytest.raises(InputError, match=r"^events\.jsonl is not a regular file"):
        cell.canonical_files(tmp_path)
