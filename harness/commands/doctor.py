"""`harness doctor`: what this host can run: its GPUs, the installed torch, each build variant, the install line.

What this host can run: its GPUs (driver, compute capability or gfx target, Intel family), the torch
`--python` has and whether it can use the GPU, which variants of each listed release run here, and
one exact install line with the reasons. Exit 0 whenever the report is made. See
[docs/doctor.md](docs/doctor.md), with a point-by-point comparison to uv's `--torch-backend=auto`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from harness.host.doctor import Fit, Report, make_report, resolve_release
from harness.host.host import detect_host, inspect_torch, root_from_env
from harness.registry import load_registry

HELP = "say what this host can run: its GPUs, the installed torch, which builds run here, and the install line"

EPILOG = (
    "Exit status: 0 whenever the report is made, also when the installed torch cannot use the GPU or is "
    "missing (the text says so; --format json has torch_verdict.fit); 2 for a --torch that names no listed "
    "release. See docs/doctor.md."
)

MARK = {Fit.YES: "runs", Fit.NO: "no", Fit.UNKNOWN: "?"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument(
        "--python", default=sys.executable, help="the interpreter whose torch to read (default: this one)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--torch", metavar="VERSION", help="ask about another release (2.14 or 2.14.1; default: the current one)"
    )


def _columns(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _host_lines(report: Report) -> list[str]:
    host = report.host
    lines = ["This host"]
    if host.nvidia_driver:
        lines.append(f"  NVIDIA driver {host.nvidia_driver} (from {host.nvidia_driver_source})")
    if host.amdgpu_driver:
        lines.append(f"  amdgpu driver {host.amdgpu_driver}")
    if not host.gpus:
        lines.append("  no GPU found")
    rows = [
        (
            f"{gpu.vendor} {gpu.index}",
            gpu.name,
            gpu.arch + (f" ({gpu.arch_source})" if gpu.arch_source else "") if gpu.arch else "arch unknown",
            gpu.bus_id or "-",
            f"driver {gpu.driver or 'none'}",
            "" if gpu.visible else f"hidden by {gpu.hidden_by}",
        )
        for gpu in host.gpus
    ]
    lines += _columns(rows) if rows else []
    lines.append("  tools: " + "; ".join(f"{tool} {status}" for tool, status in host.tools))
    lines += [f"  note: {note}" for note in host.notes]
    return lines


def _torch_lines(report: Report) -> list[str]:
    verdict, torch = report.torch_verdict, report.torch
    if verdict is None or torch is None:
        return []
    details = [f"    {reason}" for reason in verdict.reasons if reason not in verdict.summary]
    return [f"Installed torch ({torch.python})", f"  {verdict.summary}", *details]


def _release_lines(report: Report) -> list[str]:
    which = "the current release" if report.current else "asked with --torch"
    verdicts = report.verdicts[report.release]
    rows = [
        (variant, report.statuses[report.release][variant], MARK[verdicts[variant].fit], verdicts[variant].headline)
        for variant in sorted(verdicts, key=load_registry().variant_order)
    ]
    notes = [f"  note: {note}" for note in report.notes]
    return [f"torch {report.release} ({which}) on this host", *_columns(rows), *notes]


def _matrix_lines(report: Report) -> list[str]:
    variants = list(dict.fromkeys(v for verdicts in report.verdicts.values() for v in verdicts))
    variants.sort(key=load_registry().variant_order)
    rows = [("RELEASE", *variants)]
    registry = load_registry()
    for rid, verdicts in report.verdicts.items():
        release = registry.releases.get(rid)
        label = rid if release is None or release.final else f"{rid} (test)"
        rows.append((label, *(MARK[verdicts[v].fit] if v in verdicts else "-" for v in variants)))
    return ["Every listed release (runs / no / ? unchecked / - not shipped)", *_columns(rows)]


def _recommendation_lines(report: Report) -> list[str]:
    rec = report.recommendation
    lines = [f"Recommendation: {rec.variant}, torch {rec.version}", f"  {rec.command}", f"  why: {rec.summary}"]
    lines += [f"    {reason}" for reason in rec.reasons if reason not in rec.summary]
    lines += [f"  {alt}" for alt in rec.alternatives]
    return lines


def render_text(report: Report) -> str:
    parts = [_host_lines(report), _torch_lines(report), _release_lines(report), _matrix_lines(report)]
    parts.append(_recommendation_lines(report))
    return "\n\n".join("\n".join(p) for p in parts if p) + "\n"


def run(args: argparse.Namespace) -> int:
    resolve_release(load_registry(), args.torch)  # a bad --torch fails before any probing
    env = dict(os.environ)
    host = detect_host(root_from_env(env), env)
    torch = inspect_torch(args.python, env)
    report = make_report(host, torch, python=args.python, asked=args.torch)
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        sys.stdout.write(render_text(report))
    return 0
