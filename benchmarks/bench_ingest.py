"""Benchmark: memory and time of JUnit ingestion, measured side by side in one run.

    python benchmarks/bench_ingest.py [--big-mb 500] [--small-mb 50] [--keep]

Writes JUnit files dominated by one <system-out> (the shape of a chatty GPU test log), then
reads each in a fresh child process and reports that child's peak RSS (its own
RUSAGE_SELF) and wall time:
- the harness's streaming reader (`harness.ingest.ingest_cell`) on the small and the big file;
- a naive `junitparser.JUnitXml.fromfile` (whole tree in memory) on the small file only.
The ratios printed at the end are the point: streaming memory must not grow with the file.
This is a measurement, not a test; tests/faults/test_big_inputs.py holds the assertion.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

STREAMING = """
import resource, sys
from pathlib import Path
from harness.ingest import ingest_cell
cell = ingest_cell(Path(sys.argv[1]))
print(len(cell.records), "records")
print("peak_rss_kb=%d" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

NAIVE = """
import resource, sys
import junitparser
xml = junitparser.JUnitXml.fromfile(sys.argv[1] + "/junit.xml")
print(sum(1 for suite in xml for _ in suite), "records")
print("peak_rss_kb=%d" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

BASELINE = """
import resource
import harness.ingest, junitparser
print("peak_rss_kb=%d" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def write_cell(root: Path, name: str, megabytes: int) -> Path:
    cell = root / name
    cell.mkdir()
    manifest = {"cell_id": name, "backend": "cpu", "run_id": f"bench-{name}", "status": "completed"}
    (cell / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    line = "step {:>9}: loss=0.12345 grad_norm=3.21 &amp; lr &lt;1e-3&gt; lorem ipsum dolor sit amet\n"
    block = "".join(line.format(i) for i in range(4096)).encode()
    with (cell / "junit.xml").open("wb") as handle:
        handle.write(b'<?xml version="1.0"?><testsuites><testsuite name="pytest">')
        handle.write(b'<testcase classname="alpha.test_x" name="test_chatty" time="1.0"><system-out>')
        while handle.tell() < megabytes << 20:
            handle.write(block)
        handle.write(b"</system-out></testcase>")
        handle.write(b'<testcase classname="alpha.test_x" name="test_failing" time="0.1">')
        handle.write(b'<failure message="AssertionError: boom">trace</failure></testcase>')
        handle.write(b"</testsuite></testsuites>")
    return cell


def measure(program: str, *args: str) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, what it printed) of one child process."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"bench child failed: {done.stderr.strip().splitlines()[-1:]}")
    lines = done.stdout.strip().splitlines()
    return int(lines[-1].split("=", 1)[1]) / 1024, seconds, lines[0] if len(lines) > 1 else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small-mb", type=int, default=50)
    parser.add_argument("--big-mb", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        small = write_cell(root, "small", args.small_mb)
        big = write_cell(root, "big", args.big_mb)
        base_mb, _, _ = measure(BASELINE)
        rows = [
            ("interpreter + harness imported", "-", base_mb, 0.0, ""),
            ("streaming ingest_cell", f"{args.small_mb} MB", *measure(STREAMING, str(small))),
            ("streaming ingest_cell", f"{args.big_mb} MB", *measure(STREAMING, str(big))),
            ("naive JUnitXml.fromfile", f"{args.small_mb} MB", *measure(NAIVE, str(small))),
        ]
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{'reader':<32} {'file':>8} {'peak RSS':>10} {'time':>8}  result")
    for name, size, peak, seconds, result in rows:
        print(f"{name:<32} {size:>8} {peak:>8.0f} MB {seconds:>6.1f} s  {result}")
    s_small, s_big, naive = rows[1][2], rows[2][2], rows[3][2]
    print()
    print(f"streaming, {args.big_mb} MB vs {args.small_mb} MB file: peak RSS x{s_big / s_small:.2f} ", end="")
    print(f"for a file x{args.big_mb / args.small_mb:.0f} larger ", end="")
    print(f"(reading added {s_small - base_mb:+.0f} MB and {s_big - base_mb:+.0f} MB over the bare interpreter)")
    print(f"streaming time per GB: {rows[2][3] / (args.big_mb / 1024):.1f} s")
    print(f"naive vs streaming on the {args.small_mb} MB file: peak RSS x{naive / s_small:.1f}", end="")
    print(f" ({naive:.0f} MB vs {s_small:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
