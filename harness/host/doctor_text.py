"""The doctor's report as text (`harness doctor`; `--format json` is Report.to_dict)."""

from __future__ import annotations

from harness.host.doctor import Fit, Report
from harness.registry import load_registry
from harness.text_table import aligned

MARK = {Fit.YES: "runs", Fit.NO: "no", Fit.UNKNOWN: "?"}


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
    lines += aligned(rows, indent="  ") if rows else []
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
    return [f"torch {report.release} ({which}) on this host", *aligned(rows, indent="  "), *notes]


def _matrix_lines(report: Report) -> list[str]:
    variants = list(dict.fromkeys(v for verdicts in report.verdicts.values() for v in verdicts))
    variants.sort(key=load_registry().variant_order)
    rows = [("RELEASE", "PYTHONS", *variants)]
    registry = load_registry()
    for rid, verdicts in report.verdicts.items():
        release = registry.releases.get(rid)
        label = rid if release is None or release.final else f"{rid} (test)"
        pythons = ",".join(report.pythons.get(rid, ())) or "?"
        rows.append((label, pythons, *(MARK[verdicts[v].fit] if v in verdicts else "-" for v in variants)))
    lines = ["Every listed release (runs / no / ? unchecked / - not shipped)", *aligned(rows, indent="  ")]
    return lines + _python_lines(report)


def _python_lines(report: Report) -> list[str]:
    """Which releases ship the running interpreter, and which do not (a cell on it could not install them)."""
    if not report.python_version:
        return []
    found = report.python_verdicts()
    ships = [rid for rid, ok in found.items() if ok]
    not_shipped = [rid for rid, ok in found.items() if ok is False]
    line = f"  this interpreter, Python {report.python_version}: shipped by {', '.join(ships) or 'no listed release'}"
    if not_shipped:
        line += f"; not shipped by {', '.join(not_shipped)} (no wheel for it: a cell on it is 'not shipped')"
    return [line]


def _recommendation_lines(report: Report) -> list[str]:
    rec = report.recommendation
    lines = [f"Recommendation: {rec.variant}, torch {rec.version}", f"  {rec.command}", f"  why: {rec.summary}"]
    lines += [f"    {reason}" for reason in rec.reasons if reason not in rec.summary]
    lines += [f"  {alt}" for alt in rec.alternatives]
    return lines


def render_text(report: Report) -> str:
    """The report as `harness doctor` prints it: the host, the installed torch, the release asked about,
    every listed release, and the recommendation with its install line."""
    parts = [_host_lines(report), _torch_lines(report), _release_lines(report), _matrix_lines(report)]
    parts.append(_recommendation_lines(report))
    return "\n\n".join("\n".join(p) for p in parts if p) + "\n"
