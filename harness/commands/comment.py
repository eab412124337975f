"""`harness comment`: the pull request comment. `render` compares a pull request's matrix with the last
published one; `post` creates the comment or updates it in place (from a workflow_run job)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from harness import outputs
from harness.errors import HarnessError, UsageError
from harness.matrix_json import load_matrix

HELP = "the pull request comment: render it against the published matrix, post or update it in place"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    render = sub.add_parser("render", help="compare a pull request's matrix with the published one")
    render.add_argument("matrix", type=Path, help="the pull request's matrix.json")
    render.add_argument("--published", help="the last published matrix (a path or the site's URL of matrix.json)")
    render.add_argument("--published-url", default="", help="the published page, linked from the comment")
    render.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    post = sub.add_parser("post", help="create the comment, or update the one posted before")
    post.add_argument("--pr", required=True, help="the pull request's number")
    post.add_argument("--body", type=Path, required=True, help="the comment (from `harness comment render`)")
    post.add_argument("--head-sha", help="the commit the run tested: refuse if the pull request is elsewhere")
    post.add_argument("--repo", default=os.environ.get("GITHUB_REPOSITORY", ""), help="OWNER/NAME")


def run(args: argparse.Namespace) -> int:
    return _render(args) if args.action == "render" else _post(args)


def _render(args: argparse.Namespace) -> int:
    from harness.commands._output import emit
    from harness.publish.baseline import load_baseline
    from harness.publish.render.prcomment import render_comment

    pr = load_matrix(args.matrix)
    published = load_baseline(args.published) if args.published else None
    if args.published and published is None:
        print(f"comment: no published matrix at {args.published}; the comment shows this run alone", file=sys.stderr)
    emit(render_comment(pr, published, args.published_url), args.output)
    return 0


def _post(args: argparse.Namespace) -> int:
    from harness.github.client import GitHub, is_refusal
    from harness.github.comment import check_body, post_comment
    from harness.publish.render.prcomment import COMMENT_LIMIT, MARKER

    text = args.pr.strip()
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"--pr {args.pr!r} is not a pull request number")
    try:
        body = args.body.read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError(f"{args.body}: cannot read the comment ({err.strerror})") from None
    check_body(body, marker=MARKER, limit=COMMENT_LIMIT)
    try:
        done = post_comment(
            GitHub(args.repo), int(text), body, marker=MARKER, limit=COMMENT_LIMIT, head_sha=args.head_sha
        )
    except HarnessError as err:
        if not is_refusal(err):
            raise
        # A token that may not comment (a fork's pull_request run): the job summary carries the text.
        print(f"::warning::not allowed to comment on pull request #{text} ({err}); the comment is in the job summary")
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with outputs.writing(summary), open(summary, "a", encoding="utf-8") as handle:
                handle.write(body)  # GitHub's own file, appended to as GitHub asks
        return 0
    print(f"comment {done.action} on pull request #{text}: {done.url or done.comment_id}")
    return 0
