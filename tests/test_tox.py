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
