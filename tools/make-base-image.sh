#!/usr/bin/env bash
# Make a local base image for hosts that cannot pull from any image registry (air-gapped
# sites, and this project's CI): Debian bookworm "minbase" plus what dockerfiles/Dockerfile
# needs (python3 with venv, pip and headers, g++ for Inductor, CA certificates), made with
# debootstrap and loaded with `docker import`. Needs root, debootstrap and a Debian mirror.
#
#   tools/make-base-image.sh [TAG]        (default TAG: torch-compat/local-base:bookworm)
#   harness build --backend cpu --base-image TAG --wheelhouse DIR
#
# Other interpreters: Debian's forky (and sid) suites ship python3.13, python3.14 and python3.15 as
# packages, so a base with several CPythons is made offline the same way (each with -venv and -dev):
#
#   DEBIAN_SUITE=forky PYTHONS="3.13 3.14 3.15" tools/make-base-image.sh torch-compat/local-base:forky
#   harness build --backend cu132 --python 3.15 --base-image torch-compat/local-base:forky --wheelhouse DIR
#
# Debian builds no free-threaded CPython (3.14t): those come from a uv-managed interpreter
# (harness build --python 3.14t; docs/containers.md, "Python versions").
#
# An existing TAG is reused (set FORCE=1 to remake it). A missing tool is one line with its install
# command, exit 3 (infrastructure, as harness/errors.py).
set -euo pipefail

need() {  # need TOOL PACKAGE: the install hint a new user needs, not "command not found"
  command -v "$1" >/dev/null 2>&1 && return
  echo "make-base-image: $1 not found: install it (apt-get install $2), as root, then rerun" >&2
  exit 3
}

tag="${1:-torch-compat/local-base:bookworm}"
suite="${DEBIAN_SUITE:-bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
packages="python3,python3-venv,python3-dev,python3-pip,g++,ca-certificates"
for version in ${PYTHONS:-}; do  # 3.13 3.14 3.15: Debian's python3.X packages, with venv and headers
  case "$version" in
    3.[0-9]|3.[0-9][0-9]) packages="$packages,python$version,python$version-venv,python$version-dev" ;;
    *) echo "make-base-image: PYTHONS takes Debian's CPython versions like 3.15, not '$version' (no free-threaded builds)" >&2; exit 2 ;;
  esac
done

need docker docker.io
if [ -z "${FORCE:-}" ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "reusing base image $tag"
  exit 0
fi

need debootstrap debootstrap
root="$(mktemp -d /tmp/torch-compat-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "debootstrap $suite ($packages) from $mirror"
# A debootstrap older than the suite has no script for it: Debian's later suites (forky) follow sid's.
script=()
[ -e "/usr/share/debootstrap/scripts/$suite" ] || script=(/usr/share/debootstrap/scripts/sid)
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" "${script[@]}" >"$root.log" 2>&1 || {
  tail -20 "$root.log"
  exit 1
}
rm -f "$root.log"
# Smaller image, and no host-specific state baked in.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/* "$root"/root/.cache
echo "docker import -> $tag"
tar --numeric-owner -C "$root" -c . |
  docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' \
    --message "debootstrap --variant=minbase $suite + $packages" - "$tag" >/dev/null
echo "made base image $tag"
