"""`harness collect`: wait for a workflow run's cells as they arrive (GitHub's artifacts API), up to a
deadline for cells no runner has picked up, and take in cells that earlier runs published as NO DATA
and that arrived since. Writes the plan with a reason for every cell that sent nothing, for
`harness merge --expect`. With `--submissions LIST`, also the signed cells that list names (folders,
archives, https URLs of release assets, oci:// registries; docs/contributing-a-column.md), each
checked and unpacked safely into `--dest`; a source that fails is one line and exit 4, the others
taken. Submission archives found in the run's artifacts are unpacked the same way."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness import outputs
from harness.errors import HarnessError, InputError, UsageError
from harness.github.artifacts import collect, late_candidates, late_cells, parse_duration, say_duration
from harness.github.client import GitHub
from harness.plan import plan_json, read_plan

if TYPE_CHECKING:
    from harness.provenance.submission_sources import Source

HELP = "collect a workflow run's cells from its artifacts, with a deadline for cells no runner picked up"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan", type=Path, help="the plan (`harness plan --format github|json`)")
    parser.add_argument("--dest", type=Path, default=Path("cells"), help="where the cells go (default: cells/)")
    parser.add_argument("--expect-out", type=Path, help="the plan with why each missing cell is missing (with --plan)")
    parser.add_argument(
        "--submissions",
        type=Path,
        metavar="LIST",
        help="a file listing submitted cells to take in (folders, archives, https URLs, oci:// references)",
    )
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
    if args.plan is None and args.submissions is None:
        raise UsageError("nothing to collect: give --plan (a workflow run's cells) and/or --submissions LIST")
    if args.plan is not None and args.expect_out is None:
        raise UsageError("--plan needs --expect-out (the plan with why each missing cell is missing)")
    sources = None
    if args.submissions is not None:
        from harness.provenance.submission_sources import read_sources

        sources = read_sources(args.submissions)  # a bad list is refused before anything is fetched
    if args.plan is not None:
        _collect_run(args)
    refused = _take_submissions(args.dest, sources or [])
    if refused:
        raise InputError(f"{refused} submission(s) refused; the others were taken into {args.dest}")
    return 0


def _take_submissions(dest: Path, sources: list[Source]) -> int:
    """Unpack the archives the sources hold, and any the run's artifacts brought, into `dest`; the
    number refused (each said in one line)."""
    import shutil

    from harness.provenance.submission import SUFFIX, unpack
    from harness.provenance.submission_sources import fetch

    outputs.make_dirs(dest)
    outputs.sweep(dest)
    downloads = dest / ".submissions"  # hidden: never read as a cell; removed when done
    archives: list[tuple[str, Path]] = []
    refused = 0
    for source in sources:
        try:
            archives += [(str(source), path) for path in fetch(source, downloads)]
        except HarnessError as err:
            print(f"harness: error: {source}: {err}", file=sys.stderr)
            refused += 1
    # archives a run's artifacts brought: unpacked, then removed (the merge would take them twice)
    brought = [p for p in sorted(dest.rglob(f"*{SUFFIX}")) if downloads not in p.parents]
    archives += [(str(p), p) for p in brought]
    for where, archive in archives:
        try:
            cell = unpack(archive, dest)
            _say(f"took {cell.name} from {where}")
            if archive in brought:
                outputs.remove(archive)
        except HarnessError as err:
            print(f"harness: error: {err}", file=sys.stderr)
            refused += 1
    shutil.rmtree(downloads, ignore_errors=True)
    return refused


def _collect_run(args: argparse.Namespace) -> None:
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


def _env_run_id() -> int:
    text = os.environ.get("GITHUB_RUN_ID", "")
    if not text.isdigit():
        raise UsageError("no workflow run: pass --run-id or run inside GitHub Actions ($GITHUB_RUN_ID)")
    return int(text)
