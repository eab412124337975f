"""`harness gate MATRIX`: exit 1 when a chosen condition holds (per backend), 0 otherwise.

Every line names the columns it is about: a FAIL line its column, the PASS line and the closing
error exactly the columns judged (or that failed); the selected columns no condition could judge
(NO DATA under --any-failure, not in the baseline) are listed as not judged, with why. A name that
selects no column, or a regression check that compares nothing, is exit 2, never a pass. See
`docs/publishing.md`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import GateFailedError
from harness.matrix_json import load_matrix
from harness.publish.gate import GateResult, evaluate_gate

HELP = "exit 1 on failures, on new regressions against a baseline, or on NO DATA columns"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", type=Path, help="the matrix.json to judge")
    parser.add_argument(
        "--baseline", help="the matrix.json to compare with (for --new-regressions): a path or an http(s) URL"
    )
    parser.add_argument(
        "--any-failure", action="store_true", help="fail when any test fails, errors, times out or crashes"
    )
    parser.add_argument(
        "--new-regressions", action="store_true", help="fail only on tests that fail now and did not in the baseline"
    )
    parser.add_argument("--no-data", action="store_true", help="fail when a selected backend has NO DATA or no column")
    parser.add_argument(
        "--require-verified",
        action="store_true",
        help="fail when a selected column is unverified or invalid: no statement signed by someone the merge's "
        "trust file allows (docs/provenance.md)",
    )
    parser.add_argument(
        "--by-build",
        action="store_true",
        help="with --baseline: a column whose id the baseline lacks is compared with the baseline's column of the "
        "same backend and torch build (a pull request's `cpu` against a nightly's `cpu-2.13.0`)",
    )
    parser.add_argument(
        "--backend",
        action="append",
        metavar="ID",
        help="judge only this column id, backend or family (repeatable); a name that selects nothing is exit 2",
    )


def run(args: argparse.Namespace) -> int:
    from harness.publish.baseline import load_baseline

    matrix = load_matrix(args.matrix)
    # The baseline's outcomes are all its diff compares (a fraction of a whole matrix's memory).
    baseline = load_baseline(args.baseline, required=True, results="outcomes") if args.baseline else None
    any_failure = args.any_failure or not (args.new_regressions or args.no_data or args.require_verified)
    result = evaluate_gate(
        matrix,
        baseline=baseline,
        any_failure=any_failure,
        new_regressions=args.new_regressions,
        no_data=args.no_data,
        backends=args.backend,
        by_build=args.by_build,
        require_verified=args.require_verified,
    )
    for note in result.notes:
        print(f"gate: note: {note}")
    if result.failed:
        for name, why in result.not_judged.items():
            print(f"gate: not judged: {name}: {why}")
        for name, why in result.reasons:
            print(f"gate: FAIL {name}: {why}")
        failing = result.failing
        raise GateFailedError(f"gate failed on {', '.join(failing)} ({len(result.reasons)} reason(s))")
    print(
        pass_line(
            result,
            any_failure=any_failure,
            new_regressions=args.new_regressions,
            no_data=args.no_data,
            require_verified=args.require_verified,
        )
    )
    return 0


def pass_line(
    result: GateResult, *, any_failure: bool, new_regressions: bool, no_data: bool, require_verified: bool = False
) -> str:
    """`gate: PASS on <judged> (no failing test, no new regression); not judged: <column> (<why>)`."""
    conditions = [
        text
        for text, on in (
            ("no failing test", any_failure),
            ("no new regression", new_regressions),
            ("no NO DATA column", no_data),
            ("every column verified", require_verified),
        )
        if on
    ]
    line = f"gate: PASS on {', '.join(result.judged)} ({', '.join(conditions)})"
    if result.not_judged:
        line += "; not judged: " + "; ".join(f"{cid} ({why})" for cid, why in result.not_judged.items())
    return line
