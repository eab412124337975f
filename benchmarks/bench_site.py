"""Benchmark: the published site at the scale it will reach, 20 columns x 50,000 tests (1M results),
measured in one run (this machine is noisy; the sizes are exact, the times indicative).

    python benchmarks/bench_site.py [--cells 20] [--tests 50000] [--runs 3] [--data DIR] [--single-file]
    python benchmarks/bench_site.py --scales 20x50000,100x50000   # each scale in turn, then side by side

A scale is CELLSxTESTS (cells, each its own column, of TESTS tests each): 20x50000 is 1M results,
100x50000 5M. With --scales, each scale is measured as above and the summary table prints the merge
and publish peaks, the largest site file and the first draw of each, side by side.

Input: benchmarks/cellgen.py's cells (every file `harness run` writes; 90% pass, 5% skips, 3%
failures with ~2 KB traces, xfails, setup errors), here without the large captured outputs, which
the merge benchmark covers and which never reach the site. Steps, each in a fresh child process
(time, and peak RSS of the process and every process it started):
- `harness merge` of the cells into matrix.json;
- `harness publish` of that matrix --runs times into one site (as nightly runs: each appends to
  the history, so the page carries per-test history over those runs); the last one is measured;
- the site's files: the largest, the page itself, matrix.json (the split form's index) and its
  parts in matrix-parts/, data/ (the page's parts), history/;
- headless Chromium (Debian's /usr/bin/chromium through Playwright) on the site served over HTTP:
  the first draw (the page's own `performance.now()` when it has drawn, and the wall time to it),
  opening a feature (its rows fetched), opening a failing test (its details and history fetched),
  and an outcome filter over every test (all rows fetched);
- with --single-file, `harness report --format html` of the same matrix: the one-file page of
  before, for comparison.
Targets (issues 22 and 29): no site file over 25 MB, first draw within 1.5 s, the merge within
400 MB, the publication within 1 GB (at 5M results). The exit code is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_merge import Step, lean_cells, measure, parse_scales  # noqa: E402

FILE_LIMIT_MB = 25.0
FIRST_DRAW_S = 1.5
MERGE_MB = 400.0
PUBLISH_MB = 1024.0
CHROMIUM = "/usr/bin/chromium"


def _mb(size: int) -> float:
    return size / (1 << 20)


def site_sizes(site: Path) -> dict[str, Any]:
    files = [p for p in site.rglob("*") if p.is_file()]
    largest = max(files, key=lambda p: p.stat().st_size)

    def total(folder: str) -> tuple[int, float]:
        found = [p for p in files if p.relative_to(site).parts[0] == folder]
        return len(found), _mb(sum(p.stat().st_size for p in found))

    return {
        "files": len(files),
        "total_mb": _mb(sum(p.stat().st_size for p in files)),
        "largest": (str(largest.relative_to(site)), _mb(largest.stat().st_size)),
        "index.html": _mb((site / "index.html").stat().st_size),
        "matrix.json": _mb((site / "matrix.json").stat().st_size),
        "matrix-parts": total("matrix-parts"),
        "data": total("data"),
        "history": total("history"),
    }


def serve(root: Path) -> ThreadingHTTPServer:
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browse(site: Path) -> dict[str, float]:
    """Times in headless Chromium, the site served over HTTP from this process."""
    from playwright.sync_api import sync_playwright

    server = serve(site)
    url = f"http://127.0.0.1:{server.server_port}/index.html"
    out: dict[str, float] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            out["first_draw_wall_s"] = time.perf_counter() - started
            # the page's own clock: milliseconds from navigation start to the end of its first draw
            out["first_draw_s"] = page.evaluate("Number(document.body.dataset.readyMs)") / 1000
            feature = page.eval_on_selector("tr.feature", "e => e.dataset.feature")
            started = time.perf_counter()
            page.locator(f"tr.feature[data-feature='{feature}'] button.toggle").click()
            page.wait_for_selector("tr.test", timeout=60_000)
            out["open_feature_s"] = time.perf_counter() - started
            started = time.perf_counter()
            page.locator("tr.test td button.oc-failed").first.click()
            page.wait_for_selector("#detail pre.message", timeout=60_000)
            page.wait_for_selector("#detail .timeline", timeout=60_000)
            out["open_test_s"] = time.perf_counter() - started
            page.click("#detail-close")
            started = time.perf_counter()
            page.select_option("#f-outcome", "failed")
            page.wait_for_function(
                "() => document.getElementById('match-count').textContent.includes(' tests match')", timeout=120_000
            )
            out["filter_all_s"] = time.perf_counter() - started
            if errors:
                raise RuntimeError(f"script errors: {errors}")
            browser.close()
    finally:
        server.shutdown()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", "--columns", dest="columns", type=int, default=20, help="cells (one column each)")
    parser.add_argument("--tests", type=int, default=50_000, help="tests per cell")
    parser.add_argument("--scales", type=parse_scales, help="CELLSxTESTS[,CELLSxTESTS...]: several scales in turn")
    parser.add_argument("--runs", type=int, default=3, help="publications into the site (history depth)")
    parser.add_argument("--data", type=Path, help="keep the generated cells here and reuse them next time")
    parser.add_argument("--single-file", action="store_true", help="also time the one-file page, for comparison")
    args = parser.parse_args()
    scales = args.scales or [(args.columns, args.tests)]
    rows: list[dict[str, Any]] = []
    code = 0
    for columns, tests in scales:
        root = Path(tempfile.mkdtemp(prefix="bench-site-"))
        try:
            scale = argparse.Namespace(**{**vars(args), "columns": columns, "tests": tests})
            if args.data and len(scales) > 1:
                scale.data = args.data / f"{columns}x{tests}"
            print(f"\n=== {columns} cells x {tests} tests ({columns * tests:,} results) ===", flush=True)
            rc, figures = bench(root, scale)
            code = max(code, rc)
            rows.append(figures)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    print_side_by_side(rows)
    return code


def print_side_by_side(rows: list[dict[str, Any]]) -> None:
    """One column per scale: what issue 29 tracks (the peaks, the largest file, the first draw)."""

    def cell(value: Any, form: str) -> str:
        return "-" if value is None else form.format(value)

    lines = [
        ("results", lambda r: f"{r['results']:,}"),
        ("merge time", lambda r: cell(r["merge_s"], "{:.1f} s")),
        ("merge peak", lambda r: cell(r["merge_mb"], "{:.0f} MB")),
        ("publish time (last run)", lambda r: cell(r["publish_s"], "{:.1f} s")),
        ("publish peak", lambda r: cell(r["publish_mb"], "{:.0f} MB")),
        ("largest site file", lambda r: cell(r["largest_mb"], "{:.1f} MB") + f" {r['largest'] or ''}".rstrip()),
        ("matrix-parts/ (all)", lambda r: cell(r["parts_mb"], "{:.1f} MB")),
        ("history/", lambda r: cell(r["history_mb"], "{:.1f} MB")),
        ("first draw (page clock)", lambda r: cell(r["first_draw_s"], "{:.2f} s")),
    ]
    heads = [f"{r['columns']} x {r['tests']}" for r in rows]
    width = max(24, *(len(f(r)) for _, f in lines for r in rows)) + 2
    print("\nside by side:")
    print(f"  {'':<26}" + "".join(f"{h:>{width}}" for h in heads))
    for name, form in lines:
        print(f"  {name:<26}" + "".join(f"{form(r):>{width}}" for r in rows))


def bench(root: Path, args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    figures: dict[str, Any] = {
        "columns": args.columns,
        "tests": args.tests,
        "results": args.columns * args.tests,
        **dict.fromkeys(("merge_s", "merge_mb", "publish_s", "publish_mb", "largest", "largest_mb")),
        **dict.fromkeys(("parts_mb", "history_mb", "first_draw_s")),
    }
    cells_dir = args.data or root / "cells"
    print(f"cells: {args.columns} x {args.tests} tests in {cells_dir}", flush=True)
    started = time.perf_counter()
    cells = lean_cells(cells_dir, args.columns, args.tests)
    print(f"  ready in {time.perf_counter() - started:.0f} s", flush=True)
    harness = [sys.executable, "-m", "harness"]
    matrix, site = root / "matrix.json", root / "site"
    steps = []
    merge = Step(f"harness merge ({args.columns} cells)")
    measure(merge, [*harness, "merge", *map(str, cells), "-o", str(matrix)])
    steps.append(merge)
    publish = Step(f"harness publish (run {args.runs} of {args.runs})")
    for run in range(1, args.runs + 1):
        os.environ["GITHUB_RUN_ID"] = str(9000 + run)
        step = publish if run == args.runs else Step(f"harness publish (run {run})")
        measure(step, [*harness, "publish", str(site), "--matrix", str(matrix)])
        steps.append(step)
    os.environ.pop("GITHUB_RUN_ID", None)
    if args.single_file:
        single = Step("harness report --format html (one file)")
        measure(single, [*harness, "report", str(matrix), "--format", "html", "-o", str(root / "single.html")])
        if (root / "single.html").exists():
            single.note = f"{_mb((root / 'single.html').stat().st_size):.1f} MB page"
        steps.append(single)
    print(f"\n{'step':<44} {'time':>8} {'peak RSS':>10}")
    for step in steps:
        print(step.text())
    if merge.seconds != float("inf"):
        figures.update(merge_s=merge.seconds, merge_mb=merge.peak_mb)
    if publish.seconds == float("inf"):
        print("publish failed; no site to measure")
        return 1, figures
    figures.update(publish_s=publish.seconds, publish_mb=publish.peak_mb)

    sizes = site_sizes(site)
    print(f"\nsite: {sizes['files']} files, {sizes['total_mb']:.1f} MB in all")
    print(f"  largest file          {sizes['largest'][0]}: {sizes['largest'][1]:.2f} MB")
    print(f"  index.html            {sizes['index.html']:.2f} MB")
    print(f"  matrix.json (index)   {sizes['matrix.json']:.2f} MB")
    print(f"  matrix-parts/         {sizes['matrix-parts'][0]} files, {sizes['matrix-parts'][1]:.1f} MB")
    print(f"  data/ (page parts)    {sizes['data'][0]} files, {sizes['data'][1]:.1f} MB")
    print(f"  history/              {sizes['history'][0]} files, {sizes['history'][1]:.1f} MB ({args.runs} runs)")

    figures.update(largest=sizes["largest"][0], largest_mb=sizes["largest"][1], parts_mb=sizes["matrix-parts"][1])
    figures["history_mb"] = sizes["history"][1]
    times = browse(site) if Path(CHROMIUM).exists() else {}
    figures["first_draw_s"] = times.get("first_draw_s")
    if times:
        print("\nheadless Chromium, the site over HTTP on this host:")
        first, wall = times["first_draw_s"], times["first_draw_wall_s"]
        print(f"  first draw            {first:.2f} s (page clock), {wall:.2f} s wall")
        print(f"  open a feature        {times['open_feature_s']:.2f} s (its rows fetched)")
        print(f"  open a failing test   {times['open_test_s']:.2f} s (its details and history fetched)")
        print(f"  filter every test     {times['filter_all_s']:.2f} s (all rows fetched)")
    else:
        print(f"\nno browser at {CHROMIUM}: page times not measured")

    failures = []
    if sizes["largest"][1] > FILE_LIMIT_MB:
        failures.append(f"the largest site file is {sizes['largest'][1]:.1f} MB (limit {FILE_LIMIT_MB:g})")
    if not times or times["first_draw_s"] > FIRST_DRAW_S:
        drawn = f"{times['first_draw_s']:.2f} s" if times else "not measured"
        failures.append(f"first draw {drawn} (limit {FIRST_DRAW_S:g} s)")
    if merge.peak_mb > MERGE_MB or merge.seconds == float("inf"):
        failures.append(f"the merge peaked at {merge.peak_mb:.0f} MB (limit {MERGE_MB:g})")
    if publish.peak_mb > PUBLISH_MB:
        failures.append(f"the publication peaked at {publish.peak_mb:.0f} MB (limit {PUBLISH_MB:g})")
    print("\ntargets: " + ("all met" if not failures else "MISSED: " + "; ".join(failures)))
    return (1 if failures else 0), figures


if __name__ == "__main__":
    raise SystemExit(main())
