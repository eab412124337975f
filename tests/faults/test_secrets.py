"""Point 8: secrets and markup. Variables whose names look like tokens, passwords or keys
never reach manifests, logs, events, JUnit, matrix.json, the Markdown summary or the page,
even when a test dumps its whole environment; and the reports escape what they show.

The run goes through the real CLI with the secrets in the harness's own environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from harness.cell import SECRET_NAME_RE
from tests.cellfactory import write_suite
from tests.faults.conftest import REPO

SECRETS = {
    "GITHUB_TOKEN": "ghp_supersecret123fault",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-fault-secret",
    "MY_PASSWORD": "hunter2-fault-password",
    "API_KEY": "sk-fault-api-key-0042",
    "npm_auth_token": "npm-fault-lowercase-token",
    "DOCKER_PASSWD": "docker-fault-passwd",
    "SSH_PRIVATE_KEY": "-----BEGIN FAULT KEY-----",
    "HF_ACCESS_KEY": "hf_fault_access_key",
}
XSS_ID = "<img src=x onerror=alert(1)>"
XSS_MESSAGE = "</script><script>alert(2)</script>"

LEAKY_SUITE = {
    "alpha/test_leaky.py": f"""
        import json
        import os
        import sys

        import pytest

        def test_dumps_environment(record_property):
            env = dict(os.environ)
            print(json.dumps(env))
            print(json.dumps(env), file=sys.stderr)
            record_property("environment", json.dumps(env))
            assert False, "environment: " + json.dumps(env)

        @pytest.mark.parametrize("payload", [{XSS_ID!r}])
        def test_markup(payload):
            assert False, {XSS_MESSAGE!r}
    """,
}


@pytest.fixture(scope="module")
def leaky_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("secrets")
    suites = write_suite(root / "suites", LEAKY_SUITE)
    results = root / "results"
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "harness", "run", "--native", "--backend", "cpu", "--no-progress"]
    argv += ["--suites", str(suites), "--results-dir", str(results), "--cell-id", "leaky", "--workers", "1"]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 1, done.stderr  # the tests fail on purpose
    page = results / "index.html"
    report = [sys.executable, "-m", "harness", "report", str(results / "matrix.json"), "--format", "html"]
    html = subprocess.run([*report, "-o", str(page)], cwd=REPO, capture_output=True, text=True, check=False)
    assert html.returncode == 0, html.stderr
    return {"results": results, "stdout": done.stdout, "stderr": done.stderr, "page": page}


def test_secret_names_are_recognised() -> None:
    assert all(SECRET_NAME_RE.search(name) for name in SECRETS)


def test_tests_really_dumped_their_environment(leaky_run: dict) -> None:
    """Guard against a vacuous pass: the dump happened and reached the files."""
    (cell,) = [p for p in leaky_run["results"].iterdir() if p.is_dir()]
    junit = (cell / "junit.xml").read_text(encoding="utf-8")
    assert "COMPAT_CELL_DIR" in junit and "environment: " in junit
    assert "COMPAT_CELL_DIR" in (cell / "output.log").read_text(encoding="utf-8")


def test_no_secret_in_any_written_file_or_output(leaky_run: dict) -> None:
    files = [p for p in leaky_run["results"].rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"manifest.json", "output.log", "events.jsonl", "junit.xml", "collected.json"} <= names
    assert {"matrix.json", "summary.md", "index.html"} <= names
    texts = {str(p): p.read_text(encoding="utf-8", errors="replace") for p in files}
    texts["harness run stdout"] = leaky_run["stdout"]
    texts["harness run stderr"] = leaky_run["stderr"]
    leaks = [(where, name) for where, text in texts.items() for name, value in SECRETS.items() if value in text]
    assert leaks == []
    manifest = json.loads(next(t for w, t in texts.items() if w.endswith("manifest.json")))
    assert not any(name in json.dumps(manifest) for name in SECRETS)


def test_markdown_escapes_markup(leaky_run: dict) -> None:
    summary = (leaky_run["results"] / "summary.md").read_text(encoding="utf-8")
    # Inside a `code span` markup is literal text (its fence is longer than any backtick run in
    # it, so it cannot be closed early); everywhere else `<` is entity-escaped.
    assert f"`alpha/test_leaky.py::test_markup[{XSS_ID}]`" in summary
    outside_code = re.sub(r"`[^`\n]*`", "", summary)
    assert "<img" not in outside_code and "<script" not in outside_code and "</script" not in outside_code
    assert "&lt;/script>&lt;script>alert(2)&lt;/script>" in outside_code


def test_page_escapes_markup(leaky_run: dict) -> None:
    page = leaky_run["page"].read_text(encoding="utf-8")
    assert "test_markup" in page
    assert XSS_ID not in page and XSS_MESSAGE not in page
    assert "onerror=alert(1)" in page  # the text is there, only inert (as \\u003c-escaped JSON)
    assert page.count("<script") == 2  # the page's own data and code, nothing injected
