#!/usr/bin/env bash
# Make sure the image has the interpreter PROGRAM (python3, python3.15, python3.14t) able to make a venv,
# with its headers (Inductor compiles against Python.h), plus g++ and CA certificates. Used by the
# Dockerfile's `system` stage.
#
#   install-python.sh PROGRAM system [VERSION]   the base image's own (an official python:3.X image, a
#                                                 local Debian forky base with python3.13-3.15), else its
#                                                 distribution's packages PROGRAM, PROGRAM-venv, PROGRAM-dev
#   install-python.sh PROGRAM uv VERSION         a uv-managed CPython (free-threaded builds included:
#                                                 VERSION 3.14t), linked as /usr/local/bin/PROGRAM; needs
#                                                 the network (PyPI for uv, uv's interpreter downloads)
#
# Only what the base lacks is installed, so a prepared local base needs no package mirror at all.
set -euo pipefail
program="$1" source="$2" version="${3:-}"

usable() {  # the interpreter is there, makes a venv with pip, and has Python.h
  command -v "${program}" >/dev/null 2>&1 || return 1
  local scratch
  scratch="$(mktemp -d)"
  "${program}" -m venv "${scratch}/venv" >/dev/null 2>&1 || { rm -rf "${scratch}"; return 1; }
  rm -rf "${scratch}"
  "${program}" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}

missing=()
want() {
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null | grep -q "install ok installed" || missing+=("${pkg}")
  done
}
want g++ ca-certificates
if ! usable; then
  case "${source}" in
    system) missing+=("${program}" "${program}-venv" "${program}-dev") ;;
    uv) want python3 python3-venv ;;
    *) echo "install-python: unknown interpreter source '${source}' (system or uv)" >&2; exit 2 ;;
  esac
fi
if ((${#missing[@]})); then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  rm -rf /var/lib/apt/lists/*
fi
if [ "${source}" = uv ] && ! usable; then
  python3 -m venv /tmp/uv-venv
  /tmp/uv-venv/bin/pip install --no-cache-dir --disable-pip-version-check uv
  export UV_PYTHON_INSTALL_DIR=/opt/python
  /tmp/uv-venv/bin/uv python install "${version}"
  ln -sf "$(/tmp/uv-venv/bin/uv python find --managed-python "${version}")" "/usr/local/bin/${program}"
  rm -rf /tmp/uv-venv /root/.cache
fi
usable || { echo "install-python: ${program} (${source}) cannot make a venv or has no Python.h" >&2; exit 1; }
"${program}" -c 'import sys, sysconfig; ft = sysconfig.get_config_var("Py_GIL_DISABLED") == 1; print("interpreter:", sys.executable, sys.version.split()[0], "free-threaded" if ft else "")'
