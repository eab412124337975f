"""tomllib on Python 3.10 (tools/device-proof.sh only): tomli is the library tomllib was made from."""

from tomli import *  # noqa: F403
from tomli import TOMLDecodeError, load, loads  # noqa: F401
