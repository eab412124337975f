"""Facts about the suites (harness/run/suites.py): their feature rows from features.toml, with one
clear error for a missing file (usage), invalid TOML and anything but tables (input); their version, the git
commit (+dirty) or, outside git, a hash of their content."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.cell import FeatureInfo
from harness.errors import EXIT_INPUT, EXIT_USAGE, HarnessError, InputError
from harness.run import suites
from harness.run.suites import load_features, suite_sha

REPO_SUITES = Path(__file__).resolve().parents[2] / "suites"


def _suites(tmp_path: Path, toml: str) -> Path:
    (tmp_path / "features.toml").write_text(toml, encoding="utf-8")
    return tmp_path


def test_the_projects_own_suites() -> None:
    features = load_features(REPO_SUITES)
    assert "graphs" in features and "linalg" in features
    assert features["graphs"].title == "Device-agnostic graphs" and features["graphs"].since == "2.12"
    assert all(info.title for info in features.values())


def test_rows_keep_their_order_and_known_fields(tmp_path: Path) -> None:
    toml = """
[features.b]
title = "B"
since = "2.13"
claim = "b works"
scope = "host"
source = "https://github.com/pytorch/pytorch/releases"
apis = ["torch.b"]

[features.a]
title = "A"
"""
    features = load_features(_suites(tmp_path, toml))
    assert list(features) == ["b", "a"]
    assert features["b"] == FeatureInfo(
        title="B",
        since="2.13",
        claim="b works",
        scope="host",
        source="https://github.com/pytorch/pytorch/releases",
        apis=("torch.b",),
    )
    assert features["a"] == FeatureInfo(title="A")


def test_entries_that_are_not_tables_are_left_out(tmp_path: Path) -> None:
    features = load_features(_suites(tmp_path, '[features]\nnote = "x"\n[features.a]\ntitle = "A"\n'))
    assert list(features) == ["a"]


@pytest.mark.parametrize(
    ("toml", "message", "code"),
    [
        (None, "{dir}: no features.toml (is this the suites/ directory?)", EXIT_USAGE),  # a wrong --suites
        ("[features.a\n", "{dir}/features.toml: invalid TOML: ", EXIT_INPUT),  # a file that cannot be read
        ('title = "no features"\n', "{dir}/features.toml: needs [features.<id>] tables", EXIT_INPUT),
        ('features = ["a", "b"]\n', "{dir}/features.toml: needs [features.<id>] tables", EXIT_INPUT),
    ],
    ids=["no-file", "invalid-toml", "no-table", "not-tables"],
)
def test_load_features_errors(tmp_path: Path, toml: str | None, message: str, code: int) -> None:
    if toml is not None:
        _suites(tmp_path, toml)
    with pytest.raises(HarnessError) as caught:
        load_features(tmp_path)
    assert str(caught.value).startswith(message.format(dir=tmp_path))
    assert caught.value.exit_code == code


def test_a_named_features_file_that_is_missing_or_a_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such features file"):
        load_features(tmp_path, tmp_path / "nope.toml")
    with pytest.raises(InputError, match="cannot read: Is a directory"):
        load_features(tmp_path, tmp_path)


def _no_git(*args: Any, **kwargs: Any) -> Any:
    raise FileNotFoundError("git")


def test_outside_git_the_version_is_a_hash_of_the_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suites.subprocess, "run", _no_git)
    root = _suites(tmp_path, '[features.a]\ntitle = "A"\n')
    (root / "a").mkdir()
    (root / "a" / "test_a.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
    first = suite_sha(root)
    assert first.startswith("content:") and len(first) == len("content:") + 16
    (root / "a" / "__pycache__").mkdir()
    (root / "a" / "__pycache__" / "test_a.pyc").write_bytes(b"\0")
    assert suite_sha(root) == first, "caches do not change the suites' version"
    (root / "a" / "test_a.py").write_text("def test_a():\n    assert False\n", encoding="utf-8")
    changed = suite_sha(root)
    assert changed != first
    (root / "a" / "test_a.py").rename(root / "a" / "test_b.py")
    assert suite_sha(root) not in (first, changed), "a renamed file is another version"


@pytest.mark.slow  # runs git
def test_in_git_the_version_is_the_commit_and_dirty_when_changed(tmp_path: Path) -> None:
    root = _suites(tmp_path, '[features.a]\ntitle = "A"\n')

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "suites")
    head = git("rev-parse", "HEAD")
    assert suite_sha(root) == head
    (root / "features.toml").write_text('[features.a]\ntitle = "A2"\n', encoding="utf-8")
    assert suite_sha(root) == head + "+dirty"
