"""Benchmark: the merge of imported JUnit (`harness import`, then `harness merge`), measured side
by side with an lxml iterparse of the same files in one run (only ratios mean anything here).

    python benchmarks/bench_import.py [--cells 5] [--tests 50000] [--repeat 3] [--data DIR]

Input: the JUnit files of benchmarks/cellgen.py's cells (pytest xunit1, 90% pass, skips,
failures with tracebacks, 1% of tests with ~340 KB of captured output: about 1 GB for 5 x 50,000),
each imported as a bare report with `harness import` (no event log, no plan), so the merge reads
the XML: unlike the project's own cells, whose complete event log decides and whose JUnit is only
checked for an intact ending. Each step runs in a fresh child process: its wall time is the best
of --repeat, its peak memory the largest total RSS of the child and every process it started.

Targets (issue 20): the merge of the imported cells >= 0.6x the speed of an lxml iterparse that
only counts cases and their result element; peak RSS <= 300 MB; and its counts exact: every
testcase is one test, and the tests that did not pass are the result elements lxml counted.
"""

from __future__ import annotations

import argparse
import compileall
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import cellgen  # noqa: E402
from bench_merge import LXML, Step, _ratio, has_lxml, is_current, mark_current, measure  # noqa: E402

# What the merge counted, read from its matrix.json (printed as one line for the counts check).
COUNTS = """
import json, sys
from collections import Counter
matrix = json.load(open(sys.argv[1]))
tally = Counter()
for column in matrix["columns"]:
    tally.update(column["counts"])
total = sum(tally.values())
print(total, "cases", total - tally.get("passed", 0), "results")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=5)
    parser.add_argument("--tests", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, help="keep the generated files here and reuse them next time")
    args = parser.parse_args()
    root = args.data or Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        return _bench(root, args)
    finally:
        if args.data is None:
            shutil.rmtree(root, ignore_errors=True)


def _imported_cells(root: Path, junits: list[Path]) -> list[Path]:
    """One imported cell per JUnit file (made once per data dir; the import is not what is timed)."""
    results = root / f"imported-{len(junits)}"
    if not is_current(results):
        shutil.rmtree(results, ignore_errors=True)
        for junit in junits:
            backend = junit.parent.name.removesuffix("-bench")
            backend = {"rocm": "rocm7.2"}.get(backend, backend)
            argv = [sys.executable, "-m", "harness", "import", str(junit), "--backend", backend]
            argv += ["--cell-id", f"{backend}-imported", "--torch", "2.13.0", "--results-dir", str(results)]
            subprocess.run(argv, cwd=REPO, check=True, capture_output=True)
        mark_current(results)
    return sorted(p for p in results.iterdir() if p.is_dir() and not p.name.startswith("."))


def _bench(root: Path, args: argparse.Namespace) -> int:
    py = sys.executable
    compileall.compile_dir(REPO / "harness", quiet=1)  # as `pip install` leaves it
    cells_dir = root / f"cells-{args.cells}x{args.tests}"
    if not is_current(cells_dir):
        print(f"writing {args.cells} cells x {args.tests} tests to {cells_dir} ...", flush=True)
        shutil.rmtree(cells_dir, ignore_errors=True)
        cellgen.write_cells(cells_dir, args.cells, args.tests)
        mark_current(cells_dir)
    junits = [c / "junit.xml" for c in sorted(p for p in cells_dir.iterdir() if p.is_dir())]
    junit_mb = sum(j.stat().st_size for j in junits) / (1 << 20)
    imported = _imported_cells(root, junits)
    out = root / "out"
    out.mkdir(exist_ok=True)
    matrix = out / "matrix.json"

    lxml = Step("lxml iterparse (cases + result element)")
    merge = Step("harness merge of the imported cells")
    merge1 = Step("harness merge --jobs 1 (one process)")
    if not has_lxml():
        lxml.note = "lxml is not installed: pip install -e '.[bench]'"
    for round_ in range(args.repeat):
        print(f"round {round_ + 1}/{args.repeat} ...", flush=True)
        if not lxml.note.startswith("lxml is not"):
            measure(lxml, [py, "-c", LXML, *map(str, junits)])
        measure(merge, [py, "-m", "harness", "merge", *map(str, imported), "-o", str(matrix)])
        measure(merge1, [py, "-m", "harness", "merge", *map(str, imported), "-o", str(out / "one.json"), "--jobs", "1"])
    counted = subprocess.run([py, "-c", COUNTS, str(matrix)], capture_output=True, text=True, check=False)
    ours = counted.stdout.strip()

    print()
    print(f"input: {len(junits)} imported reports x {args.tests} testcases, {junit_mb:.0f} MB of JUnit")
    print(f"{'step':<44} {'time':>8} {'peak RSS':>10}  (best of {args.repeat}; RSS of the whole process tree)")
    for step in (lxml, merge, merge1):
        print(step.text())
    print(f"{'counts of the merge (matrix.json)':<44} {'':>8} {'':>10}  {ours}")
    return _verdict(lxml, merge, merge1, ours)


def _verdict(lxml: Step, merge: Step, merge1: Step, ours: str) -> int:
    checks: list[tuple[str, bool | None]] = []
    ratio = _ratio(lxml, merge)
    one = _ratio(lxml, merge1)
    print(f"  (one process: {one:.2f}x of lxml)" if one else "  (one process: failed)")
    if lxml.seconds < float("inf"):
        text = f"{ratio:.2f}x" if ratio else "a step failed"
        checks.append((f"import merge throughput vs lxml iterparse: {text} (target >= 0.6x)", (ratio or 0) >= 0.6))
        checks.append((f"counts: lxml '{lxml.note}', merge '{ours}' (target: equal)", lxml.note == ours))
    else:
        checks.append(("import merge throughput vs lxml iterparse: not measured (no lxml)", None))
    ok = 0 < merge.peak_mb <= 300
    checks.append((f"import merge peak RSS: {merge.peak_mb:.0f} MB (target <= 300 MB)", ok))
    print()
    missed = 0
    for text, passed in checks:
        mark = "n/a " if passed is None else "PASS" if passed else "MISS"
        missed += passed is False
        print(f"{mark} {text}")
    print(
        json.dumps(
            {
                "ratio_vs_lxml": round(ratio, 3) if ratio else None,
                "one_process": round(one, 3) if one else None,
                "peak_rss_mb": round(merge.peak_mb),
            }
        )
    )
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
