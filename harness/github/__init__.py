"""The github wing: the GitHub REST client, a workflow run's artifacts collected as they arrive, the PR
comment posted."""
