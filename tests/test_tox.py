"""tox.ini lists what it can run: `tox -l` shows every env (a new user found the backend envs hidden
once), the `backends` label names every backend env, and each backend env is a build the registry
knows (a variant, or a family meaning its default variant). Read from the file (fast tier)."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from harness.registry import get_backend

TOX_INI = Path(__file__).resolve().parents[1] / "tox.ini"


def _tox() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(TOX_INI, encoding="utf-8")
    return parser


def _names(text: str) -> list[str]:
    return [n.strip() for n in re.split(r"[,\s]+", text) if n.strip()]


def _defined_envs(parser: configparser.ConfigParser) -> tuple[list[str], list[str]]:
    """(the envs of the brace section [testenv:{a,b}], the envs of named sections [testenv:x])."""
    braced: list[str] = []
    named: list[str] = []
    for section in parser.sections():
        if not section.startswith("testenv:"):
            continue
        spec = section.removeprefix("testenv:")
        if spec.startswith("{"):
            braced += _names(spec.strip("{}"))
        else:
            named.append(spec)
    return braced, named


def test_tox_l_lists_every_env_the_backends_included() -> None:
    parser = _tox()
    braced, named = _defined_envs(parser)
    listed = _names(parser["tox"]["env_list"])
    assert braced and set(braced) <= set(listed), "tox -l must show the backend envs"
    assert set(named) <= set(listed)
    labels = {
        line.split("=")[0].strip(): _names(line.split("=")[1])
        for line in parser["tox"]["labels"].splitlines()
        if "=" in line
    }
    assert labels["backends"] == braced
    assert set(labels["dev"]) <= set(listed)


def test_every_backend_env_is_a_build_the_registry_knows() -> None:
    braced, _ = _defined_envs(_tox())
    assert [get_backend(env).id for env in braced], "get_backend raises for a name the registry does not know"


def test_the_fast_tiers_time_is_told_one_way() -> None:
    """Issue 42: the README and tox.ini gave the fast tier's time three ways (under a minute, about
    20 s, ~15 s). Every place that times it says the same."""
    readme = (TOX_INI.parent / "README.md").read_text(encoding="utf-8")
    told = re.findall(r"fast tier[^.]*?(about a \w+|about \d+ s|under a \w+|~\d+ s)", readme + TOX_INI.read_text())
    told += re.findall(r"tox -e fast \(no torch, ([^)]*)\)", TOX_INI.read_text())
    assert len(told) >= 4 and set(told) == {"about a minute"}, told


def test_the_readme_says_which_release_each_backend_env_runs() -> None:
    """Issue 42: the README called `tox -e cu126` the current release's cell while its image pins 2.14.1
    (2.15 ships no cu126). Each backend env the current release does not ship is named with the
    release its image pins, as the registry decides it."""
    from harness.registry import load_registry

    registry = load_registry()
    readme = " ".join((TOX_INI.parent / "README.md").read_text(encoding="utf-8").split())
    current = registry.releases[registry.current_release]
    for env in _names(_tox()["tox"]["labels"].split("backends =", 1)[1].splitlines()[0]):
        variant = get_backend(env).id
        if not current.ships(variant):
            assert f"(`{env}`: {registry.default_torch(variant)})" in readme, env
