"""A refusal whose reasons come as warnings: the error and the warnings in one line the refusal table can match.

SDPA forced onto one kernel (``sdpa_kernel``) refuses with a bare "No available kernel. Aborting execution."
(CUDA) or "No viable backend for scaled_dot_product_attention was found." (CPU); *why* the kernel refused
comes first as ``UserWarning``s ("Expected query, key and value to all be of dtype: {Half, BFloat16}", "head_dim
should be a multiple of 8", ...). :func:`compose` puts the error's first line and those reasons in one line, so
``_support/refusals.py`` can list a refusal by the kernel's own reason, not by the bare error. Standard library
only (tests/suites reads it without torch).
"""

from __future__ import annotations

from collections.abc import Iterable

SEPARATOR = " (the kernel's reasons: "
# the kernel-selection warnings that say nothing about the inputs (every other kernel is disabled while one is forced)
NOISE = ("has been runtime disabled", "kernel not used because:")


def reasons(warnings: Iterable[str]) -> list[str]:
    """The warnings that give a reason, whitespace-collapsed, each once, in order (the noise left out)."""
    found: list[str] = []
    for text in warnings:
        line = " ".join(str(text).split())
        if line and not any(n in line for n in NOISE) and line not in found:
            found.append(line)
    return found


def compose(error: str, warnings: Iterable[str]) -> str:
    """``<the error's first line> (the kernel's reasons: <reason>; <reason>)``, on one line."""
    first = " ".join(error.strip().splitlines()[0].split()) if error.strip() else ""
    said = reasons(warnings)
    return f"{first}{SEPARATOR}{'; '.join(said)})" if said else first
