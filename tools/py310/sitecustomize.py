# ruff: noqa: UP017, UP036, UP042  (this file exists for Python 3.10, which the linter targets above)
"""Python 3.10 stand-ins for the three 3.11 names the harness and the suites use (tomllib,
enum.StrEnum, datetime.UTC), loaded only by tools/device-proof.sh on a 3.10 host: a GPU host's
Python is whatever came with its torch, and torch 2.11 still supports 3.10."""

import datetime
import enum
import sys

if sys.version_info < (3, 11):
    if not hasattr(datetime, "UTC"):
        datetime.UTC = datetime.timezone.utc

    if not hasattr(enum, "StrEnum"):

        class StrEnum(str, enum.Enum):
            """enum.StrEnum of 3.11: members are strings and print as their value."""

            __str__ = str.__str__
            __format__ = str.__format__

            @staticmethod
            def _generate_next_value_(name, start, count, last_values):
                return name.lower()

        enum.StrEnum = StrEnum
