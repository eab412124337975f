"""Feature maps (harness/ingest/featuremap.py), as docs/cell-contract.md states them: ordered rules,
the first match wins, a rule may list several globs, a test no rule matches goes to `unassigned`;
`[features.<id>]` gives a row its title and release; a bad map is refused in one line that names
the file (and the rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InputError
from harness.ingest.featuremap import load_feature_map
from harness.model import UNASSIGNED

DOCUMENTED = """
[features.linalg]
title = "Linear algebra"
since = "2.12"

[[rule]]
match = "test/test_linalg.py::*"
feature = "linalg"

[[rule]]
match = ["*TestSparse*", "*sparse*"]
feature = "sparsity"

[[rule]]
match = "test/*"
feature = "other"
"""


def _map(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "features.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_documented_example(tmp_path: Path) -> None:
    fmap = load_feature_map(_map(tmp_path, DOCUMENTED))
    assert fmap.feature_of("test/test_linalg.py::TestLinalg::test_svd") == "linalg"
    assert fmap.feature_of("test/test_linalg.py::TestSparse::test_x") == "linalg", "the first match wins"
    assert fmap.feature_of("test/test_ops.py::TestSparseCSR::test_add") == "sparsity"
    assert fmap.feature_of("test/test_nn.py::test_sparse_embedding") == "sparsity"
    assert fmap.feature_of("test/test_nn.py::test_conv") == "other"
    assert fmap.feature_of("benchmarks/bench.py::test_x") == UNASSIGNED == "unassigned"
    assert fmap.feature_of("test/test_nn.py::test_SPARSE") == "other", "globs are case-sensitive"
    assert fmap.features == {"linalg": {"title": "Linear algebra", "since": "2.12"}, "sparsity": {}, "other": {}}
    assert fmap.source == str(tmp_path / "features.toml")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[[rule]\n", "invalid TOML"),
        ('title = "x"\n[[rule]]\nmatch = "*"\nfeature = "a"\n', "unknown top-level keys ['title']"),
        ("[features.a]\ntitle = 'A'\n", "no [[rule]] entries"),
        ('[[rule]]\nmatch = "*"\nfeature = "a"\n[[rule]]\nmatch = "*"\nfeature = "a"\nowner = "me"\n', "rule 2"),
        ('[[rule]]\nmatch = "*"\nfeature = "not an id"\n', "rule 1: feature 'not an id' is not an id"),
        ('[[rule]]\nmatch = ""\nfeature = "a"\n', "rule 1: `match` must be a glob or a list of globs"),
        ('[[rule]]\nmatch = ["*", 3]\nfeature = "a"\n', "rule 1: `match` must be a glob or a list of globs"),
        ('[[rule]]\nmatch = "*"\nfeature = "a"\n[features]\nb = "x"\n', "[features.b] is not a feature table"),
    ],
    ids=["toml", "top-level", "no-rules", "extra-key", "feature-id", "empty-glob", "glob-type", "feature-table"],
)
def test_a_bad_map_is_one_line_naming_the_file(tmp_path: Path, text: str, fragment: str) -> None:
    path = _map(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_feature_map(path)
    assert str(caught.value).startswith(f"{path}: ") and fragment in str(caught.value)


def test_a_missing_map_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such feature map"):
        load_feature_map(tmp_path / "nope.toml")


def test_an_unreadable_feature_map_names_its_path_once(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        load_feature_map(tmp_path)
    message = str(error.value)
    assert message.startswith(f"{tmp_path}: cannot read: ") and "directory" in message
    assert message.count(str(tmp_path)) == 1, "the path once"
