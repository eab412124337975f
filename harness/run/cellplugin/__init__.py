"""The pytest plugin that makes a run crash-proof; loaded by pytest as `-p compat_cell_plugin`.

It lives in its own directory so that it can be put on PYTHONPATH (or mounted into a
container) without the rest of the harness: it imports only pytest and the stdlib.
"""

from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parent
PLUGIN_NAME = "compat_cell_plugin"
