"""Post the pull request comment, or update the one posted before (found by its hidden marker and
its author), so that every push leaves one comment, current. Posted from a `workflow_run` job, which
may write to a pull request from a fork; the pull request's number comes from the untrusted run, so
its head commit must be the one the triggering run tested."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from harness.errors import UsageError
from harness.github.client import GitHub

BOT: Final = "github-actions[bot]"


@dataclass(frozen=True)
class Posted:
    action: str  # created | updated
    comment_id: int
    url: str


def check_body(body: str, *, marker: str, limit: int) -> None:
    """The body carries our marker (how the next push finds this comment) and fits GitHub's limit."""
    if marker not in body:
        raise UsageError("the comment body has no marker (write it with `harness comment render`)")
    if len(body) > limit:
        raise UsageError(f"the comment body is {len(body)} characters; GitHub takes at most {limit}")


def post_comment(
    api: GitHub,
    number: int,
    body: str,
    *,
    marker: str,
    limit: int,
    head_sha: str | None = None,
    author: str = BOT,
) -> Posted:
    """Create the comment, or update ours (the one by `author` that carries `marker`) in place."""
    check_body(body, marker=marker, limit=limit)
    if head_sha is not None:
        head = api.pull_head(number)
        if head != head_sha:
            raise UsageError(
                f"pull request #{number} is at {head[:12]}, but the run tested {head_sha[:12]}: not commenting",
                hint="a newer push runs again and comments then",
            )
    ours = [
        c
        for c in api.comments(number)
        if marker in str(c.get("body") or "") and str((c.get("user") or {}).get("login") or "") == author
    ]
    if ours:
        found = api.update_comment(int(ours[0]["id"]), body)
        return Posted("updated", int(found["id"]), str(found.get("html_url") or ""))
    found = api.create_comment(number, body)
    return Posted("created", int(found["id"]), str(found.get("html_url") or ""))
