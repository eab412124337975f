"""Modules of tests/suites that import no torch and run no suite declare ``FAST = True``: they stay in the
fast tier although tests/conftest.py puts the whole folder in the slow one.

tests/conftest.py adds the ``slow`` marker in ``pytest_collection_modifyitems`` and ``-m "not slow"`` is
applied by pytest's own hook of that name right after it, so the marker cannot be taken off in between:
instead such an item declines the ``slow`` marker when it is added.
"""

from __future__ import annotations

from typing import Any

import pytest


def _declines_slow(item: pytest.Item) -> None:
    add = item.add_marker

    def add_marker(marker: Any, append: bool = True) -> None:
        name = marker if isinstance(marker, str) else getattr(marker, "name", None)
        if name != "slow":
            add(marker, append)

    item.add_marker = add_marker  # type: ignore[method-assign]


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py marks the folder slow
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if getattr(getattr(item, "module", None), "FAST", False) is True:
            _declines_slow(item)
