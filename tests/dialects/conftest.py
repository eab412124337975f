"""tests/dialects/<producer>/project/ holds other tools' test projects, failing on purpose: never collect them.

Their make.sh scripts run them from inside project/ with --confcutdir, so this file does not reach them.
"""

collect_ignore_glob = ["*/project", "*/project/*"]
