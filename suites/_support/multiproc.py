"""Run N rank processes of a distributed test and always reap them.

Each rank is ``python <program> --scenario S --rank r --world N --backend B --init file://... --out f``
in its own session (process group), so killing it kills anything it started. Rendezvous goes through a
``FileStore`` in the test's tmp dir: no TCP port is chosen by the suite (nothing to collide under
pytest-xdist); gloo binds OS-assigned loopback ports (``GLOO_SOCKET_IFNAME=lo`` unless set).

The launcher ends the group when (first match):
* every rank has exited;
* a rank exited and ``grace_s`` passed while others still run (a failed rank's peers may be blocked in
  a collective with it; a hung peer never returns);
* ``deadline_s`` passed (a hung rank): ``timed_out`` is set.
Remaining ranks get SIGTERM, then SIGKILL to their whole process group; the same happens in a
``finally`` when the test itself is interrupted (its soft timeout, Ctrl-C), so no rank outlives its test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _support import drills
from _support import env as _env
from _support.requires import HARDWARE, UNSUPPORTED, Requirement

SUITES_DIR = Path(__file__).resolve().parent.parent
_POLL_S = 0.05
_TERM_WAIT_S = 3.0
_OUTPUT_TAIL = 4000


@dataclass
class RankOutcome:
    rank: int
    pid: int
    returncode: int | None = None
    killed: bool = False  # ended by the launcher, not by itself
    output: str = ""
    result: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.killed


@dataclass
class GroupOutcome:
    ranks: list[RankOutcome] = field(default_factory=list)
    timed_out: bool = False
    elapsed_s: float = 0.0

    def describe(self) -> str:
        """Every rank's end and output tail: the text of an assertion message."""
        lines = [f"group {'timed out' if self.timed_out else 'ended'} after {self.elapsed_s:.1f} s"]
        for r in self.ranks:
            how = "killed by the launcher" if r.killed else f"exit {r.returncode}"
            lines.append(f"--- rank {r.rank} (pid {r.pid}): {how}\n{r.output[-_OUTPUT_TAIL:]}")
        return "\n".join(lines)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def group_alive(pgid: int) -> bool:
    """True while any process of process group ``pgid`` is alive."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg(0) also succeeds for zombies: look for a live member
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def rank_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a rank: the suites importable, loopback only, one intra-op thread, and the
    harness's device pinning undone (each xdist worker sees one device; a group needs all of them)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SUITES_DIR), env.get("PYTHONPATH")) if p)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    env["OMP_NUM_THREADS"] = "1"
    pin_var, pinned = env.get("COMPAT_PIN_VAR"), env.get("COMPAT_PIN_DEVICES")
    if pin_var and pinned:
        env[pin_var] = pinned
    env.update(extra or {})
    return env


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM:
            try:
                proc.wait(timeout=_TERM_WAIT_S)
            except subprocess.TimeoutExpired:
                continue
            if not group_alive(proc.pid):
                return


def run_ranks(
    program: Path,
    scenario: str,
    *,
    world: int,
    backend: str,
    workdir: Path,
    deadline_s: float,
    grace_s: float = 10.0,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> GroupOutcome:
    """Start ``world`` ranks of ``program`` and wait for them as described in the module docstring."""
    workdir.mkdir(parents=True, exist_ok=True)
    store = workdir / "filestore"
    store.unlink(missing_ok=True)
    child_env = rank_env(env)
    outcome = GroupOutcome()
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    start = time.monotonic()
    try:
        for rank in range(world):
            log = workdir / f"rank{rank}.log"
            logs.append(log)
            cmd = [
                sys.executable,
                str(program),
                "--scenario",
                scenario,
                "--rank",
                str(rank),
                "--world",
                str(world),
                "--backend",
                backend,
                "--init",
                f"file://{store}",
                "--out",
                str(workdir / f"rank{rank}.json"),
                *args,
            ]
            with open(log, "wb") as out:
                procs.append(
                    subprocess.Popen(
                        cmd,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        env=child_env,
                        cwd=workdir,
                        start_new_session=True,
                    )
                )
            outcome.ranks.append(RankOutcome(rank=rank, pid=procs[-1].pid))
        first_exit: float | None = None
        while True:
            codes = [p.poll() for p in procs]
            now = time.monotonic()
            if all(c is not None for c in codes):
                break
            if first_exit is None and any(c is not None for c in codes):
                first_exit = now
            if first_exit is not None and now - first_exit > grace_s:
                break
            if now - start > deadline_s:
                outcome.timed_out = True
                break
            time.sleep(_POLL_S)
    finally:
        for proc, rank in zip(procs, outcome.ranks, strict=False):
            if proc.poll() is None:
                rank.killed = True
            _kill_group(proc)  # the rank and anything it started
            proc.wait()
    outcome.elapsed_s = time.monotonic() - start
    for proc, rank, log in zip(procs, outcome.ranks, logs, strict=True):
        rank.returncode = proc.returncode
        rank.output = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        result = workdir / f"rank{rank.rank}.json"
        if result.exists():
            try:
                rank.result = json.loads(result.read_text(encoding="utf-8"))
            except ValueError:
                rank.result = None
    return outcome


# ---------------------------------------------------------------- gates
DEVICE_BACKENDS = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl"}  # nccl is RCCL on ROCm builds


def group_backend() -> str:
    """The process-group backend of this session's device: gloo, nccl (RCCL on ROCm) or xccl."""
    return DEVICE_BACKENDS.get(_env.get().device_type, "gloo")


def visible_devices() -> int:
    """Devices a rank may use: all the harness gave the run (it pins each xdist worker to one)."""
    pinned = [d for d in os.environ.get("COMPAT_PIN_DEVICES", "").split(",") if d]
    if os.environ.get("COMPAT_PIN_VAR") and pinned:
        return len(pinned)
    return int(_env.get().info["accelerator"]["count"] or 0)


def group_requirement(world: int) -> Requirement:
    """A ``world``-rank group on this device's backend can run here (computed without creating one)."""
    import torch.distributed as dist

    e = _env.get()
    backend = group_backend()

    if not dist.is_available():
        return Requirement(False, UNSUPPORTED, "this torch build has no torch.distributed")
    available = getattr(dist, f"is_{backend}_available", None)
    if available is None or not available():
        return Requirement(False, UNSUPPORTED, f"this torch build has no {backend} process-group backend")
    if e.accelerator is not None and visible_devices() < world:
        return Requirement(
            False,
            HARDWARE,
            f"a {world}-rank {backend} group needs {world} {e.device_type} devices, one per rank; "
            f"{visible_devices()} visible ({e.device_label})",
        )
    return Requirement(True, UNSUPPORTED, "")


# ---------------------------------------------------------------- one run per session
def session_dir(tmp_path_factory: Any) -> Path:
    """A directory shared by every xdist worker of this pytest session (the parent of their basetemps)."""
    base = Path(tmp_path_factory.getbasetemp())
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def run_ranks_once(shared: Path, key: str, program: Path, scenario: str, **kwargs: Any) -> GroupOutcome:
    """:func:`run_ranks` once per session for ``key``: the first xdist worker to ask runs the group, the
    others wait on a file lock and read its outcome (a group costs several seconds of both cores)."""
    import fcntl

    root = shared / f"rank-group-{key}"
    root.mkdir(parents=True, exist_ok=True)
    saved = root / "outcome.json"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if saved.exists():
                data = json.loads(saved.read_text(encoding="utf-8"))
                ranks = [RankOutcome(**r) for r in data.pop("ranks")]
                return GroupOutcome(ranks=ranks, **data)
            # the shared group of a feature's claimed tests: its ranks watch the claimed ops (and get the drill)
            env = {**drills.rank_env(program.parent.name), **kwargs.pop("env", {})}
            outcome = run_ranks(program, scenario, workdir=root / "run", env=env, **kwargs)
            saved.write_text(json.dumps(asdict(outcome)), encoding="utf-8")
            return outcome
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
