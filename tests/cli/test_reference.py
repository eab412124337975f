"""The docs cannot drift from the CLI: docs/cli.md and the README's CLI section are what the parser
and the exit-code table say (python tools/cli_reference.py --write regenerates them)."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

from harness import errors
from harness.errors import EXIT_CODES, HarnessError

# The generator is a tool of the repository, not a verb of the package (tools/cli_reference.py).
_SPEC = importlib.util.spec_from_file_location(
    "cli_reference", Path(__file__).resolve().parents[2] / "tools" / "cli_reference.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_reference = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_reference)


def test_docs_cli_md_is_generated_from_the_parser() -> None:
    assert _reference.CLI_DOC.read_text(encoding="utf-8") == _reference.cli_doc(), (
        "docs/cli.md differs from the parser: run python tools/cli_reference.py --write"
    )


def test_the_readme_cli_section_is_generated_from_the_parser() -> None:
    text = _reference.README.read_text(encoding="utf-8")
    assert _reference.readme_with_section(text) == text, (
        "README's CLI section differs from the parser: run python tools/cli_reference.py --write"
    )


@pytest.mark.parametrize("option", ["--no-history", "--limit", "--runner", "--results-dir", "--strict", "--jobs"])
def test_options_users_met_undocumented_are_in_the_reference(option: str) -> None:
    assert f"`{option}" in _reference.cli_doc()


def test_every_error_exits_with_a_code_of_the_table() -> None:
    codes = {code for code, _ in EXIT_CODES}
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, HarnessError)]
    assert classes and all(c.exit_code in codes for c in classes), [(c.__name__, c.exit_code) for c in classes]


def test_a_changed_option_makes_the_check_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a help text that changes is a different document."""
    from harness.commands import badge

    before = _reference.cli_doc()
    monkeypatch.setattr(badge, "HELP", badge.HELP + " (changed)")
    assert _reference.cli_doc() != before


def test_a_verbs_own_actions_have_their_options_in_the_reference() -> None:
    doc = _reference.cli_doc()
    for heading, option in (("harness comment render", "--published"), ("harness comment post", "--head-sha")):
        section = doc[doc.index(f"### `{heading}`") :]
        assert f"`{option}" in section[: section.index("\n## ") if "\n## " in section else None], heading
