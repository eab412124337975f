"""One module per CLI verb. Each defines HELP, `add_arguments(parser)` and `run(args) -> int`.

cli.py discovers them here, so adding a verb is adding a module.
"""
