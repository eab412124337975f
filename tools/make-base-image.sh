#!/usr/bin/env bash
# Make a local base image for hosts that cannot pull from any image registry (air-gapped
# sites, and this project's CI): Debian bookworm "minbase" plus what dockerfiles/Dockerfile
# needs (python3 with venv, pip and headers, g++ for Inductor, CA certificates), made with
# debootstrap and loaded with `docker import`. Needs root, debootstrap and a Debian mirror.
#
#   tools/make-base-image.sh [TAG]        (default TAG: torch-compat/local-base:bookworm)
#   harness build --backend cpu --base-image TAG --wheelhouse DIR
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

need docker docker.io
if [ -z "${FORCE:-}" ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "reusing base image $tag"
  exit 0
fi

need debootstrap debootstrap
root="$(mktemp -d /tmp/torch-compat-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "debootstrap $suite ($packages) from $mirror"
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >"$root.log" 2>&1 || {
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
