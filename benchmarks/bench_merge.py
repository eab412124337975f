"""Benchmark: time and memory of `harness merge` and `harness report --format html`, measured
side by side with the limits in one run (this machine is noisy; only ratios mean anything).

    python benchmarks/bench_merge.py [--cells 5] [--tests 50000] [--repeat 3] [--data DIR] [--giant-mb 500]

Input (benchmarks/cellgen.py): 5 cells x 50,000 tests with every file `harness run` writes
(manifest, xunit1 JUnit with properties, events.jsonl interleaved from two xdist workers,
collected.json): 90% pass, 5% skips with a reason class, 3% failures with ~2 KB tracebacks,
xfails, setup errors, 1% of tests with ~340 KB of captured output (about 1 GB of JUnit).

Each step runs in a fresh child process; its wall time is the best of --repeat, and its peak
memory is the largest total RSS of the child and every process it started (sampled), so the
merge's worker processes count. Steps:
- lxml iterparse of the same JUnit files, counting testcases and their result element (the
  limit a streaming merge can approach; skipped, with a note, when lxml is not installed);
- expat (stdlib) parsing the same files with no handlers (the raw cost of the parser we use);
- a naive merge: junitparser's JUnitXml.fromfile per file, tallying outcomes per classname;
- `harness merge` of the 5 cells, and `harness report --format html` of its matrix.json;
- memory against bytes: the merge again after doubling every captured output, and one cell
  whose single <system-out> is --giant-mb MB against the same cell at a tenth of that.
Targets (issue 9) are checked at the end; the exit code is 1 when one is missed.

`--against TREE` also times another source tree of the harness (say the commit before a refactor:
`git worktree add /tmp/before <rev>`) on the same cells in the same rounds, interleaved, prints
the after/before ratios of the merge and the page, and says whether both wrote the same matrix.json
byte for byte (generated_at and harness_version aside); it exits 1 when either is slower by more
than the noise allowance (--slower, default 10%) or the matrices differ.

`--scales 20x50000,100x50000` measures only the merge, at each scale (CELLSxTESTS: cells, each its
own column, of TESTS tests each; 20x50000 is 1M results, 100x50000 5M) on lean cells (cellgen's,
without the large captured outputs: bench_site.py's input), and prints per scale the merge's time,
its time per result and its peak RSS, with --against the other tree's side by side, their ratio, and
whether both wrote the same matrix.json. Targets (issue 29): the peak within --peak-mb (400) at
every scale, and with --against no slower per result than the other tree (within --slower).

    python benchmarks/bench_merge.py --scales 20x50000,100x50000 --against /tmp/before --repeat 2
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import cellgen  # noqa: E402

LXML = """
import sys
from lxml import etree
cases = results = 0
for path in sys.argv[1:]:
    for _, el in etree.iterparse(path, events=("end",), tag="testcase", huge_tree=True):
        cases += 1
        results += sum(1 for child in el if child.tag in ("failure", "error", "skipped"))
        el.clear()
        while el.getprevious() is not None:
            del el.getparent()[0]
print(cases, "cases", results, "results")
"""

EXPAT = """
import sys
from xml.parsers import expat
for path in sys.argv[1:]:
    parser = expat.ParserCreate()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            parser.Parse(chunk, False)
    parser.Parse(b"", True)
print("parsed")
"""

NAIVE = """
import sys
from collections import Counter
import junitparser
tally = Counter()
for path in sys.argv[1:]:
    for suite in junitparser.JUnitXml.fromfile(path):
        for case in suite:
            kind = case.result[0]._tag if case.result else "passed"
            tally[(case.classname, kind)] += 1
print(sum(tally.values()), "cases")
"""


@dataclass
class Step:
    name: str
    seconds: float = float("inf")
    peak_mb: float = 0.0
    note: str = ""

    def text(self) -> str:
        if self.note and self.seconds == float("inf"):
            return f"{self.name:<44} {'-':>8} {'-':>10}  {self.note}"
        return f"{self.name:<44} {self.seconds:>7.2f}s {self.peak_mb:>7.0f} MB  {self.note}"


def _tree_rss_kb(root: int) -> int:
    """Total RSS of `root` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, ()))
        try:
            with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


def run_child(argv: list[str], tree: Path = REPO) -> tuple[float, float, str]:
    """(seconds, peak total RSS in MB, last line printed) of one child process tree, importing the
    harness from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kb(proc.pid))
        time.sleep(0.05)
    seconds = time.monotonic() - started
    out, err = proc.communicate()
    if proc.returncode != 0:
        tail = (err or out).decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(tail[0][:200])
    lines = out.decode(errors="replace").strip().splitlines() or err.decode(errors="replace").strip().splitlines()
    return seconds, peak / 1024, lines[-1] if lines else ""


def measure(step: Step, argv: list[str], tree: Path = REPO) -> None:
    try:
        seconds, peak, last = run_child(argv, tree)
    except RuntimeError as err:
        step.note = f"failed: {err}"
        return
    step.seconds = min(step.seconds, seconds)
    step.peak_mb = max(step.peak_mb, peak)
    step.note = step.note or last


def has_lxml() -> bool:
    return subprocess.run([sys.executable, "-c", "import lxml"], capture_output=True, check=False).returncode == 0


def giant_cell(root: Path, name: str, megabytes: int) -> Path:
    """A cell whose JUnit is one huge <system-out> (a chatty GPU log) plus one failing test."""
    cell = root / name
    cell.mkdir(parents=True, exist_ok=True)
    (cell / "manifest.json").write_text(
        f'{{"cell_id": "{name}", "backend": "cpu", "run_id": "bench-{name}", "status": "completed"}}',
        encoding="utf-8",
    )
    line = "step {:>9}: loss=0.12345 grad_norm=3.21 &amp; lr &lt;1e-3&gt; lorem ipsum dolor sit amet\n"
    block = "".join(line.format(i) for i in range(4096)).encode()
    with (cell / "junit.xml").open("wb") as handle:
        handle.write(b'<?xml version="1.0"?><testsuites><testsuite name="pytest">')
        handle.write(b'<testcase classname="alpha.test_x" name="test_failing" time="0.1">')
        handle.write(b'<failure message="AssertionError: boom">trace</failure><system-out>')
        while handle.tell() < megabytes << 20:
            handle.write(block)
        handle.write(b"</system-out></testcase></testsuite></testsuites>")
    return cell


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=5)
    parser.add_argument("--tests", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--giant-mb", type=int, default=500)
    parser.add_argument("--data", type=Path, help="keep the generated cells here and reuse them next time")
    parser.add_argument("--against", type=Path, metavar="TREE", help="another source tree of the harness to compare")
    parser.add_argument("--slower", type=float, default=0.10, help="--against: the noise allowed (0.10 = 10%%)")
    parser.add_argument("--scales", type=parse_scales, help="only the merge, at each CELLSxTESTS scale (lean cells)")
    parser.add_argument("--peak-mb", type=float, default=SCALE_PEAK_MB, help="--scales: the merge's peak allowed")
    args = parser.parse_args()
    if args.against is not None and not (args.against / "harness" / "__init__.py").is_file():
        parser.error(f"--against {args.against}: no harness/ package there")
    root = args.data or Path(tempfile.mkdtemp(prefix="bench-merge-"))
    try:
        return _bench_scales(root, args) if args.scales else _bench(root, args)
    finally:
        if args.data is None:
            shutil.rmtree(root, ignore_errors=True)


def is_current(cells_dir: Path) -> bool:
    """Cells kept in --data are reused only if the generator still writes the same files."""
    marker = cells_dir / ".complete"
    return marker.exists() and marker.read_text().strip() == cellgen.FORMAT


def mark_current(cells_dir: Path) -> None:
    (cells_dir / ".complete").write_text(cellgen.FORMAT + "\n")


def _bench(root: Path, args: argparse.Namespace) -> int:
    py = sys.executable
    # The harness's bytecode, as `pip install` leaves it (junitparser's is): without it every
    # timed run would compile the harness's sources again (PYTHONDONTWRITEBYTECODE, a fresh clone).
    compileall.compile_dir(REPO / "harness", quiet=1)
    cells_dir = root / f"cells-{args.cells}x{args.tests}"
    if not is_current(cells_dir):
        print(f"writing {args.cells} cells x {args.tests} tests to {cells_dir} ...", flush=True)
        shutil.rmtree(cells_dir, ignore_errors=True)
        cellgen.write_cells(cells_dir, args.cells, args.tests)
        mark_current(cells_dir)
    cells = sorted(p for p in cells_dir.iterdir() if p.is_dir())
    junits = [str(c / "junit.xml") for c in cells]
    junit_mb = sum(Path(j).stat().st_size for j in junits) / (1 << 20)
    all_mb = sum(f.stat().st_size for c in cells for f in c.iterdir()) / (1 << 20)
    out = root / "out"
    out.mkdir(exist_ok=True)
    matrix, page = out / "matrix.json", out / "index.html"

    lxml = Step("lxml iterparse (cases + result element)")
    expat = Step("expat parse, no handlers (stdlib)")
    naive = Step("naive junitparser merge (fromfile, tally)")
    merge = Step("harness merge")
    merge1 = Step("harness merge --jobs 1 (one process)")
    report = Step("harness report --format html")
    steps = [lxml, expat, naive, merge, merge1, report]
    if not has_lxml():
        lxml.note = "lxml is not installed: pip install lxml to measure the limit"
    merge_argv = [py, "-m", "harness", "merge", *map(str, cells), "-o", str(matrix)]
    before = Before(args.against, out / "before") if args.against else None
    for round_ in range(args.repeat):
        print(f"round {round_ + 1}/{args.repeat} ...", flush=True)
        if not lxml.note.startswith("lxml is not"):
            measure(lxml, [py, "-c", LXML, *junits])
        measure(expat, [py, "-c", EXPAT, *junits])
        measure(merge, merge_argv)
        measure(report, [py, "-m", "harness", "report", str(matrix), "--format", "html", "-o", str(page)])
        if before:
            before.round(py, cells)
        measure(naive, [py, "-c", NAIVE, *junits])
        measure(merge1, [*merge_argv, "--jobs", "1"])

    # Memory against bytes: the same tests with every captured output twice as long.
    chatty_dir = root / f"chatty-{args.cells}x{args.tests}"
    if not is_current(chatty_dir):
        shutil.rmtree(chatty_dir, ignore_errors=True)
        cellgen.CHATTY_BYTES *= 2
        cellgen.write_cells(chatty_dir, args.cells, args.tests)
        cellgen.CHATTY_BYTES //= 2
        mark_current(chatty_dir)
    chatty = sorted(p for p in chatty_dir.iterdir() if p.is_dir())
    chatty_mb = sum((c / "junit.xml").stat().st_size for c in chatty) / (1 << 20)
    merge_chatty = Step(f"harness merge, outputs x2 ({chatty_mb:.0f} MB JUnit)")
    measure(merge_chatty, [py, "-m", "harness", "merge", *map(str, chatty), "-o", str(out / "chatty.json")])
    steps.append(merge_chatty)

    small = giant_cell(root / "giant", "small", max(1, args.giant_mb // 10))
    big = giant_cell(root / "giant", "big", args.giant_mb)
    giant_small = Step(f"harness merge, one {args.giant_mb // 10} MB <system-out>")
    giant_big = Step(f"harness merge, one {args.giant_mb} MB <system-out>")
    measure(giant_small, [py, "-m", "harness", "merge", str(small), "-o", str(out / "small.json")])
    measure(giant_big, [py, "-m", "harness", "merge", str(big), "-o", str(out / "big.json")])
    naive_big = Step(f"naive junitparser, one {args.giant_mb} MB <system-out>")
    measure(naive_big, [py, "-c", NAIVE, str(big / "junit.xml")])
    steps += [giant_small, giant_big, naive_big]
    shutil.rmtree(root / "giant", ignore_errors=True)

    print()
    print(f"input: {len(cells)} cells x {args.tests} tests, {junit_mb:.0f} MB of JUnit, {all_mb:.0f} MB of cell files")
    print(f"{'step':<44} {'time':>8} {'peak RSS':>10}  (best of {args.repeat}; RSS of the whole process tree)")
    for step in steps:
        print(step.text())
    missed = _verdict(lxml, expat, naive, merge, merge1, report, merge_chatty, giant_small, giant_big)
    if before:
        missed |= before.verdict(merge, report, matrix, args.slower)
    return missed


class Before:
    """The same merge and page from another source tree, timed in the same rounds as this one's."""

    def __init__(self, tree: Path, out: Path) -> None:
        compileall.compile_dir(tree / "harness", quiet=1)
        out.mkdir(exist_ok=True)
        self.tree, self.matrix, self.page = tree.resolve(), out / "matrix.json", out / "index.html"
        self.merge = Step(f"harness merge ({self.tree.name})")
        self.report = Step(f"harness report --format html ({self.tree.name})")

    def round(self, py: str, cells: list[Path]) -> None:
        measure(self.merge, [py, "-m", "harness", "merge", *map(str, cells), "-o", str(self.matrix)], self.tree)
        argv = [py, "-m", "harness", "report", str(self.matrix), "--format", "html", "-o", str(self.page)]
        measure(self.report, argv, self.tree)

    def verdict(self, merge: Step, report: Step, matrix: Path, slower: float) -> int:
        print(f"\nagainst {self.tree}:")
        for step in (self.merge, self.report):
            print(step.text())
        missed = 0
        for after, before in ((merge, self.merge), (report, self.report)):
            ratio = _ratio(after, before)
            ok = ratio is not None and ratio <= 1 + slower
            missed |= not ok
            shown = f"{ratio:.2f}x" if ratio is not None else "a step failed"
            print(f"{'PASS' if ok else 'MISS'} {after.name}: after/before time {shown} (target <= {1 + slower:.2f})")
        same, why = same_matrix(matrix, self.matrix)
        print(f"{'PASS' if same else 'MISS'} matrix.json byte-identical (generated_at, harness_version aside): {why}")
        return missed | (not same)


# -- the merge at scale ----------------------------------------------------------------------------
SCALE_PEAK_MB = 400.0  # issue 29: the merge of 5M results (100 x 50,000) within 400 MB
# bench_site.py's lean cells carry the same marker: cells either benchmark wrote serve both.
LEAN_FORMAT = f"site: {cellgen.FORMAT}; no chatty output"


def parse_scales(text: str) -> list[tuple[int, int]]:
    """'20x50000,100x50000' -> [(20, 50000), (100, 50000)]."""
    scales = []
    for item in text.split(","):
        cells, sep, tests = item.strip().lower().partition("x")
        if not sep or not cells.isdigit() or not tests.isdigit() or int(cells) < 1 or int(tests) < 1:
            raise argparse.ArgumentTypeError(f"{item!r} is not CELLSxTESTS (e.g. 20x50000)")
        scales.append((int(cells), int(tests)))
    return scales


def lean_cells(root: Path, columns: int, tests: int) -> list[Path]:
    """`columns` cells without large captured output, the backends in turn, each its own column."""
    marker, wanted = root / ".complete", f"{LEAN_FORMAT}; {columns} x {tests}"
    if not (marker.exists() and marker.read_text().strip() == wanted):
        print(f"writing {columns} cells x {tests} tests to {root} ...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for index in range(columns):
            backend = cellgen.BACKENDS[index % len(cellgen.BACKENDS)]
            cellgen.write_cell(root, backend, tests, cell_id=f"{backend}-{index:02d}", chatty=0.0)
        marker.write_text(wanted + "\n")
    return sorted(p for p in root.iterdir() if (p / "manifest.json").is_file())


@dataclass
class Scale:
    cells: int
    tests: int
    after: Step
    before: Step | None
    same: tuple[bool, str] = (True, "")

    @property
    def results(self) -> int:
        return self.cells * self.tests

    def per_result_us(self, step: Step) -> float | None:
        return step.seconds / self.results * 1e6 if step.seconds < float("inf") else None


def _bench_scales(root: Path, args: argparse.Namespace) -> int:
    py = sys.executable
    compileall.compile_dir(REPO / "harness", quiet=1)
    if args.against is not None:
        compileall.compile_dir(args.against / "harness", quiet=1)
    out = root / "out"
    out.mkdir(parents=True, exist_ok=True)
    scales: list[Scale] = []
    for cells_n, tests_n in args.scales:
        cells = lean_cells(root / f"{cells_n}x{tests_n}", cells_n, tests_n)
        after = Step(f"harness merge {cells_n}x{tests_n}")
        before = Step(f"harness merge {cells_n}x{tests_n} ({args.against.name})") if args.against else None
        mine, theirs = out / f"matrix-{cells_n}x{tests_n}.json", out / f"before-{cells_n}x{tests_n}.json"
        for round_ in range(args.repeat):
            print(f"{cells_n}x{tests_n}: round {round_ + 1}/{args.repeat} ...", flush=True)
            measure(after, [py, "-m", "harness", "merge", *map(str, cells), "-o", str(mine)])
            if before is not None:
                argv = [py, "-m", "harness", "merge", *map(str, cells), "-o", str(theirs)]
                measure(before, argv, args.against.resolve())
        scale = Scale(cells_n, tests_n, after, before)
        if before is not None:
            scale.same = same_matrix(mine, theirs)
        scales.append(scale)
        mine.unlink(missing_ok=True)
        theirs.unlink(missing_ok=True)
    return print_scales(scales, args)


def print_scales(scales: list[Scale], args: argparse.Namespace) -> int:
    def us(value: float | None) -> str:
        return f"{value:.2f} us" if value is not None else "failed"

    def peak(step: Step) -> str:
        return f"{step.peak_mb:.0f} MB" if step.seconds < float("inf") else "failed"

    head = f"{'':<28}" + "".join(f"{f'{s.cells} x {s.tests}':>24}" for s in scales)
    lines = [f"merge at scale (best of {args.repeat}; peak RSS of the whole process tree):", head]
    lines.append(f"{'results':<28}" + "".join(f"{s.results:>24,}" for s in scales))
    rows: list[tuple[str, list[str]]] = [
        ("merge time", [f"{s.after.seconds:.1f} s" if s.after.seconds < float("inf") else "failed" for s in scales]),
        ("per result", [us(s.per_result_us(s.after)) for s in scales]),
        ("merge peak", [peak(s.after) for s in scales]),
    ]
    if args.against is not None:
        name = args.against.name
        rows += [
            (f"merge time ({name})", [f"{s.before.seconds:.1f} s" for s in scales if s.before]),
            (f"per result ({name})", [us(s.per_result_us(s.before)) for s in scales if s.before]),
            (f"merge peak ({name})", [peak(s.before) for s in scales if s.before]),
            ("time after/before", [_ratio_text(s.after, s.before) for s in scales if s.before]),
            ("peak after/before", [_peak_ratio_text(s.after, s.before) for s in scales if s.before]),
            ("same matrix.json", ["yes" if s.same[0] else "NO" for s in scales]),
        ]
    for label, values in rows:
        lines.append(f"{label:<28}" + "".join(f"{v:>24}" for v in values))
    print("\n" + "\n".join(lines) + "\n")
    missed = 0
    for s in scales:
        ok = 0 < s.after.peak_mb <= args.peak_mb
        missed |= not ok
        target = f"(target <= {args.peak_mb:.0f} MB)"
        print(f"{'PASS' if ok else 'MISS'} {s.cells}x{s.tests}: merge peak {peak(s.after)} {target}")
        if s.before is None:
            continue
        ratio = _ratio(s.after, s.before)
        ok = ratio is not None and ratio <= 1 + args.slower
        missed |= not ok
        shown = f"{ratio:.2f}x" if ratio is not None else "a step failed"
        print(
            f"{'PASS' if ok else 'MISS'} {s.cells}x{s.tests}: time per result after/before {shown} "
            f"(target <= {1 + args.slower:.2f})"
        )
        print(f"{'PASS' if s.same[0] else 'MISS'} {s.cells}x{s.tests}: matrix.json byte-identical: {s.same[1]}")
        missed |= not s.same[0]
    return 1 if missed else 0


def _ratio_text(a: Step, b: Step | None) -> str:
    ratio = _ratio(a, b) if b is not None else None
    return f"{ratio:.2f}x" if ratio is not None else "-"


def _peak_ratio_text(a: Step, b: Step | None) -> str:
    if b is None or not (a.peak_mb and b.peak_mb):
        return "-"
    return f"{a.peak_mb / b.peak_mb:.2f}x"


VOLATILE = (b"generated_at", b"harness_version")


def same_matrix(a: Path, b: Path) -> tuple[bool, str]:
    """Whether two matrix.json files are equal byte for byte once their volatile top-level fields
    (one line each in the harness's output) are left out; else where they first differ (a's line)."""
    try:
        left, right = _stable_lines(a), _stable_lines(b)
    except OSError as err:
        return False, str(err)
    for (number, x), (_, y) in zip(left, right, strict=False):
        if x != y:
            return False, f"line {number} differs: {x[:120]!r} / {y[:120]!r}"
    if len(left) != len(right):
        return False, f"{len(left)} lines against {len(right)}"
    return True, f"{sum(len(line) for _, line in left) / (1 << 20):.0f} MB, {len(left)} lines equal"


def _stable_lines(path: Path) -> list[tuple[int, bytes]]:
    keys = tuple(b'"' + key for key in VOLATILE)
    lines = enumerate(path.read_bytes().splitlines(), 1)
    return [(number, line) for number, line in lines if not line.lstrip().startswith(keys)]


def _ratio(a: Step, b: Step) -> float | None:
    """a / b of two measured values, None when either step failed."""
    if not (0 < a.seconds < float("inf") and 0 < b.seconds < float("inf")):
        return None
    return a.seconds / b.seconds


def _verdict(lxml: Step, expat: Step, naive: Step, merge: Step, merge1: Step, report: Step, *more: Step) -> int:
    merge_chatty, giant_small, giant_big = more
    checks: list[tuple[str, bool | None]] = []

    def check(text: str, value: float | None, ok: bool) -> None:
        checks.append((text.format(value) if value is not None else text.split(":")[0] + ": a step failed", ok))

    print()
    if lxml.seconds < float("inf"):
        ratio = _ratio(lxml, merge)
        check("merge throughput vs lxml iterparse: {:.2f}x (target >= 0.5x)", ratio, (ratio or 0) >= 0.5)
        one = _ratio(lxml, merge1)
        print(f"  (one process: {one:.2f}x of lxml)" if one else "  (one process: failed)")
    else:
        checks.append(("merge throughput vs lxml iterparse: not measured (no lxml)", None))
    raw = _ratio(expat, merge)
    if raw:
        print(f"  (raw expat parse of the same files: {raw:.2f}x of the merge's time)")
    ratio = _ratio(naive, merge)
    check("merge throughput vs naive junitparser: {:.2f}x (target >= 3x)", ratio, (ratio or 0) >= 3)
    ok = 0 < merge.peak_mb <= 300
    check("merge peak RSS: {:.0f} MB (target <= 300 MB)", merge.peak_mb or None, ok)
    grow = merge_chatty.peak_mb / merge.peak_mb if merge.peak_mb and merge_chatty.peak_mb else None
    check("merge peak RSS with every output twice as long: x{:.2f} (target: flat, <= 1.15)", grow, (grow or 9) <= 1.15)
    giant = giant_big.peak_mb / giant_small.peak_mb if giant_small.peak_mb and giant_big.peak_mb else None
    check("peak RSS, one giant <system-out> x10 larger: x{:.2f} (target: flat, <= 1.15)", giant, (giant or 9) <= 1.15)
    ratio = _ratio(report, merge)
    check("report --format html time / merge time: {:.2f} (target <= 2)", ratio, (ratio or 9) <= 2)
    missed = 0
    for text, passed in checks:
        mark = "n/a " if passed is None else "PASS" if passed else "MISS"
        missed += passed is False
        print(f"{mark} {text}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
