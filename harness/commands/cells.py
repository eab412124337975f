"""`harness cells [list | forget ID... | prune]`: the runs a results dir holds, and dropping them.

`harness cells` lists every run under the results dir (id, run, when, state, backend, torch, size,
and whether a column is built from it or it is superseded). `forget ID...` moves whole runs (a run
dir's name, a run id, or a cell id for all its runs) into the results dir's trash; `prune` empties
the trash and drops superseded runs: every NO DATA attempt, and all but `--keep N` older runs per
cell id (a complete run and the partial runs laid over it count as one). The runs a column is built
from are never pruned. Whatever they move, they merge the results dir's matrix.json again (or say
how, when it has none). See harness/merge/inventory.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands._remerge import merge_command, remerge, results_option
from harness.errors import UsageError
from harness.merge import inventory
from harness.text_table import aligned

HELP = "list the runs in a results dir; forget runs or prune superseded ones (NO DATA attempts first)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", nargs="?", default="list", choices=("list", "forget", "prune"), help="what to do (default: list)"
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="forget: run dir names, run ids or cell ids")
    parser.add_argument(
        "--results-dir", type=Path, default=Path("results"), help="the results dir (default: ./results)"
    )
    parser.add_argument(
        "--keep",
        type=int,
        default=1,
        metavar="N",
        help="prune: superseded runs with results to keep per cell id, newest first (default 1; NO DATA ones go)",
    )
    parser.add_argument("--dry-run", action="store_true", help="prune: say what would go, remove nothing")


def _table(runs: list[inventory.CellRun]) -> list[str]:
    rows = [("CELL ID", "RUN", "WHEN", "STATE", "BACKEND", "TORCH", "SIZE", "USE")]
    for run in runs:
        m = run.manifest
        rows.append(
            (
                run.cell_id,
                m.run_id,
                m.started_at or "?",
                run.state,
                m.backend,
                m.torch or "?",
                inventory.human_size(run.size),
                run.role,
            )
        )
    return aligned(rows)


def run(args: argparse.Namespace) -> int:
    results = args.results_dir
    if args.action != "forget" and args.ids:
        raise UsageError(f"`harness cells {args.action}` takes no ids", hint="harness cells forget ID...")
    if args.action == "list":
        runs = inventory.list_runs(results)
        if not runs:
            print(f"no runs in {results}")
            return 0
        print("\n".join(_table(runs)))
        stale = [r for r in runs if r.no_data and r.superseded]
        if stale:
            print(f"{len(stale)} superseded NO DATA run(s): `harness cells prune{results_option(results)}` drops them")
        return 0
    where = results_option(results)
    if args.action == "forget":
        if not args.ids:
            raise UsageError("`harness cells forget` needs the ids of the runs or cells to forget")
        gone = inventory.forget(results, args.ids)
        for item in gone:
            print(f"forgot {item.name} ({item.cell_id}, run {item.manifest.run_id}, {item.state})")
        print(f"moved {len(gone)} run(s) to {results / inventory.TRASH}; `harness cells prune{where}` empties it")
        print(_merged_again(results))
        return 0
    report = inventory.prune(results, args.keep, dry_run=args.dry_run)
    verb = "would drop" if args.dry_run else "dropped"
    for item in report.dropped:
        print(f"{verb} {item.name} ({item.cell_id}, {item.state}, {item.role})")
    trash = f"; emptied the trash ({report.trash_emptied} run(s) forgotten earlier)" if report.trash_emptied else ""
    print(f"{verb} {len(report.dropped)} run(s){trash}; {inventory.human_size(report.freed)} freed")
    if report.dropped and not args.dry_run:
        print(_merged_again(results))
    return 0


def _merged_again(results: Path) -> str:
    """The results dir's matrix follows its runs: merged again where `harness run` keeps one, else
    the command that makes it. Dropping only superseded runs changes no column, but the merge's notes
    about them go too."""
    if not (results / "matrix.json").is_file():
        return f"next: {merge_command(results)}   (the matrix of the runs left)"
    matrix = remerge(results)
    held = ", ".join(c.id for c in matrix.columns) or "none"
    return f"merged again: {results / 'matrix.json'} ({len(matrix.columns)} column(s): {held})"
