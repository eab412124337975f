"""Benchmark: a year of nightly publications in the per-test history, side by side in the format
before (history-results/1: every code, every run) and now (history-results/2: what changed since the
run before, a keyframe every KEYFRAME_EVERY runs).

    python benchmarks/bench_history.py [--cells 20] [--tests 50000] [--runs 365]
                                       [--outcome-change 0.02] [--duration-change 0.02] [--seed 29]

Input: `--runs` publications of `--cells` columns x `--tests` tests (cellgen's test ids; the first
run's outcomes follow cellgen's mix, durations on the whole scale), each run changing the outcome of
`--outcome-change` of the results and the duration code of `--duration-change` of them (a duration
code is a 25 % step: a test whose time wanders by more than that changes code). Each run is written
by harness/publish/history.py's own writer (`append_codes`, what `harness publish` calls after
coding the matrix), into one history per format. Then, per format:
- the history's size on disk (its per-test files and id lists; the summaries are the same in both);
- `harness history TEST --runs N` over every run (a child process, as a user runs it; best of 3),
  for a test that changed often;
- what `harness publish` reads for the page: the last 30 runs' per-test results (best of 3).
Targets (issue 29): a year of nightlies of 1M results in a few hundred MB; `harness history` over
365 runs under 2 s. The exit code is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import cellgen  # noqa: E402

from harness.model import ColumnState  # noqa: E402
from harness.outcomes import Rollup  # noqa: E402
from harness.publish.history import (  # noqa: E402
    DURATION_ALPHABET,
    KEYFRAME_EVERY,
    RESULTS_SCHEMA,
    RESULTS_SCHEMA_V1,
    ColumnSummary,
    RunSummary,
    append_codes,
    load_history,
    load_results,
)

HISTORY_S = 2.0
SIZE_MB_PER_M = 400.0  # "a few hundred MB" for a year of 1M results
PAGE_WINDOW = 30
OUTCOMES = "p" * 90 + "s" * 5 + "f" * 3 + "x" + "e"
# Per column per run, the summary's feature states (suites/features.toml holds 28 today): what
# `harness history` parses in every summary besides the per-test results.
FEATURES = {f"feature_{k:02d}": list(Rollup)[k % len(Rollup)] for k in range(40)}


def summary(run: int, columns: list[str]) -> RunSummary:
    day = f"2026-{1 + run // 31 % 12:02d}-{1 + run % 31:02d}T03:00:00Z"
    build = f"2.16.0.dev2026{1 + run // 31 % 12:02d}{1 + run % 31:02d}"
    return RunSummary(
        generated_at=day,
        run=f"night{run:04d}",
        columns=tuple(
            ColumnSummary(
                id=c,
                backend=c.split("-")[0],
                display_name=c,
                state=ColumnState.OK,
                counts={},
                score=None,
                torch=build,
                suite_sha=None,
                started_at=day,
                features=FEATURES,
            )
            for c in columns
        ),
    )


def simulate(args: argparse.Namespace, folders: dict[str, Path]) -> tuple[str, dict[str, float]]:
    """Write the runs into each folder; (a test that changed often, seconds spent writing per format)."""
    rng = random.Random(args.seed)
    ids = [nodeid for nodeid, *_ in cellgen.test_ids(args.tests)]
    columns = [f"{cellgen.BACKENDS[i % len(cellgen.BACKENDS)]}-{i:02d}" for i in range(args.cells)]
    outcomes = {c: bytearray("".join(rng.choices(OUTCOMES, k=len(ids))), "ascii") for c in columns}
    durations = {c: bytearray("".join(rng.choices(DURATION_ALPHABET[1:40], k=len(ids))), "ascii") for c in columns}
    hot = ids[rng.randrange(len(ids))]
    hot_index = ids.index(hot)
    writing = dict.fromkeys(folders, 0.0)
    for run in range(args.runs):
        if run:
            for c in columns:
                for i in rng.sample(range(len(ids)), int(len(ids) * args.outcome_change)):
                    outcomes[c][i] = ord(rng.choice(OUTCOMES))
                for i in rng.sample(range(len(ids)), int(len(ids) * args.duration_change)):
                    durations[c][i] = ord(rng.choice(DURATION_ALPHABET[1:40]))
                outcomes[c][hot_index] = ord("pf"[run % 2])  # the test asked about flips every run
        o = {c: v.decode() for c, v in outcomes.items()}
        d = {c: v.decode() for c, v in durations.items()}
        for schema, folder in folders.items():
            started = time.perf_counter()
            append_codes(folder, summary(run, columns), ids, o, d, results_schema=schema)
            writing[schema] += time.perf_counter() - started
        if (run + 1) % 50 == 0 or run + 1 == args.runs:
            print(f"  {run + 1}/{args.runs} runs written", flush=True)
    return hot, writing


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in (folder / "tests").iterdir() if p.is_file()) / (1 << 20)


def history_seconds(folder: Path, test: str, runs: int) -> float:
    argv = [sys.executable, "-m", "harness", "history", test, "--history", str(folder), "--runs", str(runs)]
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - started)
        if done.returncode != 0:
            raise RuntimeError(f"harness history failed: {done.stderr.strip()[-300:]}")
    return best


def window_seconds(folder: Path) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        load_results(folder, load_history(folder, limit=PAGE_WINDOW))
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=20, help="columns per run")
    parser.add_argument("--tests", type=int, default=50_000, help="tests per column")
    parser.add_argument("--runs", type=int, default=365, help="nightly publications")
    parser.add_argument("--outcome-change", type=float, default=0.02, help="share of outcomes changed per run")
    parser.add_argument("--duration-change", type=float, default=0.02, help="share of duration codes changed per run")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    results = args.cells * args.tests
    print(
        f"{args.runs} runs of {args.cells} x {args.tests} tests ({results:,} results each); per run "
        f"{args.outcome_change:.1%} of outcomes and {args.duration_change:.1%} of durations change; "
        f"a keyframe every {KEYFRAME_EVERY} runs",
        flush=True,
    )
    root = Path(tempfile.mkdtemp(prefix="bench-history-"))
    try:
        folders = {RESULTS_SCHEMA_V1: root / "v1", RESULTS_SCHEMA: root / "v2"}
        hot, writing = simulate(args, folders)
        rows = {}
        for schema, folder in folders.items():
            rows[schema] = (
                size_mb(folder),
                writing[schema] / args.runs,
                history_seconds(folder, hot, args.runs),
                window_seconds(folder),
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    before, now = rows[RESULTS_SCHEMA_V1], rows[RESULTS_SCHEMA]
    print(f"\n{'':<44} {'before (' + RESULTS_SCHEMA_V1 + ')':>28} {'now (' + RESULTS_SCHEMA + ')':>28} {'ratio':>7}")
    names = (
        "per-test history on disk (MB)",
        "writing one run (s)",
        f"harness history TEST --runs {args.runs} (s)",
        f"the page's last {PAGE_WINDOW} runs read (s)",
    )
    for k, name in enumerate(names):
        ratio = now[k] / before[k] if before[k] else float("nan")
        print(f"{name:<44} {before[k]:>28.2f} {now[k]:>28.2f} {ratio:>6.2f}x")
    failures = []
    per_year = now[0] * (365 / args.runs) * (1_000_000 / results)
    print(f"\nnow, scaled to a year of 1M-result nightlies: about {per_year:.0f} MB (target <= {SIZE_MB_PER_M:g})")
    if per_year > SIZE_MB_PER_M:
        failures.append(f"a year of 1M results would take {per_year:.0f} MB")
    if now[2] > HISTORY_S:
        failures.append(f"harness history took {now[2]:.2f} s (limit {HISTORY_S:g})")
    print("targets: " + ("all met" if not failures else "MISSED: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
