"""`harness collect`: wait for a workflow run's cells as they arrive (GitHub's artifacts API), up to a
deadline for cells no runner has picked up, and take in cells that earlier runs published as NO DATA
and that arrived since. Writes the plan with a reason for every cell that sent nothing, for
`harness merge --expect`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from harness import outputs
from harness.errors import UsageError
from harness.github.artifacts import collect, late_candidates, late_cells, parse_duration, say_duration
from harness.github.client import GitHub
from harness.plan import plan_json, read_plan

HELP = "collect a workflow run's cells from its artifacts, with a deadline for cells no runner picked up"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan", type=Path, required=True, help="the plan (`harness plan --format github|json`)")
    parser.add_argument("--dest", type=Path, default=Path("cells"), help="where the cells go (default: cells/)")
    parser.add_argument("--expect-out", type=Path, required=True, help="the plan with why each missing cell is missing")
    parser.add_argument("--deadline", default="3h", help="publish a cell no runner started within this as NO DATA")
    parser.add_argument("--cell-timeout", default="150m", help="give up on a started cell after this (default 150m)")
    parser.add_argument(
        "--poll",
        default=os.environ.get("HARNESS_COLLECT_POLL") or "60s",
        help="how often to look (default 60s, or $HARNESS_COLLECT_POLL)",
    )
    parser.add_argument("--run-id", type=int, default=None, help="the workflow run (default: $GITHUB_RUN_ID)")
    parser.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY", ""), help="OWNER/NAME")
    parser.add_argument(
        "--late-from",
        type=Path,
        help="the history folder: cells its last runs published as NO DATA are looked for in those runs",
    )
    parser.add_argument("--late-runs", type=int, default=5, help="how many earlier runs to look back (default 5)")


def _say(line: str) -> None:
    print(f"collect: {line}", flush=True)


def run(args: argparse.Namespace) -> int:
    if args.late_runs < 1:  # every value checked before the plan is read or GitHub asked
        raise UsageError(f"--late-runs must be at least 1, not {args.late_runs}")
    run_id = args.run_id if args.run_id is not None else _env_run_id()
    deadline, cell_timeout, poll = (parse_duration(x) for x in (args.deadline, args.cell_timeout, args.poll))
    plan = read_plan(args.plan)
    planned = [cell.cell_id for cell in plan]
    api = GitHub(args.repo)
    outputs.make_dirs(args.dest)
    outputs.sweep(args.dest)  # artifacts half unpacked by a killed collect
    found = collect(
        api,
        run_id,
        planned,
        args.dest,
        deadline=deadline,
        deadline_text=say_duration(args.deadline),
        cell_timeout=cell_timeout,
        poll=poll,
        say=_say,
    )
    if args.late_from is not None:
        from harness.publish.history import load_history

        runs = load_history(args.late_from, limit=args.late_runs)
        summaries = [(r.run, [(c.id, c.has_data) for c in r.columns]) for r in runs]
        found.late = late_cells(api, late_candidates(summaries, run_id), args.dest, say=_say)
    expected = [dataclasses.replace(cell, missing=found.missing.get(cell.cell_id, "")) for cell in plan]
    outputs.write_file(args.expect_out, plan_json(expected, indent=1) + "\n")
    late = f", {len(found.late)} late from earlier runs" if found.late else ""
    print(
        f"collect: {len(found.arrived)} of {len(planned)} planned cell(s) arrived, {len(found.missing)} missing{late}",
        file=sys.stderr,
    )
    return 0


def _env_run_id() -> int:
    text = os.environ.get("GITHUB_RUN_ID", "")
    if not text.isdigit():
        raise UsageError("no workflow run: pass --run-id or run inside GitHub Actions ($GITHUB_RUN_ID)")
    return int(text)
