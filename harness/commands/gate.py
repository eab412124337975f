"""`harness gate MATRIX`: exit 1 when a chosen condition holds (per backend), 0 otherwise.

Exit 1 when the chosen condition holds (any failure by default; only new regressions against a
baseline; NO DATA columns), per backend.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import GateFailedError
from harness.matrix_json import load_matrix
from harness.publish.gate import evaluate_gate

HELP = "exit 1 on failures, on new regressions against a baseline, or on NO DATA columns"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", type=Path, help="the matrix.json to judge")
    parser.add_argument("--baseline", type=Path, help="the matrix.json to compare with (for --new-regressions)")
    parser.add_argument(
        "--any-failure", action="store_true", help="fail when any test fails, errors, times out or crashes"
    )
    parser.add_argument(
        "--new-regressions", action="store_true", help="fail only on tests that fail now and did not in the baseline"
    )
    parser.add_argument("--no-data", action="store_true", help="fail when a selected backend has NO DATA or no column")
    parser.add_argument(
        "--backend", action="append", metavar="ID", help="judge only this backend or column id (repeatable)"
    )


def run(args: argparse.Namespace) -> int:
    matrix = load_matrix(args.matrix)
    baseline = load_matrix(args.baseline) if args.baseline else None
    any_failure = args.any_failure or not (args.new_regressions or args.no_data)
    result = evaluate_gate(
        matrix,
        baseline=baseline,
        any_failure=any_failure,
        new_regressions=args.new_regressions,
        no_data=args.no_data,
        backends=args.backend,
    )
    for warning in result.warnings:
        print(f"gate: warning: {warning}")
    checked = ", ".join(result.checked) or "no columns"
    if result.failed:
        for reason in result.reasons:
            print(f"gate: FAIL {reason}")
        raise GateFailedError(f"gate failed: {len(result.reasons)} reason(s) on {checked}")
    print(f"gate: PASS on {checked}")
    return 0
