"""`harness prune` without an engine: sizes, the keep/remove rule, the report. The real engine: tests/docker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.images.prune import HarnessImage, PruneReport, describe, human_size, parse_size, plan_prune

T0 = datetime(2026, 11, 1, tzinfo=UTC)
GB = 10**9


def image(name: str, size_gb: float, age_days: int, **extra: tuple[str, ...]) -> HarnessImage:
    return HarnessImage(
        id=f"sha256:{name:0>64}",
        tags=(f"torch-compat/cpu:{name}",),
        size=int(size_gb * GB),
        last_used=T0 - timedelta(days=age_days),
        backend="cpu",
        **extra,
    )


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("0", 0),
        ("800MB", 800 * 10**6),
        ("50GB", 50 * GB),
        ("50G", 50 * GB),
        ("50gb", 50 * GB),
        ("1.5 TiB", int(1.5 * 1024**4)),
        ("2GiB", 2 * 1024**3),
        ("512k", 512_000),
        ("1234", 1234),
    ],
)
def test_sizes_read_like_docker_prints_them(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1GB", "5x", "1.2.3G", "5ib"])
def test_bad_sizes_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="not a size like 50GB"):
        parse_size(text)


def test_human_size_is_decimal_like_docker() -> None:
    assert [human_size(n) for n in (0, 999, 1_340_000_000, 12 * 10**12)] == ["0 B", "999 B", "1.34 GB", "12.00 TB"]


def names(decisions, action: str) -> list[str]:
    return [d.image.tags[0].rsplit(":", 1)[1] for d in decisions if d.action == action]


def test_the_newest_that_fit_are_kept_and_everything_older_than_the_first_misfit_goes() -> None:
    images = [image("old", 1, 30), image("newest", 4, 0), image("mid", 4, 5), image("small-older", 0.5, 10)]
    decisions = plan_prune(images, budget=6 * GB)
    assert names(decisions, "keep") == ["newest"]
    # "small-older" would fit, but keeping an older image while a newer one went would be a surprise
    assert names(decisions, "remove") == ["mid", "small-older", "old"]
    assert names(plan_prune(images, budget=100 * GB), "remove") == []
    assert names(plan_prune(images, budget=0), "keep") == []


def test_images_in_use_or_tagged_elsewhere_are_kept_and_count_against_the_budget() -> None:
    images = [
        image("newest", 2, 0),
        image("used", 3, 20, in_use_by=("torch-compat-cell-x",)),
        image("adopted", 1, 40, foreign_tags=("registry.example/team/cpu:pinned",)),
        image("older", 1, 50),
    ]
    decisions = plan_prune(images, budget=6 * GB)
    assert names(decisions, "keep") == ["newest", "used", "adopted"]
    assert names(decisions, "remove") == ["older"]
    reasons = {d.image.tags[0].rsplit(":", 1)[1]: d.reason for d in decisions}
    assert reasons["used"] == "in use by container torch-compat-cell-x"
    assert reasons["adopted"] == "also tagged registry.example/team/cpu:pinned"
    # in-use images alone over the budget: every other image goes, the used one stays
    assert names(plan_prune(images, budget=2 * GB), "keep") == ["used", "adopted"]


def test_the_report_says_what_went_and_what_was_freed() -> None:
    decisions = plan_prune([image("new", 2, 0), image("old", 3, 9)], budget=2 * GB)
    dry = describe(PruneReport(budget=2 * GB, dry_run=True, decisions=decisions))
    assert dry[0] == "2 image(s) of the harness, 5.00 GB; budget 2.00 GB (dry run: nothing is removed)"
    assert dry[1].split()[:2] == ["keep", "torch-compat/cpu:new"] and dry[1].endswith("within the budget")
    assert dry[2].split()[:3] == ["would", "remove", "torch-compat/cpu:old"]
    assert dry[-1] == "would remove 1 image(s), 3.00 GB by their sizes"
    old = decisions[1].image
    done = PruneReport(2 * GB, False, decisions, removed=[old], storage_before=9 * GB, storage_after=6 * GB)
    lines = describe(done)
    assert lines[2].split()[:2] == ["removed", "torch-compat/cpu:old"]
    assert lines[-2:] == [
        "1 image(s) removed, 3.00 GB by their sizes",
        "engine layer storage 9.00 GB -> 6.00 GB (3.00 GB freed)",
    ]
    refused = describe(PruneReport(2 * GB, False, decisions, failed=[(old, "conflict: image is in use")]))
    assert refused[2].split()[:2] == ["KEPT", "torch-compat/cpu:old"] and refused[2].endswith("image is in use")
    assert "1 could not be removed" in refused[-1]


def test_a_budget_is_required_in_one_line(capsys, monkeypatch) -> None:
    monkeypatch.delenv("HARNESS_IMAGE_BUDGET", raising=False)
    assert main(["prune"]) == 2
    assert capsys.readouterr().err == (
        "harness: error: no budget given (pass --budget 50GB or set HARNESS_IMAGE_BUDGET)\n"
    )
    assert main(["prune", "--budget", "lots"]) == 2
    assert "not a size like 50GB" in capsys.readouterr().err
