"""One exit code per kind of mistake, in every verb (issue 42): each verb that takes an id, a TOML
file, an input file or a number is given the same bad one, in-process, and must answer with the code
harness/errors.py gives that kind and exactly one `harness: error:` line (or argparse's one usage
line), never a traceback, and write nothing. A full disk and a read-only folder, which need a mount,
are the same table's last two kinds: tests/faults/test_output_faults.py runs every writer into them
(exit 6, `cannot write <path>: <cause>`, the old outputs kept)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import EXIT_INPUT, EXIT_USAGE
from harness.matrix_json import write_matrix
from harness.publish.history import append_run
from tests.committed import CELLS, SAMPLES, releases_matrix

JUNIT = Path(__file__).resolve().parents[1] / "dialects" / "pytest" / "junit-xunit2.xml"
WHEELS = Path(__file__).resolve().parents[1] / "data" / "api-wheels"
BAD_ID = "a/b"
# a bad id or name (a typo of one: a column, a backend, a namespace) is a usage error, as is a bad number
KIND_CODE = {"bad id": EXIT_USAGE, "bad TOML": EXIT_INPUT, "unreadable file": EXIT_INPUT, "bad number": EXIT_USAGE}


class Place:
    """The inputs the rows need (made once: no row may change them) and a folder of the test's own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.out = root / "out"
        self.matrix = root / "m.json"
        write_matrix(releases_matrix(), self.matrix)
        self.history = root / "history"
        append_run(self.history, releases_matrix())
        self.results = root / "results"
        shutil.copytree(SAMPLES / "publishing-base", self.results / "cpu-run")
        self.bad_toml = root / "bad-suites" / "features.toml"
        self.bad_toml.parent.mkdir()
        self.bad_toml.write_text("[features.a\n", encoding="utf-8")
        self.missing = root / "nope.json"
        self.folder = root / "folder"
        self.folder.mkdir()

    def at(self, out: Path) -> Place:
        self.out = out
        return self


Row = Callable[[Place], list[str]]
T = "tests/data/cells"

ROWS: dict[str, list[tuple[str, Row]]] = {
    "bad id": [
        ("run --cell-id", lambda p: ["run", "--native", "--cell-id", BAD_ID, "--results-dir", str(p.out)]),
        ("import --cell-id", lambda p: ["import", str(JUNIT), "--backend", "cpu", "--cell-id", BAD_ID,
                                        "--results-dir", str(p.out)]),
        ("cells forget", lambda p: ["cells", "forget", BAD_ID, "--results-dir", str(p.results)]),
        ("gate --backend", lambda p: ["gate", str(p.matrix), "--any-failure", "--backend", BAD_ID]),
        ("history --column", lambda p: ["history", "amp/test_autocast.py::test_x", "--history", str(p.history),
                                        "--column", BAD_ID]),
        ("diff --backend", lambda p: ["diff", "--releases", str(p.matrix), "--backend", BAD_ID]),
        ("plan --backend", lambda p: ["plan", "--backend", BAD_ID]),
        ("build --backend", lambda p: ["build", "--backend", BAD_ID, "--dry-run"]),
        ("comment post --pr", lambda p: ["comment", "post", "--pr", "7; rm -rf /", "--body", str(p.matrix)]),
        ("trust add-key --backend", lambda p: ["trust", "add-key", str(p.missing), "--backend", BAD_ID,
                                               "--file", str(p.out / "trust.toml")]),
        ("api-diff --namespace", lambda p: ["api-diff", str(WHEELS / "torch-2.14.1-py3-none-any.whl"),
                                            str(WHEELS / "torch-2.15.0-py3-none-any.whl"), "--namespace",
                                            "torch.cuda.tunabel"]),
    ],
    "bad TOML": [
        ("run --features", lambda p: ["run", "--native", "--features", str(p.bad_toml), "--results-dir", str(p.out)]),
        ("merge --features", lambda p: ["merge", T, "--features", str(p.bad_toml), "-o", str(p.out / "m.json")]),
        ("import --feature-map", lambda p: ["import", str(JUNIT), "--backend", "cpu", "--cell-id", "c",
                                            "--feature-map", str(p.bad_toml), "--results-dir", str(p.out)]),
        ("upstream --registry", lambda p: ["upstream", "--registry", str(p.bad_toml), "--responses", str(p.folder)]),
        ("merge --trust", lambda p: ["merge", T, "--trust", str(p.bad_toml), "-o", str(p.out / "m.json")]),
        ("trust check", lambda p: ["trust", "check", "--file", str(p.bad_toml)]),
        ("api-diff --suites", lambda p: ["api-diff", str(WHEELS / "torch-2.14.1-py3-none-any.whl"),
                                         str(WHEELS / "torch-2.15.0-py3-none-any.whl"),
                                         "--suites", str(p.bad_toml.parent)]),
    ],
    "unreadable file": [
        ("report", lambda p: ["report", str(p.missing)]),
        ("report a folder", lambda p: ["report", str(p.folder)]),
        ("gate", lambda p: ["gate", str(p.missing), "--any-failure"]),
        ("diff", lambda p: ["diff", str(p.missing), str(p.matrix)]),
        ("diff --api-diff", lambda p: ["diff", "--releases", str(p.matrix), "--api-diff", str(p.missing)]),
        ("badge", lambda p: ["badge", str(p.missing), "-o", str(p.out)]),
        ("publish --matrix", lambda p: ["publish", str(p.out), "--matrix", str(p.missing)]),
        ("comment render", lambda p: ["comment", "render", str(p.missing)]),
        ("merge", lambda p: ["merge", str(p.missing), "-o", str(p.out / "m.json")]),
        ("merge --expect", lambda p: ["merge", T, "--expect", str(p.missing), "-o", str(p.out / "m.json")]),
        ("merge --features", lambda p: ["merge", T, "--features", str(p.missing), "-o", str(p.out / "m.json")]),
        ("run --features", lambda p: ["run", "--native", "--features", str(p.missing), "--results-dir", str(p.out)]),
        ("import", lambda p: ["import", str(p.missing), "--backend", "cpu", "--cell-id", "c",
                              "--results-dir", str(p.out)]),
        ("import --feature-map", lambda p: ["import", str(JUNIT), "--backend", "cpu", "--cell-id", "c",
                                            "--feature-map", str(p.missing), "--results-dir", str(p.out)]),
        ("history --history", lambda p: ["history", "x::y", "--history", str(p.missing)]),
        ("upstream --registry", lambda p: ["upstream", "--registry", str(p.missing), "--responses", str(p.folder)]),
        ("api-diff", lambda p: ["api-diff", str(p.folder / "nope.whl"), str(WHEELS / "torch-2.15.0-py3-none-any.whl")]),
        ("attest", lambda p: ["attest", str(p.missing), "--key", str(p.missing)]),
        ("submit", lambda p: ["submit", str(p.missing), "-o", str(p.out / "x.cell.tar.gz")]),
        ("trust add-key", lambda p: ["trust", "add-key", str(p.missing), "--backend", "rocm",
                                     "--file", str(p.out / "trust.toml")]),
    ],
    "bad number": [
        ("run --workers", lambda p: ["run", "--native", "--workers", "abc", "--results-dir", str(p.out)]),
        ("run --workers 0", lambda p: ["run", "--native", "--workers", "0", "--results-dir", str(p.out)]),
        ("run --test-timeout", lambda p: ["run", "--native", "--test-timeout", "-1", "--results-dir", str(p.out)]),
        ("run --cell-timeout", lambda p: ["run", "--native", "--cell-timeout", "0", "--results-dir", str(p.out)]),
        ("merge --jobs", lambda p: ["merge", T, "--jobs", "0", "-o", str(p.out / "m.json")]),
        ("merge --lock-timeout", lambda p: ["merge", T, "--lock-timeout", "-1", "-o", str(p.out / "m.json")]),
        ("publish --stale-after", lambda p: ["publish", str(p.out), "--matrix", str(p.matrix), "--stale-after", "0"]),
        ("publish --inline-limit", lambda p: ["publish", str(p.out), "--matrix", str(p.matrix),
                                              "--inline-limit", "-1"]),
        ("publish --lock-timeout", lambda p: ["publish", str(p.out), "--matrix", str(p.matrix),
                                              "--lock-timeout", "-1"]),
        ("report --limit", lambda p: ["report", str(p.matrix), "--limit", "-5"]),
        ("report --stale-after", lambda p: ["report", str(p.matrix), "--format", "html", "--stale-after", "-1"]),
        ("history --runs", lambda p: ["history", "x::y", "--history", str(p.history), "--runs", "0"]),
        ("cells prune --keep", lambda p: ["cells", "prune", "--keep", "-1", "--results-dir", str(p.results)]),
        ("collect --late-runs", lambda p: ["collect", "--plan", str(p.matrix), "--expect-out", str(p.out / "e.json"),
                                           "--late-runs", "-1"]),
        ("prune --budget", lambda p: ["prune", "--budget", "-1"]),
        ("merge --jobs abc", lambda p: ["merge", T, "--jobs", "abc", "-o", str(p.out / "m.json")]),
    ],
}  # fmt: skip

CASES = [(kind, name, row) for kind, rows in ROWS.items() for name, row in rows]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Place:
    return Place(tmp_path_factory.mktemp("inputs"))


def _files(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_mtime_ns) for p in root.rglob("*"))


@pytest.mark.parametrize(("kind", "name", "row"), CASES, ids=[f"{kind}: {name}" for kind, name, _ in CASES])
def test_each_kind_of_mistake_has_one_code_and_one_line_in_every_verb(
    kind: str, name: str, row: Row, inputs: Place, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place = inputs.at(tmp_path / "out")
    before = _files(inputs.root)
    try:
        code = main(row(place))
    except SystemExit as stop:  # argparse's own usage error: exit 2, one line
        code = stop.code
    err = capsys.readouterr().err
    assert code == KIND_CODE[kind], f"{kind} in {name}: exit {code}\n{err}"
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1, err
    assert _files(inputs.root) == before and not place.out.exists(), "nothing written"


def test_every_verb_is_in_the_table() -> None:
    """A new verb that takes one of these inputs joins the table (the verbs that take none are named)."""
    from harness.cli import verbs

    takes_none = {"backends", "doctor", "wheelhouse"}  # no id, TOML, input file or number of their own
    covered = {name.split()[0] for _, name, _ in CASES}
    assert {verb for verb, _ in verbs()} - takes_none <= covered, "a verb missing from the table"
    assert CELLS.is_dir()
