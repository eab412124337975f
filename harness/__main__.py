"""`python -m harness`."""

from harness.cli import main

if __name__ == "__main__":  # importing this module (e.g. pkgutil.walk_packages) must not run anything
    raise SystemExit(main())
