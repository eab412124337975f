"""A failed or hung rank is reported, bounded in time, and leaves no process behind.

* One rank raises right after joining: it is reported with its error, its peer (blocked in an
  all_reduce with the dead rank) ends or is reaped, and no rank process survives the test.
* One rank never joins the collective: the other's all_reduce ends with the backend's timeout error
  at the group's timeout (``--pg-timeout``), not at the test's limit; the hung rank is killed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _support.multiproc import group_backend, group_requirement, pid_alive, run_ranks
from _support.requires import requires

PROGRAM = Path(__file__).with_name("rank_program.py")
PG_TIMEOUT_S = 3.0
GRACE_S = 3.0
DEADLINE_S = 60.0
TIMEOUT_WORDS = re.compile(r"time(d)? ?out", re.IGNORECASE)

pytestmark = [requires(group_requirement(2)), pytest.mark.timeout(120)]


def _assert_reaped(run) -> None:
    for rank in run.ranks:
        assert rank.returncode is not None, f"rank {rank.rank} was never waited for"
        assert not pid_alive(rank.pid), f"rank {rank.rank} (pid {rank.pid}) outlived the test"


@pytest.mark.host  # the launcher's reaping; the backend only has to notice the dead peer or be killed
def test_failed_rank_is_reported_and_peers_reaped(tmp_path: Path) -> None:
    run = run_ranks(
        PROGRAM, "fail", world=2, backend=group_backend(), workdir=tmp_path, deadline_s=DEADLINE_S, grace_s=GRACE_S
    )
    _assert_reaped(run)
    failed = run.ranks[-1]
    assert failed.returncode == 1 and not failed.killed, run.describe()
    assert failed.result and "deliberate failure on rank 1" in failed.result["error"], run.describe()
    assert not run.timed_out and run.elapsed_s < DEADLINE_S, run.describe()


def test_hung_peer_ends_at_the_group_timeout(tmp_path: Path) -> None:
    run = run_ranks(
        PROGRAM,
        "hang",
        world=2,
        backend=group_backend(),
        workdir=tmp_path,
        deadline_s=DEADLINE_S,
        grace_s=GRACE_S,
        args=["--pg-timeout", str(PG_TIMEOUT_S)],
    )
    _assert_reaped(run)
    waiting, hung = run.ranks
    assert hung.killed, f"the hung rank was not ended by the launcher\n{run.describe()}"
    assert not waiting.killed, f"the waiting rank's collective never timed out\n{run.describe()}"
    said = (waiting.result or {}).get("all_reduce", {}).get("error", "") + waiting.output
    assert TIMEOUT_WORDS.search(said), f"no timeout error from the waiting rank\n{run.describe()}"
    if waiting.result and "elapsed_s" in waiting.result:
        assert PG_TIMEOUT_S * 0.9 <= waiting.result["elapsed_s"] < PG_TIMEOUT_S + 30, run.describe()
    assert run.elapsed_s < DEADLINE_S, run.describe()
