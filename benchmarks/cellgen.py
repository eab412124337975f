"""Write large, realistic cell dirs for the merge benchmark.

Each cell holds the files `harness run` writes (docs/cell-contract.md): a completed
manifest, pytest's xunit1 JUnit with per-test properties, an events.jsonl whose lines from
two xdist workers interleave, and collected.json. The mix follows a real suite run: 90%
pass, 5% skips with a reason class, 3% failures with ~2 KB tracebacks, xfails, setup errors,
and a few tests with large captured output (<system-out>), which is where most bytes go.

    python benchmarks/cellgen.py OUT_DIR [--cells 5] [--tests 50000]
"""

from __future__ import annotations

import argparse
import functools
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from xml.sax.saxutils import escape, quoteattr

# Changed whenever the files written change (the cell contract, the mix): the benchmark then
# writes its kept cells again instead of timing the old ones.
FORMAT: Final = "3: collected.json groups, pass lines"
BACKENDS: Final = ("cpu", "cu126", "cu130", "rocm", "xpu")
FEATURES: Final = ("graphs", "linalg", "export", "hub", "sparsity", "compile", "attention", "amp")
# Share of tests per outcome; the rest pass.
SKIP_SHARE: Final = 0.05
FAIL_SHARE: Final = 0.03
XFAIL_SHARE: Final = 0.01
SETUP_ERROR_SHARE: Final = 0.005
CHATTY_SHARE: Final = 0.01  # tests whose captured output is large
CHATTY_BYTES: Final = 340_000
SKIP_REASONS: Final = (
    "[hardware] needs a CUDA device; this runner has none",
    "[unsupported] torch.cuda.is_available() is False for this build",
    "[dependency] scipy is not installed",
)
_TRACE_LINE: Final = "    x = torch.linalg.eigh(batch)  # tensors differ at index (3, 4): 0.12345 vs 0.12399\n"
_OUTPUT_LINE: Final = "step {:>7}: loss=0.12345 grad_norm=3.21 lr=1e-3 & more <noise> from the device log\n"


def _trace(seed: int) -> str:
    head = f"self = <test_case_{seed}>\n\n    def test_body(device):\n"
    body = "".join(_TRACE_LINE for _ in range(24))
    return head + body + f"E   AssertionError: Tensor-likes are not close! (case {seed})\n"


def _output(size: int) -> str:
    block = "".join(_OUTPUT_LINE.format(i) for i in range(512))
    return (block * (size // len(block) + 1))[:size]


def test_ids(count: int) -> Iterator[tuple[str, str, str, str, str]]:
    """(nodeid, feature, file, classname, name) for `count` tests spread over the features."""
    per_module = 25
    for index in range(count):
        feature = FEATURES[index % len(FEATURES)]
        module = index // (per_module * len(FEATURES))
        file = f"{feature}/test_{feature}_{module}.py"
        cls = f"Test{feature.title()}{index % 3}"
        name = f"test_case_{index}[float32-shape{index % 7}]"
        nodeid = f"{file}::{cls}::{name}"
        classname = f"{feature}.test_{feature}_{module}.{cls}"
        yield nodeid, feature, file, classname, name


def _outcome(rng: random.Random) -> str:
    roll = rng.random()
    for share, outcome in (
        (SKIP_SHARE, "skipped"),
        (FAIL_SHARE, "failed"),
        (XFAIL_SHARE, "xfailed"),
        (SETUP_ERROR_SHARE, "error"),
    ):
        if roll < share:
            return outcome
        roll -= share
    return "passed"


def _report(phase: str, result: str, *, when: float, nodeid: str, worker: str, props: list, **extra: object) -> dict:
    """One phase report as the cell plugin writes it."""
    record = {
        "event": "report", "time": when, "nodeid": nodeid, "when": phase, "outcome": result,
        "duration": 0.0123, "wasxfail": None, "message": None, "longrepr": None,
        "skip_reason": None, "worker": worker, "user_properties": None, "output": None,
    }  # fmt: skip
    record.update(extra)
    return record


def write_cell(
    root: Path, backend: str, tests: int, seed: int = 0, *, cell_id: str | None = None, chatty: float = CHATTY_SHARE
) -> Path:
    """One cell dir under `root`; returns its path. `cell_id` names a column of its own (several per
    backend, as for several torch builds); `chatty` is the share of tests with large captured output."""
    cell_id = cell_id or f"{backend}-bench"
    rng = random.Random(f"{cell_id if cell_id != f'{backend}-bench' else backend}-{seed}")
    cell = root / cell_id
    cell.mkdir(parents=True, exist_ok=True)
    ids = list(test_ids(tests))
    groups: dict[str, list[str]] = {}
    for nodeid, feature, _, _, _ in ids:
        groups.setdefault(feature, []).append(nodeid)
    collected = {
        "count": len(ids),
        "collect_errors": [],
        "groups": [{"feature": f, "scope": "backend", "tests": group} for f, group in groups.items()],
    }
    (cell / "collected.json").write_text(json.dumps(collected, separators=(",", ":")), encoding="utf-8")
    t0 = 1_790_000_000.0
    with (cell / "junit.xml").open("w", encoding="utf-8") as junit, (cell / "events.jsonl").open("w") as events:
        junit.write('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">')
        junit.write(f'<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="{tests}" time="1.0">')
        events.write(json.dumps({"event": "session_start", "time": t0, "pid": 1}) + "\n")
        pending: list[str] = []  # the other worker's lines, flushed interleaved with this one's
        for index, (nodeid, feature, file, classname, name) in enumerate(ids):
            outcome = _outcome(rng)
            worker = f"gw{index % 2}"
            when = t0 + index * 0.01
            props = [["nodeid", nodeid], ["feature", feature], ["backend", backend], ["device", "cuda:0"]]
            lines = [{"event": "start", "time": when, "nodeid": nodeid}]

            report = functools.partial(_report, when=when, nodeid=nodeid, worker=worker, props=props)

            body = ""
            if outcome == "error":
                trace = _trace(index)
                lines.append(report("setup", "failed", message="RuntimeError: fixture broke", longrepr=trace))
                body = f"<error message={quoteattr('failed on setup with RuntimeError: fixture broke')}>"
                body += f"{escape(trace)}</error>"
            elif outcome == "skipped":
                reason = SKIP_REASONS[index % len(SKIP_REASONS)]
                lines.append(report("setup", "skipped", message=reason, skip_reason=reason))
                body = f'<skipped type="pytest.skip" message={quoteattr(reason)}>{escape(file)}:12: '
                body += f"{escape(reason)}</skipped>"
            else:
                lines.append(report("setup", "passed"))
                if outcome == "failed":
                    trace = _trace(index)
                    message = f"AssertionError: Tensor-likes are not close! (case {index})"
                    lines.append(report("call", "failed", message=message, longrepr=trace))
                    body = f"<failure message={quoteattr(message)}>{escape(trace)}</failure>"
                elif outcome == "xfailed":
                    reason = "[known-issue https://github.com/pytorch/pytorch/issues/12345] wrong on this build"
                    lines.append(report("call", "skipped", wasxfail=reason))
                    body = f'<skipped type="pytest.xfail" message={quoteattr(reason)} />'
                else:
                    lines.append(report("call", "passed"))
            lines.append(report("teardown", "passed"))
            # As the plugin writes them: the phases that passed are folded into the test's last line,
            # `pass` when nothing else was reported, else `finish`.
            passed = {r["when"]: r["duration"] for r in lines if r.get("outcome") == "passed"}
            lines = [r for r in lines if r.get("outcome") != "passed"]
            last = {"time": when, "nodeid": nodeid}
            if lines[1:] or "call" not in passed:  # lines[0] is the start line
                lines.append({"event": "finish", **last, "passed": passed, "user_properties": None})
            else:
                lines.append({"event": "pass", **last, "duration": round(sum(passed.values()), 6)})
            if rng.random() < chatty:
                output = _output(int(CHATTY_BYTES * (0.5 + rng.random())))
                body += f"<system-out>{escape(output)}</system-out>"
                for line in lines:
                    if line.get("outcome") == "failed":  # the plugin keeps a failure's output, trimmed
                        line["output"] = output[:4_000] + "\n... [trimmed] ...\n" + output[-28_000:]
            properties = "".join(f"<property name={quoteattr(k)} value={quoteattr(v)} />" for k, v in props)
            junit.write(
                f'<testcase classname={quoteattr(classname)} name={quoteattr(name)} file={quoteattr(file)} line="12" '
                f'time="0.037"><properties>{properties}</properties>{body}</testcase>'
            )
            encoded = [json.dumps(line) + "\n" for line in lines]
            # Two workers: this test's lines alternate with the previous test's.
            merged = [x for pair in zip(pending, encoded, strict=False) for x in pair]
            merged += encoded[len(pending) :] if len(encoded) > len(pending) else pending[len(encoded) :]
            if index % 2:
                events.writelines(merged)
                pending = []
            else:
                pending = encoded
        events.writelines(pending)
        events.write(json.dumps({"event": "session_finish", "time": t0 + tests, "exitstatus": 1}) + "\n")
        junit.write("</testsuite></testsuites>\n")
    manifest = {
        "manifest_version": 1, "cell_id": cell_id, "run_id": f"bench-{cell_id}-{seed}",
        "run_attempt": 1, "backend": backend, "mode": "container", "status": "completed",
        "started_at": "2026-11-30T00:00:00Z", "finished_at": "2026-11-30T01:00:00Z",
        "harness_version": "0.1.0", "suite_sha": "0123456789abcdef0123456789abcdef01234567",
        "image": {"ref": f"torch-compat/{backend}:bench", "digest": "sha256:" + "ab" * 32},
        "runner": {"host": f"runner-{backend}", "os": "linux", "cpus": 64, "labels": []},
        "github": None,
        "environment": {
            "torch": {"version": "2.13.0+" + backend, "local_tag": backend, "git_version": "deadbeef"},
            "build": "cpu" if backend == "cpu" else "cuda", "python": "3.11.7", "platform": "Linux-x86_64",
            "runtime": {}, "devices": [], "accelerator": {"available": backend != "cpu", "count": 1},
        },
        "planned": {"workers": 2}, "features": {f: {"title": f.title(), "since": "2.12"} for f in FEATURES},
        "exit": {"code": 1, "signal": None, "meaning": "some tests failed"}, "error": None,
    }  # fmt: skip
    (cell / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return cell


def write_cells(root: Path, cells: int, tests: int) -> list[Path]:
    return [write_cell(root, backend, tests) for backend in BACKENDS[:cells]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cells", type=int, default=5, choices=range(1, len(BACKENDS) + 1))
    parser.add_argument("--tests", type=int, default=50_000)
    args = parser.parse_args()
    for cell in write_cells(args.out, args.cells, args.tests):
        size = sum(p.stat().st_size for p in cell.iterdir()) >> 20
        print(f"{cell}: {size} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
