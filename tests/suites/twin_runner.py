"""One way the broken-twin tests run the real suites: pytest in a child, a sabotage module injected through a
``sitecustomize`` (so rank processes get it too), and each test's outcome read back from its JUnit."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITES = HERE.parents[1] / "suites"


def run_suites(
    tests: list[str],
    tmp_path: Path,
    sabotage: str,
    mode: str | None,
    *,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = ("-q", "-rxXs"),
    timeout: int = 600,
) -> tuple[subprocess.CompletedProcess[str], dict[str, tuple[str, str]]]:
    """pytest on the real suites, with ``sabotage``'s ``apply()`` in force when ``mode`` is set; returns the
    run and {node id: (outcome, message)} from its JUnit."""
    junit = tmp_path / "junit.xml"
    child = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    if mode:
        site = tmp_path / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(f"import {sabotage}\n{sabotage}.apply()\n", encoding="utf-8")
        child["PYTHONPATH"] = os.pathsep.join([str(site), str(HERE), child.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        child["COMPAT_SABOTAGE"] = mode
    child.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *tests, "-p", "no:cacheprovider", *args, f"--junitxml={junit}"],
        cwd=SUITES,
        env=child,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    results: dict[str, tuple[str, str]] = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            skipped = case.find("skipped")
            if bad is not None:
                results[name] = ("failed", (bad.get("message") or "") + (bad.text or ""))
            elif skipped is not None:
                results[name] = ("skipped", skipped.get("message") or "")
            else:
                results[name] = ("passed", "")
    return done, results
